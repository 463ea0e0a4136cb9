// SPDX-License-Identifier: GPL-2.0-only
/*
 * The suite's flush checks (suite/delivery.c runs them after the backends):
 * every flush implementation whose family the chosen backends bring
 * (flush_family.checked_with: the Hyper-V flush hypercalls come with the
 * Hyper-V hypercall backends; the native shootdown, which sends over the
 * backend in force, with any) flushes FLUSH_CHECK_PAGES pages from CPU 0
 * on every other CPU, must return success, and must have reached every
 * target's TLB.
 *
 * Reached: each checked page of harness/flush_pages.h points at a frame of
 * its own, and every target reads it through a translation made afresh
 * (INVLPG, then the read), so its TLB holds the page's frame. CPU 0 then
 * maps a spare frame in its place, as an unmap or a migration would, with
 * no flush of the targets' own. A control read on each target, through
 * what its TLB holds, tells whether it still has the old translation: a
 * target woken by an IPI may have lost it on the way (under nested KVM in
 * TCG every VM entry reloads CR3 and empties TCG's TLB; on hardware a vCPU
 * moved to another CPU is flushed). Then the implementation under test
 * flushes, and every target reads again and must reach the spare frame
 * (each frame's first word is its own address). A target that reaches the
 * old frame kept a translation the flush should have dropped: a FAILURE
 * that names it. Where no target still held the old translation before the
 * flush, the check could not see the flush's effect, and a console line
 * says so ("check: ...: the TLB effect went unseen"): the check can miss a
 * flush that did nothing, never accuse one that worked. debug=stale-tlb
 * shows that it catches one under TCG, whose TLB keeps what nobody
 * flushes. Afterwards the pages get their frames back and every CPU drops
 * the translation.
 *
 * Checks run label by label ("hv-flush: ..." for the slow forms, then
 * "hv-flush-xmm: ..."), each label's in flush_impls[] order. A family whose
 * interface is missing gives one SKIP per label ("every flush hypercall").
 * The family's begin hook switches its interface on for the checks, and
 * its end hook back off if it was off (the backend in force may be
 * kvm-pv-ipi, which needs the Hyper-V one off). The APs idle in their
 * mailboxes meanwhile: none can be inside a hypercall.
 */
#include "suite/suite.h"
#include "harness/flush_pages.h"
#include "include/bench.h"
#include "include/console.h"
#include "include/flush.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/tsc.h"
#include "include/x86.h"
#include "lib/cpuset.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define FLUSH_CHECK_PAGES 2 /* List calls: two elements, two reps */
_Static_assert(FLUSH_CHECK_PAGES <= FLUSH_SPARES, "a spare frame for each checked page");

/* What each CPU reached through the checked pages: the frame's own address. */
static uint64_t check_seen[MAX_CPUS][FLUSH_CHECK_PAGES];

static const volatile uint64_t *check_page(unsigned int i)
{
	return (const volatile uint64_t *)(uintptr_t)(FLUSH_VA + (uint64_t)i * FLUSH_PAGE);
}

/* On this CPU: read each checked page, through a translation made afresh or what the TLB holds. */
static void check_flush_read(bool fresh)
{
	uint64_t *seen = check_seen[this_cpu()->cpu];

	for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++) {
		if (fresh)
			invlpg((const void *)check_page(i));
		seen[i] = *check_page(i);
	}
}

static void check_flush_read_fresh(void *arg)
{
	(void)arg;
	check_flush_read(true);
}

static void check_flush_read_held(void *arg)
{
	(void)arg;
	check_flush_read(false);
}

/* On a CPU: drop the checked pages' translations. */
static void check_flush_drop(void *arg)
{
	(void)arg;
	for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++)
		invlpg((const void *)check_page(i));
}

/* fn on every CPU of set (this one directly); false, said in v, if one did not take it. */
static bool check_flush_on(const struct cpuset *set, smp_fn fn, void *arg, struct verdict *v)
{
	bool ok = true;

	cpuset_for_each(c, set) {
		if ((unsigned int)c == this_cpu()->cpu) {
			fn(arg);
		} else if (smp_call((unsigned int)c, fn, arg, 2 * bench_params.deadline_us)) {
			verdict_add(v, "CPU %d did not take the read of the checked pages", c);
			ok = false;
		}
	}
	return ok;
}

/*
 * The targets' TLBs hold the pages' own frames; then CPU 0 maps the spares
 * in, and held gets the targets that still reach an old frame through what
 * their TLB holds: those that can show whether the flush worked.
 */
static bool check_flush_stage(const struct cpuset *set, uint64_t *own, struct cpuset *held,
			      struct verdict *v)
{
	if (!check_flush_on(set, check_flush_read_fresh, NULL, v))
		return false;
	for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++) {
		own[i] = *flush_pages_pte(i);
		cpuset_for_each(c, set) {
			if (check_seen[c][i] != flush_pages_frame(own[i])) {
				verdict_add(
				    v,
				    "CPU %d read page %u as %#lx before the flush, not its frame %#lx",
				    c, i, (unsigned long)check_seen[c][i],
				    (unsigned long)flush_pages_frame(own[i]));
				return false;
			}
		}
	}
	for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++) {
		WRITE_ONCE(*flush_pages_pte(i), flush_pages_spare(i));
		invlpg((const void *)check_page(i));
	}
	cpuset_clear(held);
	if (!check_flush_on(set, check_flush_read_held, NULL, v))
		return false;
	cpuset_for_each(c, set) {
		for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++) {
			if (check_seen[c][i] == flush_pages_frame(own[i])) {
				cpuset_add(held, (unsigned int)c);
				break;
			}
		}
	}
	return true;
}

/* After the flush: every target reaches the spare frames. */
static void check_flush_reached(const struct cpuset *set, struct verdict *v)
{
	if (!check_flush_on(set, check_flush_read_held, NULL, v))
		return;
	cpuset_for_each(c, set) {
		for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++) {
			if (check_seen[c][i] == flush_pages_frame(flush_pages_spare(i)))
				continue;
			verdict_add(
			    v,
			    "CPU %d still reached page %u's old frame after the flush: its TLB kept a translation the flush should have dropped",
			    c, i);
			break;
		}
	}
}

static void check_flush_restore(const uint64_t *own, struct verdict *v)
{
	struct cpuset all;

	for (unsigned int i = 0; i < FLUSH_CHECK_PAGES; i++)
		WRITE_ONCE(*flush_pages_pte(i), own[i]);
	cpuset_fill(&all, ncpus);
	(void)check_flush_on(&all, check_flush_drop, NULL, v);
}

static void check_flush_one(const struct flush_ops *o, const struct cpuset *set)
{
	const char *skip = o->probe();
	struct verdict v = {0};
	char name[CHECK_NAME_LEN], cpus[48], pages[24] = "", why[CHECK_NAME_LEN], over[40] = "";
	uint64_t own[FLUSH_CHECK_PAGES];
	struct cpuset held;
	int err = skip ? 0
		       : o->prepare(set, FLUSH_VA, FLUSH_CHECK_PAGES, FLUSH_EACH_PAGE, why,
				    sizeof(why));

	cpuset_format(set, cpus, sizeof(cpus));
	if (!(o->flags & FLUSH_F_WHOLE))
		fmt_snprintf(pages, sizeof(pages), ", %u pages", FLUSH_CHECK_PAGES);
	if (o->family->per_backend && ipi_current())
		fmt_snprintf(over, sizeof(over), " over %s", ipi_current()->name);
	fmt_snprintf(name, sizeof(name), "%s: %s%s (%s)%s, CPU 0 -> CPUs {%s}", o->label, o->what,
		     over, err == FLUSH_FELL_BACK ? o->fallback : o->form, pages, cpus);
	if (skip) {
		tap_skip(name, skip);
		return;
	}
	if (err >= 0 && check_flush_stage(set, own, &held, &v)) {
		if (o->arm)
			o->arm(tsc_deadline_us(bench_params.deadline_us));
		err = o->flush();
		if (err >= 0)
			check_flush_reached(set, &v);
		check_flush_restore(own, &v);
		if (err >= 0 && cpuset_empty(&held))
			kprintf(
			    "check: %s: the TLB effect went unseen: no target still held the old translation before the flush\n",
			    name);
	}
	if (err == -E_INVAL)
		verdict_add(&v, "encoding failed (%s)", why);
	else if (err < 0)
		verdict_add(&v, "%s", why);
	tap_verdict(name, &v, err == -E_INVAL ? STATUS_ERROR : STATUS_FAILURE);
}

/* Whether flush_impls[i] is the first of its family with its label. */
static bool check_flush_first(unsigned int i, bool by_label)
{
	const struct flush_ops *o = flush_impls[i];

	for (unsigned int j = 0; j < i; j++) {
		if (flush_impls[j]->family == o->family &&
		    (!by_label || !__builtin_strcmp(flush_impls[j]->label, o->label)))
			return false;
	}
	return true;
}

/* Every implementation of the family starting at flush_impls[first], label by label. */
static void check_flush_family(unsigned int first)
{
	const struct flush_family *fam = flush_impls[first]->family;
	const char *why = fam->probe ? fam->probe() : NULL;
	char name[CHECK_NAME_LEN];
	struct verdict v = {0};
	struct cpuset set;

	for (unsigned int i = first; why && i < flush_impl_count; i++) {
		if (flush_impls[i]->family == fam && check_flush_first(i, true)) {
			fmt_snprintf(name, sizeof(name), "%s: every %s", flush_impls[i]->label,
				     fam->per_backend ? "shootdown" : "flush hypercall");
			tap_skip(name, why);
		}
	}
	if (why)
		return;
	if (fam->begin && fam->begin("the flush checks")) {
		fmt_snprintf(name, sizeof(name), "%s: enable %s", fam->name, fam->what);
		verdict_add(&v, "%s did not come up (above)", fam->what);
		tap_verdict(name, &v, STATUS_FAILURE);
		return;
	}
	cpuset_fill(&set, ncpus);
	if (ncpus > 1)
		cpuset_remove(&set, 0);
	for (unsigned int i = first; i < flush_impl_count; i++) {
		const struct flush_ops *o = flush_impls[i];

		if (o->family != fam || !check_flush_first(i, true))
			continue;
		for (unsigned int j = i; j < flush_impl_count; j++) {
			if (flush_impls[j]->family == fam &&
			    !__builtin_strcmp(flush_impls[j]->label, o->label))
				check_flush_one(flush_impls[j], &set);
		}
	}
	if (fam->end)
		fam->end("after the flush checks, as they found it");
}

/* Whether the plan chose one of the backends a family comes with (a per-backend one: any). */
static bool check_flush_wanted(const struct flush_family *fam)
{
	if (fam->per_backend)
		return ipi_current() != NULL;
	for (const char *const *name = fam->checked_with; name && *name; name++) {
		const struct ipi_ops *ops = ipi_backend_named(*name);

		if (ops && ipi_backend_chosen(ops))
			return true;
	}
	return false;
}

void check_flush(void)
{
	if (flush_pages_map()) {
		kprintf("check: the flush pages' PML4 slot is taken: no flush checks\n");
		status_report(STATUS_ERROR);
		return;
	}
	for (unsigned int i = 0; i < flush_impl_count; i++) {
		if (check_flush_wanted(flush_impls[i]->family) && check_flush_first(i, false))
			check_flush_family(i);
	}
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The suite's flush checks (bench/check.c runs them after the backends):
 * every flush implementation whose family the chosen backends bring
 * (flush_family.checked_with: the Hyper-V flush hypercalls come with the
 * Hyper-V hypercall backends) flushes FLUSH_CHECK_PAGES pages from CPU 0 on
 * every other CPU and must return success. The calls send nothing the
 * delivery counters could see; the native shootdown's IPIs are what the
 * delivery checks are about, so its family is not checked here.
 *
 * Checks run label by label ("hv-flush: ..." for the slow forms, then
 * "hv-flush-xmm: ..."), each label's in flush_impls[] order. A family whose
 * interface is missing gives one SKIP per label ("every flush hypercall").
 * The family's begin hook switches its interface on for the checks, and
 * its end hook back off if it was off (the backend in force may be
 * kvm-pv-ipi, which needs the Hyper-V one off). The APs idle in their
 * mailboxes meanwhile: none can be inside a hypercall.
 */
#include "bench/check.h"
#include "include/bench.h"
#include "include/flush.h"
#include "include/percpu.h"
#include "include/status.h"
#include "include/tsc.h"
#include "lib/cpuset.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define FLUSH_CHECK_PAGES 2 /* List calls: two elements, two reps */

/* A page of the kernel image: mapped, and flushing it is harmless. */
static char check_flush_page;

static void check_flush_one(const struct flush_ops *o, const struct cpuset *set)
{
	const char *skip = o->probe();
	uint64_t va = (uint64_t)(uintptr_t)&check_flush_page & ~0xfffull;
	struct verdict v = {0};
	char name[CHECK_NAME_LEN], cpus[48], pages[24] = "", why[CHECK_NAME_LEN];
	int err =
	    skip ? 0 : o->prepare(set, va, FLUSH_CHECK_PAGES, FLUSH_EACH_PAGE, why, sizeof(why));

	cpuset_format(set, cpus, sizeof(cpus));
	if (!(o->flags & FLUSH_F_WHOLE))
		fmt_snprintf(pages, sizeof(pages), ", %u pages", FLUSH_CHECK_PAGES);
	fmt_snprintf(name, sizeof(name), "%s: %s (%s)%s, CPU 0 -> CPUs {%s}", o->label, o->what,
		     err == FLUSH_FELL_BACK ? o->fallback : o->form, pages, cpus);
	if (skip) {
		tap_skip(name, skip);
		return;
	}
	if (err >= 0) {
		if (o->arm)
			o->arm(tsc_deadline_us(bench_params.deadline_us));
		err = o->flush();
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
			fmt_snprintf(name, sizeof(name), "%s: every flush hypercall",
				     flush_impls[i]->label);
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

/* Whether the plan chose one of the backends a family comes with. */
static bool check_flush_wanted(const struct flush_family *fam)
{
	for (const char *const *name = fam->checked_with; name && *name; name++) {
		const struct ipi_ops *ops = ipi_backend_named(*name);

		if (ops && ipi_backend_chosen(ops))
			return true;
	}
	return false;
}

void check_flush(void)
{
	for (unsigned int i = 0; i < flush_impl_count; i++) {
		if (check_flush_wanted(flush_impls[i]->family) && check_flush_first(i, false))
			check_flush_family(i);
	}
}

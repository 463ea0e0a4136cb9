// SPDX-License-Identifier: GPL-2.0-only
/*
 * The `flush` benchmark family: what a remote TLB shootdown costs, done
 * natively over the IPI backend in force and by Hyper-V hypercall, and from
 * how many targets and pages the hypercall wins.
 *
 * A run of 4 KiB pages is mapped at FLUSH_VA in the page tables every CPU
 * shares; the targets (the first k CPUs after the sender, for k = 1, half
 * and all of the others) spin with interrupts on, touching every page, so
 * their TLBs hold the translations when a flush comes.
 *
 *  native  the sender sends BENCH_VEC to the targets over the backend in
 *          force; each target's handler flushes (INVLPG for one page, a CR3
 *          reload for many, as Linux does above its single-page ceiling)
 *          and then acknowledges by counting on its own cache line; the
 *          sample ends when every target has. Measured on every backend.
 *  call    HvCallFlushVirtualAddressSpace, ...List (one element, one rep,
 *          per page) and their Ex forms, slow and XMM-fast (the flush calls
 *          have no register-only form), to the same targets. KVM returns
 *          once every running target has flushed (KVM_REQUEST_WAIT), so the
 *          call is the whole shootdown. The call does not use the IPI
 *          backend: measured once per boot, backend "none"; encoding is
 *          done before the timed region, the result checked inside it.
 *
 * Then, per backend, the crossover: at each page count, from how many
 * targets on the best call beats the native shootdown, and at each target
 * count, from how many pages on; as a line and as records
 * (crossover-targets / crossover-pages: the call's p50 at the crossover,
 * or SKIP with the reason when the native path stays cheaper throughout).
 *
 * Every call's status is checked; one that fails is a FAILURE naming the
 * call, form and status. The Hyper-V interface is switched on for the calls
 * and back off if it was off (the backend in force may be kvm-pv-ipi); no
 * target makes a hypercall meanwhile, they only spin.
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/hyperv.h"
#include "include/irq.h"
#include "include/mm.h"
#include "include/smp.h"
#include "include/tsc.h"
#include "include/x86.h"
#include "lib/crossover.h"
#include "lib/error.h"
#include "lib/fmt.h"

/* Above the 4 GiB identity map, in a PML4 slot of its own: 4 KiB pages to flush. */
#define FLUSH_VA   0x00007f0000400000ull
#define FLUSH_PAGE 4096u
/* Many pages: a List call of 8 elements still fits XMM-fast (11, or 9 beside one bank). */
#define FLUSH_PAGES_MANY 8u
#define FLUSH_NP	 2u /* page counts: 1, FLUSH_PAGES_MANY */
#define FLUSH_MAX_K	 3u /* target counts: 1, half, all */
#define PTE_P		 (1ull << 0)
#define PTE_RW		 (1ull << 1)
#define VARIANT_LEN	 32

#define VA_INDEX(va, level) (((va) >> (12 + 9 * (level))) & 511u)
_Static_assert(VA_INDEX(FLUSH_VA, 0) + FLUSH_PAGES_MANY <= 512, "the pages share one table");
_Static_assert(FLUSH_PAGES_MANY <= HV_FLUSH_MAX_GVAS, "a List call names every page");

extern uint64_t boot_pml4[];

static const unsigned int flush_pages[FLUSH_NP] = {1, FLUSH_PAGES_MANY};
static const enum hv_form flush_forms[] = {HV_FORM_SLOW, HV_FORM_XMM};

/* p50 cycles at each (page count, target count): native for this backend, best call per boot. */
static uint64_t native_p50[FLUSH_NP][FLUSH_MAX_K];
static struct {
	uint64_t p50;
	char variant[VARIANT_LEN];
} call_best[FLUSH_NP][FLUSH_MAX_K];
static bool calls_measured, calls_tried;

static unsigned int flush_k[FLUSH_MAX_K], flush_nk;
static struct cpuset flush_set;
static char flush_set_text[64];
static char flush_variant[VARIANT_LEN];
static unsigned int flush_pages_now; /* what the handler flushes */
static uint32_t flush_stop __cacheline_aligned;
static uint32_t flush_want[MAX_CPUS];
static irq_handler_t flush_chained;
static struct hv_call *flush_call;
static char flush_why[192];

/* --- the pages and the targets --------------------------------------------------------------- */

static uint64_t flush_table(void)
{
	return (uint64_t)(uintptr_t)mm_alloc(FLUSH_PAGE, FLUSH_PAGE) | PTE_P | PTE_RW;
}

/*
 * Maps the pages in the tables every CPU's CR3 points at (boot_pml4). The
 * PML4 slot was empty and no CPU caches a translation that is not present,
 * so filling it needs no flush; the slot is written last, whole.
 */
static int flush_map(void)
{
	static bool mapped;
	uint64_t pdpt, pd, pt;

	if (mapped)
		return 0;
	if (boot_pml4[VA_INDEX(FLUSH_VA, 3)])
		return -E_NOSPC;
	pdpt = flush_table();
	pd = flush_table();
	pt = flush_table();
	for (unsigned int i = 0; i < FLUSH_PAGES_MANY; i++)
		((uint64_t *)(uintptr_t)(pt & ~0xfffull))[VA_INDEX(FLUSH_VA, 0) + i] =
		    flush_table();
	((uint64_t *)(uintptr_t)(pd & ~0xfffull))[VA_INDEX(FLUSH_VA, 1)] = pt;
	((uint64_t *)(uintptr_t)(pdpt & ~0xfffull))[VA_INDEX(FLUSH_VA, 2)] = pd;
	store_release(&boot_pml4[VA_INDEX(FLUSH_VA, 3)], pdpt);
	mapped = true;
	return 0;
}

/* A target: touch every page (filling the TLB again after each flush) until stopped. */
static void flush_spin(void *arg)
{
	const volatile uint8_t *va = (const volatile uint8_t *)(uintptr_t)FLUSH_VA;

	(void)arg;
	irq_enable();
	while (!load_acquire(&flush_stop)) {
		for (unsigned int i = 0; i < FLUSH_PAGES_MANY; i++)
			(void)va[(size_t)i * FLUSH_PAGE];
		cpu_relax();
	}
}

/* BENCH_VEC while this benchmark runs: flush, then count (the acknowledgment) and EOI. */
static void flush_irq(unsigned int vector, uint64_t tsc)
{
	if (READ_ONCE(flush_pages_now) == 1)
		invlpg((const void *)(uintptr_t)FLUSH_VA);
	else
		write_cr3(read_cr3());
	flush_chained(vector, tsc);
}

static void flush_start(unsigned int sender)
{
	store_release(&flush_stop, 0);
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != sender)
			smp_post(c, flush_spin, NULL);
	}
	flush_chained = irq_get_handler(BENCH_VEC);
	irq_set_handler(BENCH_VEC, flush_irq);
}

static void flush_finish(unsigned int sender)
{
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us);

	store_release(&flush_stop, 1);
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != sender && smp_wait(c, deadline)) {
			kprintf("flush: CPU %u did not leave its spin loop\n", c);
			status_report(STATUS_ERROR);
		}
	}
	irq_set_handler(BENCH_VEC, flush_chained);
}

/* Target counts 1, half and all of the others, without repeats. */
static void flush_points(void)
{
	unsigned int others = ncpus - 1, half = (others + 1) / 2;

	flush_nk = 0;
	flush_k[flush_nk++] = 1;
	if (half > 1)
		flush_k[flush_nk++] = half;
	if (others > half && others > 1)
		flush_k[flush_nk++] = others;
}

/* The first k CPUs after the sender. */
static void flush_targets(struct bench_run *r, unsigned int k)
{
	unsigned int added = 0;

	cpuset_clear(&flush_set);
	for (unsigned int c = 0; c < ncpus && added < k; c++) {
		if (c != r->sender) {
			cpuset_add(&flush_set, c);
			added++;
		}
	}
	cpuset_format(&flush_set, flush_set_text, sizeof(flush_set_text));
	r->targets = flush_set_text;
	r->ntargets = k;
}

static uint64_t flush_p50(struct bench_run *r)
{
	struct stats st;

	return stats_compute_samples(&st, &r->m[0].s) ? 0 : st.p50;
}

/* --- native shootdown ---------------------------------------------------------------------- */

static int flush_lost(struct bench_run *r, unsigned int cpu_nr)
{
	unsigned int failed = ipi_take_failures(flush_why, sizeof(flush_why));

	bench_fail(r,
		   "shootdown of %u page(s) from CPU %u: CPU %u (APIC ID %u) did not acknowledge "
		   "within %lu us%s%s",
		   flush_pages_now, r->sender, cpu_nr, percpu_of[cpu_nr]->apic_id,
		   bench_params.deadline_us, failed ? "; a send failed: " : "",
		   failed ? flush_why : "");
	return -E_TIMEDOUT;
}

static int flush_native_iter(struct bench_run *r, uint64_t *out)
{
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0;

	cpuset_for_each(c, &flush_set) flush_want[c] = bench_count((unsigned int)c) + 1;
	irq_disable();
	t0 = tsc_begin();
	ipi_send_set(r->ops, &flush_set, BENCH_VEC);
	cpuset_for_each(c, &flush_set)
	{
		if (bench_wait_count((unsigned int)c, flush_want[c], deadline)) {
			irq_enable();
			return flush_lost(r, (unsigned int)c);
		}
	}
	out[0] = bench_tsc_end() - t0;
	irq_enable();
	return 0;
}

static int flush_native(struct bench_run *r)
{
	static const char *const names[] = {"shootdown"};

	for (unsigned int p = 0; p < FLUSH_NP; p++) {
		WRITE_ONCE(flush_pages_now, flush_pages[p]);
		fmt_snprintf(flush_variant, sizeof(flush_variant),
			     p ? "native-cr3-%up" : "native-invlpg-%up", flush_pages[p]);
		r->variant = flush_variant;
		for (unsigned int i = 0; i < flush_nk; i++) {
			flush_targets(r, flush_k[i]);
			bench_metrics(r, 1, names);
			if (bench_sample(r, flush_native_iter))
				return -E_TIMEDOUT;
			bench_emit(r);
			native_p50[p][i] = flush_p50(r);
		}
	}
	return 0;
}

/* --- flush hypercalls ------------------------------------------------------------------------ */

static int flush_call_iter(struct bench_run *r, uint64_t *out)
{
	uint64_t t0;
	int err;

	irq_disable();
	t0 = tsc_begin();
	err = hv_call_run(flush_call, flush_why, sizeof(flush_why));
	out[0] = bench_tsc_end() - t0;
	irq_enable();
	if (err)
		bench_fail(r, "%s", flush_why);
	return err;
}

/* "list-ex-xmm-8p"; "-as-slow" when the input did not fit the registers. */
static void flush_call_variant(char *buf, enum hv_flush_call f, enum hv_form want,
			       unsigned int pages)
{
	const char *form = want == HV_FORM_XMM ? "xmm" : "slow";
	const char *fell = flush_call->form != want ? "-as-slow" : "";

	if (hv_flush_is_list(f))
		fmt_snprintf(buf, VARIANT_LEN, "%s-%s%s-%up", hv_flush_word(f), form, fell, pages);
	else
		fmt_snprintf(buf, VARIANT_LEN, "%s-%s%s", hv_flush_word(f), form, fell);
}

/* The best call at page count p (a Space call counts for every p), target count i. */
static void flush_call_keep(unsigned int p, unsigned int i, uint64_t p50)
{
	if (call_best[p][i].p50 && call_best[p][i].p50 <= p50)
		return;
	call_best[p][i].p50 = p50;
	fmt_snprintf(call_best[p][i].variant, VARIANT_LEN, "%s", flush_variant);
}

/* One call, one form, k = flush_k[i] targets, flush_pages[p] pages (List) or all (p < 0). */
static int flush_call_point(struct bench_run *r, enum hv_flush_call f, enum hv_form form,
			    unsigned int i, int p)
{
	static const char *const names[] = {"call"};
	unsigned int pages = p < 0 ? 1 : flush_pages[p];
	uint64_t p50;
	int err;

	flush_targets(r, flush_k[i]);
	err = hv_flush_encode(flush_call, f, form, read_cr3(), &flush_set, FLUSH_VA, pages);
	if (err) {
		bench_emit_status(r, "call", "ERROR", error_name(err));
		status_report(STATUS_ERROR);
		return err;
	}
	flush_call_variant(flush_variant, f, form, pages);
	r->variant = flush_variant;
	bench_metrics(r, 1, names);
	err = bench_sample(r, flush_call_iter);
	if (err)
		return err;
	bench_emit(r);
	p50 = flush_p50(r);
	for (unsigned int q = 0; q < FLUSH_NP; q++) {
		if (p < 0 || q == (unsigned int)p)
			flush_call_keep(q, i, p50);
	}
	return 0;
}

/* Every call and form at every point; SKIP records for what this VM lacks. */
static int flush_calls_all(struct bench_run *r)
{
	for (enum hv_flush_call f = HV_FLUSH_SPACE; f < HV_FLUSH_CALLS; f++) {
		for (unsigned int j = 0; j < ARRAY_SIZE(flush_forms); j++) {
			const char *why = hv_flush_probe(f, flush_forms[j]);
			int np = hv_flush_is_list(f) ? (int)FLUSH_NP : 1;

			if (why) {
				fmt_snprintf(flush_variant, sizeof(flush_variant), "%s-%s",
					     hv_flush_word(f),
					     flush_forms[j] == HV_FORM_XMM ? "xmm" : "slow");
				r->variant = flush_variant;
				bench_emit_status(r, "call", "SKIP", why);
				status_report(STATUS_SKIP);
				continue;
			}
			for (unsigned int i = 0; i < flush_nk; i++) {
				for (int p = 0; p < np; p++) {
					if (flush_call_point(r, f, flush_forms[j], i,
							     hv_flush_is_list(f) ? p : -1))
						return -E_PROTO;
				}
			}
		}
	}
	return 0;
}

/* Once per boot, with the backend's figures fresh: the calls do not depend on it. */
static void flush_calls(struct bench_run *r)
{
	const struct ipi_ops *ops = r->ops;
	const char *why = hv_probe(HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_FLUSH);
	bool was_on;

	if (calls_tried)
		return;
	calls_tried = true;
	r->ops = NULL; /* backend "none": no IPI is sent */
	r->variant = "hv-flush";
	r->targets = NULL;
	r->ntargets = 0;
	if (why) {
		bench_emit_status(r, "call", "SKIP", why);
		status_report(STATUS_SKIP);
		r->ops = ops;
		return;
	}
	was_on = hv_calls_enabled();
	if (hv_calls_on("the flush benchmark")) {
		bench_emit_status(r, "call", "ERROR", "the hypercall interface did not come up");
		status_report(STATUS_ERROR);
		r->ops = ops;
		return;
	}
	flush_call = hv_call_buf();
	calls_measured = !flush_calls_all(r);
	if (!was_on)
		hv_calls_off("after the flush calls, as they found it");
	r->ops = ops;
}

/* --- crossover ------------------------------------------------------------------------------- */

static void flush_emit_value(struct bench_run *r, const char *metric, uint64_t cycles)
{
	const char *names[] = {metric};

	bench_metrics(r, 1, names);
	samples_add(&r->m[0].s, cycles);
	histo_add(&r->m[0].h, cycles);
	r->iterations = 1;
	bench_emit(r);
}

/* At page count p: from which target count on the best call beats the native shootdown. */
static void flush_cross_targets(struct bench_run *r, unsigned int p)
{
	uint64_t hv[FLUSH_MAX_K];
	unsigned int last = flush_nk - 1;
	int x;

	for (unsigned int i = 0; i < flush_nk; i++)
		hv[i] = call_best[p][i].p50;
	x = crossover_index(native_p50[p], hv, flush_nk);
	fmt_snprintf(flush_variant, sizeof(flush_variant), "%up", flush_pages[p]);
	r->variant = flush_variant;
	if (x < 0 || (unsigned int)x >= flush_nk) {
		flush_targets(r, flush_k[last]);
		fmt_snprintf(flush_why, sizeof(flush_why),
			     "the native shootdown over %s stays cheaper up to %u targets at %u "
			     "page(s) (best call %s %lu vs native %lu cycles p50)",
			     r->ops->name, flush_k[last], flush_pages[p],
			     call_best[p][last].variant, call_best[p][last].p50,
			     native_p50[p][last]);
		kprintf("flush: crossover: %s\n", flush_why);
		bench_emit_status(r, "crossover-targets", "SKIP", flush_why);
		return;
	}
	flush_targets(r, flush_k[x]);
	kprintf("flush: crossover: over %s at %u page(s) the hypercall beats the native shootdown "
		"from %u target(s) on (%s %lu vs native %lu cycles p50)\n",
		r->ops->name, flush_pages[p], flush_k[x], call_best[p][x].variant,
		call_best[p][x].p50, native_p50[p][x]);
	flush_emit_value(r, "crossover-targets", call_best[p][x].p50);
}

/* At target count flush_k[i]: from which page count on the best call wins. */
static void flush_cross_pages(struct bench_run *r, unsigned int i)
{
	uint64_t native[FLUSH_NP], hv[FLUSH_NP];
	int x;

	for (unsigned int p = 0; p < FLUSH_NP; p++) {
		native[p] = native_p50[p][i];
		hv[p] = call_best[p][i].p50;
	}
	x = crossover_index(native, hv, FLUSH_NP);
	flush_targets(r, flush_k[i]);
	if (x < 0 || (unsigned int)x >= FLUSH_NP) {
		fmt_snprintf(flush_variant, sizeof(flush_variant), "%up", FLUSH_PAGES_MANY);
		r->variant = flush_variant;
		fmt_snprintf(flush_why, sizeof(flush_why),
			     "the native shootdown over %s stays cheaper up to %u pages at %u "
			     "target(s) (best call %s %lu vs native %lu cycles p50)",
			     r->ops->name, FLUSH_PAGES_MANY, flush_k[i],
			     call_best[FLUSH_NP - 1][i].variant, call_best[FLUSH_NP - 1][i].p50,
			     native_p50[FLUSH_NP - 1][i]);
		kprintf("flush: crossover: %s\n", flush_why);
		bench_emit_status(r, "crossover-pages", "SKIP", flush_why);
		return;
	}
	fmt_snprintf(flush_variant, sizeof(flush_variant), "%up", flush_pages[x]);
	r->variant = flush_variant;
	kprintf("flush: crossover: over %s at %u target(s) the hypercall beats the native "
		"shootdown from %u page(s) on (%s %lu vs native %lu cycles p50)\n",
		r->ops->name, flush_k[i], flush_pages[x], call_best[x][i].variant,
		call_best[x][i].p50, native_p50[x][i]);
	flush_emit_value(r, "crossover-pages", call_best[x][i].p50);
}

/* --- the benchmark --------------------------------------------------------------------------- */

static void flush_run(struct bench_run *r)
{
	int err = flush_map();

	r->target_state = "spin";
	if (err) {
		bench_emit_status(r, "-", "ERROR", "the PML4 slot for the flush pages is taken");
		status_report(STATUS_ERROR);
		return;
	}
	flush_points();
	/* The probes need every CPU's VP index, read through the mailboxes: before they spin. */
	if (!calls_tried && !hv_probe(HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_FLUSH))
		hv_vp_read_all();
	flush_start(r->sender);
	err = flush_native(r);
	if (!err)
		flush_calls(r);
	if (!err && calls_measured) {
		for (unsigned int p = 0; p < FLUSH_NP; p++)
			flush_cross_targets(r, p);
		for (unsigned int i = 0; i < flush_nk; i++)
			flush_cross_pages(r, i);
	}
	flush_finish(r->sender);
}

static const char *flush_valid(const struct ipi_ops *ops)
{
	(void)ops;
	return bench_params.sender != 0 ? "a sender other than CPU 0 is not supported yet" : NULL;
}

static const struct bench bench_flush = {
    .name = "flush",
    .summary = "TLB shootdown: native IPI + INVLPG/CR3 against the Hyper-V flush hypercalls",
    .min_cpus = 2,
    .per_backend = true,
    .valid = flush_valid,
    .run = flush_run,
};
BENCH_REGISTER(bench_flush);

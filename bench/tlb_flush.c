// SPDX-License-Identifier: GPL-2.0-only
/*
 * The `flush` benchmark family: what a remote TLB shootdown costs, done by
 * every implementation of include/flush.h (the native shootdown over the
 * IPI backend in force, each Hyper-V flush hypercall in each form), to the
 * sender and to the targets, and from how many targets and pages a
 * hypercall wins. It knows the implementations only through their ops
 * tables, in flush_impls[] order.
 *
 * FLUSH_CEILING 4 KiB pages are mapped at FLUSH_VA in the page tables every
 * CPU shares; the targets (the first k CPUs after the sender, for k = 1,
 * half and all of the others) run a loop with interrupts on that touches
 * every page, so their TLBs hold the translations when a flush comes, and
 * times each pass of it. Page counts: 1, 8 and FLUSH_CEILING, Linux's
 * tlb_single_page_flush_ceiling (arch/x86/mm/tlb.c: flush_tlb_mm_range()
 * flushes a range of at most that many pages with one INVLPG per page in
 * flush_tlb_func(), a larger one in full).
 *
 * Each sample times one flush() of the implementation, prepared beforehand
 * for the point (targets, pages) outside any region; the region holds the
 * indirect call through its ops table and what the flush does:
 *
 *  shootdown  the families that send over the IPI backend (per_backend:
 *          measured on every backend): the native shootdown sends FLUSH_VEC
 *          to the targets; each target's handler flushes and then
 *          acknowledges by counting on its own cache line; the sample ends
 *          when every target has. native-invlpg-Np: one INVLPG per page, as
 *          Linux does up to its ceiling; native-cr3-Np (8 and 33 pages: a
 *          whole flush for one page is nobody's choice): a CR3 reload
 *          instead, Linux's choice only above the ceiling, reported for
 *          comparison and left out of the crossover.
 *  call    the other families (hypercalls, no IPI backend involved:
 *          measured once per boot, backend "none"):
 *          HvCallFlushVirtualAddressSpace, ...List and their Ex forms, slow
 *          and XMM-fast (the flush calls have no register-only form), to the
 *          same targets. Each sample does what Linux's hyperv_flush_tlb_multi()
 *          (arch/x86/hyperv/mmu.c) does per call inside the timed region:
 *          the targets' VP indices, the input (a List call names the run of
 *          pages as one element, fill_gva_list), the call and its status
 *          check. A call that flushes the whole space (Space) is measured
 *          once and named without a page count; one whose input did not fit
 *          its form is named "-as-" the form it took.
 *
 * What KVM does with a flush call (arch/x86/kvm/hyperv.c kvm_hv_flush_tlb,
 * virt/kvm/kvm_main.c kvm_make_vcpus_request_mask): it queues the ranges on
 * each target vCPU's flush FIFO and raises KVM_REQ_HV_TLB_FLUSH, a request
 * flagged KVM_REQUEST_WAIT | KVM_REQUEST_NO_WAKEUP; a target in guest mode
 * is kicked by a host IPI (kvm_request_needs_ipi) and, because of
 * KVM_REQUEST_WAIT, the call waits for that IPI's acknowledgement
 * (smp_call_function_many(..., ack_kick, wait)), i.e. until the target has
 * left guest mode, not until it has flushed; a halted or preempted target
 * is neither woken nor waited for. Each target flushes before its next VM
 * entry (vcpu_enter_guest -> kvm_service_local_tlb_flush_requests ->
 * kvm_hv_vcpu_flush_tlb, which falls back to kvm_vcpu_flush_tlb_guest;
 * Linux 6.3 and later), so the TLFS's promise, the flush done when the
 * call returns, holds for any guest code the target runs. But the target
 * pays an exit, the flush and a re-entry that the sender's figure does not
 * contain. Hence the second metric.
 *
 *  target-loss  per sample, the longest single pass of the targets' loop
 *          (the worst target), in cycles, over the passes completed since
 *          the previous sample's collection: the interrupt and handler, or
 *          the exit, flush and re-entry, and the TLB refills they cause,
 *          plus one undisturbed pass. The sender collects it after its timed
 *          region through a handshake on lines of their own, so none of it
 *          is in the sender's figure. The `undisturbed` rows are the same
 *          handshake with no flush: the loop's own longest pass.
 *
 * Then, per backend, the crossover of the sender's figures: at each page
 * count, from how many targets on the best call beats the native INVLPG
 * shootdown, and at each target count, from how many pages on; as a line
 * (with both sides' target-loss medians) and as records (crossover-targets /
 * crossover-pages: the call's p50 at the crossover, or SKIP with the reason
 * when the native path stays cheaper throughout).
 *
 * Every flush is checked; one that fails is a FAILURE naming the call,
 * form and status (or the target that did not acknowledge). A family's
 * begin/end hooks switch its interface on for it and back as found (the
 * Hyper-V one: the backend in force may be kvm-pv-ipi); no target makes a
 * hypercall meanwhile, they only run their loop.
 */
#include "harness/flush_pages.h"
#include "include/bench.h"
#include "include/console.h"
#include "include/flush.h"
#include "include/smp.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "lib/crossover.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define FLUSH_NP      3u /* page counts: 1, 8, FLUSH_CEILING */
#define FLUSH_MAX_K   3u /* target counts: 1, half, all */
#define VARIANT_LEN   32
/* The benchmark's own word, after each implementation's (docs/record-fields.md). */
#define FLUSH_NEXT_SEND "next-send=after-loop-answer"

/* The shootdown's IPIs take the path the other benchmarks' take (handler, count, EOI). */
_Static_assert(FLUSH_VEC == BENCH_VEC, "the shootdown sends the benchmark vector");

static const unsigned int flush_pages[FLUSH_NP] = {1, 8, FLUSH_CEILING};
static const char *const shootdown_names[] = {"shootdown", "target-loss"};
static const char *const call_names[] = {"call", "target-loss"};

/* p50 cycles at one (page count, target count): native INVLPG for this backend, or best call. */
struct flush_point {
	uint64_t p50, loss; /* the sender's and target-loss medians */
	char variant[VARIANT_LEN];
};

/*
 * What the benchmark keeps between its calls, reached through r->priv: the
 * points it measures, the texts its records point at, and the best figures
 * the crossover compares (kept across backends: the calls run once a boot,
 * with the first backend). What the sample loop reads each iteration stays
 * at fixed addresses (below).
 */
struct flush_state {
	unsigned int k[FLUSH_MAX_K], nk; /* target counts: 1, half and all of the others */
	char set_text[64];		 /* r->targets */
	char variant[VARIANT_LEN];	 /* r->variant */
	char words[96];			 /* r->words */
	char why[256];			 /* why a flush or a family could not run */
	unsigned int op_pages;		 /* the pages flush_sampled was prepared for */
	struct flush_point native_best[FLUSH_NP][FLUSH_MAX_K], call_best[FLUSH_NP][FLUSH_MAX_K];
	bool calls_measured, calls_tried;
};

static struct flush_state flush_state;

/* A target's answer to a collection. */
struct flush_seen {
	uint32_t ack;	  /* the collection answered last */
	uint64_t longest; /* the longest pass before it */
} __cacheline_aligned;
_Static_assert(sizeof(struct flush_seen) == CACHELINE, "one line per target");

/*
 * What the sender and the targets' loops share (outside r->priv: the
 * targets have no bench_run), each word on a line no other CPU writes.
 */
static struct flush_mailbox {
	struct flush_seen seen[MAX_CPUS];  /* each target's answer */
	uint32_t stop __cacheline_aligned; /* the loops end */
	uint32_t req __cacheline_aligned;  /* the collection asked for */
} flush_box;

/*
 * The point's targets, who answer a collection: the sender fills it,
 * flush_collect reads it. At a fixed address, as the mailbox: through
 * r->priv the collection took 18 more instructions, which single-threaded
 * TCG under -icount charges to the targets' passes (target-loss +18: the
 * sender's instructions run inside a target's pass there, not on hardware).
 */
static struct cpuset flush_collect_set;

/* The implementation flush_iter samples, at a fixed address for the same reason. */
static const struct flush_ops *flush_sampled;

/* --- the targets ----------------------------------------------------------------------------- */

/*
 * A target: touch every page (filling the TLB again after each flush) and
 * time each pass, until stopped. A pass ends with LFENCE;RDTSC, after its
 * loads. When the sender asks (flush_box.req changed) the loop answers with its
 * longest pass since the last answer and starts over: the answer is written
 * at a pass boundary, so a pass that an interrupt or VM exit stretched is
 * always in the answer that follows it, and the loop is back from the
 * handler (EOI, IRET) when the sender sees it. No PAUSE on a hypervisor:
 * pause-loop exiting would interrupt the loop being measured; under an
 * emulator PAUSE is what hands single-threaded TCG to the next vCPU, and
 * figures mean nothing there.
 */
static void flush_spin(void *arg)
{
	const volatile uint8_t *va = (const volatile uint8_t *)(uintptr_t)FLUSH_VA;
	struct flush_seen *me = &flush_box.seen[this_cpu()->cpu];
	uint32_t seen = READ_ONCE(me->ack); /* a request made before the loop started counts */
	uint64_t prev, longest = 0;
	bool yield = poll_yield;

	(void)arg;
	(void)watch_enter(WATCH_TARGET, 0, NULL, 0); /* the mailbox loop restores its phase */
	irq_enable();
	prev = tsc_begin();
	while (!load_acquire(&flush_box.stop)) {
		uint64_t now;
		uint32_t req;

		for (unsigned int i = 0; i < FLUSH_CEILING; i++)
			(void)va[(size_t)i * FLUSH_PAGE];
		now = tsc_begin();
		longest = now - prev > longest ? now - prev : longest;
		prev = now;
		req = load_acquire(&flush_box.req);
		if (req != seen) {
			seen = req;
			WRITE_ONCE(me->longest, longest);
			store_release(&me->ack, req);
			longest = 0;
		}
		if (yield) /* poll_yield: under TCG only (include/poll.h) */
			cpu_relax();
	}
}

static void flush_start(unsigned int sender)
{
	store_release(&flush_box.stop, 0);
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != sender)
			smp_post(c, flush_spin, NULL);
	}
}

static void flush_finish(unsigned int sender)
{
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us);

	store_release(&flush_box.stop, 1);
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != sender && smp_wait(c, deadline)) {
			kprintf("flush: CPU %u did not leave its spin loop\n", c);
			status_report(STATUS_ERROR);
		}
	}
}

static int flush_stuck(struct bench_run *r, unsigned int cpu_nr)
{
	bench_fail(r, "CPU %u (APIC ID %u) was not back in its loop within %lu us of the flush",
		   cpu_nr, percpu_of[cpu_nr]->apic_id, bench_params.deadline_us);
	return -E_TIMEDOUT;
}

/*
 * After the timed region: ask the targets' loops for their longest pass
 * since the last collection and wait for every target's answer (PAUSE is
 * harmless here, outside the region). Each answer also says that target is
 * back in its loop before the next sample sends to it. 0 or -E_TIMEDOUT.
 */
static int flush_collect(struct bench_run *r, uint64_t *worst)
{
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us);
	uint32_t req = READ_ONCE(flush_box.req) + 1;

	store_release(&flush_box.req, req);
	*worst = 0;
	cpuset_for_each(c, &flush_collect_set)
	{
		const struct flush_seen *seen = &flush_box.seen[c];
		uint64_t longest;

		while (load_acquire(&seen->ack) != req) {
			if (tsc_expired(deadline))
				return flush_stuck(r, (unsigned int)c);
			cpu_relax();
		}
		longest = READ_ONCE(seen->longest);
		*worst = longest > *worst ? longest : *worst;
	}
	return 0;
}

/* Target counts 1, half and all of the others, without repeats. */
static void flush_points(struct flush_state *fs)
{
	unsigned int others = ncpus - 1, half = (others + 1) / 2;

	fs->nk = 0;
	fs->k[fs->nk++] = 1;
	if (half > 1)
		fs->k[fs->nk++] = half;
	if (others > half && others > 1)
		fs->k[fs->nk++] = others;
}

/* The first k CPUs other than the sender. */
static void flush_targets(struct bench_run *r, unsigned int k)
{
	struct flush_state *fs = r->priv;
	bench_targets_first(r, k, &flush_collect_set, fs->set_text, sizeof(fs->set_text));
}

static uint64_t flush_p50(struct bench_run *r, unsigned int m)
{
	struct stats st;

	return stats_compute_samples(&st, &r->m[m].s) ? 0 : st.p50;
}

/* Both medians of the point just measured, under the variant in force. */
static void flush_keep(struct flush_point *pt, struct bench_run *r)
{
	const struct flush_state *fs = r->priv;
	pt->p50 = flush_p50(r, 0);
	pt->loss = flush_p50(r, 1);
	fmt_snprintf(pt->variant, VARIANT_LEN, "%s", fs->variant);
}

/* The best of the point just measured, at pt: kept when nothing cheaper is there yet. */
static void flush_keep_best(struct flush_point *pt, struct bench_run *r)
{
	if (pt->p50 && pt->p50 <= flush_p50(r, 0))
		return;
	flush_keep(pt, r);
}

/* --- one implementation at one point ------------------------------------------------------- */

/* A flush that did not complete: ERROR (ours) or FAILURE (the system under test). */
static int flush_failed(struct bench_run *r, int err)
{
	const struct flush_state *fs = r->priv;
	char sends[160];
	unsigned int failed;

	if (err == -E_INVAL) {
		bench_emit_status(r, r->m[0].name, "ERROR", fs->why);
		status_report(STATUS_ERROR);
		return err;
	}
	if (!flush_sampled->family->per_backend) {
		bench_fail(r, "%s", fs->why);
		return err;
	}
	failed = ipi_take_failures(sends, sizeof(sends));
	bench_fail(r, "shootdown of %u page(s) from CPU %u: %s within %lu us%s%s", fs->op_pages,
		   r->sender, fs->why, bench_params.deadline_us, failed ? "; a send failed: " : "",
		   failed ? sends : "");
	return err;
}

/*
 * Timed: the prepared flush, through its ops table (the send and every
 * target's acknowledgement, or the call with its input and status check).
 * Then the targets' loss.
 */
static int flush_iter(struct bench_run *r, uint64_t *out)
{
	/* A local: the region's clobber would reload it. */
	int (*flush)(void) = flush_sampled->flush;
	uint64_t t0, t1;
	int err;

	if (flush_sampled->arm)
		flush_sampled->arm(tsc_deadline_us(bench_params.deadline_us));
	irq_disable();
	t0 = tsc_begin();
	err = flush();
	t1 = bench_tsc_end();
	bench_mark_region_end();	/* markers=1: where the region closed, for a host trace */
	ipi_irq_region_closed();	/* debug=slow-eoi: the count-first EOIs may go now */
	irq_enable();
	if (err)
		return flush_failed(r, err);
	out[0] = t1 - t0;
	return flush_collect(r, &out[1]);
}

/* "native-invlpg-8p", "list-ex-xmm-33p", "space-slow"; "-as-slow" when it fell back. */
static void flush_name(struct flush_state *fs, const struct flush_ops *o, unsigned int pages,
		       bool fell)
{
	char as[16] = "";

	if (fell)
		fmt_snprintf(as, sizeof(as), "-as-%s", o->fallback);
	if (o->family->per_backend || !(o->flags & FLUSH_F_WHOLE))
		fmt_snprintf(fs->variant, sizeof(fs->variant), "%s%s-%up", o->name, as, pages);
	else
		fmt_snprintf(fs->variant, sizeof(fs->variant), "%s%s", o->name, as);
}

/* The implementation's words and the benchmark's. */
static const char *flush_words_of(struct flush_state *fs, const struct flush_ops *o)
{
	fmt_snprintf(fs->words, sizeof(fs->words), "%s%s%s", o ? o->words : "", o ? " " : "",
		     FLUSH_NEXT_SEND);
	return fs->words;
}

/*
 * Implementation o at k = fs->k[i] targets and `pages` pages: prepared
 * first, outside any timed region, which checks the request and tells the
 * form it takes (the variant's name); then sampled and emitted.
 */
static int flush_measure(struct bench_run *r, const struct flush_ops *o, unsigned int i,
			 unsigned int pages)
{
	struct flush_state *fs = r->priv;
	const char *const *names = o->family->per_backend ? shootdown_names : call_names;
	int fell, err;

	flush_targets(r, fs->k[i]);
	fell = o->prepare(&flush_collect_set, FLUSH_VA, pages, 0, fs->why, sizeof(fs->why));
	if (fell < 0) {
		bench_emit_status(r, names[0], "ERROR", fs->why);
		status_report(STATUS_ERROR);
		return fell;
	}
	flush_name(fs, o, pages, fell == FLUSH_FELL_BACK);
	flush_sampled = o;
	fs->op_pages = pages;
	r->variant = fs->variant;
	r->words = flush_words_of(fs, o);
	bench_metrics(r, 2, names);
	/* debug=slow-eoi: a count-first target holds its EOI until the region
	 * it ended has closed (ipi/irq.c), by causality, not a fixed 2 ms. */
	ipi_irq_await_close(o->family->per_backend, bench_params.deadline_us);
	err = bench_sample(r, flush_iter);
	ipi_irq_await_close(false, 0);
	if (err)
		return -E_PROTO;
	bench_emit(r);
	return 0;
}

static void flush_skip(struct bench_run *r, const char *variant, const char *metric,
		       const char *why)
{
	r->variant = variant;
	bench_emit_status(r, metric, "SKIP", why);
	status_report(STATUS_SKIP);
}

/* Whether flush_impls[i] is its family's first implementation (families, each once). */
static bool flush_family_first(unsigned int i)
{
	for (unsigned int j = 0; j < i; j++) {
		if (flush_impls[j]->family == flush_impls[i]->family)
			return false;
	}
	return true;
}

/* The family's probe and begin; false (after a SKIP or ERROR record) when it cannot run. */
static bool flush_family_on(struct bench_run *r, const struct flush_family *fam, const char *metric)
{
	struct flush_state *fs = r->priv;
	const char *why = fam->probe ? fam->probe() : NULL;

	if (why) {
		flush_skip(r, fam->name, metric, why);
		return false;
	}
	if (fam->begin && fam->begin("the flush benchmark")) {
		fmt_snprintf(fs->why, sizeof(fs->why), "%s did not come up",
			     fam->what ? fam->what : "its set-up");
		r->variant = fam->name;
		bench_emit_status(r, metric, "ERROR", fs->why);
		status_report(STATUS_ERROR);
		return false;
	}
	return true;
}

/* --- shootdowns over the IPI backend ------------------------------------------------------- */

/* No flush: the targets' loop's own longest pass under the same collection. */
static int flush_idle_iter(struct bench_run *r, uint64_t *out)
{
	return flush_collect(r, &out[0]);
}

/* With the words of the first shootdown: the rows it is the baseline of. */
static int flush_undisturbed(struct bench_run *r)
{
	struct flush_state *fs = r->priv;
	static const char *const names[] = {"target-loss"};
	const struct flush_ops *o = NULL;

	for (unsigned int f = 0; !o && f < flush_impl_count; f++) {
		if (flush_impls[f]->family->per_backend)
			o = flush_impls[f];
	}
	r->variant = "undisturbed";
	r->words = flush_words_of(fs, o);
	for (unsigned int i = 0; i < fs->nk; i++) {
		flush_targets(r, fs->k[i]);
		bench_metrics(r, 1, names);
		if (bench_sample(r, flush_idle_iter))
			return -E_TIMEDOUT;
		bench_emit(r);
	}
	return 0;
}

/*
 * A shootdown at page count p, every target count. A whole-space flush
 * only from 2 pages on; the range flushes are the native side of the
 * crossover. Its probe is asked at its first page count, once.
 */
static int flush_shootdown(struct bench_run *r, const struct flush_ops *o, unsigned int p)
{
	struct flush_state *fs = r->priv;
	bool whole = o->flags & FLUSH_F_WHOLE;
	const char *why;

	if (whole && flush_pages[p] == 1)
		return 0;
	why = o->probe();
	if (why) {
		if (p == (whole ? 1u : 0u))
			flush_skip(r, o->name, shootdown_names[0], why);
		return 0;
	}
	for (unsigned int i = 0; i < fs->nk; i++) {
		if (flush_measure(r, o, i, flush_pages[p]))
			return -E_TIMEDOUT;
		if (!whole && !(o->flags & FLUSH_F_ASIDE))
			flush_keep_best(&fs->native_best[p][i], r);
	}
	return 0;
}

/* One per-backend family: at each page count, each of its implementations. */
static int flush_shootdown_family(struct bench_run *r, unsigned int first)
{
	const struct flush_family *fam = flush_impls[first]->family;
	int err = 0;

	if (!flush_family_on(r, fam, shootdown_names[0]))
		return 0;
	for (unsigned int p = 0; !err && p < FLUSH_NP; p++) {
		for (unsigned int f = first; !err && f < flush_impl_count; f++) {
			if (flush_impls[f]->family == fam)
				err = flush_shootdown(r, flush_impls[f], p);
		}
	}
	if (fam->end)
		fam->end("after the flush shootdowns");
	return err;
}

static int flush_shootdowns(struct bench_run *r)
{
	struct flush_state *fs = r->priv;
	int err = flush_undisturbed(r);

	__builtin_memset(fs->native_best, 0, sizeof(fs->native_best));
	for (unsigned int f = 0; !err && f < flush_impl_count; f++) {
		if (flush_impls[f]->family->per_backend && flush_family_first(f))
			err = flush_shootdown_family(r, f);
	}
	return err;
}

/* --- flush calls ----------------------------------------------------------------------------- */

/* One call at every point: a range at each page count, a whole-space one once for all. */
static int flush_call(struct bench_run *r, const struct flush_ops *o)
{
	struct flush_state *fs = r->priv;
	const char *why = o->probe();

	if (why) {
		flush_skip(r, o->name, call_names[0], why);
		return 0;
	}
	for (unsigned int i = 0; i < fs->nk; i++) {
		for (unsigned int p = 0; p < FLUSH_NP; p++) {
			bool whole = o->flags & FLUSH_F_WHOLE;

			if (flush_measure(r, o, i, whole ? 1 : flush_pages[p]))
				return -E_PROTO;
			for (unsigned int q = 0; q < FLUSH_NP; q++) {
				if (whole || q == p)
					flush_keep_best(&fs->call_best[q][i], r);
			}
			if (whole)
				break;
		}
	}
	return 0;
}

/* Every call of one family; false when one failed. */
static bool flush_call_family(struct bench_run *r, unsigned int first)
{
	const struct flush_family *fam = flush_impls[first]->family;
	int err = 0;

	for (unsigned int f = first; !err && f < flush_impl_count; f++) {
		if (flush_impls[f]->family == fam)
			err = flush_call(r, flush_impls[f]);
	}
	return !err;
}

/* Once per boot, with the backend's figures fresh: the calls do not depend on it. */
static void flush_calls(struct bench_run *r)
{
	struct flush_state *fs = r->priv;
	const struct ipi_ops *ops = r->ops;
	bool ran = false, ok = true;

	if (fs->calls_tried)
		return;
	fs->calls_tried = true;
	r->ops = NULL; /* backend "none": no IPI is sent */
	r->words = NULL;
	r->targets = NULL;
	r->ntargets = 0;
	for (unsigned int f = 0; ok && f < flush_impl_count; f++) {
		const struct flush_family *fam = flush_impls[f]->family;

		if (fam->per_backend || !flush_family_first(f) ||
		    !flush_family_on(r, fam, call_names[0]))
			continue;
		ran = true;
		ok = flush_call_family(r, f);
		if (fam->end)
			fam->end("after the flush calls, as they found it");
	}
	fs->calls_measured = ran && ok;
	r->ops = ops;
}

/* --- crossover ------------------------------------------------------------------------------- */

/*
 * The native side is the count-first INVLPG path. Linux's order (EOI
 * first, native-invlpg-after-eoi) also holds one EOI exit a target
 * where neither APICv or AVIC nor PV EOI spares it: there the native side
 * is a lower bound on what Linux pays.
 */

static void flush_emit_value(struct bench_run *r, const char *metric, uint64_t cycles)
{
	const char *names[] = {metric};

	bench_metrics(r, 1, names);
	samples_add(&r->m[0].s, cycles);
	histo_add(&r->m[0].h, cycles);
	r->iterations = 1;
	r->mark = 0;	/* derived from other samplings' figures: none of its own */
	bench_emit(r);
}

/* "(list-xmm-8p 1234 vs native-invlpg-8p 2345 cycles p50; target-loss p50 345 vs 456)" */
static void flush_compare(char *buf, size_t size, const struct flush_point *call,
			  const struct flush_point *native)
{
	fmt_snprintf(buf, size, "%s %lu vs %s %lu cycles p50; target-loss p50 %lu vs %lu",
		     call->variant, call->p50, native->variant, native->p50, call->loss,
		     native->loss);
}

/* At page count p: from which target count on the best call beats the native INVLPG path. */
static void flush_cross_targets(struct bench_run *r, unsigned int p)
{
	struct flush_state *fs = r->priv;
	uint64_t native[FLUSH_MAX_K], hv[FLUSH_MAX_K];
	unsigned int last = fs->nk - 1;
	char cmp[128];
	int x;

	for (unsigned int i = 0; i < fs->nk; i++) {
		native[i] = fs->native_best[p][i].p50;
		hv[i] = fs->call_best[p][i].p50;
	}
	x = crossover_index(native, hv, fs->nk);
	fmt_snprintf(fs->variant, sizeof(fs->variant), "%up", flush_pages[p]);
	r->variant = fs->variant;
	if (x < 0 || (unsigned int)x >= fs->nk) {
		flush_targets(r, fs->k[last]);
		flush_compare(cmp, sizeof(cmp), &fs->call_best[p][last], &fs->native_best[p][last]);
		fmt_snprintf(
		    fs->why, sizeof(fs->why),
		    "the native count-first INVLPG shootdown over %s stays cheaper for the sender up to %u targets at %u page(s) (%s)",
		    r->ops->name, fs->k[last], flush_pages[p], cmp);
		kprintf("flush: crossover: %s\n", fs->why);
		bench_emit_status(r, "crossover-targets", "SKIP", fs->why);
		return;
	}
	flush_targets(r, fs->k[x]);
	flush_compare(cmp, sizeof(cmp), &fs->call_best[p][x], &fs->native_best[p][x]);
	kprintf(
	    "flush: crossover: over %s at %u page(s) the hypercall beats the native count-first INVLPG shootdown for the sender from %u target(s) on (%s)\n",
	    r->ops->name, flush_pages[p], fs->k[x], cmp);
	flush_emit_value(r, "crossover-targets", fs->call_best[p][x].p50);
}

/* At target count fs->k[i]: from which page count on the best call wins. */
static void flush_cross_pages(struct bench_run *r, unsigned int i)
{
	struct flush_state *fs = r->priv;
	uint64_t native[FLUSH_NP], hv[FLUSH_NP];
	char cmp[128];
	int x;

	for (unsigned int p = 0; p < FLUSH_NP; p++) {
		native[p] = fs->native_best[p][i].p50;
		hv[p] = fs->call_best[p][i].p50;
	}
	x = crossover_index(native, hv, FLUSH_NP);
	flush_targets(r, fs->k[i]);
	if (x < 0 || (unsigned int)x >= FLUSH_NP) {
		fmt_snprintf(fs->variant, sizeof(fs->variant), "%up", FLUSH_CEILING);
		r->variant = fs->variant;
		flush_compare(cmp, sizeof(cmp), &fs->call_best[FLUSH_NP - 1][i],
			      &fs->native_best[FLUSH_NP - 1][i]);
		fmt_snprintf(
		    fs->why, sizeof(fs->why),
		    "the native count-first INVLPG shootdown over %s stays cheaper for the sender up to %u pages at %u target(s) (%s)",
		    r->ops->name, FLUSH_CEILING, fs->k[i], cmp);
		kprintf("flush: crossover: %s\n", fs->why);
		bench_emit_status(r, "crossover-pages", "SKIP", fs->why);
		return;
	}
	fmt_snprintf(fs->variant, sizeof(fs->variant), "%up", flush_pages[x]);
	r->variant = fs->variant;
	flush_compare(cmp, sizeof(cmp), &fs->call_best[x][i], &fs->native_best[x][i]);
	kprintf(
	    "flush: crossover: over %s at %u target(s) the hypercall beats the native count-first INVLPG shootdown for the sender from %u page(s) on (%s)\n",
	    r->ops->name, fs->k[i], flush_pages[x], cmp);
	flush_emit_value(r, "crossover-pages", fs->call_best[x][i].p50);
}

/* --- the benchmark --------------------------------------------------------------------------- */

static void flush_run(struct bench_run *r)
{
	struct flush_state *fs = &flush_state;
	int err = flush_pages_map();

	r->priv = fs;
	r->target_state = "spin";
	if (err) {
		bench_emit_status(r, "-", "ERROR", "the PML4 slot for the flush pages is taken");
		status_report(STATUS_ERROR);
		return;
	}
	flush_points(fs);
	/* What the probes read from every CPU goes through the mailboxes: before they spin. */
	if (!fs->calls_tried)
		flush_probe_early();
	flush_start(r->sender);
	err = flush_shootdowns(r);
	if (!err)
		flush_calls(r);
	if (!err && fs->calls_measured) {
		r->words = NULL;
		for (unsigned int p = 0; p < FLUSH_NP; p++)
			flush_cross_targets(r, p);
		for (unsigned int i = 0; i < fs->nk; i++)
			flush_cross_pages(r, i);
	}
	flush_finish(r->sender);
}

static const char *flush_valid(const struct ipi_ops *ops)
{
	if (ipi_is_nmi(ops))
		return "a TLB shootdown is a Fixed IPI (Linux's call-function vector), not an NMI";
	return bench_params.sender != 0 ? "a sender other than CPU 0 is not supported yet" : NULL;
}

static const struct bench bench_flush = {
    .name = "flush",
    .summary =
	"TLB shootdown: native IPI + INVLPG per page (or CR3) against the Hyper-V flush hypercalls, the sender's time and the targets' loss",
    .min_cpus = 2,
    .per_backend = true,
    .valid = flush_valid,
    .run = flush_run,
};
BENCH_REGISTER(bench_flush);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Broadcast from the sender (sender=, the BSP by default) to other CPUs,
 * all spinning, in three shapes:
 *
 *  shorthand  the all-excluding-self shorthand: one ICR write, all others
 *  set        the backend's set send (one ICR write where the destination
 *             mode allows it, per cluster in x2APIC cluster mode, else a
 *             loop the backend documents)
 *  loop       one unicast send per target
 *
 * Four metrics per iteration: what the sender paid for the send(s), the
 * first and the last target's handler entry after the send started (one-way,
 * reported only when the skew bound allows), and the time until every target
 * acknowledged on its own cache line ("broadcast-wait", the "Broadcast lock"
 * shape of ipi_benchmark without the lock). Set and loop run over 1, 2, 4, ...
 * and all targets: the scaling table. The targets are the first k CPUs
 * other than the sender, in CPU-number order.
 *
 * Outside the region, each iteration waits until every target's spin loop
 * has acknowledged again (bench_target_ack): every handler has done its
 * EOI and IRET before the next broadcast. first and last are one-way
 * figures: an iteration where any target's entry TSC reads before the
 * send's is invalid for both (counted in the records' "invalid").
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/fmt.h"

enum bcast_shape { BCAST_SHORTHAND, BCAST_SET, BCAST_LOOP };

static const char *const shape_names[] = { "shorthand", "set", "loop" };
static const char bcast_words[] = "ack=count-before-eoi next-send=after-loop-ack";

/*
 * What the broadcast benchmark keeps between calls. The regions use it by
 * name (its arrays at fixed addresses, as file statics were), not through
 * a pointer: a base register live across a region would change its code.
 */
static struct bcast_state {
	enum bcast_shape shape;
	struct cpuset targets;
	uint32_t want[MAX_CPUS];	/* each target's count once it has handled the IPI */
	char targets_text[64];
	char set_words[96];
	/* The targets as a list, in CPU-number order, made before any region (bcast_list). */
	unsigned int tlist[MAX_CPUS], tcount;
	const uint32_t *tcounts[MAX_CPUS];	/* each target's count word */
} bcast;

static void bcast_list(void)
{
	bcast.tcount = 0;
	cpuset_for_each(c, &bcast.targets) {
		bcast.tcounts[bcast.tcount] = bench_count_word((unsigned int)c);
		bcast.tlist[bcast.tcount++] = (unsigned int)c;
	}
}

/*
 * Each shape's send, with what it calls loaded into locals before the
 * region opens (always inlined into its own iteration function, so no
 * shape switch and no ops pointer load sit between the TSC reads):
 * shorthand is one call of send_allbutself; set one call of the backend's
 * send_set, whose walk of the set is its own (as Linux's
 * __x2apic_send_IPI_mask() walks its mask), or, for a backend without one,
 * the unicast loop below; loop
 * one send per entry of the precomputed list (the loop's own increment
 * and load of the next CPU number are inside the region, as in any
 * unicast loop).
 */
static inline __attribute__((always_inline)) void bcast_send(enum bcast_shape sh,
							      const struct ipi_ops *ops,
							      uint64_t *t0)
{
	void (*one)(unsigned int cpu_nr, uint8_t vector) = ops->send;
	void (*all)(uint8_t vector) = ops->send_allbutself;
	void (*set)(const struct cpuset *set, uint8_t vector) = ops->send_set;
	const unsigned int n = bcast.tcount;

	if (sh == BCAST_SET && !set)
		sh = BCAST_LOOP;
	*t0 = tsc_begin();
	if (sh == BCAST_SHORTHAND) {
		all(BENCH_VEC);
	} else if (sh == BCAST_SET) {
		set(&bcast.targets, BENCH_VEC);
	} else {
		for (unsigned int i = 0; i < n; i++)
			one(bcast.tlist[i], BENCH_VEC);
	}
}

static int bcast_lost(struct bench_run *r, unsigned int cpu_nr)
{
	bench_fail(r, "%s broadcast of vector 0x%x from CPU %u: CPU %u (APIC ID %u) did not handle it within %lu us",
		   shape_names[bcast.shape], BENCH_VEC, r->sender, cpu_nr, percpu_of[cpu_nr]->apic_id,
		   bench_params.deadline_us);
	return -E_TIMEDOUT;
}

/* After the region: every target's spin loop has its count (EOI and IRET done). */
static int bcast_settle(struct bench_run *r, uint64_t deadline)
{
	for (unsigned int i = 0; i < bcast.tcount; i++) {
		unsigned int c = bcast.tlist[i];

		if (!bench_wait_back(c, bcast.want[i], deadline))
			continue;
		bench_fail(r, "%s broadcast of vector 0x%x from CPU %u: CPU %u (APIC ID %u) handled it, but its spin loop did not resume within %lu us",
			   shape_names[bcast.shape], BENCH_VEC, r->sender, c, percpu_of[c]->apic_id,
			   bench_params.deadline_us);
		return -E_TIMEDOUT;
	}
	return 0;
}

/* first and last handler entry after t0; both BENCH_INVALID if any entry reads before t0. */
static void bcast_one_way(uint64_t t0, uint64_t *first, uint64_t *last)
{
	*first = BENCH_INVALID;
	*last = 0;
	cpuset_for_each(c, &bcast.targets) {
		uint64_t e = bench_one_way(bench_entry_tsc((unsigned int)c), t0);

		if (e == BENCH_INVALID) {
			*first = *last = BENCH_INVALID;
			return;
		}
		*first = e < *first ? e : *first;
		*last = e > *last ? e : *last;
	}
}

/*
 * One broadcast. all-ack's region goes on past the send: it polls each
 * target's count word in list order (the word's address and the count it
 * waits for are in arrays filled before the region), so it holds one
 * satisfied poll per target that was already done when its turn came.
 */
static inline __attribute__((always_inline)) int bcast_iter(struct bench_run *r, uint64_t *out,
							     enum bcast_shape sh)
{
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0, t1;
	const unsigned int n = bcast.tcount;
	unsigned int i;

	for (i = 0; i < n; i++) {
		bcast.want[i] = bench_read(bcast.tcounts[i]) + 1;
		bench_expect(bcast.tlist[i]);
	}
	irq_disable();
	bcast_send(sh, r->ops, &t0);
	t1 = bench_tsc_end();
	for (i = 0; i < n; i++) {
		if (bench_poll(bcast.tcounts[i], bcast.want[i], deadline))
			break;
	}
	out[3] = bench_tsc_end() - t0;
	irq_enable();
	if (i < n)
		return bcast_lost(r, bcast.tlist[i]);
	out[0] = t1 - t0;
	bcast_one_way(t0, &out[1], &out[2]);
	/* The loops' acknowledgements get a deadline of their own (point.c says why). */
	return bcast_settle(r, tsc_deadline_us(bench_params.deadline_us));
}

static int bcast_iter_shorthand(struct bench_run *r, uint64_t *out)
{
	return bcast_iter(r, out, BCAST_SHORTHAND);
}

static int bcast_iter_set(struct bench_run *r, uint64_t *out)
{
	return bcast_iter(r, out, BCAST_SET);
}

static int bcast_iter_loop(struct bench_run *r, uint64_t *out)
{
	return bcast_iter(r, out, BCAST_LOOP);
}

static const bench_iter_fn bcast_iters[] = { bcast_iter_shorthand, bcast_iter_set,
					     bcast_iter_loop };

/* send and all-ack always; first and last only when one-way figures hold, else a SKIP each. */
static void bcast_emit(struct bench_run *r)
{
	static char why[160];
	uint64_t skew = bench_skew_bound(r->sender, &bcast.targets);
	struct bench_metric first = r->m[1], last = r->m[2];
	struct stats st;

	if (first.invalid) {
		fmt_snprintf(
		    why, sizeof(why),
		    "one-way not reported: in %lu of %lu iterations a target's entry TSC read before the send's: the TSCs disagree by more than the latency",
		    first.invalid, r->iterations);
	} else if (stats_compute_samples(&st, &first.s) || bench_one_way_valid(skew, st.p50)) {
		bench_emit(r);
		return;
	} else if (bench_one_way_fault()) {
		fmt_snprintf(why, sizeof(why), "%s", bench_one_way_fault());
	} else {
		fmt_snprintf(
		    why, sizeof(why),
		    "one-way not reported: TSC skew bound %lu cycles (CPU %u to the targets) is not under a tenth of the first entry's p50 %lu",
		    skew, r->sender, st.p50);
	}
	r->m[1] = r->m[3];
	r->nmetrics = 2;
	bench_emit(r);
	bench_emit_withheld(r, first.name, why);
	bench_emit_withheld(r, last.name, why);
}

static int bcast_one(struct bench_run *r, unsigned int k)
{
	static const char *const names[] = { "send", "first", "last", "all-ack" };

	bench_targets_first(r, k, &bcast.targets, bcast.targets_text, sizeof(bcast.targets_text));
	r->words = bcast_words;
	if (bcast.shape == BCAST_SET && r->ops->set_writes) {
		fmt_snprintf(bcast.set_words, sizeof(bcast.set_words), "%s set-writes=%u", bcast_words,
			     r->ops->set_writes(&bcast.targets));
		r->words = bcast.set_words;
	}
	bcast_list();
	bench_metrics(r, 4, names);
	if (bench_sample_on_sender(r, bcast_iters[bcast.shape]))
		return -E_TIMEDOUT;
	bcast_emit(r);
	return 0;
}

static void bcast_run(struct bench_run *r)
{
	unsigned int others = ncpus - 1;
	struct cpuset all;

	cpuset_fill(&all, ncpus);
	cpuset_remove(&all, r->sender);
	r->target_state = "spin";
	bench_targets_spin(&all);
	for (bcast.shape = BCAST_SHORTHAND; bcast.shape <= BCAST_LOOP; bcast.shape++) {
		r->variant = shape_names[bcast.shape];
		if (bcast.shape == BCAST_SHORTHAND) {
			if (bcast_one(r, others))
				break;
			continue;
		}
		for (unsigned int k = 1;; k = k * 2 < others ? k * 2 : others) {
			if (bcast_one(r, k) || k == others)
				break;
		}
	}
	if (bench_targets_stop())
		status_report(STATUS_ERROR);
}

static const struct bench bench_broadcast = {
	.name = "broadcast",
	.summary = "to other CPUs by shorthand, set and unicast loop; send, first, last, all-ack",
	.min_cpus = 2,
	.per_backend = true,
	.run = bcast_run,
};
BENCH_REGISTER(bench_broadcast);

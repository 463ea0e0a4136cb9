// SPDX-License-Identifier: GPL-2.0-only
/*
 * Point-to-point benchmarks between a sender and one target:
 *
 *  send-cost    what the sender pays for one send (ICR write or hypercall)
 *               with the target spinning: the figure a single-target fast
 *               path moves.
 *  single       round trip: send, the target's handler runs and counts on
 *               its own cache line, the sender sees the count (the shape of
 *               kvm-unit-tests' vmexit "ipi"); plus one-way latency, sender
 *               TSC at send to target TSC at handler entry, when the boot's
 *               skew bound is small against it.
 *  single-halt  the same to a target idle in HLT (wake-up latency: what
 *               AVIC's doorbell against its wake-up path changes). The sender
 *               waits halt_gap_us before each send so the target is back in
 *               HLT; whether the host then blocks the vCPU depends on its
 *               halt polling, which the host facts record.
 *
 * The sender measures with interrupts off; each iteration waits for its
 * interrupt to be handled, so no two are ever pending together (a second
 * IRR hit would coalesce and hide a loss).
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/smp.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define SENDER_TIMEOUT_US 120000000u
#define MATRIX_MAX_CPUS 8

static char target_text[16];
static bool point_halt;

static int point_lost(struct bench_run *r)
{
	bench_fail(r, "CPU %u sent vector 0x%x to CPU %u (APIC ID %u): not handled within %lu us",
		   r->sender, BENCH_VEC, r->target, percpu_of[r->target]->apic_id,
		   bench_params.deadline_us);
	return -E_TIMEDOUT;
}

static int send_cost_iter(struct bench_run *r, uint64_t *out)
{
	uint32_t want = bench_count(r->target) + 1;
	uint64_t t0;

	bench_expect(r->target);
	irq_disable();
	t0 = tsc_begin();
	r->ops->send(r->target, BENCH_VEC);
	out[0] = bench_tsc_end() - t0;
	irq_enable();
	if (bench_wait_count(r->target, want, tsc_deadline_us(bench_params.deadline_us)))
		return point_lost(r);
	return 0;
}

static int round_trip_iter(struct bench_run *r, uint64_t *out)
{
	uint32_t want = bench_count(r->target) + 1;
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0, t1, entry;

	if (point_halt)	/* single-halt: let the target get back into HLT */
		tsc_delay_us(bench_params.halt_gap_us);
	bench_expect(r->target);
	irq_disable();
	t0 = tsc_begin();
	r->ops->send(r->target, BENCH_VEC);
	while ((int32_t)(bench_count(r->target) - want) < 0) {
		if (tsc_expired(deadline)) {
			irq_enable();
			return point_lost(r);
		}
		cpu_relax();
	}
	t1 = bench_tsc_end();
	irq_enable();
	entry = bench_entry_tsc(r->target);
	out[0] = t1 - t0;
	out[1] = (int64_t)(entry - t0) > 0 ? entry - t0 : 0;
	return 0;
}

static void point_setup(struct bench_run *r, const char *state)
{
	fmt_snprintf(target_text, sizeof(target_text), "%u", r->target);
	r->targets = target_text;
	r->ntargets = 1;
	r->target_state = state;
}

static const char *point_valid(const struct ipi_ops *ops)
{
	(void)ops;
	if (bench_default_target(bench_params.sender) == bench_params.sender)
		return "sender and target are the same CPU";
	return NULL;
}

struct sender_job {
	struct bench_run *r;
	bench_iter_fn fn;
	int err;
};

static void sample_on_sender(void *arg)
{
	struct sender_job *job = arg;

	job->err = bench_sample(job->r, job->fn);
}

/*
 * Samples on the sender CPU. An AP sender runs the loop from its mailbox
 * while the BSP waits in smp_call() with interrupts on: when the BSP is the
 * target, that wait is its spin loop. Records are printed by the BSP later.
 */
static int point_sample(struct bench_run *r, bench_iter_fn fn)
{
	struct sender_job job = { r, fn, 0 };

	bench_expect_begin();
	if (r->sender == this_cpu()->cpu) {
		job.err = bench_sample(r, fn);
		return job.err ? job.err : bench_expect_check(r);
	}
	if (smp_call(r->sender, sample_on_sender, &job, SENDER_TIMEOUT_US)) {
		kprintf("bench: %s: sender CPU %u did not finish within %u s\n", r->b->name,
			r->sender, SENDER_TIMEOUT_US / 1000000);
		status_report(STATUS_ERROR);
		return -E_TIMEDOUT;
	}
	return job.err ? job.err : bench_expect_check(r);
}

static void send_cost_run(struct bench_run *r)
{
	static const char *const names[] = { "send" };
	struct cpuset t;

	point_setup(r, "spin");
	bench_metrics(r, 1, names);
	cpuset_clear(&t);
	cpuset_add(&t, r->target);
	bench_targets_spin(&t);
	if (!point_sample(r, send_cost_iter))
		bench_emit(r);
	if (bench_targets_stop())
		status_report(STATUS_ERROR);
}

static void single_emit(struct bench_run *r, uint64_t *round_trip_p50)
{
	struct stats st;
	static char why[128];

	if (!stats_compute_samples(&st, &r->m[0].s))
		*round_trip_p50 = st.p50;
	r->nmetrics = 1;
	bench_emit(r);
	if (stats_compute_samples(&st, &r->m[1].s))
		return;
	if (bench_one_way_valid(st.p50)) {
		r->m[0] = r->m[1];
		bench_emit(r);
		return;
	}
	fmt_snprintf(why, sizeof(why),
		     "one-way not reported: TSC skew bound %lu cycles is not under a tenth of the p50 %lu",
		     tsc_skew_bound, st.p50);
	bench_emit_status(r, "one-way", "SKIP", why);
}

static uint64_t single_common(struct bench_run *r, bool halt)
{
	uint64_t p50 = 0;
	static const char *const names[] = { "round-trip", "one-way" };
	struct cpuset t;

	point_setup(r, halt ? "halt" : "spin");
	bench_metrics(r, 2, names);
	point_halt = halt;
	cpuset_clear(&t);
	if (!halt) {
		cpuset_add(&t, r->target);
		bench_targets_spin(&t);
	}
	if (!point_sample(r, round_trip_iter))
		single_emit(r, &p50);
	if (!halt && bench_targets_stop())
		status_report(STATUS_ERROR);
	return p50;
}

static void single_matrix(struct bench_run *r)
{
	static uint64_t p50[MATRIX_MAX_CPUS][MATRIX_MAX_CPUS];

	for (unsigned int snd = 0; snd < ncpus; snd++) {
		for (unsigned int tgt = 0; tgt < ncpus; tgt++) {
			r->sender = snd;
			r->target = tgt;
			p50[snd][tgt] = snd == tgt ? 0 : single_common(r, false);
		}
	}
	kprintf("single matrix on %s: round-trip p50 cycles, row = sender, column = target\n",
		r->ops->name);
	for (unsigned int snd = 0; snd < ncpus; snd++) {
		kprintf("  %3u:", snd);
		for (unsigned int tgt = 0; tgt < ncpus; tgt++)
			kprintf(" %9lu", p50[snd][tgt]);
		kprintf("\n");
	}
}

static void single_run(struct bench_run *r)
{
	if (!bench_params.matrix) {
		single_common(r, false);
		return;
	}
	if (ncpus > MATRIX_MAX_CPUS) {
		bench_emit_status(r, "round-trip", "SKIP", "matrix=1 runs on up to 8 CPUs");
		status_report(STATUS_SKIP);
		return;
	}
	single_matrix(r);
}

static const char *single_halt_valid(const struct ipi_ops *ops)
{
	if (bench_default_target(bench_params.sender) == 0)
		return "the target must be an AP: the BSP never idles in HLT";
	return point_valid(ops);
}

static void single_halt_run(struct bench_run *r)
{
	single_common(r, true);
}

static const struct bench bench_send_cost = {
	.name = "send-cost",
	.summary = "sender's cost of one send, target spinning",
	.min_cpus = 2,
	.per_backend = true,
	.valid = point_valid,
	.run = send_cost_run,
};
BENCH_REGISTER(bench_send_cost);

static const struct bench bench_single = {
	.name = "single",
	.summary = "round trip and one-way latency to a spinning target",
	.min_cpus = 2,
	.per_backend = true,
	.valid = point_valid,
	.run = single_run,
};
BENCH_REGISTER(bench_single);

static const struct bench bench_single_halt = {
	.name = "single-halt",
	.summary = "round trip and wake-up latency to a target halted in HLT",
	.min_cpus = 2,
	.per_backend = true,
	.valid = single_halt_valid,
	.run = single_halt_run,
};
BENCH_REGISTER(bench_single_halt);

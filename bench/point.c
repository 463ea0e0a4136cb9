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
 *               AVIC's doorbell against its wake-up path changes). Before
 *               each send the sender waits until the target has entered HLT
 *               again (point_wait_halted), then idles a gap.
 *               A halted vCPU woken while KVM still polls it (kvm_vcpu_halt(),
 *               up to halt_poll_ns) and one woken from a blocked state take
 *               different host paths (on AVIC: IsRunning kept, against a
 *               doorbell missed and an incomplete-IPI exit), so two passes:
 *               the `none` variant's halt_gap (50 us, inside KVM's default
 *               200 us window once the vCPU's adaptive window has grown) and
 *               the `block` variant's block_gap (10 x halt_poll_ns, at least
 *               1 ms). Each record says which the gap aims at (wake-aim=poll or
 *               wake-aim=block, from halt_poll_ns= as run.sh read it on the host)
 *               and counts its late wakes (bench_late_wakes()).
 *
 * single and single-halt also run an `ack-after-eoi` pass: the target's
 * handler writes EOI before it counts, as Linux's call-function handler
 * does, so the round trip holds the target's EOI, which is one of the two
 * things APICv and AVIC save (an exit without them). The other passes count
 * first, so their regions close before the EOI.
 *
 * On a halted target the watchdog tick is paused while it is measured, as
 * kvm-unit-tests' idle targets have none (on Intel with the VMX preemption
 * timer, each wake from HLT would switch the APIC timer between its
 * hardware and software forms twice), when a third CPU is left to watch
 * the sender; with two CPUs it stays armed. Records say which:
 * target-timer=paused|armed.
 *
 * The sender measures with interrupts off; each iteration waits for its
 * interrupt to be handled, so no two are ever pending together (a second
 * IRR hit would coalesce and hide a loss).
 *
 * Order on a spinning target: the handler stores its entry TSC, counts
 * (the acknowledgement that closes the timed region), then writes EOI and
 * returns; its spin loop then copies the count into `back` (bench.h). The
 * sender waits for `back` after the region, so the next IPI never reaches
 * a target that is still in its handler or, where EOI exits, in the host.
 * That order is in each record's flags: ack=count-before-eoi (or
 * ack=after-eoi) next-send=after-loop-ack.
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/host_read.h"
#include "include/options.h"
#include "include/smp.h"
#include "include/watchdog.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define MATRIX_MAX_CPUS 8

static const char spin_words[] = "ack=count-before-eoi next-send=after-loop-ack";
static const char spin_eoi_words[] = "ack=after-eoi next-send=after-loop-ack";

/*
 * kvm-unit-tests' x86/vmexit.c times ipi_halt as a whole loop of: send to
 * CPU 1 (idle in HLT) and wait for it to have run the call, then spin 2000
 * TSC cycles, then the next send; it reports cycles per iteration, spin
 * included. single-halt's "vmexit-gap" pass times the same loop body, so the
 * kvm-unit-tests view can set a like-for-like figure beside theirs; what
 * still differs (docs/results.md, the kvm-unit-tests view) is the harness around it.
 * Each of our samples carries its own lfence;rdtsc / rdtscp;lfence pair
 * (about dryrun_cycles), where vmexit.c times the whole loop with bare
 * RDTSC, and our untimed bookkeeping between samples gives the target a
 * little more time to get back into HLT. vmexit.c's on_cpu() handshake (a
 * lock, active_cpus, the function and data stores the target reads) is
 * shared-line traffic ours lacks. Its sender runs with IF=1, ours IF=0.
 * Its IPI entry calls the function without saving registers; ours saves
 * them and reads the TSC. Ours is the mean over the cycle budget, theirs
 * over at least 2^30 cycles. Side by side with vmexit.flat on a
 * PVM-flavoured KVM, single-halt's 50 us gap read 1.4x vmexit.c's
 * ipi_halt: a different measurement, hence this pass.
 */
#define VMEXIT_HALT_SPIN 2000

/* What the point-to-point benchmarks keep between calls, reached through r->priv. */
struct point_state {
	bool halt;		/* single-halt: the target idles in HLT between sends */
	uint32_t gap_us;	/* single-halt: idle time before each send */
	char target_text[16];	/* r->targets */
	char halt_words[192];	/* r->words of a single-halt pass */
};

static struct point_state point_state;

/* Every pass starts here: r->priv is this benchmark's state. */
static struct point_state *point_begin(struct bench_run *r, bool halt)
{
	r->priv = &point_state;
	point_state.halt = halt;
	return &point_state;
}

static inline const struct point_state *point_of(const struct bench_run *r)
{
	return r->priv;
}

/* One pass of single or single-halt. */
struct point_pass {
	const char *variant;	/* NULL: none */
	enum ipi_ack ack;
	bool block;		/* single-halt: block_gap instead of halt_gap */
};

static const struct point_pass pass_plain = { NULL, IPI_ACK_BEFORE_EOI, false };
static const struct point_pass pass_after_eoi = { "ack-after-eoi", IPI_ACK_AFTER_EOI, false };
static const struct point_pass pass_block = { "block", IPI_ACK_BEFORE_EOI, true };

static int point_lost(struct bench_run *r, const char *what)
{
	bench_fail(r, "CPU %u sent vector 0x%x to CPU %u (APIC ID %u): %s within %lu us",
		   r->sender, BENCH_VEC, r->target, percpu_of[r->target]->apic_id, what,
		   bench_params.deadline_us);
	return -E_TIMEDOUT;
}

/*
 * After the region, once the handler has counted: a spinning target's loop
 * has the count too. Its acknowledgement has a deadline of its own: the
 * count may have been seen at the last moment of the first one.
 */
static int point_back(struct bench_run *r, uint32_t want)
{
	if (!point_of(r)->halt &&
	    bench_wait_back(r->target, want, tsc_deadline_us(bench_params.deadline_us)))
		return point_lost(r, "handled, but its spin loop did not resume");
	return 0;
}

static int send_cost_iter(struct bench_run *r, uint64_t *out)
{
	/* Locals, so that nothing is loaded from memory inside the region but the send's own. */
	void (*send)(unsigned int cpu_nr, uint8_t vector) = r->ops->send;
	const unsigned int target = r->target;
	uint32_t want = bench_count(target) + 1;
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0;

	bench_expect(target);
	irq_disable();
	t0 = tsc_begin();
	send(target, BENCH_VEC);
	out[0] = bench_tsc_end() - t0;
	irq_enable();
	if (bench_wait_count(target, want, deadline))
		return point_lost(r, "not handled");
	return point_back(r, want);
}

static void point_nothing(void *arg)
{
	(void)arg;
}

/*
 * Until the target has entered HLT again after counting the last IPI sent
 * to it, bounded by the deadline: its idle loop publishes the benchmark
 * vector's count (mbox.halted_at) with IF=0 just before STI;HLT
 * (kernel/smp.c), so once that equals the count every IPI sent so far has
 * been handled and the next one finds the target halted, or takes it out
 * of that HLT. A watchdog tick that wakes it changes no count. Without
 * this wait the gap ran from the moment the sender saw the count, and a
 * target whose vCPU the host held back (a loaded host, nested KVM) for
 * longer than the gap was still on its way back from the handler when the
 * next IPI came: an iteration without a halted target, one HLT exit short.
 * Past the deadline the send goes ahead as it did before this wait: an
 * NMI that lands between that store and the HLT is counted after it, and
 * the target then halts without publishing again. Such an expiry, in a
 * measured iteration, is counted (rehalt_timeouts in the record): that
 * iteration's gap ran from the deadline, not from the target's HLT.
 * An IPI taken between that store and the HLT itself still makes the HLT
 * exit, but KVM then finds the vCPU runnable and neither polls nor blocks:
 * no kvm_vcpu_wakeup is traced for it.
 */
static bool point_wait_halted(struct bench_run *r)
{
	const uint32_t *halted_at = &percpu_of[r->target]->mbox.halted_at;
	const uint32_t count = bench_count(r->target);
	const uint64_t deadline = tsc_deadline_us(bench_params.deadline_us);

	while (load_acquire(halted_at) != count) {
		if (tsc_expired(deadline)) {
			if (r->measuring)
				r->rehalt_timeouts++;
			return false;
		}
		cpu_relax();
	}
	return true;
}

/*
 * The gap before a send to a halted target: from its latest entry into
 * HLT (point_wait_halted), halt_gap or block_gap. debug=late-wake, once a
 * sampling measures: the target is told to answer its next wake late, and
 * the gap ends only once it has begun to sit on it (IF=0), so the next
 * send meets a target that takes it 4 x late_wake late.
 */
static void point_idle_gap(struct bench_run *r)
{
	static bool late_done, mark_done;

	/* debug=no-halt-mark: the next iteration's re-halt wait runs out, once. */
	if (__builtin_expect(debug_on(DEBUG_NO_HALT_MARK) && !mark_done && r->measuring, 0) &&
	    r->target == debug_cpu_pick(ncpus)) {
		mark_done = true;
		smp_skip_next_halt_mark(r->target);
	}

	if (__builtin_expect(debug_on(DEBUG_LATE_WAKE) && !late_done && r->measuring, 0) &&
	    r->target == debug_cpu_pick(ncpus)) {
		uint64_t deadline = tsc_deadline_us(bench_params.deadline_us);

		late_done = true;
		smp_delay_next_wake(r->target, 4 * bench_params.late_wake_us);
		(void)smp_call(r->target, point_nothing, NULL, 2 * bench_params.deadline_us);
		while (!smp_wake_delay_started() && !tsc_expired(deadline))
			cpu_relax();
		return;
	}
	/* halt_gap=0 is kvm-unit-tests' ipi: the next send as soon as the last returned. */
	if (point_of(r)->gap_us) {
		(void)point_wait_halted(r);
		tsc_delay_us(point_of(r)->gap_us);
	}
}

/*
 * single-halt: the target took a timer interrupt (its watchdog tick, armed
 * on two vCPUs) between the gap's end and the region's: that wake may be a
 * tick's delay, told apart from a late one (bench_late_wakes).
 */
static __attribute__((noinline, cold)) void point_ticked(struct bench_run *r, uint64_t sample)
{
	if (!r->measuring)
		return;
	if (r->tick_n < BENCH_TICK_KEEP)
		r->tick_vals[r->tick_n++] = sample;
	r->tick_iters++;
}

/*
 * One round trip. Both flags are constants at each call site below, so
 * each instance keeps only its own code: single's and single-halt's region
 * has no trace of the vmexit-gap spin.
 */
static inline __attribute__((always_inline)) int round_trip(struct bench_run *r, uint64_t *out,
							    bool gap_before, uint64_t spin_after)
{
	void (*send)(unsigned int cpu_nr, uint8_t vector) = r->ops->send;
	const unsigned int target = r->target;
	const uint32_t *count = bench_count_word(target);
	uint32_t want = bench_read(count) + 1;
	uint64_t deadline, t0, t1;
	uint32_t ticks = 0;
	int err;

	/* single-halt: let the target get back into HLT. (Read here and after the
	 * region, not kept across it: a register held through the region moved
	 * its code under -icount.) */
	if (gap_before && point_of(r)->halt) {
		point_idle_gap(r);
		ticks = READ_ONCE(percpu_of[target]->mbox.ticks);
	}
	deadline = tsc_deadline_us(bench_params.deadline_us);
	bench_expect(target);
	irq_disable();
	t0 = tsc_begin();
	send(target, BENCH_VEC);
	err = bench_poll(count, want, deadline);
	if (spin_after && !err) {
		const uint64_t until = rdtsc() + spin_after;

		while ((int64_t)(rdtsc() - until) < 0)
			;
	}
	t1 = bench_tsc_end();
	bench_mark_region_end();
	ipi_irq_region_closed();
	irq_enable();
	if (err)
		return point_lost(r, "not handled");
	out[0] = t1 - t0;
	if (!spin_after)
		out[1] = bench_one_way(bench_entry_tsc(target), t0);
	if (gap_before && point_of(r)->halt && READ_ONCE(percpu_of[target]->mbox.ticks) != ticks)
		point_ticked(r, out[0]);
	return point_back(r, want);
}

static int round_trip_iter(struct bench_run *r, uint64_t *out)
{
	return round_trip(r, out, true, 0);
}

static int vmexit_halt_iter(struct bench_run *r, uint64_t *out)
{
	return round_trip(r, out, false, VMEXIT_HALT_SPIN);
}

/*
 * host_stats=1: the host reads the target's KVM statistics at the edges of
 * single-halt's measured iterations (kernel/host_read.c), so that the
 * record's wake path is what KVM counted (host/ipibench/kvmhost/hoststats.py).
 * At the begin edge the target spins, out of HLT, while the host reads: a
 * halt that lasted through the read (tens of ms) would end after a block
 * and reset KVM's adaptive polling window (kvm_vcpu_halt() shrinks it
 * after a halt longer than halt_poll_ns), changing the pass it should only
 * watch. Its halted_at is set stale before it is let go, so the first
 * measured iteration waits, as every other, until the target is back in
 * HLT, then idles the gap. The end edge waits for that too: the target's
 * last halt then ends after the read, one HLT exit begun and not ended, so
 * the halts counted between the reads are the measured iterations' own,
 * plus what the record says ticked. The bound is the deadline.
 */
static void point_host_edge(struct bench_run *r, bool end)
{
	struct cpuset t;

	if (end) {
		/* Not back in HLT: the host's count of halts is one off, and the record says so. */
		const bool halted = point_wait_halted(r);
		const char *state =
		    host_read_edge("end", r->host_read, r->target, bench_params.deadline_us);
		const bool answered = __builtin_strcmp(state, "answered") == 0;

		if (__builtin_strcmp(r->host_read_state, "answered") == 0)
			r->host_read_state = halted || !answered ? state : "not-rehalted";
		return;
	}
	r->host_read = host_read_next();
	cpuset_clear(&t);
	cpuset_add(&t, r->target);
	bench_targets_spin(&t);
	r->host_read_state = host_read_edge("begin", r->host_read, r->target,
					    bench_params.deadline_us);
	/* Spinning, out of its idle loop: nobody else writes the word now. */
	WRITE_ONCE(percpu_of[r->target]->mbox.halted_at, bench_count(r->target) - 1);
	if (bench_targets_stop())
		status_report(STATUS_ERROR);
}

static void point_setup(struct bench_run *r, const char *state)
{
	struct point_state *ps = r->priv;

	fmt_snprintf(ps->target_text, sizeof(ps->target_text), "%u", r->target);
	r->targets = ps->target_text;
	r->ntargets = 1;
	r->target_state = state;
	r->words = ps->halt ? ps->halt_words : spin_words;
	/* Each pass counts its own late wakes and ticked iterations. */
	r->has_late = false;
	r->tick_iters = r->late_ticks = 0;
	r->tick_n = 0;
	r->rehalt_timeouts = 0;
	r->host_edge = ps->halt && bench_params.host_stats ? point_host_edge : NULL;
	r->host_read = 0;
}

static const char *point_valid(const struct ipi_ops *ops)
{
	(void)ops;
	if (bench_default_target(bench_params.sender) == bench_params.sender)
		return "sender and target are the same CPU";
	return NULL;
}

static void send_cost_run(struct bench_run *r)
{
	static const char *const names[] = { "send" };
	struct cpuset t;

	(void)point_begin(r, false);
	point_setup(r, "spin");
	bench_metrics(r, 1, names);
	cpuset_clear(&t);
	cpuset_add(&t, r->target);
	bench_targets_spin(&t);
	if (!bench_sample_on_sender(r, send_cost_iter))
		bench_emit(r);
	if (bench_targets_stop())
		status_report(STATUS_ERROR);
}

static void single_emit(struct bench_run *r, uint64_t *round_trip_p50)
{
	struct stats st;
	uint64_t skew = tsc_skew_pair(r->sender, r->target);
	static char why[160];

	if (!stats_compute_samples(&st, &r->m[0].s))
		*round_trip_p50 = st.p50;
	r->nmetrics = 1;
	bench_emit(r);
	if (stats_compute_samples(&st, &r->m[1].s)) {
		r->m[0] = r->m[1];
		bench_emit(r);	/* every sample invalid: a SKIP that says so */
		return;
	}
	if (r->m[1].invalid) {
		fmt_snprintf(
		    why, sizeof(why),
		    "one-way not reported: %lu of %lu deltas below 0 (CPU %u to CPU %u): the TSCs disagree by more than the latency, whatever the skew bound said",
		    r->m[1].invalid, r->iterations, r->sender, r->target);
		bench_emit_withheld(r, "one-way", why);
		return;
	}
	if (bench_one_way_valid(skew, st.p50)) {
		r->m[0] = r->m[1];
		bench_emit(r);
		return;
	}
	if (bench_one_way_fault()) {
		bench_emit_withheld(r, "one-way", bench_one_way_fault());
		return;
	}
	fmt_snprintf(
	    why, sizeof(why),
	    "one-way not reported: TSC skew bound %lu cycles (CPU %u to CPU %u) is not under a tenth of the p50 %lu",
	    skew, r->sender, r->target, st.p50);
	bench_emit_withheld(r, "one-way", why);
}

static void point_tick_pause(void *arg)
{
	(void)arg;
	lapic_tick_pause();
}

static void point_tick_resume(void *arg)
{
	(void)arg;
	lapic_tick_resume();
}

/* What point_target_timer() returns when the target did not take its call. */
static const char point_timer_unknown[] = "unknown";

/*
 * A halted target's watchdog tick: paused while it is measured when some
 * third CPU is left to watch the sender (with two, nobody else would).
 * Returns what the records say, or point_timer_unknown when the target did
 * not take the call in time: its mailbox wake IPI was lost, or the CPU is
 * stuck, and it may still run the call, late, in the middle of a pass. The
 * caller then measures nothing (point_timer_failed()).
 */
static const char *point_target_timer(const struct bench_run *r, bool pause)
{
	if (!watchdog_on() || ncpus < 3)
		return "armed";
	if (smp_call(r->target, pause ? point_tick_pause : point_tick_resume, NULL,
		     2 * bench_params.deadline_us)) {
		kprintf(
		    "bench: CPU %u did not take the call to %s its watchdog tick within %lu ms (its wake IPI lost, or the CPU stuck)\n",
		    r->target, pause ? "pause" : "resume", 2 * bench_params.deadline_us / 1000);
		status_report(STATUS_ERROR);
		return point_timer_unknown;
	}
	return "paused";
}

/* After a pause call the target did not take: the pass's records are ERRORs, no figures. */
static bool point_timer_failed(struct bench_run *r, const char *timer, const char *metric)
{
	if (timer != point_timer_unknown)
		return false;
	bench_emit_status(r, metric, "ERROR",
			  "the target did not take the call that pauses its watchdog tick");
	return true;
}

/* point_target_timer(r, true), kept in r for the kvm-unit-tests view's notes. */
static const char *point_pause_target_timer(struct bench_run *r)
{
	r->target_timer = point_target_timer(r, true);
	return r->target_timer;
}

/*
 * single-halt's words: the ack order, the gap, and what the gap aims at
 * against the host's halt polling. wake-aim=poll is an aim, not a fact: KVM
 * polls only while its vCPU's adaptive window (grown from 0 by
 * halt_poll_ns_grow after short halts, 10, 20, 40, 80 us within the
 * warm-up here, clamped to halt_poll_ns) covers the
 * halt and nothing else is runnable on that host CPU (kvm_vcpu_can_poll():
 * single_task_running()); a gap under half of halt_poll_ns keeps the halt
 * inside it (the gap runs from the target's entry into HLT, its EOI and
 * IRET before it). The host trace says what happened (kvm_vcpu_wakeup,
 * host/ipibench/kvmhost/trace.py).
 */
static void point_halt_words(struct point_state *ps, const struct point_pass *pass,
			     const char *next_send, const char *timer)
{
	const uint64_t poll = bench_params.halt_poll_ns;
	const uint32_t grow = bench_params.halt_poll_grow;
	const char *wake = grow && (uint64_t)ps->gap_us * 2000 < poll ? "poll" : "block";

	fmt_snprintf(
	    ps->halt_words, sizeof(ps->halt_words),
	    "ack=%s next-send=%s halt-gap-us=%u wake-aim=%s halt-poll-ns=%s%lu halt-poll-grow=%s%u target-timer=%s",
	    pass->ack == IPI_ACK_AFTER_EOI ? "after-eoi" : "count-before-eoi", next_send,
	    ps->gap_us, wake, bench_params.halt_poll_known ? "" : "assumed-", poll,
	    bench_params.halt_grow_known ? "" : "assumed-", grow, timer);
}

static uint64_t single_common(struct bench_run *r, bool halt, const struct point_pass *pass)
{
	uint64_t p50 = 0;
	static const char *const names[] = { "round-trip", "one-way" };
	const char *timer = NULL;
	struct point_state *ps;
	struct cpuset t;

	if (pass->ack == IPI_ACK_AFTER_EOI && ipi_is_nmi(r->ops)) {
		(void)point_begin(r, halt);
		point_setup(r, halt ? "halt" : "spin");
		r->variant = pass->variant;
		bench_emit_status(r, "round-trip", "SKIP", "an NMI takes no EOI: nothing to order");
		status_report(STATUS_SKIP);
		return 0;
	}
	if (pass->ack == IPI_ACK_AFTER_EOI && (r->ops->flags & IPI_F_UPCALL)) {
		(void)point_begin(r, halt);
		point_setup(r, halt ? "halt" : "spin");
		r->variant = pass->variant;
		bench_emit_status(r, "round-trip", "SKIP",
				  "the upcall's own EOI, if any, comes before every count: nothing to order");
		status_report(STATUS_SKIP);
		return 0;
	}

	ps = point_begin(r, halt);
	point_setup(r, halt ? "halt" : "spin");
	r->variant = pass->variant;
	if (halt) {
		ps->gap_us = pass->block ? bench_block_gap_us() : bench_params.halt_gap_us;
		timer = point_pause_target_timer(r);
		if (point_timer_failed(r, timer, "round-trip"))
			return 0;
		point_halt_words(ps, pass, ps->gap_us ? "after-rehalt-and-gap" : "after-ack", timer);
	} else {
		r->words = pass->ack == IPI_ACK_AFTER_EOI ? spin_eoi_words : spin_words;
	}
	bench_metrics(r, 2, names);
	cpuset_clear(&t);
	if (!halt) {
		cpuset_add(&t, r->target);
		bench_targets_spin(&t);
	}
	ipi_irq_ack_order(BENCH_VEC, pass->ack);
	ipi_irq_await_close(true, bench_params.deadline_us);
	if (!bench_sample_on_sender(r, round_trip_iter)) {
		if (halt)
			bench_late_wakes(r, 0);
		single_emit(r, &p50);
	}
	ipi_irq_await_close(false, 0);
	ipi_irq_ack_order(BENCH_VEC, IPI_ACK_BEFORE_EOI);
	if (!halt && bench_targets_stop())
		status_report(STATUS_ERROR);
	if (timer)
		(void)point_target_timer(r, false);
	return p50;
}

static void single_matrix(struct bench_run *r)
{
	static uint64_t p50[MATRIX_MAX_CPUS][MATRIX_MAX_CPUS];

	for (unsigned int snd = 0; snd < ncpus; snd++) {
		for (unsigned int tgt = 0; tgt < ncpus; tgt++) {
			r->sender = snd;
			r->target = tgt;
			p50[snd][tgt] = snd == tgt ? 0 : single_common(r, false, &pass_plain);
		}
	}
	/*
	 * A header of target CPU numbers, "-" where a CPU would send to itself,
	 * "n/a" for a pair without a figure (its record says why).
	 */
	kprintf("single matrix on %s: round-trip p50 cycles, row = sender, column = target\n",
		r->ops->name);
	kprintf("  snd\\tgt");
	for (unsigned int tgt = 0; tgt < ncpus; tgt++)
		kprintf(" %9u", tgt);
	kprintf("\n");
	for (unsigned int snd = 0; snd < ncpus; snd++) {
		kprintf("  %7u", snd);
		for (unsigned int tgt = 0; tgt < ncpus; tgt++) {
			if (snd == tgt)
				kprintf(" %9s", "-");
			else if (!p50[snd][tgt])
				kprintf(" %9s", "n/a");
			else
				kprintf(" %9lu", p50[snd][tgt]);
		}
		kprintf("\n");
	}
}

static void single_run(struct bench_run *r)
{
	if (!bench_params.matrix) {
		single_common(r, false, &pass_plain);
		single_common(r, false, &pass_after_eoi);
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

/* vmexit.c's ipi_halt, for the kvm-unit-tests view; it has no hypercall rows. */
static void vmexit_halt_pass(struct bench_run *r)
{
	static const char *const names[] = { "round-trip" };
	struct point_state *ps = point_begin(r, true);
	const char *timer;

	point_setup(r, "halt");
	r->variant = "vmexit-gap";
	ps->gap_us = 0;
	timer = point_pause_target_timer(r);
	if (point_timer_failed(r, timer, "round-trip"))
		return;
	point_halt_words(ps, &pass_plain, "after-2000-cycle-spin-in-region", timer);
	bench_metrics(r, 1, names);
	if (!bench_sample_on_sender(r, vmexit_halt_iter)) {
		bench_late_wakes(r, 0);
		bench_emit(r);
	}
	(void)point_target_timer(r, false);
}

/*
 * The poll pass first: its warm-up grows the target's adaptive halt-poll
 * window; the block pass's warm-up then shrinks it again.
 */
static void single_halt_run(struct bench_run *r)
{
	single_common(r, true, &pass_plain);
	single_common(r, true, &pass_after_eoi);
	single_common(r, true, &pass_block);
	if (r->ops->flags & IPI_F_HYPERCALL)
		return;	/* vmexit.c's ipi_halt has no hypercall counterpart: no row */
	if (ipi_is_nmi(r->ops)) {
		r->variant = "vmexit-gap";
		bench_emit_status(r, "round-trip", "SKIP",
				  "kvm-unit-tests' ipi_halt is a Fixed IPI: no NMI counterpart");
		status_report(STATUS_SKIP);
		return;
	}
	vmexit_halt_pass(r);
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

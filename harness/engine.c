// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmark engine: the registry walk, calibrated sampling, the target
 * side (CPUs spinning with interrupts on), and the records. Only the BSP
 * prints, and never inside a timed region.
 *
 * The stall watchdog (include/watchdog.h) learns each CPU's part from here,
 * never between a region's TSC reads: a sampling is WATCH_SAMPLING with a
 * step after each warm-up and calibration iteration, then WATCH_MEASURING
 * with twice the calibrated time of its iterations as budget and no step
 * until the last; bench_on_sender()'s loop is WATCH_SENDER (the sender
 * timeout as budget); a spinning target is WATCH_TARGET, not watched: its
 * sender's deadlines bound every wait on it.
 */
#include "harness/kut_view.h"
#include "harness/trust_probe.h"
#include "include/bench.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/lava.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/late_wake.h"
#include "lib/record.h"
#include "lib/sort.h"

#define CALIBRATE_ITERS 16
#define DRYRUN_ITERS 1024
#define BENCH_FLAGS_MAX 256

extern const struct bench *const __bench_registry_start[], *const __bench_registry_end[];

uint64_t bench_dryrun_cycles;
unsigned int bench_results_printed;
static uint64_t *sample_bufs[BENCH_MAX_METRICS];
static uint32_t spin_stop __cacheline_aligned;
static struct cpuset spinning;

uint32_t bench_expected[MAX_CPUS];
static uint32_t count_at_begin[MAX_CPUS];

void bench_expect_begin(void)
{
	for (unsigned int c = 0; c < ncpus; c++) {
		bench_expected[c] = 0;
		count_at_begin[c] = bench_count(c);
	}
}

int bench_expect_check(struct bench_run *r)
{
	int err = 0;

	for (unsigned int c = 0; c < ncpus; c++) {
		uint32_t got = bench_count(c) - count_at_begin[c];

		if (got == bench_expected[c])
			continue;
		bench_fail(r, "CPU %u (APIC ID %u) handled %u IPIs of vector 0x%x for %u sent to it",
			   c, percpu_of[c]->apic_id, got, BENCH_VEC, bench_expected[c]);
		err = -E_PROTO;
	}
	return err;
}

int bench_wait_back(unsigned int cpu_nr, uint32_t want, uint64_t deadline)
{
	return bench_poll(&percpu_of[cpu_nr]->irq.back, want, deadline);
}

void bench_targets_first(struct bench_run *r, unsigned int k, struct cpuset *set, char *text,
			 size_t size)
{
	unsigned int added = 0;

	cpuset_clear(set);
	for (unsigned int c = 0; c < ncpus && added < k; c++) {
		if (c != r->sender) {
			cpuset_add(set, c);
			added++;
		}
	}
	cpuset_format(set, text, size);
	r->targets = text;
	r->ntargets = k;
}

uint64_t bench_skew_bound(unsigned int sender, const struct cpuset *targets)
{
	uint64_t worst = 0;

	cpuset_for_each(c, targets) {
		uint64_t b = tsc_skew_pair(sender, (unsigned int)c);

		worst = b > worst ? b : worst;
	}
	return worst;
}

const char *bench_one_way_fault(void)
{
	return debug_on(DEBUG_WITHHOLD_ONE_WAY)
		       ? "one-way not reported: withheld by debug=withhold-one-way (fault injection)"
		       : NULL;
}

bool bench_one_way_valid(uint64_t skew_bound, uint64_t p50_cycles)
{
	/*
	 * Trust a one-way figure only when the skew bound is under a tenth of
	 * it. debug=withhold-one-way withholds every one as a skewed TSC would,
	 * so that a test can hold what must not depend on it (the sampling's
	 * exits) against a run that reported them.
	 */
	if (debug_on(DEBUG_WITHHOLD_ONE_WAY))
		return false;
	return tsc_skew_consistent && skew_bound <= p50_cycles / 10;
}

unsigned int bench_late_cpu = ~0u;	/* expire-deadline: the target that answers late */

/* Each target's "in my loop now" for the latest bench_targets_spin(), one line each. */
static struct {
	uint32_t epoch;
} __cacheline_aligned spin_ready[MAX_CPUS];
static uint32_t spin_epoch;

/* Fault injection on a spinning target (debug keys, docs/command-line.md). */
static void spin_debug(void)
{
	unsigned int me = this_cpu()->cpu;
	unsigned int victim = debug_cpu_pick(ncpus);

	if (debug_on(DEBUG_FAULT_AP_BENCH) && me == victim)
		asm volatile("ud2");
}

/* One pass of a target's spin loop: the second acknowledgement; PAUSE only under TCG. */
static inline void spin_pass(void)
{
	bench_target_ack();
	if (poll_yield)
		cpu_relax();
}

/*
 * A spinning target: IF=1, polling bare (bench_poll says why; PAUSE only
 * under an emulator), acknowledging each benchmark-vector interrupt a
 * second time from the loop (bench_target_ack). It says when it is in the
 * loop, so that no first iteration finds it still idle in HLT.
 */
static void spin_until_stopped(void *arg)
{
	unsigned int me = this_cpu()->cpu;
	bool late = me == READ_ONCE(bench_late_cpu);

	(void)arg;
	(void)watch_enter(WATCH_TARGET, 0, NULL, 0); /* the mailbox loop restores its phase */
	/* Before it says it is ready: from then on nothing but its loop (the sender times it). */
	watch_wait("spin_stop", -1, &spin_stop, sizeof(spin_stop), 1);
	spin_debug();
	/* debug=expire-deadline: late, not lost: the IPI is taken once IF is back on. */
	late ? irq_disable() : irq_enable();
	bench_target_ack();
	store_release(&spin_ready[me].epoch, load_acquire(&spin_epoch));
	if (late) {
		tsc_delay_us(20000);
		irq_enable();
	}
	while (!load_acquire(&spin_stop))
		spin_pass();
}

void bench_targets_spin(const struct cpuset *cpus)
{
	uint64_t deadline;
	uint32_t epoch = spin_epoch + 1;

	store_release(&spin_stop, 0);
	store_release(&spin_epoch, epoch);
	spinning = *cpus;
	cpuset_for_each(c, cpus) {
		if ((unsigned int)c != this_cpu()->cpu)
			smp_post((unsigned int)c, spin_until_stopped, NULL);
	}
	deadline = tsc_deadline_us(bench_params.deadline_us);
	cpuset_for_each(c, cpus) {
		if ((unsigned int)c == this_cpu()->cpu)
			continue;
		watch_wait("spin_ready epoch", c, &spin_ready[c].epoch, sizeof(spin_ready[c].epoch),
			   epoch);
		if (bench_poll(&spin_ready[c].epoch, epoch, deadline)) {
			kprintf("bench: CPU %d did not start spinning within %lu us\n", c,
				bench_params.deadline_us);
			status_report(STATUS_ERROR);
		}
	}
	watch_wait_end();
}

int bench_targets_stop(void)
{
	/* A target may still be finishing a late interrupt: a second more. */
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us + 1000000);
	int err = 0;

	store_release(&spin_stop, 1);
	cpuset_for_each(c, &spinning) {
		if ((unsigned int)c != this_cpu()->cpu && smp_wait((unsigned int)c, deadline)) {
			kprintf("bench: CPU %d did not leave its spin loop\n", c);
			err = -E_TIMEDOUT;
		}
	}
	cpuset_clear(&spinning);
	return err;
}

/* What bench_on_sender() runs on the sender. */
struct on_sender {
	void (*fn)(void *);
	void *arg;
};

/* fn(arg) as the watchdog's WATCH_SENDER: the budget the BSP gives an AP sender. */
static void on_sender_run(void *arg)
{
	const struct on_sender *job = arg;
	struct watch_saved saved = watch_enter(WATCH_SENDER, BENCH_SENDER_TIMEOUT_US, NULL, 0);

	job->fn(job->arg);
	watch_restore(&saved);
}

/*
 * The BSP's spin loop while an AP sender runs: the APs' loop (one load of a
 * line the stopper writes once, the second acknowledgement, PAUSE only
 * under TCG), with the deadline read every BENCH_POLLS passes. The late
 * injection of debug=expire-deadline applies here too, IF off from before
 * the sender starts. Meanwhile the BSP is a target (not watched) and the
 * sender is watched.
 */
int bench_on_sender(unsigned int sender, void (*fn)(void *), void *arg)
{
	struct percpu *me = this_cpu();
	bool late = me->cpu == READ_ONCE(bench_late_cpu);
	struct on_sender job = { fn, arg };
	struct watch_saved saved;
	uint64_t deadline;
	unsigned int pass = 0;

	if (sender == me->cpu) {
		on_sender_run(&job);
		return 0;
	}
	saved = watch_enter(WATCH_TARGET, 0, NULL, 0);
	late ? irq_disable() : irq_enable();
	/* Before the post, for the req it makes: once posted, this CPU is the sender's target. */
	watch_wait("mailbox ack", (int)sender, &percpu_of[sender]->mbox.ack, sizeof(uint64_t),
		   READ_ONCE(percpu_of[sender]->mbox.req) + 1);
	smp_post(sender, on_sender_run, &job);
	if (late) {
		tsc_delay_us(20000);
		irq_enable();
	}
	deadline = tsc_deadline_us(BENCH_SENDER_TIMEOUT_US);
	while (smp_busy(sender)) {
		spin_pass();
		if (++pass % BENCH_POLLS == 0 && tsc_expired(deadline)) {
			/* It may still be running on our stack and our sample buffers:
			 * nothing after this can be trusted, so the plan ends here. */
			kprintf("bench: sender CPU %u did not finish within %u s; stopping the plan\n",
				sender, BENCH_SENDER_TIMEOUT_US / 1000000);
			status_exit(STATUS_ERROR);
		}
	}
	watch_restore(&saved);
	return 0;
}

struct sender_job {
	struct bench_run *r;
	bench_iter_fn fn;
	int err;
};

static void sample_on_sender(void *arg)
{
	struct sender_job *job = arg;

	if (job->r->sender_begin)
		job->r->sender_begin();
	job->err = bench_sample(job->r, job->fn);
	if (job->r->sender_end)
		job->r->sender_end();
}

int bench_sample_on_sender(struct bench_run *r, bench_iter_fn fn)
{
	struct sender_job job = { r, fn, 0 };

	bench_expect_begin();
	if (bench_on_sender(r->sender, sample_on_sender, &job))
		return -E_TIMEDOUT;
	return job.err ? job.err : bench_expect_check(r);
}

void bench_metrics(struct bench_run *r, unsigned int n, const char *const *names)
{
	r->nmetrics = n;
	for (unsigned int i = 0; i < n; i++) {
		if (!sample_bufs[i])
			sample_bufs[i] = mm_alloc(BENCH_SAMPLE_CAP * sizeof(uint64_t), CACHELINE);
		r->m[i].name = names[i];
		samples_init(&r->m[i].s, sample_bufs[i], BENCH_SAMPLE_CAP, 0x1b7 + i);
		histo_init(&r->m[i].h);
		r->m[i].invalid = 0;
	}
}

static void bench_keep(struct bench_run *r, const uint64_t *out)
{
	for (unsigned int i = 0; i < r->nmetrics; i++) {
		if (out[i] == BENCH_INVALID) {
			r->m[i].invalid++;
			continue;
		}
		samples_add(&r->m[i].s, out[i]);
		histo_add(&r->m[i].h, out[i]);
	}
}

/*
 * Iterations that fit the budget, from the median (*per, cycles) of a few
 * timed ones; a watchdog step after each, outside its TSC reads. When
 * iters= is at or below the floor (min_iters is clamped to it), the count
 * is iters= whatever the budget says: one timed iteration then, for the
 * measuring phase's watchdog budget alone. A short run (the KVM lane's
 * iters=3, where each iteration is ~100k cycles an exit) would otherwise
 * spend 16 of every 20 iterations calibrating a count it cannot change.
 */
static int bench_calibrate(struct bench_run *r, bench_iter_fn fn, uint64_t *iters, uint64_t *per)
{
	uint64_t t[CALIBRATE_ITERS], out[BENCH_MAX_METRICS] = { 0 };
	uint64_t budget = tsc_us_to_cycles(bench_params.budget_us);
	const bool fixed = bench_params.min_iters >= bench_params.max_iters;
	const int n = fixed ? 1 : CALIBRATE_ITERS;

	for (int i = 0; i < n; i++) {
		uint64_t t0 = rdtsc();
		int err = fn(r, out);

		if (err)
			return err;
		t[i] = rdtsc() - t0;
		watch_step();
	}
	sort_u64(t, (size_t)n);
	*per = t[n / 2] ? t[n / 2] : 1;
	*iters = budget / *per;	/* fixed: the clamps below give max_iters */
	if (*iters < bench_params.min_iters)
		*iters = bench_params.min_iters;
	if (*iters > bench_params.max_iters)
		*iters = bench_params.max_iters;
	return 0;
}

static uint32_t mark_seq;

static void bench_mark_begin(struct bench_run *r)
{
	r->mark = 0;
	if (!bench_params.markers)
		return;
	r->mark = ++mark_seq;
	outl(BENCH_MARK_PORT, r->mark << 1);
}

static void bench_mark_end(const struct bench_run *r)
{
	if (r->mark)
		outl(BENCH_MARK_PORT, r->mark << 1 | 1);
}

/*
 * The watchdog's budget for the measured iterations: twice what the
 * calibration says they take, and one halt gap for an iteration that waits
 * longer than the others.
 */
static uint64_t bench_measure_budget_us(uint64_t iters, uint64_t per)
{
	uint64_t ms = iters * per / (tsc_khz ? tsc_khz : 1) + 1;

	return 2 * ms * 1000 + bench_params.halt_gap_us;
}

/*
 * debug=stall: debug_cpu, measuring on a backend, spins with interrupts off
 * for good, as a CPU stuck in a hypercall would stay, and only another
 * CPU's watchdog can end the run. No PAUSE: round-robin TCG (one host
 * thread for every vCPU) still moves on to the other vCPUs, its kick timer
 * ends a vCPU's turn every 100 ms of virtual time whatever it runs (the
 * boot tests show it), and multi-threaded TCG or KVM run them in parallel.
 */
static void bench_stall_debug(const struct bench_run *r)
{
	if (!debug_on(DEBUG_STALL) || !r->ops || this_cpu()->cpu != debug_cpu_pick(ncpus))
		return;
	irq_disable();
	for (;;)
		asm volatile("" ::: "memory");
}

int bench_sample(struct bench_run *r, bench_iter_fn fn)
{
	uint64_t out[BENCH_MAX_METRICS] = { 0 }, iters, per;
	struct watch_saved saved =
	    watch_enter(WATCH_SAMPLING, bench_params.halt_gap_us, r->variant, 0);
	int err = 0;

	for (uint64_t i = 0; i < bench_params.warmup && !err; i++) {
		err = fn(r, out);
		watch_step();
	}
	if (!err)
		err = bench_calibrate(r, fn, &iters, &per);
	if (err)
		goto out;
	if (r->host_edge)
		r->host_edge(r, false);
	(void)watch_enter(WATCH_MEASURING, bench_measure_budget_us(iters, per), r->variant, iters);
	bench_stall_debug(r);
	bench_mark_begin(r);
	r->measuring = true;
	for (uint64_t i = 0; i < iters && !err; i++) {
		err = fn(r, out);
		if (!err)
			bench_keep(r, out);
		/* Between regions: a host that slows down mid-record is progress, not a stall. */
		watch_step();
	}
	r->measuring = false;
	bench_mark_end(r);
	if (r->host_edge)
		r->host_edge(r, true);
	r->iterations = iters;
out:
	watch_restore(&saved);
	return err;
}

/* The backend's delivery flags, then the benchmark's own words. */
static void bench_flags_text(const struct bench_run *r, char *buf, size_t size)
{
	int len = 0;

	buf[0] = 0;
	if (r->ops)
		len = ipi_flags_format(r->ops, buf, size);
	if (len >= 0 && r->words && *r->words)
		fmt_snprintf(buf + len, size - (size_t)len, "%s%s", len ? " " : "", r->words);
}

static void bench_print(const struct result *res)
{
	static char line[RECORD_MAX];

	if (record_table_row(line, sizeof(line), res) >= 0)
		kprintf("%s\n", line);
	if (record_result(line, sizeof(line), res) >= 0) {
		kprintf("%s\n", line);
		bench_results_printed++;
		lava_result(res);
	}
	else
		kprintf("bench: record for %s/%s did not fit %u bytes\n", res->bench,
			res->metric, RECORD_MAX);
}

static struct result bench_result(const struct bench_run *r, const char *metric, char *flags,
				  size_t flags_size)
{
	bench_flags_text(r, flags, flags_size);
	return (struct result){
		.bench = r->b->name,
		.metric = metric,
		.variant = r->variant,
		.backend = r->ops ? r->ops->name : NULL,
		.flags = flags,
		.target_state = r->target_state,
		.sender = r->sender,
		.targets = r->targets,
		.ntargets = r->ntargets,
		.iterations = r->iterations,
		.mark = r->mark,
		.host_read = r->host_read,
		.host_read_state = r->host_read_state,
		.tsc_khz = tsc_khz,
		.dryrun_cycles = bench_dryrun_cycles,
		.untrusted = trust_figure_ids(),
		.after_x2apic = READ_ONCE(lapic_x2apic_entered),
		.has_late = r->has_late,
		.late_count = r->late_count,
		.late_bound = r->late_bound,
		.late_max = r->late_max,
		.tick_iters = r->tick_iters,
		.late_ticks = r->late_ticks,
		.rehalt_timeouts = r->rehalt_timeouts,
	};
}

void bench_emit(struct bench_run *r)
{
	char flags[BENCH_FLAGS_MAX];

	for (unsigned int i = 0; i < r->nmetrics; i++) {
		struct result res = bench_result(r, r->m[i].name, flags, sizeof(flags));
		struct stats st;

		if (stats_compute_samples(&st, &r->m[i].s)) {
			if (r->m[i].invalid)
				bench_emit_withheld(
				    r, r->m[i].name,
				    "every sample was invalid (a one-way delta below 0: the TSCs disagree by more than the latency)");
			continue;
		}
		res.invalid = r->m[i].invalid;
		res.st = &st;
		res.histo = &r->m[i].h;
		res.status = "SUCCESS";
		bench_print(&res);
		kut_view_note(r, r->m[i].name, st.mean);
	}
}

/*
 * A late wake: a kept sample over ten times the median or late_wake,
 * whichever is more. It stays in the figures (mean, p99 and max hold it);
 * past BENCH_SAMPLE_CAP samples the count is of the reservoir's.
 */
void bench_late_wakes(struct bench_run *r, unsigned int m)
{
	struct samples *s = &r->m[m].s;
	uint64_t floor = bench_params.late_wake_us * tsc_khz / 1000;
	struct late_wakes w;
	struct stats st;

	r->has_late = false;
	/* Sorts the kept samples in place, as every record's statistics do. */
	if (stats_compute_samples(&st, s))
		return;
	r->late_bound = st.p50 * 10 > floor ? st.p50 * 10 : floor;
	/* The ticked samples are the round trip's (metric 0): one event, one count. */
	w = late_wakes_count(s->buf, s->len, r->late_bound, m == 0 ? r->tick_vals : NULL,
			     m == 0 ? r->tick_n : 0);
	r->late_count = w.late;
	r->late_max = w.late_max;
	r->late_ticks = w.by_tick;
	r->has_late = true;
}

static void bench_emit_bare(struct bench_run *r, const char *metric, const char *status,
			    const char *reason, bool of_sampling)
{
	char flags[BENCH_FLAGS_MAX];
	struct result res = bench_result(r, metric, flags, sizeof(flags));

	res.status = status;
	res.reason = reason;
	res.iterations = 0;
	if (!of_sampling)
		res.mark = 0;
	bench_print(&res);
}

void bench_emit_status(struct bench_run *r, const char *metric, const char *status,
		       const char *reason)
{
	bench_emit_bare(r, metric, status, reason, false);
}

void bench_emit_withheld(struct bench_run *r, const char *metric, const char *reason)
{
	bench_emit_bare(r, metric, "SKIP", reason, true);
}

void bench_fail(struct bench_run *r, const char *fmt, ...)
{
	static char reason[256];
	va_list ap;

	va_start(ap, fmt);
	fmt_vsnprintf(reason, sizeof(reason), fmt, ap);
	va_end(ap);
	kprintf("bench: FAILURE: %s on %s: %s\n", r->b->name, r->ops ? r->ops->name : "-",
		reason);
	bench_emit_status(r, r->nmetrics ? r->m[0].name : "-", "FAILURE", reason);
	status_report(STATUS_FAILURE);
}

/*
 * The empty timed region in the shape of every wait: open it, poll once an
 * acknowledgement that is already there, close it. So the harness cost
 * printed beside a figure is the harness cost inside its region.
 */
static uint64_t dryrun_once(void)
{
	const uint32_t *word = bench_count_word(this_cpu()->cpu);
	uint32_t want = bench_read(word);
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0;

	t0 = tsc_begin();
	(void)bench_poll(word, want, deadline);
	return bench_tsc_end() - t0;
}

static int dryrun_iter(struct bench_run *r, uint64_t *out)
{
	(void)r;
	out[0] = dryrun_once();
	return 0;
}

static void dryrun_measure_here(void *arg)
{
	(void)arg;
	bench_measure_dryrun();
}

void bench_measure_dryrun_on_sender(void)
{
	if (bench_params.sender == this_cpu()->cpu || bench_params.sender >= ncpus)
		return;
	bench_on_sender(bench_params.sender, dryrun_measure_here, NULL);
}

void bench_measure_dryrun(void)
{
	uint64_t v[DRYRUN_ITERS];

	for (int i = 0; i < DRYRUN_ITERS; i++)
		v[i] = dryrun_once();
	sort_u64(v, DRYRUN_ITERS);
	bench_dryrun_cycles = v[DRYRUN_ITERS / 2];
}

static void dryrun_run(struct bench_run *r)
{
	static const char *const names[] = { "loop" };

	bench_metrics(r, 1, names);
	r->target_state = "none";
	r->sender = this_cpu()->cpu;	/* runs where the plan runs, whatever sender= says */
	if (!bench_sample(r, dryrun_iter))
		bench_emit(r);
}

static const struct bench bench_dryrun = {
	.name = "dry-run",
	.summary = "the timed region with one satisfied poll in it: the harness's own cost",
	.min_cpus = 1,
	.run = dryrun_run,
};
BENCH_REGISTER(bench_dryrun);

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The benchmark engine. A benchmark is a registry entry (BENCH_REGISTER):
 * name, the CPUs it needs, a validity check against a backend, and a run
 * function. The runner walks the entries in name order, so output never
 * depends on link order, and runs each on every backend of the plan.
 *
 * A run measures through bench_sample(): warm-up, then an iteration count
 * calibrated to a cycle budget, then one sample per iteration per metric,
 * kept in a bounded buffer (a uniform reservoir past BENCH_SAMPLE_CAP).
 * Every wait has a TSC deadline; a lost interrupt is a FAILURE naming
 * backend, source and target, and the plan goes on.
 */
#ifndef INCLUDE_BENCH_H
#define INCLUDE_BENCH_H

#include <stdbool.h>
#include <stdint.h>
#include "include/compiler.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/percpu.h"
#include "include/poll.h"
#include "include/status.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/stats.h"

#define BENCH_SAMPLE_CAP 16384	/* samples kept per metric; reservoir beyond */
#define BENCH_MAX_METRICS 4
#define BENCH_VEC IPI_VEC_FIRST	/* the vector every benchmark sends */
/* A sample an iteration could not take (a one-way delta below zero): counted, not kept. */
#define BENCH_INVALID UINT64_MAX
#define BENCH_SENDER_TIMEOUT_US 120000000u

struct bench_run;

struct bench {
	const char *name;
	const char *summary;
	unsigned int min_cpus;
	bool per_backend;	/* false: runs once, not per backend (dry-run, exit-ref) */
	/* NULL when it can run with ops here, else why not. */
	const char *(*valid)(const struct ipi_ops *ops);
	void (*run)(struct bench_run *r);
};

#define BENCH_REGISTER(b)                                                                          \
	static const struct bench *const bench_ptr_##b __section(".bench_registry") __used = &(b)

/* What the command line chose (kernel/options.c fills it). */
struct bench_params {
	uint64_t max_iters;	/* per result, after warm-up */
	uint64_t min_iters;
	uint64_t warmup;
	uint64_t budget_us;	/* time budget that calibrates the iteration count */
	uint64_t deadline_us;	/* an IPI not handled by then is lost: FAILURE */
	uint32_t sender, target;
	uint32_t halt_gap_us;	/* single-halt: idle time before each send (wake-aim=poll) */
	uint32_t block_gap_us;	/* single-halt's block pass: idle time well beyond halt polling */
	uint64_t halt_poll_ns;	/* the host's kvm.halt_poll_ns, as run.sh read it */
	bool halt_poll_known;	/* halt_poll_ns= given; else KVM's default is assumed */
	uint32_t halt_poll_grow; /* the host's kvm.halt_poll_ns_grow (0: the window never grows) */
	bool halt_grow_known;	/* halt_poll_grow= given */
	uint64_t late_wake_us;	/* a wake slower than this (and 10 x the median) is late */
	uint64_t norov_iters;	/* ipi_benchmark view: fixed loop length */
	bool target_set;	/* target= given */
	bool matrix;		/* single: all sender/target pairs */
	bool markers;		/* phase markers around measured iterations (bench_mark) */
	bool host_stats;	/* single-halt: host reads KVM's statistics at pass edges */
	uint32_t explicit_keys;	/* BENCH_KEY_* given on the command line */
};

#define BENCH_KEY_ITERS (1u << 0)
#define BENCH_KEY_WARMUP (1u << 1)
#define BENCH_KEY_BUDGET (1u << 2)
#define BENCH_KEY_NOROV (1u << 3)
#define BENCH_KEY_DEADLINE (1u << 4)
#define BENCH_KEY_LATE_WAKE (1u << 5)

/* KVM's defaults on x86: KVM_HALT_POLL_NS_DEFAULT (arch/x86/include/asm/kvm_host.h), halt_poll_ns_grow. */
#define BENCH_KVM_HALT_POLL_NS_DEFAULT 200000u
#define BENCH_KVM_HALT_POLL_GROW_DEFAULT 2u

/* Under an emulator (TCG) figures mean nothing and every IPI costs
 * milliseconds: shorten what the command line left at its default. */
void bench_params_for_emulation(void);

extern struct bench_params bench_params;

/*
 * single-halt's block pass and the wake check idle this long before each
 * send: block_gap=, else 10 x halt_poll_ns (at least 1 ms), well beyond
 * KVM's halt-polling window (kvm_vcpu_halt() polls at most halt_poll_ns,
 * clamping the vCPU's own window to it, and shrinks that window after a
 * halt longer than halt_poll_ns), so that the host has blocked the vCPU
 * when the IPI comes.
 */
uint32_t bench_block_gap_us(void);

/* One metric's samples. */
struct bench_metric {
	const char *name;
	struct samples s;
	struct histo h;
	uint64_t invalid;	/* iterations that gave BENCH_INVALID */
};

#define BENCH_TICK_KEEP 8

struct bench_run {
	const struct bench *b;
	const struct ipi_ops *ops;	/* NULL for backend-less benchmarks */
	unsigned int sender, target;
	const char *variant;
	const char *target_state;
	const char *targets;		/* text of the target set for the records */
	const char *words;		/* the benchmark's own key=value words, after the backend's flags */
	unsigned int ntargets;
	unsigned int nmetrics;
	struct bench_metric m[BENCH_MAX_METRICS];
	uint64_t iterations;
	uint32_t mark;			/* phase marker number of the last sampling, 0: none */
	bool measuring;			/* bench_sample() is in its measured iterations */
	const char *target_timer;	/* halted target's watchdog tick: "paused", "armed" or NULL */
	/* Halted targets: wakes beyond late_bound cycles, and the slowest (bench_late_wakes). */
	bool has_late;
	uint64_t late_count, late_bound, late_max;
	/*
	 * single-halt with the target's tick armed: the iterations in which the
	 * target took a timer interrupt, the round-trip samples of the first
	 * BENCH_TICK_KEEP of them, and how many of those were over late_bound:
	 * a wake a tick delayed is counted there, not among the late ones.
	 */
	uint64_t tick_iters, late_ticks;
	unsigned int tick_n;
	/* single-halt: measured iterations whose wait for the target's re-halt ran out. */
	uint64_t rehalt_timeouts;
	uint64_t tick_vals[BENCH_TICK_KEEP];
	/*
	 * NULL, or run by bench_sample() on the measuring CPU just before the
	 * measured iterations (end false) and just after them (end true),
	 * outside the watchdog's measuring phase and the marker window.
	 */
	void (*host_edge)(struct bench_run *r, bool end);
	uint32_t host_read;		/* host read number of the last sampling, 0: none */
	const char *host_read_state;	/* "answered", "unanswered" or "no-port" */
	/* NULL, or run on the sender around bench_sample_on_sender's sampling. */
	void (*sender_begin)(void);
	void (*sender_end)(void);
	void *priv;
};

/* One iteration: writes r->nmetrics samples (cycles); 0 or -E_TIMEDOUT. */
typedef int (*bench_iter_fn)(struct bench_run *r, uint64_t *out);

/*
 * Phase markers (markers=1): an OUT of one 32-bit word to BENCH_MARK_PORT
 * just before a sampling's first measured iteration (mark << 1) and just
 * after its last (mark << 1 | 1), on the CPU that measures, outside every
 * timed region. A hypervisor that traps the port (KVM traces it as
 * kvm_pio and kvm_exit IOIO) lets a host trace attribute every exit in
 * between to the records that carry the same "mark", and divide by their
 * iterations. The port is one no QEMU machine decodes (Linux knows 0xed as
 * an alternative io_delay port: a write there does nothing).
 */
#define BENCH_MARK_PORT 0xed

/*
 * With markers=1, a round trip (single, single-halt) and a flush also mark
 * where its region closed: this word to the same port, right after the closing TSC
 * read and outside the region. A host trace can then tell a target's exit
 * inside the sender's region (after the send's exit, before this mark)
 * from one between regions: the ack-after-eoi variants' EOI exit falls
 * inside, the others' outside. Every iteration writes it, warm-up and
 * calibration too (a trace reads only those inside a marker window): the
 * mark is an exit to user space that delays the next send, and a warm-up
 * without it left KVM's adaptive halt-poll window sized for halts shorter
 * than the measured ones (in the lane, 5-30 us against 0.3-1 ms: the window
 * doubles from 10 us only while a halt outlasts it), so the first measured
 * wakes of single-halt came after a block. The calibration times the mark
 * too, as the measured iterations hold it: under markers=1 a budget-sized
 * sampling measures fewer iterations than without.
 */
#define BENCH_MARK_REGION_END 0xfffffffeu

static inline __attribute__((always_inline)) void bench_mark_region_end(void)
{
	if (bench_params.markers)
		outl(BENCH_MARK_PORT, BENCH_MARK_REGION_END);
}

/* Declares the metrics and resets their samples. */
void bench_metrics(struct bench_run *r, unsigned int n, const char *const *names);
/* Warm up, calibrate, sample; 0, or the first iteration's error. */
int bench_sample(struct bench_run *r, bench_iter_fn fn);
/*
 * Late wakes of a halted target, from metric m's kept samples: those over
 * max(10 x their median, late_wake), into r->late_* for its records. A late
 * wake is neither lost nor an ordinary slow sample: a target the host left
 * blocked until something else woke it (AMD erratum #1235).
 */
void bench_late_wakes(struct bench_run *r, unsigned int m);
/* Records (JSON line and table row) for every metric of r; status SUCCESS. */
void bench_emit(struct bench_run *r);
/*
 * A record without samples: SKIP, ERROR or FAILURE with the reason. It
 * carries no phase marker: r->mark is the last sampling's, which such a
 * record (another variant's SKIP, a failure, a derived figure) is not of.
 */
void bench_emit_status(struct bench_run *r, const char *metric, const char *status,
		       const char *reason);
/*
 * A figure of the sampling just taken that its timing cannot report (a
 * one-way figure the TSCs cannot time): a SKIP with the reason, carrying
 * that sampling's marker, so that the host gives it the sampling's exits.
 */
void bench_emit_withheld(struct bench_run *r, const char *metric, const char *reason);
/* Lost or misrouted interrupt: FAILURE record and run status. */
void bench_fail(struct bench_run *r, const char *fmt, ...) __printf(2, 3);

/* Target side: CPUs spinning with IF=1 until bench_targets_stop(). */
void bench_targets_spin(const struct cpuset *cpus);
int bench_targets_stop(void);

/*
 * The second acknowledgement, from a spinning target's loop: the handler
 * counted (before its EOI) and has since returned, so this CPU is back in
 * its loop, in guest mode; publish the count in `back` (same line). Every
 * loop that serves as a spinning target calls it on each pass.
 */
static inline __attribute__((always_inline)) void bench_target_ack(void)
{
	struct irq_stats *s = &this_cpu()->irq;
	uint32_t c = READ_ONCE(s->count[BENCH_VEC - IPI_VEC_FIRST]);

	if (c != READ_ONCE(s->back))
		store_release(&s->back, c);
}

/*
 * Runs fn(arg) on CPU sender: here when this CPU is the sender, else
 * through its mailbox while this CPU serves as a spinning target (IF=1,
 * bench_target_ack) until the sender is done, within
 * BENCH_SENDER_TIMEOUT_US. 0, or -E_TIMEDOUT (printed, STATUS_ERROR).
 */
int bench_on_sender(unsigned int sender, void (*fn)(void *), void *arg);

/* bench_sample() on r->sender, framed by exactly-once accounting; 0 or an error. */
int bench_sample_on_sender(struct bench_run *r, bench_iter_fn fn);

/*
 * The benchmark vector's acknowledgements, all in the target's first
 * irq_stats line (percpu.h): the handler's count (stored before its EOI),
 * its entry TSC, and `back`, the spin loop's copy of the count, written once
 * the handler has done its EOI and IRET.
 */
static inline const uint32_t *bench_count_word(unsigned int cpu_nr)
{
	return &percpu_of[cpu_nr]->irq.count[BENCH_VEC - IPI_VEC_FIRST];
}

/* One read of an acknowledgement word another CPU writes. */
static inline __attribute__((always_inline)) uint32_t bench_read(const uint32_t *word)
{
	return poll_read(word);
}

static inline uint32_t bench_count(unsigned int cpu_nr)
{
	return bench_read(bench_count_word(cpu_nr));
}

static inline uint64_t bench_entry_tsc(unsigned int cpu_nr)
{
	return READ_ONCE(percpu_of[cpu_nr]->irq.entry_tsc);
}

/*
 * Handler chaining: a benchmark may put its own handler in front of the
 * counting one for a vector (irq_set_handler(), the old one kept with
 * irq_get_handler() and put back after), while its targets spin and no
 * IPI is in flight: the native flush does for FLUSH_VEC, the ipi_benchmark
 * view's Broadcast lock for its lock vector. With an NMI backend every NMI
 * runs IPI_NMI_VEC's handler (include/ipi.h), so a handler for NMIs goes
 * there, for the length of the test that needs it. Such a handler runs in
 * NMI context and must not: fault (an exception's IRET would unblock NMIs
 * and the next NMI would reuse the IST stack under it), take a lock the
 * code it interrupted may hold (it may interrupt anything, a maskable
 * handler or a send between its ICR2 and ICR writes included), print, or
 * send an IPI. The ipi_benchmark view's lock handler takes a lock that only
 * handlers take.
 */

/* Timed waits: include/poll.h (bare polls, PAUSE only under TCG). */
#define BENCH_POLLS POLL_BATCH

static inline __attribute__((always_inline)) int bench_poll(const uint32_t *word, uint32_t want,
							       uint64_t deadline)
{
	return poll_until(word, want, deadline);
}

/* Until cpu's count of BENCH_VEC reaches want; 0 or -E_TIMEDOUT. */
static inline __attribute__((always_inline)) int bench_wait_count(unsigned int cpu_nr,
								     uint32_t want,
								     uint64_t deadline)
{
	return bench_poll(bench_count_word(cpu_nr), want, deadline);
}

/*
 * Until a spinning target's loop has seen its count reach want: its handler
 * has done EOI and IRET and the next IPI finds it in guest mode, spinning.
 * Outside every timed region; 0 or -E_TIMEDOUT.
 */
int bench_wait_back(unsigned int cpu_nr, uint32_t want, uint64_t deadline);

/*
 * Exactly-once accounting across a whole benchmark: snapshot every CPU's
 * count, note each send's targets, and compare at the end. Each iteration
 * already waits for its own interrupt; this catches duplicates and strays.
 */
extern uint32_t bench_expected[MAX_CPUS];
extern unsigned int bench_late_cpu;
void bench_expect_begin(void);
static inline void bench_expect(unsigned int cpu_nr)
{
	bench_expected[cpu_nr]++;
}
int bench_expect_check(struct bench_run *r);

/*
 * The first k CPUs other than r->sender, in CPU-number order, into set; their
 * text into text (size bytes) and r->targets, k into r->ntargets.
 */
void bench_targets_first(struct bench_run *r, unsigned int k, struct cpuset *set, char *text,
			 size_t size);

/* target= if given, else the last CPU, or CPU 0 when the sender is the last. */
static inline unsigned int bench_default_target(unsigned int sender)
{
	if (bench_params.target_set)
		return bench_params.target;
	return sender == ncpus - 1 ? 0 : ncpus - 1;
}

/*
 * End of a timed region: RDTSCP;LFENCE, or MFENCE;LFENCE;RDTSC without
 * RDTSCP. Inline everywhere, the dry-run included, so every region closes
 * with the same code (the load of cpu.rdtscp among it).
 */
static inline __attribute__((always_inline)) uint64_t bench_tsc_end(void)
{
	return cpu.rdtscp ? tsc_end() : tsc_end_nop();
}

/* Harness cost: median cycles of an empty timed region (measured once). */
extern uint64_t bench_dryrun_cycles;

void bench_measure_dryrun(void);
/* With sender= an AP: measure it again there, where the figures are taken. */
void bench_measure_dryrun_on_sender(void);

/*
 * One-way figures compare two CPUs' TSCs. The bound on the skew between the
 * sender and any of targets (tsc_skew_pair: AP-to-AP pairs included), and
 * whether a one-way median is large enough against it to be reported.
 */
uint64_t bench_skew_bound(unsigned int sender, const struct cpuset *targets);
bool bench_one_way_valid(uint64_t skew_bound, uint64_t p50_cycles);
/* debug=withhold-one-way's reason for a withheld one-way figure, else NULL. */
const char *bench_one_way_fault(void);

/* A one-way sample: entry - start, or BENCH_INVALID when the target's TSC says it came first. */
static inline uint64_t bench_one_way(uint64_t entry, uint64_t start)
{
	return (int64_t)(entry - start) >= 0 ? entry - start : BENCH_INVALID;
}

/* Registry entries in name order; bench_selected has a bit per entry. */
unsigned int bench_registry(const struct bench *const **list);
extern uint64_t bench_selected;

/* Records of docs/results.md that are not results. */
void env_record_print(void);
void end_record_print(const char *status, unsigned int results);
extern unsigned int bench_results_printed;

/*
 * The registry over the plan's backends, in three steps so that the plan
 * can put each backend's checks before its benchmarks: bench_plan_begin()
 * asks every backend's probe once (the units' count comes from the whole
 * list), prints the harness cost and runs the benchmarks that send no IPI;
 * bench_plan_backend() runs one of those backends (in the order the plan
 * chooses); bench_plan_end() prints the kvm-unit-tests view.
 */
void bench_plan_begin(const struct ipi_ops *const *backends, unsigned int n);
void bench_plan_backend(const struct ipi_ops *ops);
void bench_plan_end(void);

#endif

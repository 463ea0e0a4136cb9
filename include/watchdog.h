/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stall watchdog (kernel/watchdog.c): what no deadline on a stuck CPU
 * can bound, another CPU reports. A hypercall that never retires (under a
 * PVM-flavoured KVM, KVM_HC_SEND_IPI never returned), or a CPU spinning with
 * interrupts off, leaves its CPU unable to look at its own clock.
 *
 * Each CPU says what it is doing in its progress word (struct watch, in its
 * per-CPU area, on a line of its own): a phase, and a step counter it bumps
 * at phase boundaries, around barriers and waits, after each warm-up and
 * calibration iteration, after each measured one, and with each console
 * line; never inside a timed region. Every CPU's local APIC timer ticks
 * twice per bound base (kernel/watchdog.c, watch_base_us); the tick scans the other
 * CPUs' words, and one whose word has not moved for longer than its bound
 * is stalled: the watcher asks it for its registers by NMI, prints what it
 * was doing and ends the run with status ERROR. The bound is the base plus
 * the phase's own budget (docs/watchdog.md, "The bound", has the table).
 *
 * All of these are no-ops until watchdog_start(); none is ever called
 * between a benchmark's TSC reads.
 */
#ifndef INCLUDE_WATCHDOG_H
#define INCLUDE_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "include/compiler.h"

enum watch_phase {
	WATCH_IDLE,	 /* not watched: idle in HLT, before the plan, after a report */
	WATCH_TARGET,	 /* not watched: a spinning target; its sender bounds every wait on it */
	WATCH_PLAN,	 /* the BSP driving the plan: the suite, set-up, records */
	WATCH_REQUEST,	 /* running a mailbox request (smp_post) */
	WATCH_SWITCH,	 /* a backend switch: barriers, APIC moves, the backend's enable */
	WATCH_SENDER,	 /* a benchmark's loop on its sender (bench_on_sender) */
	WATCH_SAMPLING,	 /* a sampling's warm-up and calibration: a step per iteration */
	WATCH_MEASURING, /* a sampling's measured iterations: a step after each, outside its region */
	WATCH_PHASES
};

/*
 * Describes CPU cpu's latest hypercall from that CPU's own input buffers
 * (which the call's encoding fills before it is issued), for the
 * watchdog's report on another CPU. Returns the length written, 0 when the
 * CPU issued none yet.
 */
typedef int (*watch_describe_fn)(unsigned int cpu, char *buf, size_t size);

/*
 * A CPU's progress word: written by that CPU only, read by the watchers.
 * The first line is the phase; the second, what the CPU waits on, for the
 * report's line about each CPU (written at a wait's start and end only).
 */
struct watch {
	uint32_t seq;	   /* odd while the fields below change; +2 per step */
	uint32_t phase;	   /* enum watch_phase */
	uint64_t budget_us; /* the phase's own budget, on top of the base (watchdog.c) */
	const char *what;  /* the phase's detail (variant, backend, request), or NULL */
	uint64_t detail;   /* a number for it: iterations measured, request function */
	watch_describe_fn calls; /* the hypercalls sends from this CPU make now, or NULL */
	uint64_t since;	   /* this CPU's TSC when the phase began */
	/* The wait in progress (watch_wait), or wait_word NULL: */
	const char *wait_name __cacheline_aligned; /* "mailbox ack", "spin_stop", a barrier's */
	const void *wait_word; /* the word it polls, 4 or 8 bytes (wait_size) */
	uint64_t wait_want;    /* the value it waits for */
	int32_t wait_cpu;      /* the CPU whose word that is, or -1 (a shared word) */
	uint32_t wait_size;
} __cacheline_aligned;

/* A watchdog NMI's question (a watcher's write) and its answer (the NMI handler's). */
struct watch_nmi {
	uint32_t asked;
	uint32_t answered;
	uint64_t frame[22]; /* struct trap_frame (kernel/trap.h), as the handler saw it */
	uint64_t cr2, cr3;  /* read by the handler: the stalled CPU's own */
} __cacheline_aligned;

/* The phase a CPU was in before watch_enter(), for watch_restore(). */
struct watch_saved {
	uint32_t phase;
	uint64_t budget_us;
	const char *what;
	uint64_t detail;
	uint64_t since;
};

/* Set once watchdog_start() has the ticks running (two CPUs or more). */
extern bool watchdog_running;

static inline bool watchdog_on(void)
{
	return __builtin_expect(READ_ONCE(watchdog_running), 0);
}

/*
 * On the BSP once the deadline (us) is known, at the plan's start:
 * calibrates the local APIC timer against the TSC, starts the tick on every
 * CPU and says on the console what is watched and how (with one CPU:
 * that nothing is).
 */
void watchdog_start(uint64_t deadline_us);

/* This CPU enters phase ph (own budget, detail); returns the phase it leaves. */
struct watch_saved watch_enter(enum watch_phase ph, uint64_t budget_us, const char *what,
			       uint64_t detail);
void watch_restore(const struct watch_saved *s);
/* A step inside the phase: its bound starts again. */
void watch_step(void);
/*
 * A step, and this CPU waits from now on until its size-byte word (4 or 8)
 * holds want: the report names the wait (name, of CPU cpu's word or, for
 * -1, a shared one), the value it waits for and the value the word holds.
 * watch_wait_end() is the step that ends it; a phase change ends it too.
 */
void watch_wait(const char *name, int cpu, const void *word, unsigned int size, uint64_t want);
void watch_wait_end(void);
/* The hypercalls this CPU's sends make from now on (the backend's describer); returns the old. */
watch_describe_fn watch_calls(watch_describe_fn fn);

/* The local APIC timer's tick (lapic.c calls it after EOI): scan the others. */
void watchdog_tick(void);
/* From the NMI handler: true when a watcher asked this CPU (frame published; park). */
bool watchdog_nmi(const void *frame, size_t size);

#endif

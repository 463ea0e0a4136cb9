/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Bringing up the APs and running work on them. Every wait takes a TSC
 * deadline and reports -E_TIMEDOUT instead of hanging.
 */
#ifndef INCLUDE_SMP_H
#define INCLUDE_SMP_H

#include <stdbool.h>
#include <stdint.h>
#include "include/compiler.h"

struct madt_cpu;

struct smp_options {
	uint32_t ap_timeout_ms;	/* per AP, from the START-UP IPI to "online" */
	uint32_t init_delay_us;	/* after INIT, before START-UP (SDM: 10 ms) */
	uint32_t skip_sipi_cpu;	/* fault injection: never send SIPI to this CPU (0: none) */
};

typedef void (*smp_fn)(void *arg);

/* Start every enabled CPU the MADT listed; returns how many came up (BSP included). */
unsigned int smp_start_aps(const struct madt_cpu *list, unsigned int n,
			   const struct smp_options *opt);

/* Post fn(arg) to cpu's mailbox and wake it; smp_wait() collects it. */
void smp_post(unsigned int cpu, smp_fn fn, void *arg);
int smp_wait(unsigned int cpu, uint64_t deadline);
/* Post and wait; 0 or -E_TIMEDOUT. */
int smp_call(unsigned int cpu, smp_fn fn, void *arg, uint64_t timeout_us);
/* fn(arg) on every CPU, this one included; 0 or -E_TIMEDOUT. */
int smp_call_all(smp_fn fn, void *arg, uint64_t timeout_us);
bool smp_busy(unsigned int cpu);
/*
 * debug=late-wake: after its next wake, idle AP cpu keeps interrupts off
 * for us microseconds before it halts again, once, so that the IPI sent to
 * it meanwhile is taken that late: a late wake, as a vCPU that the host
 * left blocked would show (AMD erratum #1235). Tests only.
 */
void smp_delay_next_wake(unsigned int cpu, uint64_t us);
/* The AP armed by smp_delay_next_wake() has started its delay (and clears the word). */
bool smp_wake_delay_started(void);
/*
 * debug=no-halt-mark: idle AP cpu's next entry into HLT leaves
 * mbox.halted_at as it was, once, as a CPU that took an NMI between that
 * store and its HLT would: single-halt's re-halt wait then runs out. Tests only.
 */
void smp_skip_next_halt_mark(unsigned int cpu);

/* Sense-reversing barrier for ncpus CPUs; its counter has its own line. */
struct smp_barrier {
	uint32_t count;
	uint32_t sense;
	const char *name;	/* what the stall report calls the sense word */
} __cacheline_aligned;

/* name: what the stall watchdog calls its sense word ("switch barrier sense"). */
void smp_barrier_init(struct smp_barrier *b, const char *name);
int smp_barrier_wait(struct smp_barrier *b, uint64_t deadline);

#endif

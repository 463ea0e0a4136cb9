/* SPDX-License-Identifier: GPL-2.0-only */
/* TSC frequency, deadlines and the cross-CPU skew bound. */
#ifndef INCLUDE_TSC_H
#define INCLUDE_TSC_H

#include <stdbool.h>
#include <stdint.h>
#include "include/x86.h"

/* Until calibration, deadlines assume a fast TSC: waits only get longer. */
#define TSC_KHZ_GUESS 5000000u

extern uint64_t tsc_khz;
extern const char *tsc_source;
extern uint64_t tsc_pit_khz;	/* PIT-calibrated figure, 0 if not measured */
extern bool tsc_freq_guessed;	/* nothing declared or measured it: tsc_khz is TSC_KHZ_GUESS */

/* Worst bound over all APs of |AP TSC - BSP TSC| in cycles, and whether the
 * measured intervals were consistent (no AP ever read "before" the BSP). */
extern uint64_t tsc_skew_bound;
extern bool tsc_skew_consistent;

void tsc_init(void);
/* kvmclock says the host's TSC is stable (PVCLOCK_TSC_STABLE_BIT); false without KVM. */
bool tsc_kvm_stable(void);
void tsc_measure_skew(void);
/*
 * A bound on how far CPU b's TSC may run ahead of or behind CPU a's: 0 for
 * a == b, from the BSP-to-AP intervals otherwise (tsc_sync.c),
 * UINT64_MAX when either CPU's skew is unknown.
 */
uint64_t tsc_skew_pair(unsigned int a, unsigned int b);

static inline uint64_t tsc_us_to_cycles(uint64_t us)
{
	return us * tsc_khz / 1000;
}

static inline uint64_t tsc_deadline_us(uint64_t us)
{
	return rdtsc() + tsc_us_to_cycles(us);
}

static inline bool tsc_expired(uint64_t deadline)
{
	return (int64_t)(rdtsc() - deadline) >= 0;
}

void tsc_delay_us(uint64_t us);

#endif

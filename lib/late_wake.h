/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A halted target's slow wakes, each counted one way: late (over the bound,
 * with no timer tick on the target in its iteration), or delayed by a tick
 * (over the bound, in an iteration where the target took one: its watchdog
 * tick stays armed on two vCPUs). Pure, host-tested.
 */
#ifndef LIB_LATE_WAKE_H
#define LIB_LATE_WAKE_H

#include <stddef.h>
#include <stdint.h>

struct late_wakes {
	uint64_t late;	   /* over the bound, no tick in their iteration */
	uint64_t late_max; /* the slowest of those, cycles */
	uint64_t by_tick;  /* over the bound, in an iteration with a tick */
};

/*
 * samples[0..n): kept samples (cycles); ticked[0..nt): the samples of the
 * iterations with a tick (each matches one equal sample, once; consumed:
 * its matched entries are zeroed, as no sample is 0 cycles).
 */
struct late_wakes late_wakes_count(const uint64_t *samples, size_t n, uint64_t bound,
				   uint64_t *ticked, size_t nt);

#endif

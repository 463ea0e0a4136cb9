/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Waiting for a word another CPU writes, bounded by a TSC deadline: the
 * primitive under every timed wait (benchmarks, the native TLB shootdown).
 *
 * It polls bare: no PAUSE, which costs about 140 cycles on Intel since
 * Skylake and is what pause-loop exiting (PLE, AMD's pause filter) counts,
 * so a paused wait is both quantised and liable to leave guest mode. The
 * deadline is read every POLL_BATCH polls. Under an emulator PAUSE is the
 * one way a spinning vCPU hands its host thread to the others (QEMU TCG's
 * helper_pause: "let another CPU run"), so there, and only there
 * (poll_yield, set by cpu_identify() for TCG), every poll is followed by
 * the deadline check and a PAUSE.
 */
#ifndef INCLUDE_POLL_H
#define INCLUDE_POLL_H

#include <stdbool.h>
#include <stdint.h>
#include "include/tsc.h"
#include "include/x86.h"
#include "lib/error.h"

#define POLL_BATCH 64

extern bool poll_yield;

/* One read of a word another CPU writes. */
static inline __attribute__((always_inline)) uint32_t poll_read(const uint32_t *word)
{
	return *(const volatile uint32_t *)word;
}

/*
 * Until *word reaches want (wrapping compare); 0 or -E_TIMEDOUT. The load of
 * poll_yield falls inside a caller's timed region (TSC reads clobber
 * memory); the dry-run has it too, so the harness cost includes it.
 */
static inline __attribute__((always_inline)) int poll_until(const uint32_t *word, uint32_t want,
							   uint64_t deadline)
{
	/* Under TCG every poll yields: in round-robin TCG the awaited vCPU runs only then. */
	const unsigned int polls = poll_yield ? 1 : POLL_BATCH;

	for (;;) {
		for (unsigned int i = 0; i < polls; i++) {
			if ((int32_t)(poll_read(word) - want) >= 0)
				return 0;
		}
		if (tsc_expired(deadline))
			return -E_TIMEDOUT;
		if (poll_yield)
			cpu_relax();
	}
}

#endif

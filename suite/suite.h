/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The delivery-correctness suite: for every usable backend and every kind
 * of destination, each IPI must reach exactly the intended CPUs exactly
 * once with the intended vector. TAP lines on the console; a lost,
 * duplicated, stray or misrouted interrupt is STATUS_FAILURE, a broken
 * environment (a CPU that misses a barrier or a request) STATUS_ERROR, an
 * unusable backend STATUS_SKIP.
 */
#ifndef SUITE_SUITE_H
#define SUITE_SUITE_H

#include <stdint.h>
#include "include/compiler.h"
#include "include/ipi.h"
#include "include/status.h"

#define CHECK_NAME_LEN	    160 /* a test's name, a verdict's line */
#define CHECK_VERDICT_LINES 4

/*
 * The suite in pieces, so that the plan (kernel/plan.c) can set each
 * backend's checks just before its benchmarks, xAPIC-mode backends before
 * the first x2APIC switch. On the BSP after bring-up: check_begin() opens
 * a block of the suite (what: which backends follow, for the console),
 * check_backend_run() switches every CPU to ops and checks it (SKIP with
 * the probe's reason when unusable; after a failed switch nothing more of
 * the suite runs), check_flush_run() checks the flush calls of the chosen
 * backends, check_end() returns to the boot mode (checked once more) and
 * prints the TAP plan and the summary record.
 */
void check_begin(const char *what);
void check_backend_run(const struct ipi_ops *ops);
void check_flush_run(void);
void check_end(enum lapic_mode boot_mode);

/*
 * suite/flush_effect.c: the flush calls the chosen backends bring
 * (flush_family.checked_with), each of which must succeed; the suite runs
 * it after the backends, with the other CPUs idle.
 */
void check_flush(void);

/* --- TAP, shared by the suite's files (suite/delivery.c) ------------------------------------- */

struct verdict;
/* Hypercalls the sends made that did not succeed, into the verdict (ipi_take_failures). */
void check_failures_judge(struct verdict *v);
/* suite/nmi.c: an NMI backend's checks in place of the Fixed hold checks. */
void check_nmi(const char *label);

/* The problems found in one test, the first few kept for the TAP output. */
struct verdict {
	unsigned int problems;
	char line[CHECK_VERDICT_LINES][CHECK_NAME_LEN];
};

__printf(2, 3) void verdict_add(struct verdict *v, const char *fmt, ...);
/* "ok N - name # SKIP why", and a SKIP status. */
void tap_skip(const char *name, const char *why);
/* st: STATUS_FAILURE when the system under test misbehaved, STATUS_ERROR when we broke. */
void tap_verdict(const char *name, const struct verdict *v, enum status st);

#endif

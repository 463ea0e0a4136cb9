/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The delivery-correctness suite: for every usable backend and every kind
 * of destination, each IPI must reach exactly the intended CPUs exactly
 * once with the intended vector. TAP lines on the console; a lost,
 * duplicated, stray or misrouted interrupt is STATUS_FAILURE, a broken
 * environment (a CPU that misses a barrier or a request) STATUS_ERROR, an
 * unusable backend STATUS_SKIP.
 */
#ifndef BENCH_CHECK_H
#define BENCH_CHECK_H

/* Runs the suite over options.backends; call on the BSP after bring-up. */
void check_run(void);

#endif

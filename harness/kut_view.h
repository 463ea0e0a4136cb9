/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kvm-unit-tests view of the results (harness/kut_view.c).
 */
#ifndef HARNESS_KUT_VIEW_H
#define HARNESS_KUT_VIEW_H

#include <stdint.h>
#include "include/bench.h"

/* Called for every SUCCESS metric: keeps the mean if vmexit.c has that test. */
void kut_view_note(const struct bench_run *r, const char *metric, uint64_t mean_cycles);
/* The table, after the last benchmark; prints nothing if no row was measured. */
void kut_view_print(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Where one cost curve drops below another: the flush benchmark asks from how
 * many targets (or pages) a hypercall beats the native IPI shootdown. Pure,
 * host-tested; integer costs (cycles).
 */
#ifndef LIB_CROSSOVER_H
#define LIB_CROSSOVER_H

#include <stddef.h>
#include <stdint.h>

/*
 * cost_a and cost_b were measured at the same n points of increasing size.
 * Returns the first index i such that cost_b[j] < cost_a[j] for every j >= i:
 * 0 when b is cheaper everywhere, n when b is not cheaper at the last point
 * (no crossover in the measured range). A tie counts as "not cheaper".
 * -E_INVAL for n == 0 or a NULL array.
 */
int crossover_index(const uint64_t *cost_a, const uint64_t *cost_b, size_t n);

#endif

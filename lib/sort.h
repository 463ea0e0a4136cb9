/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * In-place sort of 64-bit samples: every sample of a run is kept and
 * summarised by percentiles, which need order.
 *
 * Heapsort: O(n log n) in the worst case, no recursion and no allocation,
 * so it is safe on a small kernel stack whatever the samples look like.
 */
#ifndef LIB_SORT_H
#define LIB_SORT_H

#include <stddef.h>
#include <stdint.h>

/* Sort v[0..n) into ascending order. v may be NULL when n is 0. */
void sort_u64(uint64_t *v, size_t n);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Crossover of two cost curves (lib/crossover.h). Scanning from the largest
 * point down keeps the answer stable against noise at small sizes: a curve
 * that wins at 1 target, loses at 2 and wins from 3 on crosses over at 3.
 */
#include "lib/crossover.h"
#include "lib/error.h"

int crossover_index(const uint64_t *cost_a, const uint64_t *cost_b, size_t n)
{
	size_t i = n;

	if (!n || !cost_a || !cost_b)
		return -E_INVAL;
	while (i > 0 && cost_b[i - 1] < cost_a[i - 1])
		i--;
	return (int)i;
}

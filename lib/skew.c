// SPDX-License-Identifier: GPL-2.0-only
/* The pairwise TSC skew bound (lib/skew.h). */
#include "lib/skew.h"

static uint64_t magnitude(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

uint64_t skew_pair_bound(int64_t lo_a, int64_t hi_a, int64_t lo_b, int64_t hi_b)
{
	/* In unsigned arithmetic, so that no difference overflows into UB. */
	uint64_t low = magnitude((int64_t)((uint64_t)lo_b - (uint64_t)hi_a));
	uint64_t high = magnitude((int64_t)((uint64_t)hi_b - (uint64_t)lo_a));

	return low > high ? low : high;
}

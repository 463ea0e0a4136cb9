// SPDX-License-Identifier: GPL-2.0-only
/* lib/skew.c against hand-checked intervals. */
#include "lib/skew.h"
#include "tests/unit/check.h"

/* Against the BSP ([0, 0]) the pair bound is the AP's own: max(|lo|, |hi|). */
TEST(bsp_pair_is_the_ap_bound)
{
	CHECK(skew_pair_bound(0, 0, -30, 50) == 50);
	CHECK(skew_pair_bound(0, 0, -80, 20) == 80);
	CHECK(skew_pair_bound(-30, 50, 0, 0) == 50);
}

/*
 * Two APs: a in [-30, 50], b in [100, 120] (cycles ahead of the BSP). b runs
 * ahead of a by [100 - 50, 120 + 30] = [50, 150]: bound 150, wider than
 * either AP's own (50 and 120), at most their sum (170).
 */
TEST(ap_pair_adds_both_intervals)
{
	CHECK(skew_pair_bound(-30, 50, 100, 120) == 150);
	CHECK(skew_pair_bound(100, 120, -30, 50) == 150);
	/* Same interval on both sides: the width of the interval, not 0. */
	CHECK(skew_pair_bound(-10, 10, -10, 10) == 20);
	/* Two APs alike against the BSP: tighter than either's own bound (110). */
	CHECK(skew_pair_bound(100, 110, 100, 110) == 10);
}

/* Extremes do not overflow into a small bound. */
TEST(extremes)
{
	CHECK(skew_pair_bound(0, INT64_MAX, 0, 0) == (uint64_t)INT64_MAX);
	CHECK(skew_pair_bound(0, 0, INT64_MIN + 1, 0) == (uint64_t)INT64_MAX);
}

TEST_MAIN(T(bsp_pair_is_the_ap_bound), T(ap_pair_adds_both_intervals), T(extremes))

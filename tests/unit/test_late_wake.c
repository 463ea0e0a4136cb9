// SPDX-License-Identifier: GPL-2.0-only
/* Host tests for lib/late_wake.c: a slow wake is late or a tick's, never both. */
#include "lib/late_wake.h"
#include "tests/unit/check.h"

TEST(no_ticks_all_over_the_bound_are_late)
{
	static const uint64_t s[] = {100, 5000, 120, 9000};
	struct late_wakes w = late_wakes_count(s, 4, 1000, NULL, 0);

	CHECK_EQ(w.late, 2);
	CHECK_EQ(w.late_max, 9000);
	CHECK_EQ(w.by_tick, 0);
}

TEST(a_ticked_slow_sample_is_the_ticks_not_late)
{
	static const uint64_t s[] = {100, 5000, 120, 9000};
	uint64_t ticked[] = {9000};
	struct late_wakes w = late_wakes_count(s, 4, 1000, ticked, 1);

	CHECK_EQ(w.late, 1);
	CHECK_EQ(w.late_max, 5000);
	CHECK_EQ(w.by_tick, 1);
	CHECK_EQ(ticked[0], 0); /* consumed */
}

TEST(a_ticked_fast_sample_is_neither)
{
	static const uint64_t s[] = {100, 5000};
	uint64_t ticked[] = {100};
	struct late_wakes w = late_wakes_count(s, 2, 1000, ticked, 1);

	CHECK_EQ(w.late, 1);
	CHECK_EQ(w.by_tick, 0);
}

TEST(each_ticked_sample_matches_once)
{
	/* Two equal slow samples, one of them in a ticked iteration. */
	static const uint64_t s[] = {7000, 7000};
	uint64_t ticked[] = {7000};
	struct late_wakes w = late_wakes_count(s, 2, 1000, ticked, 1);

	CHECK_EQ(w.late, 1);
	CHECK_EQ(w.by_tick, 1);
}

TEST(a_ticked_sample_not_kept_matches_nothing)
{
	static const uint64_t s[] = {100, 5000};
	uint64_t ticked[] = {6000};
	struct late_wakes w = late_wakes_count(s, 2, 1000, ticked, 1);

	CHECK_EQ(w.late, 1);
	CHECK_EQ(w.by_tick, 0);
}

TEST(empty_inputs)
{
	struct late_wakes w = late_wakes_count(NULL, 0, 1000, NULL, 0);

	CHECK_EQ(w.late, 0);
	CHECK_EQ(w.by_tick, 0);
	CHECK_EQ(w.late_max, 0);
}

TEST_MAIN(T(no_ticks_all_over_the_bound_are_late), T(a_ticked_slow_sample_is_the_ticks_not_late),
	  T(a_ticked_fast_sample_is_neither), T(each_ticked_sample_matches_once),
	  T(a_ticked_sample_not_kept_matches_nothing), T(empty_inputs))

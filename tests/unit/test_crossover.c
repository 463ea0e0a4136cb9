// SPDX-License-Identifier: GPL-2.0-only
/* Host tests for lib/crossover.c: where a hypercall curve drops below the native one. */
#include "lib/crossover.h"
#include "lib/error.h"
#include "tests/unit/check.h"

TEST(always_cheaper)
{
	static const uint64_t a[] = {100, 200, 300}, b[] = {50, 60, 70};

	CHECK_EQ(crossover_index(a, b, 3), 0);
}

TEST(never_cheaper)
{
	static const uint64_t a[] = {100, 200, 300}, b[] = {150, 250, 350};

	CHECK_EQ(crossover_index(a, b, 3), 3);
}

TEST(crosses_in_the_middle)
{
	static const uint64_t a[] = {100, 200, 300, 400}, b[] = {250, 250, 250, 250};

	CHECK_EQ(crossover_index(a, b, 4), 2);
}

TEST(noise_at_small_sizes)
{
	/* cheaper at 0, dearer at 1, cheaper from 2 on: the crossover is 2 */
	static const uint64_t a[] = {100, 200, 300, 400}, b[] = {90, 210, 250, 260};

	CHECK_EQ(crossover_index(a, b, 4), 2);
}

TEST(loses_at_the_end)
{
	static const uint64_t a[] = {100, 200, 300}, b[] = {50, 60, 400};

	CHECK_EQ(crossover_index(a, b, 3), 3);
}

TEST(tie_is_not_cheaper)
{
	static const uint64_t a[] = {100, 200}, b[] = {50, 200};

	CHECK_EQ(crossover_index(a, b, 2), 2);
}

TEST(one_point)
{
	static const uint64_t a[] = {10}, b[] = {9}, c[] = {11};

	CHECK_EQ(crossover_index(a, b, 1), 0);
	CHECK_EQ(crossover_index(a, c, 1), 1);
}

TEST(errors)
{
	static const uint64_t a[] = {1};

	CHECK_EQ(crossover_index(a, a, 0), -E_INVAL);
	CHECK_EQ(crossover_index(NULL, a, 1), -E_INVAL);
	CHECK_EQ(crossover_index(a, NULL, 1), -E_INVAL);
}

TEST_MAIN(T(always_cheaper), T(never_cheaper), T(crosses_in_the_middle), T(noise_at_small_sizes),
	  T(loses_at_the_end), T(tie_is_not_cheaper), T(one_point), T(errors))

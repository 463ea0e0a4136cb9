// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/kvm_pvipi.c (KVM_HC_SEND_IPI windows, docs/hyperv-abi.md
 * 5.3): hand-checked plans, then a brute-force check on random sets that
 * every target is hit exactly once, nothing else is, and the call count
 * equals an independent sort-then-greedy count.
 */
#include <stdlib.h>

#include "lib/error.h"
#include "lib/icr.h"
#include "lib/kvm_pvipi.h"
#include "tests/unit/check.h"

#define ALL1 0xffffffffffffffffull

TEST(single_target)
{
	static const uint32_t ids[] = {5};
	struct kvm_pvipi_call c[2];

	CHECK_EQ(kvm_pvipi_plan(ids, 1, c, 2), 1);
	CHECK_EQ(c[0].min_id, 5);
	CHECK_EQ(c[0].bitmap[0], 1);
	CHECK_EQ(c[0].bitmap[1], 0);
	CHECK_EQ(kvm_pvipi_count(&c[0]), 1);
}

TEST(window_0_127)
{
	uint32_t ids[128];
	struct kvm_pvipi_call c[2];

	for (uint32_t i = 0; i < 128; i++)
		ids[i] = i;
	CHECK_EQ(kvm_pvipi_plan(ids, 128, c, 2), 1);
	CHECK_EQ(c[0].min_id, 0);
	CHECK_EQ(c[0].bitmap[0], ALL1);
	CHECK_EQ(c[0].bitmap[1], ALL1);
	CHECK_EQ(kvm_pvipi_count(&c[0]), 128);
}

TEST(window_0_128)
{
	uint32_t ids[129];
	struct kvm_pvipi_call c[2];

	for (uint32_t i = 0; i < 129; i++)
		ids[i] = i;
	CHECK_EQ(kvm_pvipi_plan(ids, 129, c, 2), 2);
	CHECK_EQ(c[0].min_id, 0);
	CHECK_EQ(c[0].bitmap[0], ALL1);
	CHECK_EQ(c[0].bitmap[1], ALL1);
	CHECK_EQ(c[1].min_id, 128);
	CHECK_EQ(c[1].bitmap[0], 1);
	CHECK_EQ(c[1].bitmap[1], 0);
	CHECK_EQ(kvm_pvipi_plan(ids, 129, c, 1), -E_NOSPC);
}

TEST(sparse)
{
	static const uint32_t ids[] = {0, 300, 5000};
	struct kvm_pvipi_call c[3];

	CHECK_EQ(kvm_pvipi_plan(ids, 3, c, 3), 3);
	CHECK_EQ(c[0].min_id, 0);
	CHECK_EQ(c[1].min_id, 300);
	CHECK_EQ(c[2].min_id, 5000);
	for (int i = 0; i < 3; i++) {
		CHECK_EQ(c[i].bitmap[0], 1);
		CHECK_EQ(c[i].bitmap[1], 0);
	}
	CHECK_EQ(kvm_pvipi_plan(ids, 3, c, 2), -E_NOSPC);
}

TEST(reverse_order)
{
	uint32_t ids[201];
	struct kvm_pvipi_call c[3];

	for (uint32_t i = 0; i < 128; i++)
		ids[i] = 127 - i;
	CHECK_EQ(kvm_pvipi_plan(ids, 128, c, 3), 1);
	CHECK_EQ(c[0].min_id, 0);
	CHECK_EQ(c[0].bitmap[0], ALL1);
	CHECK_EQ(c[0].bitmap[1], ALL1);
	for (uint32_t i = 0; i < 201; i++)
		ids[i] = 200 - i;
	CHECK_EQ(kvm_pvipi_plan(ids, 201, c, 3), 2);
	CHECK_EQ(c[0].min_id, 0);
	CHECK_EQ(c[1].min_id, 128);
	CHECK_EQ(c[1].bitmap[0], ALL1);	 /* 128..191 */
	CHECK_EQ(c[1].bitmap[1], 0x1ff); /* 192..200 */
}

TEST(duplicates)
{
	static const uint32_t ids[] = {8, 7, 7, 8, 7};
	struct kvm_pvipi_call c[1];

	CHECK_EQ(kvm_pvipi_plan(ids, 5, c, 1), 1);
	CHECK_EQ(c[0].min_id, 7);
	CHECK_EQ(c[0].bitmap[0], 3);
	CHECK_EQ(kvm_pvipi_count(&c[0]), 2);
}

TEST(high_bits_and_top_of_range)
{
	/* 0xffffff80 + 127 = 0xffffffff: the window must not wrap. */
	static const uint32_t ids[] = {0xffffffff, 0xffffff80, 0xffffffc0};
	static const uint32_t edge[] = {63, 64, 0};
	struct kvm_pvipi_call c[2];

	CHECK_EQ(kvm_pvipi_plan(ids, 3, c, 2), 1);
	CHECK_EQ(c[0].min_id, 0xffffff80);
	CHECK_EQ(c[0].bitmap[0], 1);
	CHECK_EQ(c[0].bitmap[1], 0x8000000000000001ull);
	CHECK_EQ(kvm_pvipi_plan(edge, 3, c, 2), 1);
	CHECK_EQ(c[0].bitmap[0], 0x8000000000000001ull); /* 0 and 63 in a0 */
	CHECK_EQ(c[0].bitmap[1], 1);			 /* 64 is bit 0 of a1 */
}

TEST(empty_and_errors)
{
	struct kvm_pvipi_call c[1];

	CHECK_EQ(kvm_pvipi_plan(NULL, 0, c, 1), 0);
	CHECK_EQ(kvm_pvipi_plan(NULL, 0, NULL, 0), 0);
	CHECK_EQ(kvm_pvipi_plan(NULL, 3, c, 1), -E_INVAL);
}

TEST(icr_value)
{
	CHECK_EQ(kvm_pvipi_icr(0xf0), 0xf0);
	/* Hand-checked: Linux's APIC_DM_NMI is 0x00400, and an NMI carries no vector. */
	CHECK_EQ(kvm_pvipi_icr_nmi(), 0x400);
	CHECK_EQ(kvm_pvipi_icr(0x20), 0x20);
	/* Physical, no shorthand: KVM answers -KVM_EINVAL otherwise. */
	CHECK_EQ(kvm_pvipi_icr(0xff) & (ICR_DEST_LOGICAL | ICR_SHORTHAND_MASK), 0);
	CHECK_EQ(KVM_HC_SEND_IPI, 10);
	CHECK_EQ(KVM_FEATURE_PV_SEND_IPI, 1u << 11);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* Independent reference: sort, then start a window at each uncovered ID. */
static int reference_calls(const uint32_t *ids, size_t n)
{
	uint32_t *s = malloc((n ? n : 1) * sizeof(*s));
	int calls = 0;
	uint64_t end = 0;

	for (size_t i = 0; i < n; i++)
		s[i] = ids[i];
	qsort(s, n, sizeof(*s), cmp_u32);
	for (size_t i = 0; i < n; i++) {
		if (calls == 0 || s[i] >= end) {
			calls++;
			end = (uint64_t)s[i] + 128;
		}
	}
	free(s);
	return calls;
}

static int contains(const uint32_t *ids, size_t n, uint32_t id)
{
	for (size_t i = 0; i < n; i++) {
		if (ids[i] == id)
			return 1;
	}
	return 0;
}

/* Every planned bit is a target, no target is planned twice, all are planned. */
static void check_plan(const uint32_t *ids, size_t n, uint32_t span)
{
	static struct kvm_pvipi_call c[600];
	unsigned char *hit = calloc(span + 128, 1);
	int k = kvm_pvipi_plan(ids, n, c, 600);

	CHECK_EQ(k, reference_calls(ids, n));
	for (int i = 0; i < k; i++) {
		CHECK(i == 0 || c[i].min_id >= c[i - 1].min_id + 128);
		CHECK(kvm_pvipi_count(&c[i]) > 0);
		for (uint32_t b = 0; b < 128; b++) {
			if (!(c[i].bitmap[b / 64] >> (b % 64) & 1))
				continue;
			CHECK(contains(ids, n, c[i].min_id + b));
			CHECK(hit[c[i].min_id + b] == 0);
			hit[c[i].min_id + b] = 1;
		}
	}
	for (size_t i = 0; i < n; i++)
		CHECK(hit[ids[i]] == 1);
	free(hit);
}

TEST(random_sets)
{
	uint32_t ids[512];

	srand(12345);
	for (int round = 0; round < 2000; round++) {
		uint32_t span = round % 2 ? 400 : 40000; /* dense and sparse */
		size_t n = (size_t)(rand() % 512);

		for (size_t i = 0; i < n; i++)
			ids[i] = (uint32_t)rand() % span;
		check_plan(ids, n, span);
	}
}

TEST_MAIN(T(single_target), T(window_0_127), T(window_0_128), T(sparse), T(reverse_order),
	  T(duplicates), T(high_bits_and_top_of_range), T(empty_and_errors), T(icr_value),
	  T(random_sets))

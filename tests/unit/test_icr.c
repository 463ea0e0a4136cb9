// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/icr.c: ICR values hand-checked against Intel SDM vol. 3A
 * Table 11-6 / Figure 11-12 (xAPIC) and 11.12.9 (x2APIC), LDR derivation
 * (11.12.10.2) and the flat model (11.6.2.2).
 */
#include "lib/error.h"
#include "lib/icr.h"
#include "tests/unit/check.h"

TEST(fixed_physical_x2apic)
{
	struct icr_fields f = icr_make_fixed(0xf0, 5);

	CHECK_EQ(icr_encode_x2apic(&f), 0x00000005000000f0ull);
	CHECK_EQ(icr_encode_low(&f), 0x000000f0);
	CHECK_EQ(icr_fields_check(&f), 0);
	f.dest = 0xfffffffe; /* the whole 32-bit x2APIC ID lands in 63:32 */
	CHECK_EQ(icr_encode_x2apic(&f), 0xfffffffe000000f0ull);
}

TEST(fixed_physical_xapic)
{
	struct icr_fields f = icr_make_fixed(0x20, 1);
	uint32_t lo = 0, hi = 0;

	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), 0);
	CHECK_EQ(lo, 0x00000020);
	CHECK_EQ(hi, 0x01000000);
	f.dest = 0xff;
	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), 0);
	CHECK_EQ(hi, 0xff000000);
}

TEST(xapic_dest_range)
{
	struct icr_fields f = icr_make_fixed(0x20, 0x100);
	uint32_t lo = 0x1111, hi = 0x2222;

	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), -E_RANGE);
	CHECK_EQ(lo, 0x1111); /* untouched on failure */
	CHECK_EQ(hi, 0x2222);
}

TEST(delivery_modes)
{
	struct icr_fields f = {.vector = 0x30, .delivery = ICR_DM_LOWEST, .logical = true};

	CHECK_EQ(icr_encode_low(&f), 0x00000930); /* 1 << 8 | 1 << 11 | 0x30 */
	f = (struct icr_fields){.delivery = ICR_DM_SMI, .dest = 2};
	CHECK_EQ(icr_encode_x2apic(&f), 0x0000000200000200ull);
	f = (struct icr_fields){.delivery = ICR_DM_NMI, .dest = 7};
	CHECK_EQ(icr_encode_x2apic(&f), 0x0000000700000400ull);
	f = (struct icr_fields){.vector = 0x41, .level_assert = true, .level_trigger = true};
	CHECK_EQ(icr_encode_low(&f), 0x0000c041); /* level-triggered fixed */
}

TEST(shorthands)
{
	struct icr_fields f = icr_make_fixed(0xf0, 0);

	f.shorthand = ICR_SH_NONE;
	CHECK_EQ(icr_encode_low(&f), 0x000000f0);
	f.shorthand = ICR_SH_SELF;
	CHECK_EQ(icr_encode_low(&f), 0x000400f0);
	f.shorthand = ICR_SH_ALL;
	CHECK_EQ(icr_encode_low(&f), 0x000800f0);
	f.shorthand = ICR_SH_OTHERS;
	CHECK_EQ(icr_encode_low(&f), 0x000c00f0);
	CHECK_EQ(icr_encode_x2apic(&f), 0x00000000000c00f0ull);
	f = (struct icr_fields){.delivery = ICR_DM_NMI, .shorthand = ICR_SH_OTHERS};
	CHECK_EQ(icr_encode_low(&f), 0x000c0400);
}

TEST(logical_x2apic)
{
	struct icr_fields f = icr_make_fixed(0xf0, 0x00010003);

	f.logical = true;
	CHECK_EQ(icr_encode_x2apic(&f), 0x00010003000008f0ull);
}

TEST(init_sipi)
{
	struct icr_fields f = icr_make_init_assert(3);
	uint32_t lo = 0, hi = 0;

	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), 0);
	CHECK_EQ(lo, 0x0000c500);
	CHECK_EQ(hi, 0x03000000);
	f = icr_make_init_deassert(3);
	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), 0);
	CHECK_EQ(lo, 0x00008500);
	CHECK_EQ(hi, 0x03000000);
	CHECK_EQ(icr_make_startup(3, 0x8000, &f), 0);
	CHECK_EQ(f.vector, 8);
	CHECK_EQ(icr_encode_xapic(&f, &lo, &hi), 0);
	CHECK_EQ(lo, 0x00000608);
	CHECK_EQ(hi, 0x03000000);
	CHECK_EQ(icr_encode_x2apic(&f), 0x0000000300000608ull);
	CHECK_EQ(icr_make_startup(9, 0xff000, &f), 0);
	CHECK_EQ(icr_encode_low(&f), 0x000006ff);
}

TEST(sipi_range)
{
	struct icr_fields f = icr_make_fixed(0x55, 1);

	CHECK_EQ(icr_make_startup(1, 0x8001, &f), -E_RANGE);   /* not page aligned */
	CHECK_EQ(icr_make_startup(1, 0x100000, &f), -E_RANGE); /* above 1 MiB */
	CHECK_EQ(f.vector, 0x55);			       /* untouched */
	CHECK_EQ(f.delivery, ICR_DM_FIXED);
}

TEST(fields_check)
{
	static const uint8_t good[] = {0, 1, 2, 4, 5, 6};
	struct icr_fields f = {0};

	for (size_t i = 0; i < sizeof(good); i++) {
		f.delivery = good[i];
		CHECK_EQ(icr_fields_check(&f), 0);
	}
	f.delivery = 3;
	CHECK_EQ(icr_fields_check(&f), -E_INVAL);
	f.delivery = 7;
	CHECK_EQ(icr_fields_check(&f), -E_INVAL);
	f.delivery = 8;
	CHECK_EQ(icr_fields_check(&f), -E_INVAL);
	f.delivery = ICR_DM_FIXED;
	f.shorthand = 3;
	CHECK_EQ(icr_fields_check(&f), 0);
	f.shorthand = 4;
	CHECK_EQ(icr_fields_check(&f), -E_INVAL);
}

TEST(fields_masked)
{
	/* Out-of-width fields never spill into neighbouring bits. */
	struct icr_fields f = {.delivery = 0xff, .shorthand = 0xff};

	CHECK_EQ(icr_encode_low(&f), 0x000c0700);
	CHECK_EQ(icr_encode_low(&f) & ICR_DELIVERY_BUSY, 0);
}

TEST(x2apic_ldr)
{
	CHECK_EQ(icr_x2apic_ldr(0), 0x00000001);
	CHECK_EQ(icr_x2apic_ldr(15), 0x00008000);
	CHECK_EQ(icr_x2apic_ldr(16), 0x00010001);
	CHECK_EQ(icr_x2apic_ldr(0x1234), 0x01230010);
	CHECK_EQ(icr_x2apic_ldr(0xfffff), 0xffff8000);
}

TEST(flat_ldr)
{
	CHECK_EQ(icr_flat_ldr(0), 0x01);
	CHECK_EQ(icr_flat_ldr(3), 0x08);
	CHECK_EQ(icr_flat_ldr(7), 0x80);
	CHECK_EQ(icr_flat_ldr(8), 0);
}

TEST(cluster_group)
{
	static const uint32_t ids[] = {0, 1, 2, 16, 17, 35};
	static const uint32_t shuffled[] = {35, 17, 0, 2, 16, 1, 35, 0};
	uint32_t d[8] = {0};

	CHECK_EQ(icr_cluster_group(ids, 6, d, 8), 3);
	CHECK_EQ(d[0], 0x00000007);
	CHECK_EQ(d[1], 0x00010003);
	CHECK_EQ(d[2], 0x00020008);
	for (size_t i = 0; i < 8; i++)
		d[i] = 0;
	CHECK_EQ(icr_cluster_group(shuffled, 8, d, 3), 3); /* any order, duplicates merged */
	CHECK_EQ(d[0], 0x00000007);
	CHECK_EQ(d[1], 0x00010003);
	CHECK_EQ(d[2], 0x00020008);
	CHECK_EQ(icr_cluster_group(ids, 0, d, 8), 0);
}

TEST(cluster_group_errors)
{
	static const uint32_t ids[] = {0, 1, 2, 16, 17, 35};
	static const uint32_t big[] = {1, 0x100000};
	uint32_t d[2] = {0};

	CHECK_EQ(icr_cluster_group(ids, 6, d, 2), -E_NOSPC);
	CHECK_EQ(icr_cluster_group(ids, 1, d, 0), -E_NOSPC);
	CHECK_EQ(icr_cluster_group(big, 2, d, 2), -E_RANGE);
	CHECK_EQ(icr_cluster_group(big, 1, d, 2), 1);
	CHECK_EQ(d[0], 0x00000002);
}

TEST(flat_mask)
{
	static const unsigned int idx[] = {0, 3, 7, 3};
	static const unsigned int bad[] = {1, 8};

	CHECK_EQ(icr_flat_mask(idx, 4), 0x89);
	CHECK_EQ(icr_flat_mask(idx, 0), 0);
	CHECK_EQ(icr_flat_mask(bad, 2), -E_RANGE);
	CHECK_EQ(icr_flat_mask(bad, 1), 0x02);
}

/*
 * The cluster set send's walk, on a hand-checked layout: CPUs 0-3 have
 * x2APIC IDs 0, 1, 16, 2 (a MADT that is not in ascending order). Set
 * {0,1,2,3} walks as runs {0,1} in cluster 0, {2} in cluster 1, {3} in
 * cluster 0 again: three writes, 0x00000003, 0x00010001, 0x00000004.
 */
TEST(cluster_run_walk)
{
	uint32_t ldr[4] = { icr_x2apic_ldr(0), icr_x2apic_ldr(1), icr_x2apic_ldr(16),
			    icr_x2apic_ldr(2) };
	struct cpuset set;
	unsigned int pos = 0;

	cpuset_fill(&set, 4);
	CHECK(icr_cluster_run(ldr, &set, &pos) == 0x00000003u);
	CHECK(icr_cluster_run(ldr, &set, &pos) == 0x00010001u);
	CHECK(icr_cluster_run(ldr, &set, &pos) == 0x00000004u);
	CHECK(icr_cluster_run(ldr, &set, &pos) == 0);
	CHECK(icr_cluster_writes(ldr, &set) == 3);
	/* Ascending IDs: one write per cluster. */
	ldr[2] = icr_x2apic_ldr(2);
	ldr[3] = icr_x2apic_ldr(17);
	CHECK(icr_cluster_writes(ldr, &set) == 2);
	cpuset_clear(&set);
	CHECK(icr_cluster_writes(ldr, &set) == 0);
}

TEST_MAIN(T(cluster_run_walk), T(fixed_physical_x2apic), T(fixed_physical_xapic), T(xapic_dest_range), T(delivery_modes),
	  T(shorthands), T(logical_x2apic), T(init_sipi), T(sipi_range), T(fields_check),
	  T(fields_masked), T(x2apic_ldr), T(flat_ldr), T(cluster_group), T(cluster_group_errors),
	  T(flat_mask))

// SPDX-License-Identifier: GPL-2.0-only
/* lib/cpu_topo.c against CPUID values worked out by hand from the SDM and the APM. */
#include "lib/cpu_topo.h"
#include "lib/error.h"
#include "tests/unit/check.h"

static char line[512];

static const char *describe(const struct topo_shifts *s, const uint32_t *ids, size_t n,
			    size_t list_max)
{
	CHECK(topo_describe(line, sizeof(line), s, ids, n, list_max) == (int)strlen(line));
	return line;
}

/*
 * QEMU -smp 6,sockets=2,cores=3 (one thread a core): leaf 0xB subleaf 0 is
 * the SMT level (type 1 in ECX[15:8]) with shift 0, subleaf 1 the core level
 * (type 2) with shift 2 (3 cores need 2 bits), subleaf 2 type 0. The APIC IDs
 * are 0 1 2 and 4 5 6: package = ID >> 2, core = ID & 3.
 */
TEST(leaf_b_two_sockets)
{
	const struct topo_subleaf lv[] = {
		{ 0, 1, 0x100 }, { 2, 3, 0x201 }, { 0, 0, 0x002 },
	};
	const uint32_t ids[] = { 0, 1, 2, 4, 5, 6 };
	struct topo_shifts s;

	CHECK_EQ(topo_from_levels(lv, 3, &s), 0);
	CHECK_EQ(s.thread_bits, 0);
	CHECK_EQ(s.package_shift, 2);
	CHECK_STR(describe(&s, ids, 6, 16), "2 packages x 3 cores x 1 thread; APIC ID = "
		  "package.core.thread: 0=0.0.0 1=0.1.0 2=0.2.0 4=1.0.0 5=1.1.0 6=1.2.0");
}

/* -smp 4,cores=2,threads=2: SMT shift 1 (EBX 2 threads), core shift 2 (EBX 4 IDs). */
TEST(leaf_b_threads)
{
	const struct topo_subleaf lv[] = { { 1, 2, 0x100 }, { 2, 4, 0x201 }, { 0, 0, 2 } };
	const uint32_t ids[] = { 0, 1, 2, 3 };
	struct topo_shifts s;

	CHECK_EQ(topo_from_levels(lv, 3, &s), 0);
	CHECK_EQ(s.thread_bits, 1);
	CHECK_EQ(s.package_shift, 2);
	CHECK_STR(describe(&s, ids, 4, 16), "1 package x 2 cores x 2 threads; APIC ID = "
		  "package.core.thread: 0=0.0.0 1=0.0.1 2=0.1.0 3=0.1.1");
}

/*
 * Leaf 0x1F with a die level: SMT shift 1, core (type 2) shift 5, die (type 5)
 * shift 6. Dies fall inside "core": APIC ID 0x43 (0b1_00001_1) is package 1,
 * core 0b00001 = 1 with the die bit 0, thread 1; 0x63 has the die bit set:
 * core 0b10001 = 17.
 */
TEST(leaf_1f_dies)
{
	const struct topo_subleaf lv[] = {
		{ 1, 2, 0x100 }, { 5, 32, 0x201 }, { 6, 64, 0x502 }, { 0, 0, 3 },
	};
	struct topo_shifts s;
	struct topo_place p;

	CHECK_EQ(topo_from_levels(lv, 4, &s), 0);
	CHECK_EQ(s.thread_bits, 1);
	CHECK_EQ(s.package_shift, 6);
	p = topo_place_of(&s, 0x43);
	CHECK(p.package == 1 && p.core == 1 && p.thread == 1);
	p = topo_place_of(&s, 0x63);
	CHECK(p.package == 1 && p.core == 17 && p.thread == 1);
}

/* No SMT level at all (a 0x1F that starts at the core level): one thread a core. */
TEST(levels_without_smt)
{
	const struct topo_subleaf lv[] = { { 3, 8, 0x200 }, { 0, 0, 1 } };
	struct topo_shifts s;

	CHECK_EQ(topo_from_levels(lv, 2, &s), 0);
	CHECK(s.thread_bits == 0 && s.package_shift == 3);
}

/* An unimplemented leaf reads as zeros; shifts that go down or a type twice are nonsense. */
TEST(levels_refused)
{
	const struct topo_subleaf none[] = { { 0, 0, 0 } };
	const struct topo_subleaf down[] = { { 4, 2, 0x100 }, { 2, 4, 0x201 } };
	const struct topo_subleaf twice[] = { { 1, 2, 0x100 }, { 2, 4, 0x101 } };
	struct topo_shifts s;

	CHECK(topo_from_levels(none, 1, &s) == -E_NOENT);
	CHECK(topo_from_levels(none, 0, &s) == -E_NOENT);
	CHECK(topo_from_levels(down, 2, &s) == -E_INVAL);
	CHECK(topo_from_levels(twice, 2, &s) == -E_INVAL);
}

/*
 * AMD, a 64-core two-thread EPYC: 0x80000008 ECX = 0x707f (ApicIdSize 7, NC
 * 127), 0x8000001E EBX = 0x0100 (threads per core less one: 1). APIC ID 0x85
 * (0b1_000010_1) is package 1, core 2, thread 1. Without topoext (EBX 0) a
 * core has one thread; ApicIdSize 0 sizes the field from NC (5: 6 cores, 3 bits).
 */
TEST(amd_leaves)
{
	struct topo_shifts s;
	struct topo_place p;

	CHECK_EQ(topo_from_amd(0x707f, 0x0100, &s), 0);
	CHECK(s.thread_bits == 1 && s.package_shift == 7);
	p = topo_place_of(&s, 0x85);
	CHECK(p.package == 1 && p.core == 2 && p.thread == 1);
	CHECK_EQ(topo_from_amd(0x0005, 0, &s), 0);
	CHECK(s.thread_bits == 0 && s.package_shift == 3);
	/* 4 threads a core cannot fit a one-bit package field. */
	CHECK(topo_from_amd(0x1001, 0x0300, &s) == -E_INVAL);
}

/*
 * Leaf 1 EBX[23:16] = 16 addressable IDs (HTT, EDX[28], set) and leaf 4
 * EAX[31:26] = 7 (8 cores): package from bit 4, cores in bits 3:1, one thread
 * bit. Without HTT leaf 1's count means nothing: one CPU a package.
 */
TEST(legacy_leaves)
{
	struct topo_shifts s;

	CHECK_EQ(topo_from_legacy(16u << 16, 1u << 28, 7u << 26, &s), 0);
	CHECK(s.thread_bits == 1 && s.package_shift == 4);
	CHECK_EQ(topo_from_legacy(16u << 16, 0, 0, &s), 0);
	CHECK(s.thread_bits == 0 && s.package_shift == 0);
	CHECK(topo_from_legacy(2u << 16, 1u << 28, 7u << 26, &s) == -E_INVAL);
}

/* Beyond list_max the layout alone; an uneven set says so; a short buffer still counts. */
TEST(describe_forms)
{
	const struct topo_shifts ht = { 1, 4 }, flat = { 0, 2 };
	const uint32_t uneven[] = { 4, 0, 1, 2 };
	uint32_t ids[32];
	char small[8];

	for (uint32_t i = 0; i < 32; i++)
		ids[i] = i;
	CHECK_STR(describe(&ht, ids, 32, 16),
		  "2 packages x 8 cores x 2 threads; APIC ID = package << 4 | core << 1 | thread");
	CHECK_STR(describe(&flat, ids, 8, 4), "2 packages x 4 cores x 1 thread; APIC ID = "
		  "package << 2 | core");
	CHECK_STR(describe(&flat, uneven, 4, 16), "4 CPUs in 2 packages, up to 3 cores x 1 "
		  "thread (uneven); APIC ID = package.core.thread: 4=1.0.0 0=0.0.0 1=0.1.0 "
		  "2=0.2.0");
	CHECK(topo_describe(small, sizeof(small), &flat, ids, 4, 16) ==
	      (int)strlen("1 package x 4 cores x 1 thread; APIC ID = package.core.thread: "
			  "0=0.0.0 1=0.1.0 2=0.2.0 3=0.3.0"));
	CHECK_STR(small, "1 packa");
	CHECK_STR(describe(&flat, ids, 0, 16), "0 packages x 0 cores x 0 threads; APIC ID = "
		  "package.core.thread:");
}

/* A shift of 32 or more leaves nothing above it: package 0, never undefined behaviour. */
TEST(wide_fields)
{
	const struct topo_shifts s = { 0, 32 };
	struct topo_place p = topo_place_of(&s, 0xffffffffu);

	CHECK(p.package == 0 && p.core == 0xffffffffu && p.thread == 0);
}

TEST_MAIN(T(leaf_b_two_sockets), T(leaf_b_threads), T(leaf_1f_dies), T(levels_without_smt),
	  T(levels_refused), T(amd_leaves), T(legacy_leaves), T(describe_forms), T(wide_fields))

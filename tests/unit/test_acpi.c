// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/acpi.c: MADTs captured from real QEMU/SeaBIOS
 * (tests/fixtures/madt/README.md), hand-built tables for what QEMU does not
 * emit, and corrupt input. Every table is parsed from an exactly-sized heap
 * copy so that AddressSanitizer reports any read past its end.
 */
#include <stdlib.h>

#include "lib/acpi.h"
#include "lib/error.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define FIXTURE_DIR "tests/fixtures/madt/"
#define QEMU_LAPIC  0xfee00000u

/* A captured table by its file name. */
static uint8_t *load_fixture(const char *name, size_t *len)
{
	return fixture_load(FIXTURE_DIR, name, "", len);
}

/* Sets an ACPI table's checksum byte (offset 9) so the table sums to zero. */
static void fix_checksum(uint8_t *t, size_t len)
{
	t[9] = 0;
	t[9] = (uint8_t)(0x100 - acpi_checksum(t, len));
}

/* ---- hand-built MADTs ----------------------------------------------------------------- */

struct tbl {
	uint8_t b[32768];
	size_t len;
};

static void madt_begin(struct tbl *t, uint32_t lapic)
{
	bytes_fill(t, 0, sizeof(*t));
	bytes_copy(t->b, "APIC", 4);
	t->b[8] = 5; /* MADT revision of ACPI 6.3+, which defines Online Capable */
	bytes_copy(t->b + 10, "IPIBEN", 6);
	put_le32(t->b + 36, lapic);
	put_le32(t->b + 40, MADT_PCAT_COMPAT);
	t->len = MADT_HEADER_LEN;
}

static uint8_t *tbl_entry(struct tbl *t, uint8_t type, uint8_t len)
{
	uint8_t *e = t->b + t->len;

	if (t->len + len > sizeof(t->b))
		abort();
	bytes_fill(e, 0, len);
	e[0] = type;
	e[1] = len;
	t->len += len;
	return e;
}

static void add_lapic(struct tbl *t, uint8_t uid, uint8_t apic, uint32_t flags)
{
	uint8_t *e = tbl_entry(t, MADT_TYPE_LAPIC, 8);

	e[2] = uid;
	e[3] = apic;
	put_le32(e + 4, flags);
}

static void add_x2apic(struct tbl *t, uint32_t apic, uint32_t flags, uint32_t uid)
{
	uint8_t *e = tbl_entry(t, MADT_TYPE_X2APIC, 16);

	put_le32(e + 4, apic);
	put_le32(e + 8, flags);
	put_le32(e + 12, uid);
}

static void madt_finish(struct tbl *t)
{
	put_le32(t->b + 4, (uint32_t)t->len);
	fix_checksum(t->b, t->len);
}

/* Parses len bytes of src from an exact heap copy. */
static int parse_exact(const void *src, size_t len, struct madt_cpu *cpus, size_t max,
		       struct madt_info *info)
{
	uint8_t *p = dup_exact(src, len);
	int ret = madt_parse(p, len, cpus, max, info);

	free(p);
	return ret;
}

static int parse_tbl(const struct tbl *t, struct madt_cpu *cpus, size_t max, struct madt_info *info)
{
	return parse_exact(t->b, t->len, cpus, max, info);
}

/* ---- captured fixtures ---------------------------------------------------------------- */

struct fixture {
	const char *file;
	size_t ncpus;
	uint32_t apic[8];
	uint32_t uid[8];
	uint8_t x2apic_mask; /* bit i: cpus[i] came from a type 9 entry */
	size_t ndisabled;
};

/*
 * Expected values from tests/fixtures/madt/README.md (decoded there by
 * extract_madt.py, independently of lib/acpi.c). SeaBIOS builds MADT revision
 * 3, which predates Online Capable: QEMU's empty hot-plug slots have flags 0
 * and so count as disabled.
 */
static const struct fixture fixtures[] = {
    {"pc-smp1.bin", 1, {0}, {0}, 0, 0},
    {"pc-smp4.bin", 4, {0, 1, 2, 3}, {0, 1, 2, 3}, 0, 0},
    {"pc-smp6-s2c3.bin", 6, {0, 1, 2, 4, 5, 6}, {0, 1, 2, 3, 4, 5}, 0, 0},
    {"pc-smp2-max4.bin", 2, {0, 1}, {0, 1}, 0, 2},
    {"q35-smp1.bin", 1, {0}, {0}, 0, 0},
    {"q35-smp4.bin", 4, {0, 1, 2, 3}, {0, 1, 2, 3}, 0, 0},
    {"q35-smp6-s2c3.bin", 6, {0, 1, 2, 4, 5, 6}, {0, 1, 2, 3, 4, 5}, 0, 0},
    {"q35-smp2-max4.bin", 2, {0, 1}, {0, 1}, 0, 2},
    /* 255 type 0 entries (APIC 0 enabled), 33 type 9 (APIC 260 enabled) */
    {"q35-x2apic.bin", 2, {0, 260}, {0, 260}, 0x2, 254 + 32},
};

static void check_fixture_cpus(const struct fixture *fx, const struct madt_cpu *cpus, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		CHECK_EQ(cpus[i].apic_id, fx->apic[i]);
		CHECK_EQ(cpus[i].acpi_uid, fx->uid[i]);
		CHECK_EQ(cpus[i].from_x2apic_entry, (fx->x2apic_mask >> i) & 1);
	}
}

TEST(fixtures_exact)
{
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		const struct fixture *fx = &fixtures[f];
		struct madt_cpu cpus[16];
		struct madt_info info;
		size_t len;
		uint8_t *t = load_fixture(fx->file, &len);

		bytes_fill(cpus, 0xa5, sizeof(cpus));
		CHECK_EQ(madt_parse(t, len, cpus, 16, &info), fx->ncpus);
		CHECK_EQ(info.ncpus, fx->ncpus);
		CHECK_EQ(info.lapic_phys, QEMU_LAPIC);
		CHECK_EQ(info.flags, MADT_PCAT_COMPAT);
		CHECK_EQ(info.nhotplug, 0);
		CHECK_EQ(info.ndisabled, fx->ndisabled);
		CHECK_EQ(info.nduplicates, 0);
		CHECK_EQ(info.ntruncated_list, 0);
		check_fixture_cpus(fx, cpus, fx->ncpus);
		CHECK_EQ(cpus[fx->ncpus].apic_id, 0xa5a5a5a5); /* nothing written past ncpus */
		free(t);
	}
}

/* Every cut of every fixture fails cleanly: short header or length past the end. */
TEST(fixtures_truncated)
{
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		struct madt_cpu cpus[16];
		struct madt_info info;
		size_t len;
		uint8_t *t = load_fixture(fixtures[f].file, &len);

		for (size_t cut = 0; cut < len; cut++) {
			int want = cut < MADT_HEADER_LEN ? -E_INVAL : -E_BADMSG;

			CHECK_EQ(parse_exact(t, cut, cpus, 16, &info), want);
		}
		free(t);
	}
}

/*
 * The same cuts with the header length and checksum patched to match, so the
 * parser must find the cut inside the entry list: either an entry overruns
 * (-E_BADMSG) or the result is a prefix of the full one.
 */
TEST(fixtures_truncated_relabelled)
{
	for (size_t f = 0; f < sizeof(fixtures) / sizeof(fixtures[0]); f++) {
		const struct fixture *fx = &fixtures[f];
		struct madt_cpu cpus[16];
		struct madt_info info;
		size_t len, nok = 0;
		uint8_t *t = load_fixture(fx->file, &len);

		for (size_t cut = MADT_HEADER_LEN; cut < len; cut++) {
			uint8_t *p = dup_exact(t, cut);
			int ret;

			put_le32(p + 4, (uint32_t)cut);
			fix_checksum(p, cut);
			ret = madt_parse(p, cut, cpus, 16, &info);
			free(p);
			if (ret == -E_BADMSG)
				continue;
			nok++;
			CHECK(ret >= 0 && (size_t)ret <= fx->ncpus);
			CHECK(info.ndisabled <= fx->ndisabled && info.nhotplug == 0);
			CHECK_EQ(info.nduplicates, 0);
			check_fixture_cpus(fx, cpus, ret < 0 ? 0 : (size_t)ret);
		}
		CHECK(nok > 0); /* cuts on entry boundaries parse */
		free(t);
	}
}

TEST(fixture_bad_checksum)
{
	struct madt_info info;
	size_t len;
	uint8_t *t = load_fixture("pc-smp4.bin", &len);

	for (size_t i = 0; i < len; i++) {
		/* A wrong signature is not a MADT; any other flip fails length or checksum */
		int want = i < 4 ? -E_INVAL : -E_BADMSG;

		t[i] ^= 0x01;

		CHECK_EQ(parse_exact(t, len, NULL, 0, &info), want);
		t[i] ^= 0x01;
	}
	CHECK_EQ(parse_exact(t, len, NULL, 0, &info), 0);
	CHECK_EQ(info.ntruncated_list, 4);
	free(t);
}

/* max_cpus below the CPU count: table order kept, the rest counted, no overflow. */
TEST(fixture_max_cpus_small)
{
	size_t len;
	uint8_t *t = load_fixture("q35-smp6-s2c3.bin", &len);
	static const uint32_t want[] = {0, 1, 2, 4};

	for (size_t max = 0; max <= 6; max++) {
		/* Exactly sized (1 byte for none), so ASan sees any overrun */
		struct madt_cpu *cpus = malloc(max ? max * sizeof(*cpus) : 1);
		struct madt_info info;

		CHECK_EQ(madt_parse(t, len, cpus, max, &info), max);
		CHECK_EQ(info.ncpus, max);
		CHECK_EQ(info.ntruncated_list, 6 - max);
		for (size_t i = 0; i < max && i < 4; i++)
			CHECK_EQ(cpus[i].apic_id, want[i]);
		free(cpus);
	}
	free(t);
}

/* ---- hand-built tables ---------------------------------------------------------------- */

TEST(x2apic_ids_above_255)
{
	struct tbl t;
	struct madt_cpu cpus[8];
	struct madt_info info;

	madt_begin(&t, QEMU_LAPIC);
	add_lapic(&t, 0, 0, MADT_LAPIC_ENABLED);
	add_x2apic(&t, 0x100, MADT_LAPIC_ENABLED, 1);
	add_x2apic(&t, 0xfffffffe, MADT_LAPIC_ENABLED, 0x80000000u);
	add_x2apic(&t, 300, 0, 2);			   /* disabled */
	add_x2apic(&t, 301, MADT_LAPIC_ONLINE_CAPABLE, 3); /* hot-plug slot */
	add_x2apic(&t, 302, MADT_LAPIC_ENABLED | MADT_LAPIC_ONLINE_CAPABLE, 4);
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 8, &info), 4);
	CHECK_EQ(cpus[0].apic_id, 0);
	CHECK_EQ(cpus[0].from_x2apic_entry, 0);
	CHECK_EQ(cpus[1].apic_id, 0x100);
	CHECK_EQ(cpus[1].acpi_uid, 1);
	CHECK_EQ(cpus[1].from_x2apic_entry, 1);
	CHECK_EQ(cpus[2].apic_id, 0xfffffffe);
	CHECK_EQ(cpus[2].acpi_uid, 0x80000000u);
	CHECK_EQ(cpus[3].apic_id, 302);
	CHECK_EQ(info.nhotplug, 1);
	CHECK_EQ(info.ndisabled, 1);
	CHECK_EQ(info.nduplicates, 0);
}

/* The BSP need not come first: the order of the table is kept. */
TEST(table_order_kept)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct madt_info info;

	madt_begin(&t, QEMU_LAPIC);
	add_lapic(&t, 7, 3, MADT_LAPIC_ENABLED);
	add_lapic(&t, 9, 1, MADT_LAPIC_ENABLED);
	add_lapic(&t, 8, 0, MADT_LAPIC_ENABLED);
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 3);
	CHECK_EQ(cpus[0].apic_id, 3);
	CHECK_EQ(cpus[0].acpi_uid, 7);
	CHECK_EQ(cpus[1].apic_id, 1);
	CHECK_EQ(cpus[2].apic_id, 0);
	CHECK_EQ(cpus[2].acpi_uid, 8);
}

TEST(duplicates)
{
	struct tbl t;
	struct madt_cpu cpus[8];
	struct madt_info info;

	madt_begin(&t, QEMU_LAPIC);
	add_lapic(&t, 0, 0, MADT_LAPIC_ENABLED);
	add_lapic(&t, 1, 1, MADT_LAPIC_ENABLED);
	add_x2apic(&t, 1, MADT_LAPIC_ENABLED, 1);	 /* same CPU in a type 9 entry */
	add_lapic(&t, 5, 0, MADT_LAPIC_ENABLED);	 /* same APIC ID again */
	add_x2apic(&t, 2, 0, 2);			 /* disabled first ... */
	add_x2apic(&t, 2, MADT_LAPIC_ENABLED, 2);	 /* ... then usable: kept */
	add_x2apic(&t, 3, MADT_LAPIC_ONLINE_CAPABLE, 3); /* hot-plug first ... */
	add_x2apic(&t, 3, MADT_LAPIC_ENABLED, 3);	 /* ... first usable wins */
	add_lapic(&t, 0, 0, 0);				 /* disabled copy: just disabled */
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 8, &info), 3);
	CHECK_EQ(cpus[0].apic_id, 0);
	CHECK_EQ(cpus[1].apic_id, 1);
	CHECK_EQ(cpus[1].from_x2apic_entry, 0);
	CHECK_EQ(cpus[2].apic_id, 2);
	CHECK_EQ(cpus[2].from_x2apic_entry, 1);
	CHECK_EQ(info.nduplicates, 3);
	CHECK_EQ(info.nhotplug, 1);
	CHECK_EQ(info.ndisabled, 2);
	/* Duplicates past max_cpus are still recognised, not counted as truncated */
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), 0);
	CHECK_EQ(info.ntruncated_list, 3);
	CHECK_EQ(info.nduplicates, 3);
	/* No array: counting only, whatever max_cpus says */
	CHECK_EQ(parse_tbl(&t, NULL, 8, &info), 0);
	CHECK_EQ(info.ntruncated_list, 3);
}

TEST(lapic_override_and_unknown_types)
{
	struct tbl t;
	struct madt_cpu cpus[2];
	struct madt_info info;
	uint8_t *e;

	madt_begin(&t, QEMU_LAPIC);
	tbl_entry(&t, 1, 12);	/* I/O APIC */
	tbl_entry(&t, 0x7f, 2); /* unknown, minimal */
	e = tbl_entry(&t, MADT_TYPE_LAPIC_OVERRIDE, 12);
	put_le64(e + 4, 0x0000001234567000ull);
	tbl_entry(&t, 0xff, 255);		/* unknown, maximal */
	e = tbl_entry(&t, MADT_TYPE_LAPIC, 10); /* a longer future entry */
	e[3] = 9;
	put_le32(e + 4, MADT_LAPIC_ENABLED);
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 2, &info), 1);
	CHECK_EQ(info.lapic_phys, 0x0000001234567000ull);
	CHECK_EQ(cpus[0].apic_id, 9);
}

/*
 * Entries too short for their type, zero-length and overrunning entries. The
 * bad entry ends the table, so reading a field it lacks is an ASan error.
 */
TEST(malformed_entries)
{
	static const uint8_t bad[][2] = {
	    {0x7f, 0},
	    {0x7f, 1},
	    {MADT_TYPE_LAPIC, 7},
	    {MADT_TYPE_X2APIC, 15},
	    {MADT_TYPE_LAPIC_OVERRIDE, 11},
	    {MADT_TYPE_X2APIC, 8},
	};
	struct tbl t;
	struct madt_info info;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		madt_begin(&t, QEMU_LAPIC);
		add_lapic(&t, 0, 0, MADT_LAPIC_ENABLED);
		tbl_entry(&t, bad[i][0], bad[i][1] < 2 ? 2 : bad[i][1])[1] = bad[i][1];
		madt_finish(&t);
		CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	}
	/* An entry whose length runs one byte past the table */
	madt_begin(&t, QEMU_LAPIC);
	add_lapic(&t, 0, 0, MADT_LAPIC_ENABLED);
	tbl_entry(&t, 1, 12)[1] = 13;
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	/* A lone type byte with no room for the length byte */
	madt_begin(&t, QEMU_LAPIC);
	t.b[t.len++] = 0;
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
}

TEST(header_checks)
{
	struct tbl t;
	struct madt_cpu cpus[2];
	struct madt_info info;
	uint8_t big[128];

	madt_begin(&t, 0xfec00000u);
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 2, &info), 0); /* no entries: valid, no CPUs */
	CHECK_EQ(info.lapic_phys, 0xfec00000u);
	CHECK_EQ(madt_parse(t.b, t.len, cpus, 2, NULL), -E_INVAL);
	CHECK_EQ(madt_parse(NULL, 100, cpus, 2, &info), -E_INVAL);
	/* A buffer longer than the table: the header length rules */
	bytes_fill(big, 0xee, sizeof(big));
	bytes_copy(big, t.b, t.len);
	CHECK_EQ(parse_exact(big, sizeof(big), cpus, 2, &info), 0);
	/* Header length below 44 */
	put_le32(t.b + 4, 43);
	fix_checksum(t.b, 43);
	CHECK_EQ(parse_tbl(&t, cpus, 2, &info), -E_INVAL);
	/* Wrong signature */
	madt_begin(&t, QEMU_LAPIC);
	bytes_copy(t.b, "APIc", 4);
	madt_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 2, &info), -E_INVAL);
}

/* 1100 enabled x2APIC CPUs into room for 1024. */
TEST(many_cpus)
{
	struct tbl *t = malloc(sizeof(*t));
	struct madt_cpu *cpus = malloc(1024 * sizeof(*cpus));
	struct madt_info info;
	int ok = 1;

	madt_begin(t, QEMU_LAPIC);
	for (uint32_t i = 0; i < 1100; i++)
		add_x2apic(t, i * 2 + 0x10000, MADT_LAPIC_ENABLED, i);
	madt_finish(t);
	CHECK_EQ(parse_tbl(t, cpus, 1024, &info), 1024);
	CHECK_EQ(info.ntruncated_list, 76);
	for (uint32_t i = 0; i < 1024; i++)
		ok &= cpus[i].apic_id == i * 2 + 0x10000 && cpus[i].acpi_uid == i;
	CHECK(ok);
	free(cpus);
	free(t);
}

/* ---- RSDP scan ------------------------------------------------------------------------ */

#define BIOS_AREA_LEN 0x20000 /* 0xE0000-0xFFFFF */

static void make_rsdp(uint8_t *p, uint8_t rev, uint32_t rsdt, uint64_t xsdt)
{
	bytes_fill(p, 0, ACPI_RSDP_V2_LEN);
	bytes_copy(p, "RSD PTR ", 8);
	bytes_copy(p + 9, "IPIBEN", 6);
	p[15] = rev;
	put_le32(p + 16, rsdt);
	p[8] = (uint8_t)(0x100 - acpi_checksum(p, ACPI_RSDP_V1_LEN));
	if (rev >= 2) {
		put_le32(p + 20, ACPI_RSDP_V2_LEN);
		put_le64(p + 24, xsdt);
		p[32] = (uint8_t)(0x100 - acpi_checksum(p, ACPI_RSDP_V2_LEN));
	}
}

TEST(checksum_vectors)
{
	static const uint8_t v[] = {1, 2, 3, 250, 0xff, 0x02};

	CHECK_EQ(acpi_checksum(v, 0), 0);
	CHECK_EQ(acpi_checksum(v, 4), 0);
	CHECK_EQ(acpi_checksum(v + 4, 2), 1);
	CHECK_EQ(acpi_checksum(v, 6), 1);
}

TEST(rsdp_captured)
{
	uint8_t *area = calloc(1, BIOS_AREA_LEN);
	size_t len, off = 0;
	uint8_t *rsdp = load_fixture("pc-smp4-rsdp.bin", &len);

	CHECK_EQ(len, ACPI_RSDP_V1_LEN);
	bytes_copy(area + 0x15250, rsdp, len); /* where SeaBIOS put it: 0xF5250 */
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), 0);
	CHECK_EQ(off, 0x15250);
	free(rsdp);
	free(area);
}

TEST(rsdp_scan_rules)
{
	uint8_t *area = calloc(1, BIOS_AREA_LEN);
	uint8_t *p;
	size_t off = 0;

	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), -E_NOENT);
	make_rsdp(area + 0x108, 0, 0x1000, 0); /* valid but not 16-byte aligned */
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), -E_NOENT);
	make_rsdp(area + 0x200, 0, 0x1000, 0);
	area[0x200 + 19] ^= 1; /* bad 1.0 checksum */
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), -E_BADMSG);
	make_rsdp(area + 0x300, 2, 0x1000, 0x2000);
	area[0x300 + 35] ^= 1; /* 1.0 part fine, extended checksum bad */
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), -E_BADMSG);
	make_rsdp(area + 0x400, 2, 0x1000, 0x2000);
	put_le32(area + 0x400 + 20, 35); /* Length below 36 */
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), -E_BADMSG);
	make_rsdp(area + 0x500, 2, 0x1000, 0x2000);
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, &off), 0);
	CHECK_EQ(off, 0x500);
	CHECK_EQ(acpi_find_rsdp(NULL, BIOS_AREA_LEN, &off), -E_INVAL);
	CHECK_EQ(acpi_find_rsdp(area, BIOS_AREA_LEN, NULL), -E_INVAL);
	free(area);

	/* Structures cut by the end of the area, in exactly-sized buffers */
	p = calloc(1, 16 + ACPI_RSDP_V2_LEN);
	make_rsdp(p + 16, 2, 0x1000, 0x2000);
	for (size_t len = 0; len < 16 + ACPI_RSDP_V2_LEN; len++) {
		uint8_t *cut = dup_exact(p, len);

		CHECK_EQ(acpi_find_rsdp(cut, len, &off), len < 24 ? -E_NOENT : -E_BADMSG);
		free(cut);
	}
	CHECK_EQ(acpi_find_rsdp(p, 16 + ACPI_RSDP_V2_LEN, &off), 0);
	CHECK_EQ(off, 16);
	free(p);

	/* A Length that claims more than the area holds is not summed past it */
	p = calloc(1, 64);
	make_rsdp(p, 2, 0x1000, 0x2000);
	put_le32(p + 20, 64);
	p[32] = 0;
	p[32] = (uint8_t)(0x100 - acpi_checksum(p, 64));
	CHECK_EQ(acpi_find_rsdp(p, 64, &off), 0);
	for (size_t len = ACPI_RSDP_V2_LEN; len < 64; len++) {
		uint8_t *cut = dup_exact(p, len);

		CHECK_EQ(acpi_find_rsdp(cut, len, &off), -E_BADMSG);
		free(cut);
	}
	free(p);
}

/* ---- table walk over a synthetic physical memory -------------------------------------- */

/* The captured pc-smp4 RSDP -> RSDT -> APIC chain at its real addresses. */
TEST(walk_captured_rsdt)
{
	struct memory m = {0};
	size_t rsdp_len, rsdt_len, madt_len, len = 0;
	uint8_t *rsdp = load_fixture("pc-smp4-rsdp.bin", &rsdp_len);
	uint8_t *rsdt = load_fixture("pc-smp4-rsdt.bin", &rsdt_len);
	uint8_t *madt = load_fixture("pc-smp4.bin", &madt_len);
	const void *table = NULL;
	struct madt_info info;

	mem_add(&m, 0x1fe23e9, rsdt, rsdt_len);
	mem_add(&m, 0x1fe22f9, madt, madt_len);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), 0);
	CHECK(table == m.r[1].buf);
	CHECK_EQ(len, 144);
	CHECK_EQ(madt_parse(table, len, NULL, 0, &info), 0);
	CHECK_EQ(info.ntruncated_list, 4);
	/* FACP, HPET and WAET were not put in memory: unreachable, not absent */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "FACP", &table, &len), -E_RANGE);
	rsdp[8] ^= 1;
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	mem_free(&m);
	free(rsdp);
	free(rsdt);
	free(madt);
}

/* Builds an RSDT or XSDT (width 4 or 8) listing addrs. */
static size_t make_root(uint8_t *buf, const char *sig, size_t width, const uint64_t *addrs,
			size_t n)
{
	size_t len = ACPI_HEADER_LEN + width * n;

	bytes_fill(buf, 0, len);
	bytes_copy(buf, sig, 4);
	put_le32(buf + 4, (uint32_t)len);
	buf[8] = 1;
	for (size_t i = 0; i < n; i++) {
		if (width == 8)
			put_le64(buf + ACPI_HEADER_LEN + 8 * i, addrs[i]);
		else
			put_le32(buf + ACPI_HEADER_LEN + 4 * i, (uint32_t)addrs[i]);
	}
	fix_checksum(buf, len);
	return len;
}

static size_t make_table(uint8_t *buf, const char *sig, size_t len)
{
	bytes_fill(buf, 0x11, len);
	bytes_copy(buf, sig, 4);
	put_le32(buf + 4, (uint32_t)len);
	fix_checksum(buf, len);
	return len;
}

#define X_MADT	0x100002000ull /* above 4 GiB: reachable only through the XSDT */
#define X_FACP	0x100003000ull
#define R_MADT	0x00002000u
#define XSDT_AT 0x100001000ull
#define RSDT_AT 0x00001000u

/* An ACPI 2.0 layout: XSDT and RSDT list different MADTs. */
static void build_v2(struct memory *m, uint8_t *rsdp)
{
	static const uint64_t xaddr[] = {0, X_FACP, X_MADT};
	static const uint64_t raddr[] = {R_MADT};
	uint8_t buf[128];
	struct tbl t;

	make_rsdp(rsdp, 2, RSDT_AT, XSDT_AT);
	mem_add(m, XSDT_AT, buf, make_root(buf, "XSDT", 8, xaddr, 3));
	mem_add(m, RSDT_AT, buf, make_root(buf, "RSDT", 4, raddr, 1));
	mem_add(m, X_FACP, buf, make_table(buf, "FACP", 116));
	madt_begin(&t, 0xfee00000u);
	add_x2apic(&t, 0x1234, MADT_LAPIC_ENABLED, 0);
	madt_finish(&t);
	mem_add(m, X_MADT, t.b, t.len);
	madt_begin(&t, 0xfee00000u);
	madt_finish(&t);
	mem_add(m, R_MADT, t.b, t.len);
}

TEST(walk_prefers_xsdt)
{
	struct memory m = {0};
	uint8_t rsdp[ACPI_RSDP_V2_LEN];
	const void *table = NULL;
	size_t len = 0;

	build_v2(&m, rsdp);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), 0);
	CHECK(table == m.r[3].buf);
	CHECK_EQ(len, MADT_HEADER_LEN + 16);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "FACP", &table, &len), 0);
	CHECK_EQ(len, 116);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "HPET", &table, &len), -E_NOENT);
	/* No XSDT address: the RSDT is used */
	make_rsdp(rsdp, 2, RSDT_AT, 0);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), 0);
	CHECK(table == m.r[4].buf);
	CHECK_EQ(len, MADT_HEADER_LEN);
	/* Revisions 0 and 1: the ACPI 1.0 structure, XSDT fields not looked at */
	for (uint8_t rev = 0; rev < 2; rev++) {
		make_rsdp(rsdp, rev, RSDT_AT, 0);
		bytes_fill(rsdp + 20, 0xff, ACPI_RSDP_V2_LEN - 20);
		table = NULL;
		CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), 0);
		CHECK(table == m.r[4].buf);
	}
	mem_free(&m);
}

TEST(walk_corrupt)
{
	struct memory m = {0};
	uint8_t rsdp[ACPI_RSDP_V2_LEN];
	const void *table = NULL;
	size_t len = 0;

	build_v2(&m, rsdp);
	CHECK_EQ(acpi_find_table(NULL, mem_map, &m, "APIC", &table, &len), -E_INVAL);
	CHECK_EQ(acpi_find_table(rsdp, NULL, &m, "APIC", &table, &len), -E_INVAL);
	m.r[0].buf[40] ^= 1; /* XSDT checksum */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	m.r[0].buf[40] ^= 1;
	m.r[0].buf[0] = 'Y'; /* XSDT signature */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	m.r[0].buf[0] = 'X';
	m.r[3].buf[50] ^= 1; /* MADT checksum */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	m.r[3].buf[50] ^= 1;
	put_le32(m.r[3].buf + 4, 20); /* length below the header, yet checksummed */
	fix_checksum(m.r[3].buf, 20);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	put_le32(m.r[3].buf + 4, 4096); /* header reachable, claimed body is not */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_RANGE);
	m.r[3].phys = 0x200000000ull; /* XSDT entry points nowhere */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_RANGE);
	m.r[0].phys = 0x300000000ull; /* XSDT itself unreachable */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_RANGE);
	rsdp[30] ^= 1; /* extended checksum */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	make_rsdp(rsdp, 0, 0, 0); /* no root table at all */
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "APIC", &table, &len), -E_BADMSG);
	mem_free(&m);
}

/* A damaged first copy does not hide a good second one. */
TEST(walk_skips_bad_copy)
{
	struct memory m = {0};
	uint8_t rsdp[ACPI_RSDP_V1_LEN + 16];
	static const uint64_t addrs[] = {0x3000, 0x4000};
	uint8_t buf[128];
	const void *table = NULL;
	size_t len = 0;

	make_rsdp(rsdp, 0, RSDT_AT, 0);
	mem_add(&m, RSDT_AT, buf, make_root(buf, "RSDT", 4, addrs, 2));
	mem_add(&m, 0x3000, buf, make_table(buf, "HPET", 56))[20] ^= 1;
	mem_add(&m, 0x4000, buf, make_table(buf, "HPET", 56));
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "HPET", &table, &len), 0);
	CHECK(table == m.r[2].buf);
	/* Damaged, then unreachable: the first error is reported */
	m.r[2].phys = 0x5000000;
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "HPET", &table, &len), -E_BADMSG);
	mem_free(&m);
}

/* A map that shows one table for the header and another for the body. */
static const void *two_faced_map(void *ctx, uint64_t phys, size_t len)
{
	struct memory *m = ctx;

	return len == ACPI_HEADER_LEN || phys == RSDT_AT ? mem_map(ctx, phys, len) : m->r[2].buf;
}

/* The table handed out is checked as mapped the second time, not the first. */
TEST(walk_rechecks_second_map)
{
	struct memory m = {0};
	uint8_t rsdp[ACPI_RSDP_V2_LEN];
	static const uint64_t addrs[] = {0x3000};
	uint8_t buf[128];
	const void *table = NULL;
	size_t len = 0;

	make_rsdp(rsdp, 0, RSDT_AT, 0);
	mem_add(&m, RSDT_AT, buf, make_root(buf, "RSDT", 4, addrs, 1));
	mem_add(&m, 0x3000, buf, make_table(buf, "APIC", 60));
	/* Body view: says 44 bytes, yet its first 60 bytes sum to zero */
	make_table(buf, "APIC", 60);
	put_le32(buf + 4, 44);
	fix_checksum(buf, 60);
	mem_add(&m, 0, buf, 60);
	CHECK_EQ(acpi_find_table(rsdp, two_faced_map, &m, "APIC", &table, &len), -E_BADMSG);
	bytes_copy(m.r[2].buf, "APIX", 4);
	put_le32(m.r[2].buf + 4, 60);
	fix_checksum(m.r[2].buf, 60);
	CHECK_EQ(acpi_find_table(rsdp, two_faced_map, &m, "APIC", &table, &len), -E_BADMSG);
	bytes_copy(m.r[2].buf, "APIC", 4);
	fix_checksum(m.r[2].buf, 60);
	CHECK_EQ(acpi_find_table(rsdp, two_faced_map, &m, "APIC", &table, &len), 0);
	CHECK(table == m.r[2].buf);
	mem_free(&m);
}

/* A partial entry at the end of the RSDT is ignored, and never read. */
TEST(walk_partial_root_entry)
{
	struct memory m = {0};
	uint8_t rsdp[ACPI_RSDP_V2_LEN];
	static const uint64_t addrs[] = {0x3000, 0x4000};
	uint8_t buf[128];
	const void *table = NULL;
	size_t len = 0;

	make_rsdp(rsdp, 0, RSDT_AT, 0);
	make_root(buf, "RSDT", 4, addrs, 2);
	put_le32(buf + 4, ACPI_HEADER_LEN + 4 + 3);
	fix_checksum(buf, ACPI_HEADER_LEN + 4 + 3);
	mem_add(&m, RSDT_AT, buf, ACPI_HEADER_LEN + 4 + 3);
	mem_add(&m, 0x3000, buf, make_table(buf, "HPET", 56));
	mem_add(&m, 0x4000, buf, make_table(buf, "WAET", 40));
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "HPET", &table, &len), 0);
	CHECK(table == m.r[1].buf);
	CHECK_EQ(acpi_find_table(rsdp, mem_map, &m, "WAET", &table, &len), -E_NOENT);
	mem_free(&m);
}

TEST(fadt_pm_timer)
{
	uint8_t f[244];
	uint16_t port = 0;
	bool ext = true;

	memset(f, 0, sizeof(f));
	/* PM_TMR_BLK 0x608 (QEMU's q35 value), length 4, 24-bit counter */
	f[76] = 0x08;
	f[77] = 0x06;
	f[91] = 4;
	CHECK_EQ(acpi_fadt_pm_timer(f, sizeof(f), &port, &ext), 0);
	CHECK_EQ(port, 0x608);
	CHECK(!ext);
	f[113] = 1; /* Flags bit 8: TMR_VAL_EXT */
	CHECK_EQ(acpi_fadt_pm_timer(f, sizeof(f), &port, &ext), 0);
	CHECK(ext);
	/* no PM_TMR_BLK: X_PM_TMR_BLK in system I/O space */
	f[76] = f[77] = 0;
	f[208] = 1;
	f[212] = 0x08;
	f[213] = 0xb0;
	CHECK_EQ(acpi_fadt_pm_timer(f, sizeof(f), &port, &ext), 0);
	CHECK_EQ(port, 0xb008);
	/* memory-space X_PM_TMR_BLK is not an I/O timer */
	f[208] = 0;
	CHECK_EQ(acpi_fadt_pm_timer(f, sizeof(f), &port, &ext), (uint64_t)(int64_t)-E_NOENT);
	/* a PM_TMR_LEN other than 4 is no timer either */
	f[76] = 0x08;
	f[91] = 2;
	CHECK_EQ(acpi_fadt_pm_timer(f, sizeof(f), &port, &ext), (uint64_t)(int64_t)-E_NOENT);
	/* too short to reach Flags */
	CHECK_EQ(acpi_fadt_pm_timer(f, 115, &port, &ext), (uint64_t)(int64_t)-E_INVAL);
	CHECK_EQ(acpi_fadt_pm_timer(NULL, 244, &port, &ext), (uint64_t)(int64_t)-E_INVAL);
}

TEST_MAIN(T(fadt_pm_timer), T(checksum_vectors), T(fixtures_exact), T(fixtures_truncated),
	  T(fixtures_truncated_relabelled), T(fixture_bad_checksum), T(fixture_max_cpus_small),
	  T(x2apic_ids_above_255), T(table_order_kept), T(duplicates),
	  T(lapic_override_and_unknown_types), T(malformed_entries), T(header_checks), T(many_cpus),
	  T(rsdp_captured), T(rsdp_scan_rules), T(walk_captured_rsdt), T(walk_prefers_xsdt),
	  T(walk_corrupt), T(walk_skips_bad_copy), T(walk_partial_root_entry),
	  T(walk_rechecks_second_map))

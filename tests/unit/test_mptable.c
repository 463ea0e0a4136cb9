// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/mptable.c: MP tables captured from QEMU's SeaBIOS and
 * qboot (tests/fixtures/mptable/README.md), hand-built tables with expected
 * values worked out by hand from the MultiProcessor Specification 1.4, and
 * corrupt input. Every table is parsed from an exactly-sized heap copy so
 * that AddressSanitizer reports any read past its end.
 */
#include <stdlib.h>

#include "lib/error.h"
#include "lib/mptable.h"
#include "tests/unit/check.h"
#include "tests/unit/fixture.h"

#define FIXTURE_DIR "tests/fixtures/mptable/"
#define QEMU_LAPIC  0xfee00000u

/* A captured table: NAME-fps.bin or NAME-table.bin. */
static uint8_t *load_fixture(const char *name, const char *suffix, size_t *len)
{
	return fixture_load(FIXTURE_DIR, name, suffix, len);
}

/* Sets the byte at `at` so that p[0..len) sums to zero modulo 256. */
static void set_sum(uint8_t *p, size_t len, size_t at)
{
	p[at] = 0;
	p[at] = (uint8_t)(0x100 - acpi_checksum(p, len));
}

/* ---- hand-built tables (4.2 header, 4.3 entries) -------------------------------------- */

struct tbl {
	uint8_t b[65536];
	size_t len;
};

static void mp_begin(struct tbl *t, uint8_t rev, uint32_t lapic)
{
	bytes_fill(t, 0, sizeof(*t));
	bytes_copy(t->b, "PCMP", 4);
	t->b[6] = rev;
	bytes_copy(t->b + 8, "IPIBENCH", 8);
	bytes_copy(t->b + 16, "UNIT TEST   ", 12);
	put_le32(t->b + 36, lapic);
	t->len = MPTABLE_HEADER_LEN;
}

static uint8_t *mp_entry(struct tbl *t, uint8_t type, size_t len)
{
	uint8_t *e = t->b + t->len;

	if (t->len + len > sizeof(t->b))
		abort();
	e[0] = type;
	t->len += len;
	put_le16(t->b + 34, (uint16_t)(t->b[34] | t->b[35] << 8) + 1); /* entry count */
	return e;
}

static void add_cpu(struct tbl *t, uint8_t apic_id, uint8_t flags)
{
	uint8_t *e = mp_entry(t, MPTABLE_ENTRY_PROCESSOR, 20);

	e[1] = apic_id;
	e[2] = 0x14; /* local APIC version, as QEMU reports it */
	e[3] = flags;
	put_le32(e + 4, 0x60fb1); /* CPU signature: family 6 */
}

/* A bus, an I/O APIC, an I/O and a local interrupt entry: what every table carries. */
static void add_others(struct tbl *t)
{
	uint8_t *e = mp_entry(t, MPTABLE_ENTRY_BUS, 8);

	bytes_copy(e + 2, "ISA   ", 6);
	e = mp_entry(t, MPTABLE_ENTRY_IOAPIC, 8);
	e[1] = 2;
	e[2] = 0x11;
	e[3] = 1;
	put_le32(e + 4, 0xfec00000);
	e = mp_entry(t, MPTABLE_ENTRY_IO_INTR, 8);
	e[7] = 2;
	mp_entry(t, MPTABLE_ENTRY_LOCAL_INTR, 8)[7] = 0xff;
}

static void mp_finish(struct tbl *t)
{
	put_le16(t->b + 4, (uint16_t)t->len);
	set_sum(t->b, t->len, 7);
}

static int parse_exact(const void *src, size_t len, struct madt_cpu *cpus, size_t max,
		       struct mptable_info *info)
{
	uint8_t *p = dup_exact(src, len);
	int ret = mptable_parse(p, len, cpus, max, info);

	free(p);
	return ret;
}

static int parse_tbl(const struct tbl *t, struct madt_cpu *cpus, size_t max,
		     struct mptable_info *info)
{
	return parse_exact(t->b, t->len, cpus, max, info);
}

/* ---- captured fixtures ---------------------------------------------------------------- */

struct fixture {
	const char *name;
	uint32_t fps_phys;   /* where the capture found the floating pointer */
	uint32_t table_phys; /* what it points at */
	size_t ncpus;
	uint8_t apic[4];
	size_t ndisabled;
	size_t nentries;
	uint16_t entry_count; /* the header's; qboot leaves it 0 */
};

/*
 * Expected values from tests/fixtures/mptable/README.md, decoded there by
 * extract_mptable.py independently of lib/mptable.c. SeaBIOS lists only the
 * first logical CPU of each package, so -smp 4 (one socket of four cores)
 * has one processor entry; qboot lists every CPU.
 */
static const struct fixture fixtures[] = {
    {"pc-smp1", 0xf5420, 0xf5430, 1, {0}, 0, 18, 18},
    {"pc-smp4", 0xf5420, 0xf5430, 1, {0}, 0, 18, 18},
    {"pc-smp6-s2c3", 0xf5410, 0xf5420, 2, {0, 4}, 0, 19, 19},
    {"pc-smp2-max4", 0xf5420, 0xf5430, 1, {0}, 0, 18, 18},
    {"pc-smp4-s4", 0xf53e0, 0xf53f0, 4, {0, 1, 2, 3}, 0, 21, 21},
    {"pc-smp2-s4-max4", 0xf53e0, 0xf53f0, 2, {0, 1}, 2, 21, 21},
    {"microvm-smp1", 0x9fc00, 0x9fc10, 1, {0}, 0, 20, 0},
    {"microvm-smp2", 0x9fc00, 0x9fc10, 2, {0, 1}, 0, 21, 0},
    {"microvm-smp4", 0x9fc00, 0x9fc10, 4, {0, 1, 2, 3}, 0, 23, 0},
    {"microvm-acpi-smp2", 0xf4330, 0xf4340, 1, {0}, 0, 16, 16},
};

#define NFIXTURES (sizeof(fixtures) / sizeof(fixtures[0]))

static void check_fixture(const struct fixture *fx, int rc, const struct madt_cpu *cpus,
			  const struct mptable_info *info)
{
	CHECK_EQ(rc, fx->ncpus);
	CHECK_EQ(info->ncpus, fx->ncpus);
	CHECK_EQ(info->lapic_phys, QEMU_LAPIC);
	CHECK_EQ(info->spec_rev, 4);
	CHECK_EQ(info->default_config, 0);
	CHECK_EQ(info->ndisabled, fx->ndisabled);
	CHECK_EQ(info->nduplicates, 0);
	CHECK_EQ(info->ntruncated_list, 0);
	CHECK_EQ(info->nbsp, 1);
	CHECK_EQ(info->bsp_apic_id, 0);
	CHECK_EQ(info->nentries, fx->nentries);
	CHECK_EQ(info->entry_count, fx->entry_count);
	CHECK(info->reason == NULL);
	for (size_t i = 0; i < fx->ncpus; i++) {
		CHECK_EQ(cpus[i].apic_id, fx->apic[i]);
		CHECK_EQ(cpus[i].acpi_uid, MPTABLE_NO_UID);
		CHECK_EQ(cpus[i].from_x2apic_entry, 0);
	}
	CHECK_EQ(cpus[fx->ncpus].apic_id, 0xa5a5a5a5); /* nothing written past ncpus */
}

TEST(fixtures_exact)
{
	for (size_t f = 0; f < NFIXTURES; f++) {
		struct madt_cpu cpus[8];
		struct mptable_info info;
		size_t len;
		uint8_t *t = load_fixture(fixtures[f].name, "-table.bin", &len);

		bytes_fill(cpus, 0xa5, sizeof(cpus));
		check_fixture(&fixtures[f], mptable_parse(t, len, cpus, 8, &info), cpus, &info);
		free(t);
	}
}

/* Every cut of every table fails cleanly: short header, or base length past the end. */
TEST(fixtures_truncated)
{
	for (size_t f = 0; f < NFIXTURES; f++) {
		struct madt_cpu cpus[8];
		struct mptable_info info;
		size_t len;
		uint8_t *t = load_fixture(fixtures[f].name, "-table.bin", &len);

		for (size_t cut = 0; cut < len; cut++) {
			int want = cut < MPTABLE_HEADER_LEN ? -E_INVAL : -E_BADMSG;

			CHECK_EQ(parse_exact(t, cut, cpus, 8, &info), want);
			if (cut >= MPTABLE_HEADER_LEN)
				CHECK_STR(info.reason,
					  "base table length past the readable bytes (truncated)");
		}
		free(t);
	}
}

/*
 * The same cuts with base length and checksum patched to match, so the walk
 * itself meets the cut: an entry runs past the end, or the result is a prefix
 * of the whole table's.
 */
TEST(fixtures_truncated_relabelled)
{
	for (size_t f = 0; f < NFIXTURES; f++) {
		const struct fixture *fx = &fixtures[f];
		struct madt_cpu cpus[8];
		struct mptable_info info;
		size_t len, nok = 0;
		uint8_t *t = load_fixture(fx->name, "-table.bin", &len);

		for (size_t cut = MPTABLE_HEADER_LEN; cut < len; cut++) {
			uint8_t *p = dup_exact(t, cut);
			int ret;

			put_le16(p + 4, (uint16_t)cut);
			set_sum(p, cut, 7);
			ret = mptable_parse(p, cut, cpus, 8, &info);
			free(p);
			if (ret == -E_BADMSG) {
				CHECK_STR(info.reason, "entry runs past the base table length");
				continue;
			}
			nok++;
			CHECK(ret >= 0 && (size_t)ret <= fx->ncpus);
			CHECK(info.nentries < fx->nentries);
			for (size_t i = 0; ret > 0 && i < (size_t)ret; i++)
				CHECK_EQ(cpus[i].apic_id, fx->apic[i]);
		}
		CHECK_EQ(nok, fx->nentries); /* a cut on each entry boundary parses */
		free(t);
	}
}

TEST(fixture_bad_checksum)
{
	struct mptable_info info;
	size_t len;
	uint8_t *t = load_fixture("microvm-smp4", "-table.bin", &len);

	for (size_t i = 0; i < len; i++) {
		/* A wrong signature is not an MP table; any other flip breaks length or sum */
		int want = i < 4 ? -E_INVAL : -E_BADMSG;

		t[i] ^= 0x01;
		CHECK_EQ(parse_exact(t, len, NULL, 0, &info), want);
		t[i] ^= 0x01;
	}
	CHECK_EQ(parse_exact(t, len, NULL, 0, &info), 0);
	CHECK_EQ(info.ntruncated_list, 4);
	t[len - 1] ^= 0x80;
	CHECK_EQ(parse_exact(t, len, NULL, 0, &info), -E_BADMSG);
	CHECK_STR(info.reason, "base table checksum");
	free(t);
}

/* max_cpus below the CPU count: table order kept, the rest counted, no overflow. */
TEST(fixture_max_cpus_small)
{
	size_t len;
	uint8_t *t = load_fixture("pc-smp4-s4", "-table.bin", &len);

	for (size_t max = 0; max <= 4; max++) {
		/* Exactly sized (1 byte for none), so ASan sees any overrun */
		struct madt_cpu *cpus = malloc(max ? max * sizeof(*cpus) : 1);
		struct mptable_info info;

		CHECK_EQ(mptable_parse(t, len, cpus, max, &info), max);
		CHECK_EQ(info.ntruncated_list, 4 - max);
		for (size_t i = 0; i < max; i++)
			CHECK_EQ(cpus[i].apic_id, i);
		free(cpus);
	}
	free(t);
}

/* ---- the floating pointer, captured and scanned --------------------------------------- */

/*
 * The captured floating pointer placed where the firmware put it, inside the
 * section 4 area that holds it (qboot: the KiB at 639K; SeaBIOS: the BIOS
 * ROM), found by the scan, and its table read through the map at the
 * captured address, as the kernel does.
 */
TEST(fixtures_found_and_read)
{
	for (size_t f = 0; f < NFIXTURES; f++) {
		const struct fixture *fx = &fixtures[f];
		uint32_t area = fx->fps_phys >= 0xf0000 ? 0xf0000 : 0x9fc00;
		size_t area_len = area == 0xf0000 ? 0x10000 : 0x400, fps_len, len, off = 1;
		uint8_t *fps = load_fixture(fx->name, "-fps.bin", &fps_len);
		uint8_t *t = load_fixture(fx->name, "-table.bin", &len);
		uint8_t *zeros = calloc(area_len, 1);
		struct memory m = {0};
		struct madt_cpu cpus[8];
		struct mptable_info info;
		uint8_t *a;

		CHECK_EQ(fps_len, MPTABLE_FPS_LEN);
		a = mem_add(&m, area, zeros, area_len);
		bytes_copy(a + (fx->fps_phys - area), fps, fps_len);
		/* qboot puts the table right behind the pointer, inside the same KiB */
		if (fx->table_phys - area < area_len)
			bytes_copy(a + (fx->table_phys - area), t, len);
		else
			mem_add(&m, fx->table_phys, t, len);
		CHECK_EQ(mptable_find_fps(a, area_len, &off), 0);
		CHECK_EQ(off, fx->fps_phys - area);
		bytes_fill(cpus, 0xa5, sizeof(cpus));
		check_fixture(fx, mptable_read(a + off, mem_map, &m, cpus, 8, &info), cpus, &info);
		CHECK_EQ(info.table_phys, fx->table_phys);
		CHECK_EQ(info.imcr, 0);
		CHECK_EQ(m.maps, 2); /* header, then the base table */
		mem_free(&m);
		free(zeros);
		free(fps);
		free(t);
	}
}

/* Builds a floating pointer at p: table address, revision, feature bytes 1 and 2. */
static void make_fps(uint8_t *p, uint32_t table, uint8_t rev, uint8_t f1, uint8_t f2)
{
	bytes_fill(p, 0, MPTABLE_FPS_LEN);
	bytes_copy(p, "_MP_", 4);
	put_le32(p + 4, table);
	p[8] = 1;
	p[9] = rev;
	p[11] = f1;
	p[12] = f2;
	set_sum(p, MPTABLE_FPS_LEN, 10);
}

TEST(fps_scan_rules)
{
	uint8_t area[256];
	size_t off = 99;

	CHECK_EQ(mptable_find_fps(NULL, 16, &off), -E_INVAL);
	CHECK_EQ(mptable_find_fps(area, 16, NULL), -E_INVAL);
	bytes_fill(area, 0, sizeof(area));
	CHECK_EQ(mptable_find_fps(area, sizeof(area), &off), -E_NOENT);
	CHECK_EQ(mptable_find_fps(area, 0, &off), -E_NOENT);
	/* Off a 16-byte boundary: not seen at all */
	make_fps(area + 8, 0x1000, 4, 0, 0);
	CHECK_EQ(mptable_find_fps(area, sizeof(area), &off), -E_NOENT);
	bytes_fill(area, 0, sizeof(area));
	/* A bad copy first does not hide a good one behind it */
	make_fps(area + 32, 0x1000, 4, 0, 0);
	area[32 + 10] ^= 1;
	make_fps(area + 64, 0x2000, 1, 0, 0);
	CHECK_EQ(mptable_find_fps(area, sizeof(area), &off), 0);
	CHECK_EQ(off, 64);
	/* The structure must lie wholly inside the area */
	CHECK_EQ(mptable_find_fps(area, 64 + 15, &off), -E_BADMSG);
	CHECK_EQ(mptable_find_fps(area, 64 + 16, &off), 0);
}

TEST(fps_fields)
{
	static const uint8_t bad_revs[] = {0, 2, 3, 5, 0x14, 0xff};
	uint8_t p[48];
	size_t off;

	for (size_t i = 0; i < sizeof(bad_revs); i++) {
		make_fps(p, 0x1000, bad_revs[i], 0, 0);
		CHECK_EQ(mptable_find_fps(p, 16, &off), -E_BADMSG);
	}
	make_fps(p, 0x1000, 1, 0, 0);
	CHECK_EQ(mptable_find_fps(p, 16, &off), 0);
	/* Length 0 paragraphs: invalid even with a good sum */
	p[8] = 0;
	set_sum(p, 16, 10);
	CHECK_EQ(mptable_find_fps(p, 16, &off), -E_BADMSG);
	/* Length 3 paragraphs: the sum covers all 48 bytes, which must be inside the area */
	bytes_fill(p, 0x33, sizeof(p));
	make_fps(p, 0x1000, 4, 0, 0);
	p[8] = 3;
	bytes_fill(p + 16, 0x33, 32);
	set_sum(p, 48, 10);
	CHECK_EQ(mptable_find_fps(p, 48, &off), 0);
	CHECK_EQ(mptable_find_fps(p, 47, &off), -E_BADMSG);
	p[40] ^= 1;
	CHECK_EQ(mptable_find_fps(p, 48, &off), -E_BADMSG);
}

/* ---- hand-built tables ---------------------------------------------------------------- */

/* Two CPUs and the usual other entries: 44 + 2 * 20 + 4 * 8 = 116 bytes. */
static void two_cpus(struct tbl *t, uint8_t rev)
{
	mp_begin(t, rev, QEMU_LAPIC);
	add_cpu(t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(t, 1, MPTABLE_CPU_EN);
	add_others(t);
	mp_finish(t);
}

TEST(hand_built_basic)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	two_cpus(&t, 4);
	CHECK_EQ(t.len, 116);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 2);
	CHECK_EQ(cpus[0].apic_id, 0);
	CHECK_EQ(cpus[1].apic_id, 1);
	CHECK_EQ(info.nentries, 6);
	CHECK_EQ(info.entry_count, 6);
	CHECK_EQ(info.nbsp, 1);
	CHECK_EQ(info.lapic_phys, QEMU_LAPIC);
	/* Bytes after the base table (an extended table) are not read or summed */
	t.b[t.len] = 0x80;
	t.b[t.len + 1] = 2;
	CHECK_EQ(parse_exact(t.b, t.len + 2, cpus, 4, &info), 2);
	CHECK(info.reason == NULL);
}

TEST(bad_checksum)
{
	struct tbl t;
	struct mptable_info info;

	two_cpus(&t, 4);
	t.b[7]++;
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	CHECK_STR(info.reason, "base table checksum");
	CHECK_EQ(info.ncpus, 0);
}

TEST(truncated_table)
{
	struct tbl t;
	struct mptable_info info;

	two_cpus(&t, 4);
	CHECK_EQ(parse_exact(t.b, 115, NULL, 0, &info), -E_BADMSG);
	CHECK_STR(info.reason, "base table length past the readable bytes (truncated)");
	CHECK_EQ(parse_exact(t.b, 43, NULL, 0, &info), -E_INVAL);
	CHECK_EQ(parse_exact(t.b, 0, NULL, 0, &info), -E_INVAL);
	/* A base length below the header's own */
	put_le16(t.b + 4, 43);
	set_sum(t.b, 43, 7);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	CHECK_STR(info.reason, "base table length shorter than the header");
}

/* The base length ends inside the second processor entry (offset 64, 20 bytes). */
TEST(entry_past_end)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	add_cpu(&t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(&t, 1, MPTABLE_CPU_EN);
	t.len = 80;
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), -E_BADMSG);
	CHECK_STR(info.reason, "entry runs past the base table length");
	CHECK_EQ(info.reason_offset, 64);
	CHECK_EQ(info.ncpus, 1); /* the partial result before it */
	/* An 8-byte entry cut after 7 bytes */
	mp_begin(&t, 4, QEMU_LAPIC);
	add_others(&t);
	t.len--;
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	CHECK_EQ(info.reason_offset, 44 + 3 * 8);
}

TEST(unknown_entry_type)
{
	static const uint8_t types[] = {5, 6, 127, 128, 129, 130, 255};
	struct tbl t;
	struct mptable_info info;

	for (size_t i = 0; i < sizeof(types); i++) {
		mp_begin(&t, 4, QEMU_LAPIC);
		add_cpu(&t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
		mp_entry(&t, types[i], 8);
		add_cpu(&t, 1, MPTABLE_CPU_EN);
		mp_finish(&t);
		CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
		CHECK_STR(info.reason, "entry of a type the spec does not define");
		CHECK_EQ(info.reason_offset, 64);
		CHECK_EQ(info.nentries, 1);
	}
}

TEST(disabled_cpu)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	add_cpu(&t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(&t, 1, 0);
	add_cpu(&t, 2, MPTABLE_CPU_EN);
	add_cpu(&t, 1, MPTABLE_CPU_EN); /* not a duplicate: the first listing was unusable */
	add_cpu(&t, 3, 0xfc);		/* reserved bits set, EN clear: still disabled */
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 3);
	CHECK_EQ(cpus[0].apic_id, 0);
	CHECK_EQ(cpus[1].apic_id, 2);
	CHECK_EQ(cpus[2].apic_id, 1);
	CHECK_EQ(info.ndisabled, 2);
	CHECK_EQ(info.nduplicates, 0);
}

TEST(no_bsp_flag)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	add_cpu(&t, 0, MPTABLE_CPU_EN);
	add_cpu(&t, 1, MPTABLE_CPU_EN);
	mp_finish(&t);
	/* Reported, not refused: the kernel knows its own APIC ID */
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 2);
	CHECK_EQ(info.nbsp, 0);
}

TEST(two_bsp_flags)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	add_cpu(&t, 3, MPTABLE_CPU_EN);
	add_cpu(&t, 5, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(&t, 7, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(&t, 9, MPTABLE_CPU_BP); /* disabled, still counted as a BP flag */
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 3);
	CHECK_EQ(info.nbsp, 3);
	CHECK_EQ(info.bsp_apic_id, 5); /* the first */
	CHECK_EQ(info.ndisabled, 1);
}

TEST(zero_entries)
{
	struct tbl t;
	struct madt_cpu cpus[1] = {{0xa5, 0xa5, true}};
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 1, &info), 0);
	CHECK_EQ(info.nentries, 0);
	CHECK_EQ(info.nbsp, 0);
	CHECK_EQ(cpus[0].apic_id, 0xa5);
	CHECK(info.reason == NULL);
	/* Other entries only: no processor either */
	mp_begin(&t, 1, QEMU_LAPIC);
	add_others(&t);
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 1, &info), 0);
	CHECK_EQ(info.nentries, 4);
}

TEST(spec_revisions)
{
	struct tbl t;
	struct mptable_info info;

	for (unsigned int rev = 0; rev < 256; rev++) {
		int want = rev == 1 || rev == 4 ? 2 : -E_BADMSG;
		struct madt_cpu cpus[2];

		two_cpus(&t, (uint8_t)rev);
		CHECK_EQ(parse_tbl(&t, cpus, 2, &info), want);
		if (want < 0)
			CHECK_STR(info.reason, "spec revision neither 1 (MP 1.1) nor 4 (MP 1.4)");
		else
			CHECK_EQ(info.spec_rev, rev);
	}
}

TEST(header_checks)
{
	struct tbl t;
	struct mptable_info info;

	CHECK_EQ(mptable_parse(NULL, 100, NULL, 0, &info), -E_INVAL);
	two_cpus(&t, 4);
	CHECK_EQ(mptable_parse(t.b, t.len, NULL, 0, NULL), -E_INVAL);
	t.b[0] = 'p';
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_INVAL);
	CHECK(info.reason != NULL);
	/* Local APIC address 0 */
	mp_begin(&t, 4, 0);
	add_cpu(&t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), -E_BADMSG);
	CHECK_STR(info.reason, "local APIC address 0");
	/* Near the 16-bit base length limit: 3274 processor entries, APIC IDs wrapping at 256 */
	mp_begin(&t, 4, QEMU_LAPIC);
	while (t.len + 20 <= 0xffff)
		add_cpu(&t, (uint8_t)(t.len / 20), MPTABLE_CPU_EN);
	while (t.len + 8 <= 0xffff)
		mp_entry(&t, MPTABLE_ENTRY_BUS, 8);
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, NULL, 0, &info), 0);
	CHECK_EQ(info.ndisabled + info.nduplicates + info.ntruncated_list, 3274);
	CHECK_EQ(info.ntruncated_list, 256);
}

TEST(duplicates)
{
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;

	mp_begin(&t, 4, QEMU_LAPIC);
	add_cpu(&t, 0, MPTABLE_CPU_EN | MPTABLE_CPU_BP);
	add_cpu(&t, 1, MPTABLE_CPU_EN);
	add_cpu(&t, 0, MPTABLE_CPU_EN);
	add_cpu(&t, 1, 0); /* disabled: dropped as such, not as a duplicate */
	add_cpu(&t, 1, MPTABLE_CPU_EN);
	mp_finish(&t);
	CHECK_EQ(parse_tbl(&t, cpus, 4, &info), 2);
	CHECK_EQ(info.nduplicates, 2);
	CHECK_EQ(info.ndisabled, 1);
}

/* qboot writes entry count 0: the walk goes by length, and any count is only reported. */
TEST(entry_count_not_trusted)
{
	static const uint16_t counts[] = {0, 1, 2, 7, 0xffff};
	struct tbl t;
	struct mptable_info info;

	for (size_t i = 0; i < sizeof(counts) / sizeof(counts[0]); i++) {
		two_cpus(&t, 4);
		put_le16(t.b + 34, counts[i]);
		set_sum(t.b, t.len, 7);
		CHECK_EQ(parse_tbl(&t, NULL, 0, &info), 0);
		CHECK_EQ(info.ntruncated_list, 2);
		CHECK_EQ(info.entry_count, counts[i]);
		CHECK_EQ(info.nentries, 6);
	}
}

/* ---- mptable_read: default configurations and the pointer ----------------------------- */

/* Chapter 5: types 1-7, two processors at APIC IDs 0 and 1; the table pointer is moot. */
TEST(default_configuration)
{
	uint8_t fps[16];
	struct madt_cpu cpus[2];
	struct mptable_info info;
	struct memory m = {0};

	for (unsigned int type = 1; type <= 7; type++) {
		make_fps(fps, 0x1000, type == 1 ? 1 : 4, (uint8_t)type, type == 6 ? 0x80 : 0);
		bytes_fill(cpus, 0xa5, sizeof(cpus));
		CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 2, &info), 2);
		CHECK_EQ(info.default_config, type);
		CHECK_EQ(cpus[0].apic_id, 0);
		CHECK_EQ(cpus[1].apic_id, 1);
		CHECK_EQ(cpus[1].acpi_uid, MPTABLE_NO_UID);
		CHECK_EQ(info.lapic_phys, 0xfee00000);
		CHECK_EQ(info.nbsp, 1);
		CHECK_EQ(info.bsp_apic_id, 0);
		CHECK_EQ(info.spec_rev, type == 1 ? 1 : 4);
		CHECK_EQ(info.imcr, type == 6);
		CHECK_EQ(m.maps, 0); /* nothing mapped */
	}
	make_fps(fps, 0, 4, 5, 0);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 1, &info), 1);
	CHECK_EQ(info.ntruncated_list, 1);
	CHECK_EQ(mptable_read(fps, mem_map, &m, NULL, 0, &info), 0);
	CHECK_EQ(info.ntruncated_list, 2);
	for (unsigned int type = 8; type < 256; type++) {
		make_fps(fps, 0, 4, (uint8_t)type, 0);
		CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 2, &info), -E_BADMSG);
		CHECK_STR(info.reason, "reserved default configuration type");
	}
}

TEST(read_errors)
{
	uint8_t fps[16];
	struct tbl t;
	struct madt_cpu cpus[4];
	struct mptable_info info;
	struct memory m = {0};

	make_fps(fps, 0, 4, 0, 0);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_BADMSG);
	CHECK_STR(info.reason, "floating pointer names neither a table nor a default");
	CHECK_EQ(mptable_read(fps, NULL, &m, cpus, 4, &info), -E_INVAL);
	CHECK_EQ(mptable_read(NULL, mem_map, &m, cpus, 4, &info), -E_INVAL);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, NULL), -E_INVAL);
	/* Nothing at the pointer */
	make_fps(fps, 0x9fc10, 4, 0, 0);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_RANGE);
	CHECK_STR(info.reason, "table out of reach");
	CHECK_EQ(info.table_phys, 0x9fc10);
	/* The header is reachable, the base length is not */
	two_cpus(&t, 4);
	mem_add(&m, 0x9fc10, t.b, t.len - 1);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_RANGE);
	mem_free(&m);
	mem_add(&m, 0x9fc10, t.b, t.len);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), 2);
	/* Something else at the pointer */
	m.r[0].buf[0] = 'X';
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_BADMSG);
	CHECK_STR(info.reason, "no MP configuration table at the pointer");
	m.r[0].buf[0] = 'P';
	put_le16(m.r[0].buf + 4, 40);
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_BADMSG);
	/* A damaged pointer is refused before anything is mapped */
	put_le16(m.r[0].buf + 4, (uint16_t)t.len);
	fps[10]++;
	m.maps = 0;
	CHECK_EQ(mptable_read(fps, mem_map, &m, cpus, 4, &info), -E_BADMSG);
	CHECK_EQ(m.maps, 0);
	mem_free(&m);
}

TEST_MAIN(T(fixtures_exact), T(fixtures_truncated), T(fixtures_truncated_relabelled),
	  T(fixture_bad_checksum), T(fixture_max_cpus_small), T(fixtures_found_and_read),
	  T(fps_scan_rules), T(fps_fields), T(hand_built_basic), T(bad_checksum),
	  T(truncated_table), T(entry_past_end), T(unknown_entry_type), T(disabled_cpu),
	  T(no_bsp_flag), T(two_bsp_flags), T(zero_entries), T(spec_revisions), T(header_checks),
	  T(duplicates), T(entry_count_not_trusted), T(default_configuration), T(read_errors))

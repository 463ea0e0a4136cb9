// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Intel MP table, following the MultiProcessor Specification 1.4:
 * 4.1 MP Floating Pointer Structure, 4.2 MP Configuration Table Header,
 * 4.3 base table entries (4.3.1 Processor Entries), chapter 5 default
 * configurations. The CPU list for machines without ACPI (QEMU's microvm
 * with acpi=off boots qboot, which builds only this table).
 *
 * Like lib/acpi.c: every read is bounded by a length the caller vouched for
 * and then by the table's own base length; multi-byte fields are assembled
 * byte by byte (little-endian, 4.2: the header and entries are packed).
 */
#include "lib/mptable.h"
#include "lib/error.h"

/* Floating pointer fields (4.1, Table 4-1) */
#define FPS_TABLE_PTR 4
#define FPS_LENGTH    8 /* in 16-byte paragraphs */
#define FPS_SPEC_REV  9
#define FPS_FEATURE1  11 /* MP System Configuration Type: 0 = a table is present */
#define FPS_FEATURE2  12

/* Configuration table header fields (4.2, Table 4-2) */
#define HDR_BASE_LENGTH 4
#define HDR_SPEC_REV	6
#define HDR_ENTRY_COUNT 34
#define HDR_LAPIC	36

/* Processor entry fields (4.3.1, Table 4-4) */
#define PROC_APIC_ID 1
#define PROC_FLAGS   3

#define PROC_ENTRY_LEN	20
#define OTHER_ENTRY_LEN 8
#define DEFAULT_NCPUS	2

static uint16_t mp_get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint32_t mp_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* 4.1: spec revision 1 is MP 1.1, 4 is MP 1.4; 1.0 had no floating pointer revision. */
static bool mp_rev_known(uint8_t rev)
{
	return rev == 1 || rev == 4;
}

/* 4.1: signature, length in paragraphs (1 in every revision so far), checksum over all of it. */
static bool mp_fps_valid(const uint8_t *p, size_t avail)
{
	size_t len;

	if (avail < MPTABLE_FPS_LEN || __builtin_memcmp(p, "_MP_", 4) != 0)
		return false;
	len = (size_t)p[FPS_LENGTH] * 16;
	if (len < MPTABLE_FPS_LEN || len > avail)
		return false;
	return acpi_checksum(p, len) == 0 && mp_rev_known(p[FPS_SPEC_REV]);
}

int mptable_find_fps(const void *area, size_t len, size_t *offset)
{
	const uint8_t *base = area;
	int err = -E_NOENT;

	if (!area || !offset)
		return -E_INVAL;
	/* 4: "the signature ... must be located on a 16-byte boundary" */
	for (size_t off = 0; len >= 4 && off <= len - 4; off += 16) {
		if (__builtin_memcmp(base + off, "_MP_", 4) != 0)
			continue;
		if (mp_fps_valid(base + off, len - off)) {
			*offset = off;
			return 0;
		}
		err = -E_BADMSG; /* a stray string or a damaged copy: keep looking */
	}
	return err;
}

static int mp_fail(struct mptable_info *info, const char *why, size_t offset)
{
	info->reason = why;
	info->reason_offset = offset;
	return -E_BADMSG;
}

/*
 * Whether an enabled processor entry in t[MPTABLE_HEADER_LEN..end) names
 * apic_id. Entries before end were walked already, so their types and
 * lengths are known good. Quadratic, but a base table holds at most 3274
 * processor entries (16-bit length), and this runs once at boot.
 */
static bool mp_listed_before(const uint8_t *t, size_t end, uint8_t apic_id)
{
	for (size_t off = MPTABLE_HEADER_LEN; off < end;) {
		if (t[off] != MPTABLE_ENTRY_PROCESSOR) {
			off += OTHER_ENTRY_LEN;
			continue;
		}
		if ((t[off + PROC_FLAGS] & MPTABLE_CPU_EN) && t[off + PROC_APIC_ID] == apic_id)
			return true;
		off += PROC_ENTRY_LEN;
	}
	return false;
}

/*
 * 4.3.1: EN clear means "this processor is unusable, and the operating
 * system should not attempt to access this processor"; BP marks the one the
 * firmware booted on. The first enabled listing of an APIC ID wins.
 */
static void mp_add_proc(const uint8_t *t, size_t off, struct madt_cpu *cpus, size_t max_cpus,
			struct mptable_info *info)
{
	uint8_t id = t[off + PROC_APIC_ID], flags = t[off + PROC_FLAGS];

	if (flags & MPTABLE_CPU_BP) {
		if (info->nbsp++ == 0)
			info->bsp_apic_id = id;
	}
	if (!(flags & MPTABLE_CPU_EN)) {
		info->ndisabled++;
	} else if (mp_listed_before(t, off, id)) {
		info->nduplicates++;
	} else if (info->ncpus >= max_cpus) {
		info->ntruncated_list++;
	} else {
		cpus[info->ncpus].apic_id = id;
		cpus[info->ncpus].acpi_uid = MPTABLE_NO_UID;
		cpus[info->ncpus].from_x2apic_entry = false;
		info->ncpus++;
	}
}

/*
 * 4.3: base entries have no length byte; the type fixes it. Returns the
 * entry's length, or -E_BADMSG for a type the spec does not define for the
 * base table (extended entries, types 128 and up, belong behind it) or an
 * entry that runs past the base length.
 */
static int mp_walk_entry(const uint8_t *t, size_t len, size_t off, struct madt_cpu *cpus,
			 size_t max_cpus, struct mptable_info *info)
{
	size_t elen;

	if (t[off] > MPTABLE_ENTRY_LOCAL_INTR)
		return mp_fail(info, "entry of a type the spec does not define", off);
	elen = t[off] == MPTABLE_ENTRY_PROCESSOR ? PROC_ENTRY_LEN : OTHER_ENTRY_LEN;
	if (elen > len - off)
		return mp_fail(info, "entry runs past the base table length", off);
	if (t[off] == MPTABLE_ENTRY_PROCESSOR)
		mp_add_proc(t, off, cpus, max_cpus, info);
	info->nentries++;
	return (int)elen;
}

/* 4.2: signature, base table length (header and base entries), checksum, revision, LAPIC. */
static int mp_check_header(const uint8_t *t, size_t *len, struct mptable_info *info)
{
	uint16_t length;

	if (!t || *len < MPTABLE_HEADER_LEN || __builtin_memcmp(t, "PCMP", 4) != 0) {
		info->reason = "not an MP configuration table (\"PCMP\", 44-byte header)";
		return -E_INVAL;
	}
	length = mp_get_le16(t + HDR_BASE_LENGTH);
	if (length < MPTABLE_HEADER_LEN)
		return mp_fail(info, "base table length shorter than the header", HDR_BASE_LENGTH);
	if (length > *len)
		return mp_fail(info, "base table length past the readable bytes (truncated)",
			       HDR_BASE_LENGTH);
	if (acpi_checksum(t, length) != 0)
		return mp_fail(info, "base table checksum", 0);
	info->spec_rev = t[HDR_SPEC_REV];
	if (!mp_rev_known(info->spec_rev))
		return mp_fail(info, "spec revision neither 1 (MP 1.1) nor 4 (MP 1.4)",
			       HDR_SPEC_REV);
	info->lapic_phys = mp_get_le32(t + HDR_LAPIC);
	if (info->lapic_phys == 0)
		return mp_fail(info, "local APIC address 0", HDR_LAPIC);
	info->entry_count = mp_get_le16(t + HDR_ENTRY_COUNT);
	*len = length; /* the extended table, if any, is not ours to read */
	return 0;
}

int mptable_parse(const void *table, size_t len, struct madt_cpu *cpus, size_t max_cpus,
		  struct mptable_info *info)
{
	const uint8_t *t = table;
	int ret;

	if (!info)
		return -E_INVAL;
	*info = (struct mptable_info){0};
	ret = mp_check_header(t, &len, info);
	if (ret)
		return ret;
	if (!cpus)
		max_cpus = 0;
	for (size_t off = MPTABLE_HEADER_LEN; off < len; off += (size_t)ret) {
		ret = mp_walk_entry(t, len, off, cpus, max_cpus, info);
		if (ret < 0)
			return ret;
	}
	return (int)info->ncpus;
}

/*
 * Chapter 5: two processors, the BSP at local APIC ID 0 and the AP at 1
 * (5.1 for the 82489DX types 1-4, 5.2 for the integrated types 5-7), local
 * APICs at 0xFEE00000. Table 4-1 reserves every type above 7.
 */
static int mp_default_config(uint8_t type, struct madt_cpu *cpus, size_t max_cpus,
			     struct mptable_info *info)
{
	if (type > MPTABLE_DEFAULT_MAX)
		return mp_fail(info, "reserved default configuration type", FPS_FEATURE1);
	info->default_config = type;
	info->lapic_phys = MPTABLE_DEFAULT_LAPIC;
	info->nbsp = 1;
	info->bsp_apic_id = 0;
	for (uint32_t id = 0; id < DEFAULT_NCPUS; id++) {
		if (info->ncpus >= max_cpus) {
			info->ntruncated_list++;
			continue;
		}
		cpus[info->ncpus].apic_id = id;
		cpus[info->ncpus].acpi_uid = MPTABLE_NO_UID;
		cpus[info->ncpus].from_x2apic_entry = false;
		info->ncpus++;
	}
	return (int)info->ncpus;
}

/* Maps the table at phys in two steps: the header says how long the base table is. */
static int mp_map_table(uint32_t phys, acpi_map_fn map, void *ctx, const uint8_t **t, size_t *len)
{
	const uint8_t *h = map(ctx, phys, MPTABLE_HEADER_LEN);
	uint16_t length;

	if (!h)
		return -E_RANGE;
	if (__builtin_memcmp(h, "PCMP", 4) != 0)
		return -E_BADMSG;
	length = mp_get_le16(h + HDR_BASE_LENGTH);
	if (length < MPTABLE_HEADER_LEN)
		return -E_BADMSG;
	*t = map(ctx, phys, length);
	if (!*t)
		return -E_RANGE;
	*len = length; /* mptable_parse rechecks: the second map may be a fresh copy */
	return 0;
}

/* The table the floating pointer names, mapped and parsed. */
static int mp_read_table(uint32_t phys, acpi_map_fn map, void *ctx, struct madt_cpu *cpus,
			 size_t max_cpus, struct mptable_info *info)
{
	const uint8_t *t;
	size_t len;
	int ret;

	if (phys == 0)
		return mp_fail(info, "floating pointer names neither a table nor a default", 0);
	ret = mp_map_table(phys, map, ctx, &t, &len);
	if (ret == -E_RANGE)
		info->reason = "table out of reach";
	else if (ret < 0)
		info->reason = "no MP configuration table at the pointer";
	return ret < 0 ? ret : mptable_parse(t, len, cpus, max_cpus, info);
}

int mptable_read(const void *fps, acpi_map_fn map, void *ctx, struct madt_cpu *cpus,
		 size_t max_cpus, struct mptable_info *info)
{
	const uint8_t *p = fps;
	uint32_t phys;
	int ret;

	if (!info)
		return -E_INVAL;
	*info = (struct mptable_info){0};
	if (!fps || !map)
		return -E_INVAL;
	/* The caller vouches for 16 * length readable bytes (mptable_find_fps) */
	if (!mp_fps_valid(p, SIZE_MAX))
		return mp_fail(info, "floating pointer structure", 0);
	if (!cpus)
		max_cpus = 0;
	phys = mp_get_le32(p + FPS_TABLE_PTR);
	/* 4.1: a nonzero feature byte 1 is a default configuration; the pointer is moot */
	if (p[FPS_FEATURE1]) {
		info->spec_rev = p[FPS_SPEC_REV];
		ret = mp_default_config(p[FPS_FEATURE1], cpus, max_cpus, info);
	} else {
		ret = mp_read_table(phys, map, ctx, cpus, max_cpus, info);
	}
	info->table_phys = phys;
	info->imcr = p[FPS_FEATURE2] & MPTABLE_FEATURE2_IMCRP;
	return ret;
}

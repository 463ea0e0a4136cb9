// SPDX-License-Identifier: GPL-2.0-only
/*
 * ACPI table discovery and the MADT CPU list, following ACPI 6.5:
 * 5.2.5 RSDP, 5.2.6 table header, 5.2.7 RSDT, 5.2.8 XSDT, 5.2.12 MADT
 * (5.2.12.2 Processor Local APIC, 5.2.12.8 Local APIC Address Override,
 * 5.2.12.12 Processor Local x2APIC).
 *
 * Firmware tables are input we do not control, so every byte is read through
 * a bound derived from a length the caller vouched for, and multi-byte fields
 * are assembled byte by byte: ACPI fields are little-endian and often
 * unaligned (XSDT entries sit at offset 36, not 8-aligned).
 */
#include "lib/acpi.h"
#include "lib/error.h"

static uint32_t acpi_get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t acpi_get_le64(const uint8_t *p)
{
	return (uint64_t)acpi_get_le32(p) | (uint64_t)acpi_get_le32(p + 4) << 32;
}

uint8_t acpi_checksum(const void *p, size_t len)
{
	const uint8_t *b = p;
	uint8_t sum = 0;

	for (size_t i = 0; i < len; i++)
		sum = (uint8_t)(sum + b[i]);
	return sum;
}

/*
 * 5.2.5.3: the first 20 bytes (ACPI 1.0) sum to zero; from revision 2 the
 * structure grows to its Length field (at least 36 bytes) and the Extended
 * Checksum makes the whole of it sum to zero too. avail bounds every read.
 */
static bool acpi_rsdp_valid(const uint8_t *p, size_t avail)
{
	uint32_t length;

	if (avail < ACPI_RSDP_V1_LEN || __builtin_memcmp(p, "RSD PTR ", 8) != 0)
		return false;
	if (acpi_checksum(p, ACPI_RSDP_V1_LEN) != 0)
		return false;
	if (p[15] < 2) /* Revision 0 is ACPI 1.0; there is no revision 1 */
		return true;
	if (avail < ACPI_RSDP_V2_LEN)
		return false;
	length = acpi_get_le32(p + 20);
	if (length < ACPI_RSDP_V2_LEN || length > avail)
		return false;
	return acpi_checksum(p, length) == 0;
}

int acpi_find_rsdp(const void *area, size_t len, size_t *offset)
{
	const uint8_t *base = area;
	int err = -E_NOENT;

	if (!area || !offset)
		return -E_INVAL;
	/* 5.2.5.1: the signature sits on a 16-byte boundary */
	for (size_t off = 0; len >= 8 && off <= len - 8; off += 16) {
		if (__builtin_memcmp(base + off, "RSD PTR ", 8) != 0)
			continue;
		if (acpi_rsdp_valid(base + off, len - off)) {
			*offset = off;
			return 0;
		}
		err = -E_BADMSG; /* a stray or damaged copy: keep looking */
	}
	return err;
}

/*
 * Maps the table at phys in two steps, since its size is only known from its
 * header (5.2.6), and checks signature, length and checksum. A table of
 * another signature is -E_NOENT, so the caller can keep walking.
 */
static int acpi_map_table(acpi_map_fn map, void *ctx, uint64_t phys, const char sig[4],
			  const uint8_t **table, size_t *len)
{
	const uint8_t *t = map(ctx, phys, ACPI_HEADER_LEN);
	uint32_t length;

	if (!t)
		return -E_RANGE;
	if (__builtin_memcmp(t, sig, 4) != 0)
		return -E_NOENT;
	length = acpi_get_le32(t + 4);
	if (length < ACPI_HEADER_LEN)
		return -E_BADMSG;
	t = map(ctx, phys, length);
	if (!t)
		return -E_RANGE;
	/* The second mapping may be a fresh copy: check what we will hand out */
	if (__builtin_memcmp(t, sig, 4) != 0 || acpi_get_le32(t + 4) != length)
		return -E_BADMSG;
	if (acpi_checksum(t, length) != 0)
		return -E_BADMSG;
	*table = t;
	*len = length;
	return 0;
}

/*
 * 5.2.5.3: an ACPI 2.0+ OS uses the XSDT (64-bit entries, 5.2.8) when the
 * RSDP has one, else the RSDT (32-bit entries, 5.2.7).
 */
static int acpi_map_root(const uint8_t *rsdp, acpi_map_fn map, void *ctx, const uint8_t **root,
			 size_t *len, size_t *width)
{
	uint64_t xsdt = rsdp[15] >= 2 ? acpi_get_le64(rsdp + 24) : 0;
	uint32_t rsdt = acpi_get_le32(rsdp + 16);
	int err;

	*width = xsdt ? 8 : 4;
	if (xsdt)
		err = acpi_map_table(map, ctx, xsdt, "XSDT", root, len);
	else if (rsdt)
		err = acpi_map_table(map, ctx, rsdt, "RSDT", root, len);
	else
		err = -E_BADMSG;
	return err == -E_NOENT ? -E_BADMSG : err; /* the root must carry its signature */
}

int acpi_find_table(const void *rsdp, acpi_map_fn map, void *ctx, const char sig[4],
		    const void **table, size_t *len)
{
	const uint8_t *root, *found;
	size_t root_len, width, found_len;
	int err, first_err = 0;

	if (!rsdp || !map || !sig || !table || !len)
		return -E_INVAL;
	/* The caller vouches that the RSDP's own length is readable (acpi_find_rsdp) */
	if (!acpi_rsdp_valid(rsdp, SIZE_MAX))
		return -E_BADMSG;
	err = acpi_map_root(rsdp, map, ctx, &root, &root_len, &width);
	if (err)
		return err;
	/* Like other OSes, ignore a partial entry at the end of the root table */
	for (size_t i = ACPI_HEADER_LEN; i + width <= root_len; i += width) {
		uint64_t phys = width == 8 ? acpi_get_le64(root + i) : acpi_get_le32(root + i);

		if (phys == 0)
			continue;
		err = acpi_map_table(map, ctx, phys, sig, &found, &found_len);
		if (err == 0) {
			*table = found;
			*len = found_len;
			return 0;
		}
		/* A damaged or unreachable entry need not hide a good later copy */
		if (err != -E_NOENT && first_err == 0)
			first_err = err;
	}
	return first_err ? first_err : -E_NOENT;
}

/* A processor entry, type 0 or 9, decoded into one form. */
struct madt_proc {
	uint32_t apic_id;
	uint32_t uid;
	uint32_t flags;
	bool x2apic;
};

/*
 * Decodes entry e (its length already checked against the table). Returns 1
 * for a processor entry, 0 for another type, -E_BADMSG when the entry is too
 * short for its type. Longer entries are accepted: later revisions may append.
 */
static int madt_decode_proc(const uint8_t *e, struct madt_proc *p)
{
	switch (e[0]) {
	case MADT_TYPE_LAPIC: /* 5.2.12.2: type, 8, UID u8, APIC ID u8, flags u32 */
		if (e[1] < 8)
			return -E_BADMSG;
		p->uid = e[2];
		p->apic_id = e[3];
		p->flags = acpi_get_le32(e + 4);
		p->x2apic = false;
		return 1;
	case MADT_TYPE_X2APIC: /* 5.2.12.12: type, 16, rsvd u16, x2APIC ID, flags, UID */
		if (e[1] < 16)
			return -E_BADMSG;
		p->apic_id = acpi_get_le32(e + 4);
		p->flags = acpi_get_le32(e + 8);
		p->uid = acpi_get_le32(e + 12);
		p->x2apic = true;
		return 1;
	default:
		return 0;
	}
}

static bool madt_usable(uint32_t flags)
{
	return (flags & (MADT_LAPIC_ENABLED | MADT_LAPIC_ONLINE_CAPABLE)) != 0;
}

/*
 * Whether a usable processor entry in t[MADT_HEADER_LEN..end) names apic_id.
 * Searching the table rather than cpus[] also sees hot-plug slots and CPUs
 * past max_cpus; the entries before end are already validated. Quadratic in
 * the entries, which is a few million steps even for 4096 CPUs, once at boot.
 */
static bool madt_listed_before(const uint8_t *t, size_t end, uint32_t apic_id)
{
	struct madt_proc p;

	for (size_t off = MADT_HEADER_LEN; off < end; off += t[off + 1]) {
		if (madt_decode_proc(t + off, &p) == 1 && madt_usable(p.flags) &&
		    p.apic_id == apic_id)
			return true;
	}
	return false;
}

/*
 * 5.2.12.2 Local APIC Flags: Enabled means the OS may start the CPU; Online
 * Capable (ACPI 6.3) without Enabled means it can be hot-added later;
 * neither means unusable. The first usable listing of an APIC ID wins, so a
 * CPU named by both a type 0 and a type 9 entry is started once. Disabled
 * entries never count as duplicates: they are dropped anyway.
 */
static void madt_add_proc(const uint8_t *t, size_t off, const struct madt_proc *p,
			  struct madt_cpu *cpus, size_t max_cpus, struct madt_info *info)
{
	if (!madt_usable(p->flags)) {
		info->ndisabled++;
	} else if (madt_listed_before(t, off, p->apic_id)) {
		info->nduplicates++;
	} else if (!(p->flags & MADT_LAPIC_ENABLED)) {
		info->nhotplug++;
	} else if (info->ncpus >= max_cpus) {
		info->ntruncated_list++;
	} else {
		cpus[info->ncpus].apic_id = p->apic_id;
		cpus[info->ncpus].acpi_uid = p->uid;
		cpus[info->ncpus].from_x2apic_entry = p->x2apic;
		info->ncpus++;
	}
}

/*
 * 5.2.12: every Interrupt Controller Structure starts with type and length
 * bytes, so unknown types are skipped by their length. Returns the entry's
 * length, or -E_BADMSG when it is shorter than that prefix or overruns.
 */
static int madt_parse_entry(const uint8_t *t, size_t len, size_t off, struct madt_cpu *cpus,
			    size_t max_cpus, struct madt_info *info)
{
	const uint8_t *e = t + off;
	struct madt_proc p;
	int kind;

	if (len - off < 2 || e[1] < 2 || e[1] > len - off)
		return -E_BADMSG;
	kind = madt_decode_proc(e, &p);
	if (kind < 0)
		return kind;
	if (kind == 1) {
		madt_add_proc(t, off, &p, cpus, max_cpus, info);
	} else if (e[0] == MADT_TYPE_LAPIC_OVERRIDE) {
		/* 5.2.12.8: type, 12, reserved u16, 64-bit address replacing the header's */
		if (e[1] < 12)
			return -E_BADMSG;
		info->lapic_phys = acpi_get_le64(e + 4);
	}
	return e[1];
}

/* 5.2.12: the 36-byte header (5.2.6), then LAPIC address u32 and flags u32. */
static int madt_check_header(const uint8_t *t, size_t *len)
{
	uint32_t length;

	if (!t || *len < MADT_HEADER_LEN || __builtin_memcmp(t, "APIC", 4) != 0)
		return -E_INVAL;
	length = acpi_get_le32(t + 4);
	if (length < MADT_HEADER_LEN)
		return -E_INVAL;
	if (length > *len || acpi_checksum(t, length) != 0)
		return -E_BADMSG;
	*len = length; /* the caller may have mapped more than the table */
	return 0;
}

int madt_parse(const void *madt, size_t len, struct madt_cpu *cpus, size_t max_cpus,
	       struct madt_info *info)
{
	const uint8_t *t = madt;
	int ret;

	if (!info)
		return -E_INVAL;
	*info = (struct madt_info){0};
	ret = madt_check_header(t, &len);
	if (ret)
		return ret;
	if (!cpus)
		max_cpus = 0;
	info->lapic_phys = acpi_get_le32(t + 36);
	info->flags = acpi_get_le32(t + 40);
	for (size_t off = MADT_HEADER_LEN; off < len; off += (size_t)ret) {
		ret = madt_parse_entry(t, len, off, cpus, max_cpus, info);
		if (ret < 0)
			return ret;
	}
	return (int)info->ncpus;
}

#define FADT_PM_TMR_BLK 76
#define FADT_PM_TMR_LEN 91
#define FADT_FLAGS 112
#define  FADT_TMR_VAL_EXT (1u << 8)
#define FADT_X_PM_TMR_BLK 208	/* Generic Address Structure, 12 bytes */
#define GAS_SYSTEM_IO 1

static uint32_t fadt_u32(const uint8_t *p, size_t off)
{
	return (uint32_t)p[off] | (uint32_t)p[off + 1] << 8 | (uint32_t)p[off + 2] << 16 |
	       (uint32_t)p[off + 3] << 24;
}

int acpi_fadt_pm_timer(const void *fadt, size_t len, uint16_t *port, bool *ext32)
{
	const uint8_t *p = fadt;
	uint32_t blk;

	if (!fadt || len < FADT_FLAGS + 4)
		return -E_INVAL;
	*ext32 = fadt_u32(p, FADT_FLAGS) & FADT_TMR_VAL_EXT;
	blk = fadt_u32(p, FADT_PM_TMR_BLK);
	if (blk && blk <= 0xffff && p[FADT_PM_TMR_LEN] == 4) {
		*port = (uint16_t)blk;
		return 0;
	}
	if (len >= FADT_X_PM_TMR_BLK + 12 && p[FADT_X_PM_TMR_BLK] == GAS_SYSTEM_IO) {
		uint32_t lo = fadt_u32(p, FADT_X_PM_TMR_BLK + 4);
		uint32_t hi = fadt_u32(p, FADT_X_PM_TMR_BLK + 8);

		if (lo && lo <= 0xffff && !hi) {
			*port = (uint16_t)lo;
			return 0;
		}
	}
	return -E_NOENT;
}

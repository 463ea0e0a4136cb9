/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pure ACPI table helpers: RSDP scan (ACPI 6.5 5.2.5), RSDT/XSDT walk
 * (5.2.6-5.2.8) and the MADT CPU list (5.2.12). No hardware access: the caller
 * hands in memory it has already mapped, or a callback that maps physical
 * addresses, so the same code runs in the kernel and in host tests.
 */
#ifndef LIB_ACPI_H
#define LIB_ACPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define ACPI_RSDP_V1_LEN 20 /* ACPI 1.0 part, covered by the first checksum */
#define ACPI_RSDP_V2_LEN 36 /* revision >= 2: adds length, XSDT address, ext. checksum */
#define ACPI_HEADER_LEN	 36 /* System Description Table Header, 5.2.6 */
#define MADT_HEADER_LEN	 44 /* header + Local Interrupt Controller Address + Flags */

/* MADT Interrupt Controller Structure types (ACPI 6.5 5.2.12) */
#define MADT_TYPE_LAPIC		 0 /* Processor Local APIC, 5.2.12.2 */
#define MADT_TYPE_LAPIC_OVERRIDE 5 /* Local APIC Address Override, 5.2.12.8 */
#define MADT_TYPE_X2APIC	 9 /* Processor Local x2APIC, 5.2.12.12 */

/* Local APIC Flags (5.2.12.2), shared by type 0 and type 9 */
#define MADT_LAPIC_ENABLED	  (1u << 0)
#define MADT_LAPIC_ONLINE_CAPABLE (1u << 1) /* ACPI 6.3+, MADT revision >= 5 */

/* Multiple APIC Flags (5.2.12) */
#define MADT_PCAT_COMPAT (1u << 0) /* dual 8259s present */

/*
 * Maps len bytes at physical address phys and returns a pointer the caller
 * may read them through, or NULL when they cannot be reached.
 */
typedef const void *(*acpi_map_fn)(void *ctx, uint64_t phys, size_t len);

struct madt_cpu {
	uint32_t apic_id;	/* 8-bit in type 0 entries, 32-bit in type 9 */
	uint32_t acpi_uid;	/* ACPI Processor ID (type 0) or UID (type 9) */
	bool from_x2apic_entry; /* listed by a type 9 entry */
};

struct madt_info {
	uint64_t lapic_phys;	/* header value or type-5 override */
	uint32_t flags;		/* MADT_PCAT_COMPAT */
	size_t ncpus;		/* enabled, usable now: entries written to cpus[] */
	size_t nhotplug;	/* online-capable, not enabled: never started */
	size_t ndisabled;	/* neither enabled nor online-capable: dropped */
	size_t nduplicates;	/* usable entries repeating an earlier APIC ID */
	size_t ntruncated_list; /* usable CPUs beyond max_cpus */
};

/* Sum of len bytes modulo 256; a valid ACPI structure sums to 0. */
uint8_t acpi_checksum(const void *p, size_t len);

/*
 * Finds the RSDP in area[0..len) (the 0xE0000-0xFFFFF BIOS area or the first
 * KiB of the EBDA, 5.2.5.1): "RSD PTR " on a 16-byte boundary of area, valid
 * 20-byte checksum and, for revision >= 2, a valid extended checksum over its
 * length bytes, all inside area. area should be 16-byte aligned physically.
 * Returns 0 and *offset, -E_BADMSG when a signature was found but nothing
 * passed the checks, -E_NOENT when there was no signature.
 */
int acpi_find_rsdp(const void *area, size_t len, size_t *offset);

/*
 * Finds the table with signature sig through the XSDT (RSDP revision >= 2 and
 * non-zero XSDT address) or else the RSDT. rsdp must point at an RSDP that
 * acpi_find_rsdp accepted (20 bytes readable, or length bytes for revision
 * >= 2). On success *table points at the whole table, mapped through map, and
 * *len is its header length. Returns 0, -E_BADMSG (bad RSDP, root table or
 * target table), -E_RANGE (a table map could not reach) or -E_NOENT.
 */
int acpi_find_table(const void *rsdp, acpi_map_fn map, void *ctx, const char sig[4],
		    const void **table, size_t *len);

/*
 * Lists the CPUs of a MADT of len readable bytes: enabled type 0 and type 9
 * entries in table order into cpus[0..max_cpus) (cpus may be NULL when
 * max_cpus is 0), counting the others in *info. Returns info->ncpus, or
 * -E_INVAL (shorter than the MADT header, wrong signature, info NULL) or
 * -E_BADMSG (bad checksum, table length past len, malformed entry); on error
 * cpus[] and *info hold a partial result.
 */
int madt_parse(const void *madt, size_t len, struct madt_cpu *cpus, size_t max_cpus,
	       struct madt_info *info);

/*
 * The ACPI PM timer from the FADT ("FACP", ACPI 6.5 5.2.9): a 3.579545 MHz
 * counter in an I/O port, 24 bits wide unless TMR_VAL_EXT (Flags bit 8) says
 * 32. PM_TMR_BLK (offset 76) first, else X_PM_TMR_BLK (offset 208) when it
 * names system I/O space. 0; -E_NOENT when the FADT names no timer;
 * -E_INVAL for a table too short to say.
 */
#define ACPI_PM_TIMER_HZ 3579545u
int acpi_fadt_pm_timer(const void *fadt, size_t len, uint16_t *port, bool *ext32);

#endif

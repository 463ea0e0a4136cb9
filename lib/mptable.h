/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pure Intel MP table helpers (MultiProcessor Specification 1.4, May 1997):
 * the floating pointer scan (section 4, 4.1), the configuration table and
 * its base entries (4.2, 4.3) and the default configurations (chapter 5).
 * The CPU list is written as struct madt_cpu, the form the ACPI path uses, so
 * kernel/topology.c hands either list to the same bring-up code. Like
 * lib/acpi.c, no hardware access: memory comes from the caller or through an
 * acpi_map_fn.
 */
#ifndef LIB_MPTABLE_H
#define LIB_MPTABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/acpi.h"

#define MPTABLE_FPS_LEN	   16 /* floating pointer: 1 paragraph in every revision */
#define MPTABLE_HEADER_LEN 44 /* configuration table header, 4.2 Table 4-2 */

/* Base entry types and lengths (4.3, Table 4-3); the spec defines no others */
#define MPTABLE_ENTRY_PROCESSOR	 0 /* 20 bytes, 4.3.1 */
#define MPTABLE_ENTRY_BUS	 1 /* 8 bytes each from here on, 4.3.2 */
#define MPTABLE_ENTRY_IOAPIC	 2 /* 4.3.3 */
#define MPTABLE_ENTRY_IO_INTR	 3 /* 4.3.4 */
#define MPTABLE_ENTRY_LOCAL_INTR 4 /* 4.3.5 */

/* Processor entry CPU flags (4.3.1, Table 4-5) */
#define MPTABLE_CPU_EN (1u << 0) /* usable: "the OS should not access" it when 0 */
#define MPTABLE_CPU_BP (1u << 1) /* the bootstrap processor */

/* Feature byte 2, bit 7: IMCR present, the PIC Mode of 3.6.2.1 */
#define MPTABLE_FEATURE2_IMCRP (1u << 7)

/* Chapter 5: every default configuration puts the local APICs here */
#define MPTABLE_DEFAULT_LAPIC 0xfee00000u
#define MPTABLE_DEFAULT_MAX   7 /* types 1-7 (Table 4-1); higher ones are reserved */

/* madt_cpu.acpi_uid of a CPU from an MP table, which names no ACPI UID */
#define MPTABLE_NO_UID UINT32_MAX

struct mptable_info {
	uint64_t lapic_phys;	/* header field, or MPTABLE_DEFAULT_LAPIC */
	uint32_t table_phys;	/* the floating pointer's table address */
	uint8_t spec_rev;	/* the table's (1: MP 1.1, 4: MP 1.4); the pointer's if none */
	uint8_t default_config; /* feature byte 1: 0 when a table was read, else its type */
	bool imcr;		/* feature byte 2 bit 7 (mptable_read only) */
	uint16_t entry_count;	/* the header's count, not trusted: qboot writes 0 */
	size_t nentries;	/* base entries actually walked */
	size_t ncpus;		/* enabled, first listing of their APIC ID: in cpus[] */
	size_t ndisabled;	/* EN clear: never started */
	size_t nduplicates;	/* enabled entries repeating an earlier APIC ID */
	size_t ntruncated_list; /* usable CPUs beyond max_cpus */
	size_t nbsp;		/* processor entries with BP set; the spec wants one */
	uint32_t bsp_apic_id;	/* APIC ID of the first of them (valid when nbsp > 0) */
	const char *reason;	/* on error: what was wrong, in words; NULL otherwise */
	size_t reason_offset;	/* on error in an entry: its offset in the table */
};

/*
 * Finds the MP Floating Pointer Structure in area[0..len): "_MP_" on a
 * 16-byte boundary of area, a length field of at least one paragraph whose
 * 16 * length bytes lie inside area and sum to zero, spec revision 1 or 4.
 * area should be 16-byte aligned physically (section 4 search areas: the
 * first KiB of the EBDA, the last KiB of base memory, 0xF0000-0xFFFFF).
 * Returns 0 and *offset, -E_BADMSG when a signature was found but nothing
 * passed, -E_NOENT when there was no signature, -E_INVAL for NULL arguments.
 */
int mptable_find_fps(const void *area, size_t len, size_t *offset);

/*
 * Lists the CPUs of an MP Configuration Table of len readable bytes: enabled
 * processor entries, first listing of each APIC ID, in table order into
 * cpus[0..max_cpus) (cpus may be NULL when max_cpus is 0); the others are
 * counted in *info. The base table is walked by its length, as Linux does,
 * not by the entry count (qboot writes 0 there); the extended table behind
 * it is not read. Returns info->ncpus, or -E_INVAL (shorter than the header,
 * wrong signature, info NULL) or -E_BADMSG (base length past len or below
 * the header, checksum, spec revision other than 1 or 4, local APIC address
 * 0, an entry of no base type or past the end); info->reason says which. On
 * error cpus[] and *info hold a partial result.
 */
int mptable_parse(const void *table, size_t len, struct madt_cpu *cpus, size_t max_cpus,
		  struct mptable_info *info);

/*
 * The CPUs an MP floating pointer describes. fps must be a structure that
 * mptable_find_fps accepted (16 bytes readable). A nonzero feature byte 1
 * is a default configuration (chapter 5), reported as what the spec says it
 * is: two processors, APIC IDs 0 (the BSP) and 1, local APICs at
 * 0xFEE00000. Types 1-4 have discrete 82489DX APICs, which a kernel that
 * needs an integrated local APIC may want to refuse; info->default_config
 * says which. Otherwise the table is mapped through map, header first, then
 * its base length, and parsed by mptable_parse. Returns the CPU count,
 * -E_INVAL for NULL arguments, -E_BADMSG (bad pointer, reserved default type,
 * no table, bad table), -E_RANGE (map could not reach the table).
 */
int mptable_read(const void *fps, acpi_map_fn map, void *ctx, struct madt_cpu *cpus,
		 size_t max_cpus, struct mptable_info *info);

#endif

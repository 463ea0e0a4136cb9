/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Local APIC Interrupt Command Register (ICR) encoding, pure code.
 *
 * Follows the Intel SDM vol. 3A: 11.6.1 "Interrupt Command Register (ICR)"
 * (xAPIC: two 32-bit registers at 0x300/0x310), 11.12.9 "ICR Operation in
 * x2APIC Mode" (one 64-bit MSR 0x830, 32-bit destination, no delivery-status
 * bit), 11.6.2.2 "Logical Destination Mode" (flat model) and 11.12.10.2
 * "Deriving Logical x2APIC ID from the Local x2APIC ID" (cluster model).
 * The INIT/START-UP helpers follow the MP initialization protocol of 9.4.4
 * ("MP Initialization Example"): INIT assert, INIT de-assert, then SIPI.
 *
 * Nothing here touches hardware: the apic/ backends write what these build.
 */
#ifndef LIB_ICR_H
#define LIB_ICR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/cpuset.h"

/* Bit fields are indented under their register (house style); clang-format would flatten them. */
/* clang-format off */
/* xAPIC MMIO registers (offsets from the APIC base) and their x2APIC MSRs. */
#define ICR_XAPIC_LOW		0x300 /* ICR bits 31:0; writing it sends the IPI */
#define ICR_XAPIC_HIGH		0x310 /* ICR bits 63:32; write it first */
#define ICR_X2APIC_MSR		0x830 /* whole ICR in one WRMSR */

/* ICR low dword, common to both modes. */
#define ICR_VECTOR_MASK		0x000000ffu /* 7:0 */
#define ICR_DELIVERY_SHIFT	8 /* 10:8 */
#define ICR_DELIVERY_MASK	0x00000700u
#define  ICR_DM_FIXED		0
#define  ICR_DM_LOWEST		1
#define  ICR_DM_SMI		2
#define  ICR_DM_NMI		4
#define  ICR_DM_INIT		5
#define  ICR_DM_STARTUP		6
#define ICR_DEST_LOGICAL	0x00000800u /* 11: 0 physical, 1 logical */
#define ICR_DELIVERY_BUSY	0x00001000u /* 12: xAPIC only, read-only "send pending" */
#define ICR_LEVEL_ASSERT	0x00004000u /* 14: matters for INIT only (P4+ send 1 anyway) */
#define ICR_TRIGGER_LEVEL	0x00008000u /* 15: 0 edge, 1 level */
#define ICR_SHORTHAND_SHIFT	18 /* 19:18 */
#define ICR_SHORTHAND_MASK	0x000c0000u
#define  ICR_SH_NONE		0 /* use the destination field */
#define  ICR_SH_SELF		1
#define  ICR_SH_ALL		2 /* all including self */
#define  ICR_SH_OTHERS		3 /* all excluding self */

/* ICR high dword (xAPIC register 0x310); x2APIC uses all 32 bits as the ID. */
#define ICR_XAPIC_DEST_SHIFT	24 /* 31:24 */
#define ICR_XAPIC_DEST_MAX	0xffu
#define ICR_X2APIC_DEST_SHIFT	32 /* 63:32 of the 64-bit MSR value */

/* Logical Destination Register: xAPIC offset 0xd0, x2APIC MSR 0x80d (read-only). */
#define ICR_XAPIC_LDR		0x0d0
#define  ICR_XAPIC_LDR_SHIFT	24 /* logical APIC ID in 31:24 */
#define ICR_XAPIC_DFR		0x0e0
#define  ICR_XAPIC_DFR_FLAT	0xffffffffu /* model 1111b in 31:28 */
#define ICR_X2APIC_LDR_MSR	0x80d
#define  ICR_X2APIC_CLUSTER_SHIFT 16 /* cluster ID in 31:16 */
#define  ICR_X2APIC_ID_MAX	0xfffffu /* LDR derives from x2APIC ID bits 19:0 */

#define ICR_FLAT_MAX_CPUS	8 /* one LDR bit per CPU in the xAPIC flat model */

/* START-UP vector = physical page number of the real-mode entry point. */
#define ICR_SIPI_PAGE_SHIFT	12
#define ICR_SIPI_ADDR_LIMIT	0x100000u /* the 8-bit vector reaches below 1 MiB only */
/* clang-format on */

struct icr_fields {
	uint8_t vector;
	uint8_t delivery;   /* ICR_DM_* */
	bool logical;	    /* destination mode */
	bool level_assert;  /* bit 14 */
	bool level_trigger; /* bit 15 */
	uint8_t shorthand;  /* ICR_SH_* */
	uint32_t dest;	    /* APIC ID or logical destination; ignored with a shorthand */
};

/*
 * Check the fields against the SDM: a defined delivery mode (3 and 7 are
 * reserved), a two-bit shorthand. 0 or -E_INVAL. The encoders below do not
 * check (they are meant for the send path) and simply mask each field.
 */
int icr_fields_check(const struct icr_fields *f);

/* ICR bits 31:0 (vector, delivery, modes, shorthand); same in both modes. */
uint32_t icr_encode_low(const struct icr_fields *f);

/* Full 64-bit value for x2APIC MSR 0x830 (or Hyper-V's ICR MSR in x2APIC mode). */
uint64_t icr_encode_x2apic(const struct icr_fields *f);

/* xAPIC register pair; -E_RANGE if dest does not fit the 8-bit field. */
int icr_encode_xapic(const struct icr_fields *f, uint32_t *low, uint32_t *high);

/* x2APIC logical ID (LDR) of an x2APIC ID: cluster (id >> 4) << 16 | 1 << (id & 15). */
uint32_t icr_x2apic_ldr(uint32_t x2apic_id);

/* xAPIC flat-model logical ID for CPU number index (< 8): 1 << index; 0 if out of range. */
uint8_t icr_flat_ldr(unsigned int index);

/*
 * The x2apic-cluster set send's walk: from CPU *pos on, the destination of
 * the next run of consecutive members of set (CPU-number order) that share
 * a cluster, their LDRs (ldr[cpu]) ORed; *pos moves past the run. 0 when no
 * member is left. The send writes one ICR per destination and the records
 * count the writes with the same walk (icr_cluster_writes), so the count is
 * what the send did, whatever the order of the MADT.
 */
static inline uint32_t icr_cluster_run(const uint32_t *ldr, const struct cpuset *set,
				       unsigned int *pos)
{
	uint32_t dest = 0;

	for (int c = cpuset_next(set, *pos); c >= 0; c = cpuset_next(set, (unsigned int)c + 1)) {
		if (dest && (dest ^ ldr[c]) >> ICR_X2APIC_CLUSTER_SHIFT) {
			*pos = (unsigned int)c;
			return dest;
		}
		dest |= ldr[c];
	}
	*pos = CPUSET_BITS;
	return dest;
}

/* ICR writes the cluster set send makes for set. */
unsigned int icr_cluster_writes(const uint32_t *ldr, const struct cpuset *set);

/*
 * Group x2APIC IDs into logical (cluster-model) destinations: one per
 * cluster present, cluster << 16 | OR of the member bits, in increasing
 * cluster order, duplicates merged, input in any order. Returns the number
 * written to dests, -E_NOSPC if more than max clusters are needed, -E_RANGE
 * for an ID above ICR_X2APIC_ID_MAX (no logical ID exists for it).
 */
int icr_cluster_group(const uint32_t *x2apic_ids, size_t n, uint32_t *dests, size_t max);

/* Flat-model destination mask (0..255) for CPU numbers; -E_RANGE if one is >= 8. */
int icr_flat_mask(const unsigned int *indices, size_t n);

/* Fixed, edge, physical IPI of vector to one APIC ID (level bit 0, as Linux sends). */
struct icr_fields icr_make_fixed(uint8_t vector, uint32_t dest);

/* INIT, level-triggered, asserted: the reset step of the MP protocol. */
struct icr_fields icr_make_init_assert(uint32_t dest);

/* INIT level de-assert (level 0, trigger level); ignored by P4 and later, harmless. */
struct icr_fields icr_make_init_deassert(uint32_t dest);

/*
 * START-UP to dest for a real-mode entry at entry_phys; the vector is its
 * page number. -E_RANGE unless entry_phys is page aligned and below 1 MiB.
 */
int icr_make_startup(uint32_t dest, uint32_t entry_phys, struct icr_fields *out);

#endif

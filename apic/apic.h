/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the files of apic/ only: the low ICR words every mode uses and
 * the checks each backend's per-CPU enable makes. Benchmarks include
 * include/ipi.h, never this.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include <stdint.h>
#include "lib/icr.h"

/* ICR bits 31:0 without the vector: fixed delivery, edge, level bit 0 (as Linux sends). */
#define ICR_LOW_PHYSICAL 0u
#define ICR_LOW_LOGICAL	 ICR_DEST_LOGICAL
#define ICR_LOW_SELF	 ((uint32_t)ICR_SH_SELF << ICR_SHORTHAND_SHIFT)
#define ICR_LOW_ALL	 ((uint32_t)ICR_SH_ALL << ICR_SHORTHAND_SHIFT)
#define ICR_LOW_OTHERS	 ((uint32_t)ICR_SH_OTHERS << ICR_SHORTHAND_SHIFT)

/* x2APIC-only registers (SDM vol. 3A table 11-6). */
#define X2APIC_MSR_ID	    0x802
#define X2APIC_MSR_EOI	    0x80b
#define X2APIC_MSR_SELF_IPI 0x83f

/*
 * 0 when the ID this CPU's APIC reports in the mode in force equals the
 * one the MADT gave (this_cpu()->apic_id); otherwise prints both and
 * returns -E_PROTO: IPIs by that ID would go astray.
 */
int apic_check_id(const char *backend, uint32_t id);

/*
 * 0 when a register reads back what was written; else prints and -E_PROTO.
 * For the logical-destination registers, which the send paths trust.
 */
int apic_check_reg(const char *backend, const char *reg, uint32_t got, uint32_t want);

#endif

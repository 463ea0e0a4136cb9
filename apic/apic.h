/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the files of apic/ only: the low ICR words every mode uses and
 * the checks each backend's per-CPU enable makes. Benchmarks include
 * include/ipi.h, never this.
 */
#ifndef APIC_APIC_H
#define APIC_APIC_H

#include <stdbool.h>
#include <stdint.h>
#include "include/lapic.h"
#include "include/x86.h"
#include "lib/icr.h"

/*
 * ICR bits 31:0 without the vector: fixed delivery, edge, level bit 0 (as
 * Linux sends). SDM 11.6.1 asks for level 1 in every mode but INIT level
 * de-assert on P6; the Pentium 4 and later ignore the bit and send 1, and
 * KVM ignores it too, so Linux's 0 (NMI included: __prepare_ICR()) works.
 */
#define ICR_LOW_PHYSICAL 0u
#define ICR_LOW_LOGICAL	 ICR_DEST_LOGICAL
#define ICR_LOW_SELF	 ((uint32_t)ICR_SH_SELF << ICR_SHORTHAND_SHIFT)
#define ICR_LOW_ALL	 ((uint32_t)ICR_SH_ALL << ICR_SHORTHAND_SHIFT)
#define ICR_LOW_OTHERS	 ((uint32_t)ICR_SH_OTHERS << ICR_SHORTHAND_SHIFT)
/* NMI delivery: the vector field is ignored (SDM 11.6.1), sent as 0, as Linux does. */
#define ICR_LOW_NMI	 ((uint32_t)ICR_DM_NMI << ICR_DELIVERY_SHIFT)

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

/*
 * xAPIC ICR writes, shared by the xAPIC backends (apic/xapic.c says why the
 * delivery-status poll and IF=0 around the two writes). The slow poll,
 * bounded by a spin count, counts a stuck bit in ipi_icr_stuck.
 */
void xapic_wait_icr_slow(const volatile uint32_t *m);

static inline void xapic_wait_icr(const volatile uint32_t *m)
{
	if (m[ICR_XAPIC_LOW / 4] & ICR_DELIVERY_BUSY)
		xapic_wait_icr_slow(m);
}

static inline void xapic_icr_write(uint32_t high, uint32_t low)
{
	volatile uint32_t *m = lapic_mmio;
	bool was_on = irq_save();

	xapic_wait_icr(m);
	m[ICR_XAPIC_HIGH / 4] = high;
	m[ICR_XAPIC_LOW / 4] = low;
	irq_restore(was_on);
}

/* A shorthand ignores the destination field (Table 11-6): one write. */
static inline void xapic_icr_write_low(uint32_t low)
{
	volatile uint32_t *m = lapic_mmio;

	xapic_wait_icr(m);
	m[ICR_XAPIC_LOW / 4] = low;
}

/*
 * x2APIC: MFENCE;LFENCE before an ICR WRMSR where the vendor wants it
 * (lib/ipi_flags.h, ipi_x2apic_vendor_fences). fenced is a constant in
 * every caller, so the unfenced build has no trace of it.
 */
static inline __attribute__((always_inline)) void x2apic_fence(bool fenced)
{
	if (fenced)
		asm volatile("mfence; lfence" ::: "memory");
}

static inline void x2apic_icr_write(uint64_t icr)
{
	wrmsr(ICR_X2APIC_MSR, icr);
}

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * `hv-icr`: IPIs through the Hyper-V synthetic APIC MSRs (docs/hyperv-abi.md
 * 4; TLFS virtual-interrupts.md "Synthetic APIC MSRs"): HV_X64_MSR_ICR
 * (0x40000071) takes the whole 64-bit ICR in one WRMSR, HV_X64_MSR_EOI
 * (0x40000070) takes the EOI. CPUID 0x40000003 EAX[4] (QEMU hv-vapic) makes
 * them accessible.
 *
 * APIC mode: xAPIC. The MSR's destination follows the APIC mode in force;
 * in xAPIC mode the 8-bit APIC ID sits in bits 63:56 (ICR-high 31:24, as in
 * the MMIO ICR2). That is where the MSR earns its place: one MSR exit where
 * the MMIO path writes ICR2 and ICR (two exits without APIC register
 * virtualization) and polls delivery status; in x2APIC mode the
 * architectural ICR MSR 0x830 already is one WRMSR. Linux uses these MSRs
 * only in xAPIC mode for the same reason, keeping only the EOI MSR in
 * x2APIC mode (arch/x86/hyperv/hv_apic.c hv_apic_init(), since e211288b72f1
 * "x86/hyperv: Make vapic support x2apic mode"); its hv_apic_icr_write()
 * also puts the APIC ID at bits 63:56. KVM clears delivery status itself,
 * so nothing is polled (icr-wait=never).
 */
#include "include/console.h"
#include "include/hyperv.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/hv_abi.h"
#include "lib/icr.h"

#define HV_ICR_XAPIC_DEST_SHIFT (ICR_X2APIC_DEST_SHIFT + ICR_XAPIC_DEST_SHIFT) /* 56 */
#define HV_ICR_XAPIC_ID_MAX	0xfe /* 0xff is the broadcast destination */

/* The ICR's destination bits for each CPU, filled by each CPU's enable. */
static uint64_t hv_icr_dest[MAX_CPUS];

static void hv_icr_send(unsigned int target, uint8_t vector)
{
	wrmsr(HV_MSR_ICR, hv_icr_dest[target] | vector);
}

static void hv_icr_send_self(uint8_t vector)
{
	wrmsr(HV_MSR_ICR, (uint64_t)ICR_SH_SELF << ICR_SHORTHAND_SHIFT | vector);
}

static void hv_icr_send_allbutself(uint8_t vector)
{
	wrmsr(HV_MSR_ICR, (uint64_t)ICR_SH_OTHERS << ICR_SHORTHAND_SHIFT | vector);
}

static void hv_icr_send_all(uint8_t vector)
{
	wrmsr(HV_MSR_ICR, (uint64_t)ICR_SH_ALL << ICR_SHORTHAND_SHIFT | vector);
}

static void hv_icr_eoi(void)
{
	wrmsr(HV_MSR_EOI, 0);
}

static const char *hv_icr_probe(void)
{
	const char *why = hv_probe(HV_NEED_APIC_MSRS);

	if (why)
		return why;
	for (unsigned int c = 0; c < ncpus; c++) {
		if (percpu_of[c]->apic_id > HV_ICR_XAPIC_ID_MAX)
			return "an APIC ID above 254 does not fit the 8-bit xAPIC destination that HV_X64_MSR_ICR takes in xAPIC mode";
	}
	return NULL;
}

static int hv_icr_enable(void)
{
	struct percpu *p = this_cpu();
	uint32_t id = lapic_id();

	hv_icr_dest[p->cpu] = (uint64_t)p->apic_id << HV_ICR_XAPIC_DEST_SHIFT;
	p->logical_dest = lapic_read(LAPIC_LDR) >> ICR_XAPIC_LDR_SHIFT;
	if (id == p->apic_id)
		return 0;
	kprintf("hv-icr: CPU %u reports APIC ID %u, the MADT said %u\n", p->cpu, id, p->apic_id);
	return -E_PROTO;
}

static const struct ipi_ops ipi_hv_icr = {
    .name = "hv-icr",
    .mode = LAPIC_XAPIC,
    .flags = 0, /* physical, no delivery-status poll, a loop for sets */
    .words = "icr=hv-msr eoi=hv-msr",
    .probe = hv_icr_probe,
    .activate = NULL, /* the APIC MSRs need no guest OS ID */
    .enable = hv_icr_enable,
    .send = hv_icr_send,
    .send_set = NULL,
    .send_self = hv_icr_send_self,
    .send_allbutself = hv_icr_send_allbutself,
    .send_all = hv_icr_send_all,
    .eoi = hv_icr_eoi,
};
IPI_BACKEND_REGISTER(ipi_hv_icr, 120);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * xapic-nmi: IPIs with delivery mode NMI (ICR bits 10:8 = 100b) in xAPIC
 * mode, physical destination: what Linux sends for an NMI backtrace
 * (nmi_cpu_backtrace via apic->send_IPI_mask(mask, NMI_VECTOR), which puts
 * APIC_DM_NMI and no vector in the ICR), for stopping CPUs and for kgdb.
 *
 * SDM vol. 3A 11.6.1, "Valid Combinations for the ... Interrupt Command
 * Register": NMI is valid with no shorthand and with all-excluding-self,
 * not with the self shorthand or all-including-self. So a self NMI goes to
 * the CPU's own APIC ID, and all-including-self is all-excluding-self and
 * then the self write (Linux's default_send_IPI_all() with NMI does the
 * same). The vector the callers pass is ignored: the IPI core counts every
 * NMI as IPI_NMI_VEC (include/ipi.h). No EOI (11.8.4: an NMI sets no ISR
 * bit). Every write polls delivery status first, as the Fixed xapic
 * backend does (apic/xapic.c).
 */
#include "apic/apic.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "lib/error.h"

#define XAPIC_ID_MAX 0xfe /* 0xff is the broadcast destination */

/* ICR bits 63:32 for each CPU: APIC ID << 24, written by each CPU's enable. */
static uint32_t nmi_dest_high[MAX_CPUS];

static void xapic_nmi_send(unsigned int target, uint8_t vector)
{
	(void)vector;
	xapic_icr_write(nmi_dest_high[target], ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

static void xapic_nmi_send_self(uint8_t vector)
{
	xapic_nmi_send(this_cpu()->cpu, vector);
}

static void xapic_nmi_send_allbutself(uint8_t vector)
{
	(void)vector;
	xapic_icr_write_low(ICR_LOW_OTHERS | ICR_LOW_NMI);
}

static void xapic_nmi_send_all(uint8_t vector)
{
	xapic_nmi_send_allbutself(vector);
	xapic_nmi_send_self(vector);
}

static void xapic_nmi_eoi(void)
{
}

static const char *xapic_nmi_probe(void)
{
	for (unsigned int c = 0; c < ncpus; c++) {
		if (percpu_of[c]->apic_id > XAPIC_ID_MAX)
			return "an APIC ID above 254 does not fit the 8-bit xAPIC destination";
	}
	return NULL;
}

static int xapic_nmi_enable(void)
{
	struct percpu *p = this_cpu();

	nmi_dest_high[p->cpu] = p->apic_id << ICR_XAPIC_DEST_SHIFT;
	p->logical_dest = 0;
	return apic_check_id("xapic-nmi", lapic_id());
}

static const struct ipi_ops ipi_xapic_nmi = {
    .name = "xapic-nmi",
    .mode = LAPIC_XAPIC,
    .flags = IPI_F_WAIT_BEFORE | IPI_F_NMI,
    .probe = xapic_nmi_probe,
    .enable = xapic_nmi_enable,
    .send = xapic_nmi_send,
    .send_set = NULL, /* physical: one ICR write per CPU, the caller loops */
    .send_self = xapic_nmi_send_self,
    .send_allbutself = xapic_nmi_send_allbutself,
    .send_all = xapic_nmi_send_all,
    .eoi = xapic_nmi_eoi,
};
IPI_BACKEND_REGISTER(ipi_xapic_nmi, 105);

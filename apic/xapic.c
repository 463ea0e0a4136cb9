// SPDX-License-Identifier: GPL-2.0-only
/*
 * xAPIC backends: `xapic` (physical destination) and `xapic-logical` (flat
 * logical model). SDM vol. 3A 11.6.1 "Interrupt Command Register": the IPI
 * is sent by the write to ICR bits 31:0 (0x300), so bits 63:32 (0x310, the
 * destination) are written first; 11.6.2.2 "Logical Destination Mode": in
 * the flat model (DFR 1111b) a CPU accepts an IPI when its 8-bit LDR ANDed
 * with the destination is non-zero, so one write reaches any subset of up
 * to 8 CPUs.
 *
 * Delivery status (ICR bit 12) is polled before each write (IPI_F_WAIT_BEFORE),
 * as Linux does: on hardware a second write while the first is pending is
 * lost. The poll is an MMIO read, which costs an exit on a VMM without
 * APIC virtualization; the flag puts that in every record. The wait is
 * bounded by a spin count, not the TSC: a stuck bit is counted in
 * ipi_icr_stuck and reported by the suite instead of hanging the sender.
 *
 * The ICR2 and ICR writes of one send happen with interrupts off, as in
 * Linux (its callers hold local_irq_save around __default_send_IPI_dest_field):
 * a handler that sent an IPI between them would leave this send's
 * destination in ICR2 for its own. In the benchmarks IF is already 0 there,
 * so this costs a PUSHF and a branch.
 */
#include "apic/apic.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"

#define XAPIC_ICR_SPINS 1000000
#define XAPIC_ID_MAX	0xfe /* 0xff is the broadcast destination */

uint64_t ipi_icr_stuck;

/* ICR bits 63:32 for each CPU, physical: APIC ID << 24. Written by each CPU's enable. */
static uint32_t xapic_dest_high[MAX_CPUS];

__attribute__((noinline)) void xapic_wait_icr_slow(const volatile uint32_t *m)
{
	for (int i = 0; i < XAPIC_ICR_SPINS; i++) {
		cpu_relax();
		if (!(m[ICR_XAPIC_LOW / 4] & ICR_DELIVERY_BUSY))
			return;
	}
	__atomic_fetch_add(&ipi_icr_stuck, 1, __ATOMIC_RELAXED);
}

static void xapic_send(unsigned int target, uint8_t vector)
{
	xapic_icr_write(xapic_dest_high[target], ICR_LOW_PHYSICAL | vector);
}

static void xapic_send_self(uint8_t vector)
{
	xapic_icr_write_low(ICR_LOW_SELF | vector);
}

/*
 * The self shorthand as kvm-unit-tests' apic_icr_write() writes it in xAPIC
 * mode: the delivery-status poll, then ICR2 (0 here, vmexit.c's vector
 * there: a shorthand ignores the field) and ICR. IF is left as
 * the shape has it, as there: with a shorthand, no handler's own ICR2 write
 * in between could redirect this send. For the kvm-unit-tests view only:
 * Linux sends the self shorthand with the ICR write alone.
 */
static void xapic_send_self_icr2(uint8_t vector)
{
	volatile uint32_t *m = lapic_mmio;

	xapic_wait_icr(m);
	m[ICR_XAPIC_HIGH / 4] = 0;
	m[ICR_XAPIC_LOW / 4] = ICR_LOW_SELF | vector;
}

static void xapic_send_allbutself(uint8_t vector)
{
	xapic_icr_write_low(ICR_LOW_OTHERS | vector);
}

static void xapic_send_all(uint8_t vector)
{
	xapic_icr_write_low(ICR_LOW_ALL | vector);
}

static void xapic_eoi(void)
{
	lapic_mmio[LAPIC_EOI / 4] = 0;
}

static const char *xapic_probe(void)
{
	for (unsigned int c = 0; c < ncpus; c++) {
		if (percpu_of[c]->apic_id > XAPIC_ID_MAX)
			return "an APIC ID above 254 does not fit the 8-bit xAPIC destination";
	}
	return NULL;
}

static const struct ipi_ops ipi_xapic, ipi_xapic_logical;

/*
 * Flat model, this CPU's logical ID = ldr. SDM 11.6.2.2: all CPUs use the
 * same model. The APIC is software-disabled while DFR and LDR change (as
 * at reset) and lapic_setup_local() then re-enables it and rewrites the
 * LVT masks that the disable set.
 */
static int xapic_set_logical(const char *backend, uint8_t ldr)
{
	volatile uint32_t *m = lapic_mmio;
	uint32_t want = (uint32_t)ldr << ICR_XAPIC_LDR_SHIFT;

	m[LAPIC_SVR / 4] = m[LAPIC_SVR / 4] & ~LAPIC_SVR_ENABLE;
	m[ICR_XAPIC_DFR / 4] = ICR_XAPIC_DFR_FLAT;
	m[ICR_XAPIC_LDR / 4] = want;
	lapic_setup_local();
	return apic_check_reg(backend, "LDR", m[ICR_XAPIC_LDR / 4], want);
}

static int xapic_enable(void)
{
	struct percpu *p = this_cpu();
	int err = apic_check_id(ipi_xapic.name, lapic_id());

	/* Reset values (SDM 11.4.7.1): no logical ID matches a physical-mode CPU. */
	if (!err)
		err = xapic_set_logical(ipi_xapic.name, 0);
	xapic_dest_high[p->cpu] = p->apic_id << ICR_XAPIC_DEST_SHIFT;
	p->logical_dest = 0;
	return err;
}

static const struct ipi_ops ipi_xapic = {
    .name = "xapic",
    .mode = LAPIC_XAPIC,
    .flags = IPI_F_WAIT_BEFORE,
    .probe = xapic_probe,
    .enable = xapic_enable,
    .send = xapic_send,
    .send_set = NULL, /* physical: one ICR write per CPU, the caller loops */
    .send_self = xapic_send_self,
    .send_self_icr2 = xapic_send_self_icr2,
    .send_allbutself = xapic_send_allbutself,
    .send_all = xapic_send_all,
    .eoi = xapic_eoi,
};
IPI_BACKEND_REGISTER(ipi_xapic, 100);

/*
 * xapic-nmi: the same physical sends with delivery mode NMI, as Linux sends
 * NMI_VECTOR (nmi_cpu_backtrace, stopping CPUs, kgdb): APIC_DM_NMI and no
 * vector (the IPI core counts every NMI as IPI_NMI_VEC, include/ipi.h).
 * SDM vol. 3A 11.6.1, "Valid Combinations for the ... Interrupt Command
 * Register": NMI is valid with no shorthand and with all-excluding-self,
 * not with the self shorthand or all-including-self; so a self NMI goes to
 * the CPU's own APIC ID, and all-including-self is all-excluding-self and
 * then that write. No EOI (11.8.4: an NMI sets no ISR bit).
 */
static void xapic_nmi_send(unsigned int target, uint8_t vector)
{
	(void)vector;
	xapic_icr_write(xapic_dest_high[target], ICR_LOW_PHYSICAL | ICR_LOW_NMI);
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

static const struct ipi_ops ipi_xapic_nmi = {
    .name = "xapic-nmi",
    .mode = LAPIC_XAPIC,
    .flags = IPI_F_WAIT_BEFORE | IPI_F_NMI,
    .probe = xapic_probe,
    .enable = xapic_enable,
    .send = xapic_nmi_send,
    .send_set = NULL, /* physical: one ICR write per CPU, the caller loops */
    .send_self = xapic_nmi_send_self,
    .send_allbutself = xapic_nmi_send_allbutself,
    .send_all = xapic_nmi_send_all,
    .eoi = xapic_nmi_eoi,
};
IPI_BACKEND_REGISTER(ipi_xapic_nmi, 105);

/* Logical flat: CPU number c has LDR bit c (icr_flat_ldr), so the destination needs no table. */
static void xapic_logical_send(unsigned int target, uint8_t vector)
{
	xapic_icr_write((uint32_t)icr_flat_ldr(target) << ICR_XAPIC_DEST_SHIFT,
			ICR_LOW_LOGICAL | vector);
}

static void xapic_logical_send_set(const struct cpuset *set, uint8_t vector)
{
	/* The probe allows 8 CPUs at most: bits 7:0 of the first word are the set. */
	uint32_t mask = (uint32_t)(set->w[0] & 0xff);

	if (mask)
		xapic_icr_write(mask << ICR_XAPIC_DEST_SHIFT, ICR_LOW_LOGICAL | vector);
}

static const char *xapic_logical_probe(void)
{
	const char *why = xapic_probe();

	if (why)
		return why;
	if (ncpus > ICR_FLAT_MAX_CPUS)
		return "flat logical mode has one LDR bit per CPU, so 8 CPUs at most, and this VM has more (x2apic-cluster addresses them)";
	return NULL;
}

static int xapic_logical_enable(void)
{
	struct percpu *p = this_cpu();
	int err = apic_check_id(ipi_xapic_logical.name, lapic_id());

	if (!err)
		err = xapic_set_logical(ipi_xapic_logical.name, icr_flat_ldr(p->cpu));
	xapic_dest_high[p->cpu] = p->apic_id << ICR_XAPIC_DEST_SHIFT;
	p->logical_dest = icr_flat_ldr(p->cpu);
	return err;
}

static const struct ipi_ops ipi_xapic_logical = {
    .name = "xapic-logical",
    .mode = LAPIC_XAPIC,
    .flags = IPI_F_WAIT_BEFORE | IPI_F_LOGICAL | IPI_F_SET_ONE,
    .probe = xapic_logical_probe,
    .enable = xapic_logical_enable,
    .send = xapic_logical_send,
    .send_set = xapic_logical_send_set,
    .send_self = xapic_send_self,
    .send_self_icr2 = xapic_send_self_icr2,
    .send_allbutself = xapic_send_allbutself,
    .send_all = xapic_send_all,
    .eoi = xapic_eoi,
};
IPI_BACKEND_REGISTER(ipi_xapic_logical, 110);

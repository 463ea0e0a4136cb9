// SPDX-License-Identifier: GPL-2.0-only
/*
 * x2APIC backends: `x2apic` (physical destination) and `x2apic-cluster`
 * (logical cluster model). SDM vol. 3A 11.12.9 "ICR Operation in x2APIC
 * Mode": one WRMSR of the 64-bit ICR (MSR 0x830) sends, the destination in
 * bits 63:32, no delivery-status bit; 11.12.11 "SELF IPI Register" (MSR
 * 0x83f) takes just the vector; 11.12.10.2: the cluster LDR is
 * (x2APIC ID[19:4] << 16) | 1 << x2APIC ID[3:0], read-only.
 *
 * Fence (IPI_F_FENCE): 11.12.3 relaxes WRMSR to the APIC registers: "A
 * WRMSR to an APIC register may complete before all preceding stores are
 * globally visible; software can prevent this by inserting a serializing
 * instruction or the sequence MFENCE;LFENCE before the WRMSR." A receiver
 * that reads data the sender stored just before the IPI needs that, so
 * every ICR send starts with MFENCE;LFENCE (Linux's weak_wrmsr_fence() on
 * Intel); a set sent as several writes fences once, before the first. The
 * SELF IPI register and EOI go without it, as in Linux
 * (x2apic_send_IPI_self, native_apic_msr_eoi): a self IPI publishes nothing
 * to another CPU.
 */
#include "apic/apic.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"

/* The full ICR destination for each CPU (bits 63:32), filled by each CPU's enable. */
static uint64_t x2apic_dest[MAX_CPUS];
/* Cluster model: this CPU's LDR as read back after enabling. */
static uint32_t x2apic_ldr[MAX_CPUS];

static inline void x2apic_fence(void)
{
	asm volatile("mfence; lfence" ::: "memory");
}

static inline void x2apic_icr_write(uint64_t icr)
{
	wrmsr(ICR_X2APIC_MSR, icr);
}

static void x2apic_send(unsigned int target, uint8_t vector)
{
	x2apic_fence();
	x2apic_icr_write(x2apic_dest[target] | ICR_LOW_PHYSICAL | vector);
}

static void x2apic_send_self(uint8_t vector)
{
	wrmsr(X2APIC_MSR_SELF_IPI, vector);
}

static void x2apic_send_self_icr(uint8_t vector)
{
	x2apic_fence();
	x2apic_icr_write(ICR_LOW_SELF | vector);
}

static void x2apic_send_allbutself(uint8_t vector)
{
	x2apic_fence();
	x2apic_icr_write(ICR_LOW_OTHERS | vector);
}

static void x2apic_send_all(uint8_t vector)
{
	x2apic_fence();
	x2apic_icr_write(ICR_LOW_ALL | vector);
}

static void x2apic_eoi(void)
{
	wrmsr(X2APIC_MSR_EOI, 0);
}

static const char *x2apic_probe(void)
{
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: add +x2apic to -cpu";
	return NULL;
}

static int x2apic_enable(void)
{
	struct percpu *p = this_cpu();
	int err = apic_check_id(ipi_x2apic.name, (uint32_t)rdmsr(X2APIC_MSR_ID));

	x2apic_dest[p->cpu] = (uint64_t)p->apic_id << ICR_X2APIC_DEST_SHIFT;
	p->logical_dest = (uint32_t)rdmsr(ICR_X2APIC_LDR_MSR);
	return err;
}

const struct ipi_ops ipi_x2apic = {
    .name = "x2apic",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_FENCE | IPI_F_SELF_MSR,
    .probe = x2apic_probe,
    .enable = x2apic_enable,
    .send = x2apic_send,
    .send_set = NULL, /* physical: one WRMSR per CPU, the caller loops */
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr,
    .send_allbutself = x2apic_send_allbutself,
    .send_all = x2apic_send_all,
    .eoi = x2apic_eoi,
};

static void x2apic_cluster_send(unsigned int target, uint8_t vector)
{
	x2apic_fence();
	x2apic_icr_write((uint64_t)x2apic_ldr[target] << ICR_X2APIC_DEST_SHIFT | ICR_LOW_LOGICAL |
			 vector);
}

/*
 * One WRMSR per run of consecutive members (in CPU-number order) that share
 * a cluster (icr_cluster_run): the run's member bits ORed under the cluster
 * ID. CPU numbers follow MADT order, which lists APIC IDs in ascending
 * order on QEMU and common firmware, so each cluster is one run; a cluster
 * split over several runs costs a write per run and still reaches each
 * member once. x2apic_cluster_set_writes() counts the writes for the records.
 */
static void x2apic_cluster_send_set(const struct cpuset *set, uint8_t vector)
{
	unsigned int pos = 0;
	uint32_t dest;

	x2apic_fence();
	while ((dest = icr_cluster_run(x2apic_ldr, set, &pos)))
		x2apic_icr_write((uint64_t)dest << ICR_X2APIC_DEST_SHIFT | ICR_LOW_LOGICAL | vector);
}

static unsigned int x2apic_cluster_set_writes(const struct cpuset *set)
{
	return icr_cluster_writes(x2apic_ldr, set);
}

static const char *x2apic_cluster_probe(void)
{
	const char *why = x2apic_probe();

	if (why)
		return why;
	for (unsigned int c = 0; c < ncpus; c++) {
		if (percpu_of[c]->apic_id > ICR_X2APIC_ID_MAX)
			return "an x2APIC ID above 0xfffff has no logical ID (SDM 11.12.10.2)";
	}
	return NULL;
}

/* The LDR the send paths use is the one the APIC reports; it must match the SDM's derivation. */
static int x2apic_cluster_enable(void)
{
	struct percpu *p = this_cpu();
	uint32_t ldr = (uint32_t)rdmsr(ICR_X2APIC_LDR_MSR), want = icr_x2apic_ldr(p->apic_id);
	int err = apic_check_id(ipi_x2apic_cluster.name, (uint32_t)rdmsr(X2APIC_MSR_ID));

	if (!err)
		err = apic_check_reg(ipi_x2apic_cluster.name, "LDR", ldr, want);
	x2apic_ldr[p->cpu] = ldr;
	p->logical_dest = ldr;
	return err;
}

const struct ipi_ops ipi_x2apic_cluster = {
    .name = "x2apic-cluster",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_FENCE | IPI_F_LOGICAL | IPI_F_SET_CLUSTER | IPI_F_SELF_MSR,
    .probe = x2apic_cluster_probe,
    .enable = x2apic_cluster_enable,
    .send = x2apic_cluster_send,
    .send_set = x2apic_cluster_send_set,
    .set_writes = x2apic_cluster_set_writes,
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr,
    .send_allbutself = x2apic_send_allbutself,
    .send_all = x2apic_send_all,
    .eoi = x2apic_eoi,
};

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
 * that reads data the sender stored just before the IPI needs that. Linux
 * fences as weak_wrmsr_fence() does: MFENCE;LFENCE unless the CPU lacks
 * X86_FEATURE_APIC_MSRS_FENCE, which it sets everywhere and clears on AMD
 * and Hygon (their x2APIC MSR writes need no fence; Linux commit
 * 04c3024560d3 "x86/barrier: Do not serialize MSR accesses on AMD"), and
 * once per send call: x2apic_phys.c and x2apic_cluster.c fence once before
 * walking a mask, however many ICR writes follow. So does this file: each
 * send path comes in a fenced and an unfenced build (x2APIC_SENDS below),
 * two tables per backend, and the choose hook installs the one the CPUID
 * vendor wants when ipi_switch() moves to the backend
 * (ipi_x2apic_vendor_fences), so no send path tests the vendor. The flags
 * say which ("fence=mfence+lfence fence-per=send" or "fence=none"). The
 * SELF IPI register and EOI go without it on every vendor, as in Linux
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

/* low: the ICR's bits 31:0 past the destination, the vector (Fixed) or ICR_LOW_NMI. */
static inline __attribute__((always_inline)) void x2apic_send_in(bool fenced, unsigned int target,
								 uint32_t low)
{
	x2apic_fence(fenced);
	x2apic_icr_write(x2apic_dest[target] | ICR_LOW_PHYSICAL | low);
}

/*
 * Physical: one WRMSR per member, in CPU-number order, after one fence. The
 * set is read a word at a time up to the last online CPU's word (as Linux's
 * for_each_cpu stops at nr_cpu_ids), each member taken off its word as it
 * is sent.
 */
static inline __attribute__((always_inline)) void
x2apic_send_set_in(bool fenced, const struct cpuset *set, uint32_t low)
{
	const uint64_t *dest = x2apic_dest, *w = set->w;
	const uint64_t *end = w + (ncpus + CPUSET_WORD_BITS - 1) / CPUSET_WORD_BITS;

	x2apic_fence(fenced);
	for (; w < end; w++, dest += CPUSET_WORD_BITS) {
		for (uint64_t m = *w; m; m &= m - 1)
			x2apic_icr_write(dest[__builtin_ctzll(m)] | ICR_LOW_PHYSICAL | low);
	}
}

static inline __attribute__((always_inline)) void x2apic_shorthand_in(bool fenced, uint64_t icr)
{
	x2apic_fence(fenced);
	x2apic_icr_write(icr);
}

static inline __attribute__((always_inline)) void
x2apic_cluster_send_in(bool fenced, unsigned int target, uint8_t vector)
{
	x2apic_fence(fenced);
	x2apic_icr_write((uint64_t)x2apic_ldr[target] << ICR_X2APIC_DEST_SHIFT | ICR_LOW_LOGICAL |
			 vector);
}

/*
 * One WRMSR per run of consecutive members (in CPU-number order) that share
 * a cluster (icr_cluster_run): the run's member bits ORed under the cluster
 * ID, after one fence. CPU numbers follow MADT order, which lists APIC IDs
 * in ascending order on QEMU and common firmware, so each cluster is one
 * run; a cluster split over several runs costs a write per run and still
 * reaches each member once. x2apic_cluster_set_writes() counts the writes
 * for the records.
 */
static inline __attribute__((always_inline)) void
x2apic_cluster_send_set_in(bool fenced, const struct cpuset *set, uint8_t vector)
{
	unsigned int pos = 0;
	uint32_t dest;

	x2apic_fence(fenced);
	while ((dest = icr_cluster_run(x2apic_ldr, set, &pos)))
		x2apic_icr_write((uint64_t)dest << ICR_X2APIC_DEST_SHIFT | ICR_LOW_LOGICAL | vector);
}

static const struct ipi_ops ipi_x2apic, ipi_x2apic_cluster;

/*
 * Every ICR send path of both backends, written out with (_fenced) and
 * without (_unfenced) the fence, so that each can be found by its name.
 */
static void x2apic_send_fenced(unsigned int target, uint8_t vector)
{
	x2apic_send_in(true, target, vector);
}

static void x2apic_send_set_fenced(const struct cpuset *set, uint8_t vector)
{
	x2apic_send_set_in(true, set, vector);
}

static void x2apic_send_self_icr_fenced(uint8_t vector)
{
	x2apic_shorthand_in(true, ICR_LOW_SELF | vector);
}

static void x2apic_send_allbutself_fenced(uint8_t vector)
{
	x2apic_shorthand_in(true, ICR_LOW_OTHERS | vector);
}

static void x2apic_send_all_fenced(uint8_t vector)
{
	x2apic_shorthand_in(true, ICR_LOW_ALL | vector);
}

static void x2apic_cluster_send_fenced(unsigned int target, uint8_t vector)
{
	x2apic_cluster_send_in(true, target, vector);
}

static void x2apic_cluster_send_set_fenced(const struct cpuset *set, uint8_t vector)
{
	x2apic_cluster_send_set_in(true, set, vector);
}

static void x2apic_send_unfenced(unsigned int target, uint8_t vector)
{
	x2apic_send_in(false, target, vector);
}

static void x2apic_send_set_unfenced(const struct cpuset *set, uint8_t vector)
{
	x2apic_send_set_in(false, set, vector);
}

static void x2apic_send_self_icr_unfenced(uint8_t vector)
{
	x2apic_shorthand_in(false, ICR_LOW_SELF | vector);
}

static void x2apic_send_allbutself_unfenced(uint8_t vector)
{
	x2apic_shorthand_in(false, ICR_LOW_OTHERS | vector);
}

static void x2apic_send_all_unfenced(uint8_t vector)
{
	x2apic_shorthand_in(false, ICR_LOW_ALL | vector);
}

static void x2apic_cluster_send_unfenced(unsigned int target, uint8_t vector)
{
	x2apic_cluster_send_in(false, target, vector);
}

static void x2apic_cluster_send_set_unfenced(const struct cpuset *set, uint8_t vector)
{
	x2apic_cluster_send_set_in(false, set, vector);
}

/*
 * x2apic-nmi: the same physical sends with delivery mode NMI (ICR_LOW_NMI
 * in place of the vector, which an NMI does not carry: the IPI core counts
 * every NMI as IPI_NMI_VEC, include/ipi.h), as Linux's x2apic_phys sends
 * NMI_VECTOR. The self shorthand and the SELF IPI register are Fixed-only
 * (SDM "Valid Combinations for the ICR"; 11.12.11): a self NMI goes to the
 * CPU's own x2APIC ID; all-including-self is all-excluding-self, which NMI
 * allows, then that write, after one fence. No EOI.
 */
static void x2apic_nmi_send_fenced(unsigned int target, uint8_t vector)
{
	(void)vector;
	x2apic_send_in(true, target, ICR_LOW_NMI);
}

static void x2apic_nmi_send_set_fenced(const struct cpuset *set, uint8_t vector)
{
	(void)vector;
	x2apic_send_set_in(true, set, ICR_LOW_NMI);
}

static void x2apic_nmi_send_self_fenced(uint8_t vector)
{
	(void)vector;
	x2apic_send_in(true, this_cpu()->cpu, ICR_LOW_NMI);
}

static void x2apic_nmi_send_allbutself_fenced(uint8_t vector)
{
	(void)vector;
	x2apic_shorthand_in(true, ICR_LOW_OTHERS | ICR_LOW_NMI);
}

static void x2apic_nmi_send_all_fenced(uint8_t vector)
{
	(void)vector;
	x2apic_shorthand_in(true, ICR_LOW_OTHERS | ICR_LOW_NMI);
	x2apic_icr_write(x2apic_dest[this_cpu()->cpu] | ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

static void x2apic_nmi_send_unfenced(unsigned int target, uint8_t vector)
{
	(void)vector;
	x2apic_send_in(false, target, ICR_LOW_NMI);
}

static void x2apic_nmi_send_set_unfenced(const struct cpuset *set, uint8_t vector)
{
	(void)vector;
	x2apic_send_set_in(false, set, ICR_LOW_NMI);
}

static void x2apic_nmi_send_self_unfenced(uint8_t vector)
{
	(void)vector;
	x2apic_send_in(false, this_cpu()->cpu, ICR_LOW_NMI);
}

static void x2apic_nmi_send_allbutself_unfenced(uint8_t vector)
{
	(void)vector;
	x2apic_shorthand_in(false, ICR_LOW_OTHERS | ICR_LOW_NMI);
}

static void x2apic_nmi_send_all_unfenced(uint8_t vector)
{
	(void)vector;
	x2apic_shorthand_in(false, ICR_LOW_OTHERS | ICR_LOW_NMI);
	x2apic_icr_write(x2apic_dest[this_cpu()->cpu] | ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

/* An NMI sets no ISR bit and takes no EOI (SDM vol. 3A 11.8.4). */
static void x2apic_nmi_eoi(void)
{
}

static void x2apic_send_self(uint8_t vector)
{
	wrmsr(X2APIC_MSR_SELF_IPI, vector);
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

static const struct ipi_ops x2apic_unfenced, x2apic_cluster_unfenced;
static const struct ipi_ops ipi_x2apic_nmi, x2apic_nmi_unfenced;

static const struct ipi_ops *x2apic_nmi_choose(void)
{
	return ipi_x2apic_vendor_fences(cpu.vendor) ? &ipi_x2apic_nmi : &x2apic_nmi_unfenced;
}

/* At the switch: the fenced tables but where Linux clears X86_FEATURE_APIC_MSRS_FENCE. */
static const struct ipi_ops *x2apic_choose(void)
{
	return ipi_x2apic_vendor_fences(cpu.vendor) ? &ipi_x2apic : &x2apic_unfenced;
}

static const struct ipi_ops *x2apic_cluster_choose(void)
{
	return ipi_x2apic_vendor_fences(cpu.vendor) ? &ipi_x2apic_cluster : &x2apic_cluster_unfenced;
}

/* The registry lists the fenced tables; their choose hooks swap in the unfenced ones. */
static const struct ipi_ops ipi_x2apic = {
    .name = "x2apic",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_FENCE | IPI_F_SELF_MSR,
    .probe = x2apic_probe,
    .choose = x2apic_choose,
    .enable = x2apic_enable,
    .send = x2apic_send_fenced,
    .send_set = x2apic_send_set_fenced, /* physical: a WRMSR per member, one fence */
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr_fenced,
    .send_allbutself = x2apic_send_allbutself_fenced,
    .send_all = x2apic_send_all_fenced,
    .eoi = x2apic_eoi,
};

static const struct ipi_ops x2apic_unfenced = {
    .name = "x2apic",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_SELF_MSR,
    .probe = x2apic_probe,
    .choose = x2apic_choose,
    .enable = x2apic_enable,
    .send = x2apic_send_unfenced,
    .send_set = x2apic_send_set_unfenced, /* physical: a WRMSR per member, one fence */
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr_unfenced,
    .send_allbutself = x2apic_send_allbutself_unfenced,
    .send_all = x2apic_send_all_unfenced,
    .eoi = x2apic_eoi,
};

static const struct ipi_ops ipi_x2apic_cluster = {
    .name = "x2apic-cluster",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_FENCE | IPI_F_LOGICAL | IPI_F_SET_CLUSTER | IPI_F_SELF_MSR,
    .probe = x2apic_cluster_probe,
    .choose = x2apic_cluster_choose,
    .enable = x2apic_cluster_enable,
    .send = x2apic_cluster_send_fenced,
    .send_set = x2apic_cluster_send_set_fenced,
    .set_writes = x2apic_cluster_set_writes,
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr_fenced,
    .send_allbutself = x2apic_send_allbutself_fenced,
    .send_all = x2apic_send_all_fenced,
    .eoi = x2apic_eoi,
};

static const struct ipi_ops x2apic_cluster_unfenced = {
    .name = "x2apic-cluster",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_LOGICAL | IPI_F_SET_CLUSTER | IPI_F_SELF_MSR,
    .probe = x2apic_cluster_probe,
    .choose = x2apic_cluster_choose,
    .enable = x2apic_cluster_enable,
    .send = x2apic_cluster_send_unfenced,
    .send_set = x2apic_cluster_send_set_unfenced,
    .set_writes = x2apic_cluster_set_writes,
    .send_self = x2apic_send_self,
    .send_self_icr = x2apic_send_self_icr_unfenced,
    .send_allbutself = x2apic_send_allbutself_unfenced,
    .send_all = x2apic_send_all_unfenced,
    .eoi = x2apic_eoi,
};

/* The fenced tables stand for both: the switch chooses by vendor (choose). */
IPI_BACKEND_REGISTER(ipi_x2apic, 200);
IPI_BACKEND_REGISTER(ipi_x2apic_cluster, 210);
static const struct ipi_ops ipi_x2apic_nmi = {
    .name = "x2apic-nmi",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_FENCE | IPI_F_NMI,
    .probe = x2apic_probe,
    .choose = x2apic_nmi_choose,
    .enable = x2apic_enable,
    .send = x2apic_nmi_send_fenced,
    .send_set = x2apic_nmi_send_set_fenced,
    .send_self = x2apic_nmi_send_self_fenced,
    .send_allbutself = x2apic_nmi_send_allbutself_fenced,
    .send_all = x2apic_nmi_send_all_fenced,
    .eoi = x2apic_nmi_eoi,
};

static const struct ipi_ops x2apic_nmi_unfenced = {
    .name = "x2apic-nmi",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_NMI,
    .probe = x2apic_probe,
    .choose = x2apic_nmi_choose,
    .enable = x2apic_enable,
    .send = x2apic_nmi_send_unfenced,
    .send_set = x2apic_nmi_send_set_unfenced,
    .send_self = x2apic_nmi_send_self_unfenced,
    .send_allbutself = x2apic_nmi_send_allbutself_unfenced,
    .send_all = x2apic_nmi_send_all_unfenced,
    .eoi = x2apic_nmi_eoi,
};

IPI_BACKEND_REGISTER(ipi_x2apic_nmi, 205);

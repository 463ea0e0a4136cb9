// SPDX-License-Identifier: GPL-2.0-only
/*
 * `kvm-pv-ipi`: KVM's paravirtual send-IPI hypercall as a backend
 * (docs/hyperv-abi.md 5; Linux Documentation/virt/kvm/x86/hypercalls.rst
 * "KVM_HC_SEND_IPI", arch/x86/kvm/lapic.c kvm_pv_send_ipi()).
 *
 * RAX = 10, RBX/RCX = a 128-bit bitmap of APIC IDs from RDX = the lowest,
 * RSI = ICR low (fixed, physical; KVM refuses logical and shorthands). A
 * set spanning more than one 128-ID window takes several calls, planned by
 * lib/kvm_pvipi. RAX returns the vCPUs reached: each call must reach every
 * APIC ID it named (all of them exist), else the failure is noted with the
 * call's window. Self, all-but-self and all are calls naming those IDs.
 *
 * KVM takes a vmcall as a KVM hypercall only while the Hyper-V guest OS ID
 * is 0 (kvm_hv_hypercall_enabled(): non-zero routes every vmcall to the
 * Hyper-V handler, partition-wide). This backend's activate hook clears it,
 * on the BSP inside the switch barriers, and says so; the Hyper-V backends'
 * hooks set it again. The MSR numbers come from lib/hv_abi.h; no Hyper-V
 * code is called from here.
 *
 * APIC mode: x2APIC (IDs above 255 fit, and the EOI is one WRMSR), as Linux
 * uses this call. Linux installs it for mask sends only (kvm_setup_pv_ipi():
 * send_IPI_mask and send_IPI_mask_allbutself) and writes the x2APIC ICR for
 * one target; here every send uses it, to measure the call on its own.
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/mm.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "kvm/probe.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/hv_abi.h"
#include "lib/kvm_pvipi.h"
#include "lib/pv_result.h"

/* Per CPU: the APIC IDs of a send and its planned calls (ncpus of each at most). */
static uint32_t *kvm_ids[MAX_CPUS];
static struct kvm_pvipi_call *kvm_plan[MAX_CPUS];
static bool kvm_vmmcall;

static int64_t kvm_hc_send_ipi(const struct kvm_pvipi_call *c, uint64_t icr)
{
	uint64_t ret;

	/* Every register but RAX is preserved (hypercalls.rst). */
	if (kvm_vmmcall)
		asm volatile("vmmcall"
			     : "=a"(ret)
			     : "a"((uint64_t)KVM_HC_SEND_IPI), "b"(c->bitmap[0]), "c"(c->bitmap[1]),
			       "d"((uint64_t)c->min_id), "S"(icr)
			     : "memory");
	else
		asm volatile("vmcall"
			     : "=a"(ret)
			     : "a"((uint64_t)KVM_HC_SEND_IPI), "b"(c->bitmap[0]), "c"(c->bitmap[1]),
			       "d"((uint64_t)c->min_id), "S"(icr)
			     : "memory");
	return (int64_t)ret;
}

static void kvm_pv_note(const struct kvm_pvipi_call *c, int64_t ret)
{
	size_t want = kvm_pvipi_count(c);

	if (ret < 0)
		ipi_note_failure(
		    "kvm-pv-ipi: KVM_HC_SEND_IPI (APIC IDs %u + bitmap 0x%lx:%lx) returned %ld (%s)",
		    c->min_id, c->bitmap[1], c->bitmap[0], ret, kvm_hc_error_name(ret));
	else
		ipi_note_failure(
		    "kvm-pv-ipi: KVM_HC_SEND_IPI (APIC IDs %u + bitmap 0x%lx:%lx) reached %ld of %zu vCPUs",
		    c->min_id, c->bitmap[1], c->bitmap[0], ret, want);
}

static void kvm_pv_send_ids(const uint32_t *ids, size_t n, uint64_t icr)
{
	struct kvm_pvipi_call *calls = kvm_plan[this_cpu()->cpu];
	int k = kvm_pvipi_plan(ids, n, calls, ncpus);

	if (k < 0) {
		ipi_note_failure("kvm-pv-ipi: planning a send to %zu APIC IDs failed (%s)", n,
				 error_name(k));
		return;
	}
	for (int i = 0; i < k; i++) {
		int64_t ret = kvm_hc_send_ipi(&calls[i], icr);

		if (kvm_hc_send_ipi_check(ret, kvm_pvipi_count(&calls[i])))
			kvm_pv_note(&calls[i], ret);
	}
}

/* a3: Fixed with the vector, or NMI (nmi is a constant at every call site). */
static inline __attribute__((always_inline)) uint64_t kvm_pv_icr(bool nmi, uint8_t vector)
{
	return nmi ? kvm_pvipi_icr_nmi() : kvm_pvipi_icr(vector);
}

static inline __attribute__((always_inline)) void kvm_pv_send_in(bool nmi, unsigned int target,
								  uint8_t vector)
{
	uint32_t id = percpu_of[target]->apic_id;

	kvm_pv_send_ids(&id, 1, kvm_pv_icr(nmi, vector));
}

static inline __attribute__((always_inline)) void
kvm_pv_send_set_in(bool nmi, const struct cpuset *set, uint8_t vector)
{
	uint32_t *ids = kvm_ids[this_cpu()->cpu];
	size_t n = 0;

	cpuset_for_each(c, set) ids[n++] = percpu_of[c]->apic_id;
	kvm_pv_send_ids(ids, n, kvm_pv_icr(nmi, vector));
}

/* All CPUs, or all but the caller: KVM_HC_SEND_IPI has no shorthand. */
static inline __attribute__((always_inline)) void kvm_pv_send_many_in(bool nmi, bool self_too,
								       uint8_t vector)
{
	unsigned int self = this_cpu()->cpu;
	uint32_t *ids = kvm_ids[self];
	size_t n = 0;

	for (unsigned int c = 0; c < ncpus; c++) {
		if (self_too || c != self)
			ids[n++] = percpu_of[c]->apic_id;
	}
	kvm_pv_send_ids(ids, n, kvm_pv_icr(nmi, vector));
}

/* Each send path, Fixed (kvm-pv-ipi) and NMI (kvm-pv-ipi-nmi). */
#define KVM_PV_SENDS(sfx, nmi)                                                                     \
	static void kvm_pv_send##sfx(unsigned int target, uint8_t vector)                          \
	{                                                                                          \
		kvm_pv_send_in(nmi, target, vector);                                               \
	}                                                                                          \
	static void kvm_pv_send_set##sfx(const struct cpuset *set, uint8_t vector)                 \
	{                                                                                          \
		kvm_pv_send_set_in(nmi, set, vector);                                              \
	}                                                                                          \
	static void kvm_pv_send_self##sfx(uint8_t vector)                                          \
	{                                                                                          \
		kvm_pv_send_in(nmi, this_cpu()->cpu, vector);                                      \
	}                                                                                          \
	static void kvm_pv_send_allbutself##sfx(uint8_t vector)                                    \
	{                                                                                          \
		kvm_pv_send_many_in(nmi, false, vector);                                           \
	}                                                                                          \
	static void kvm_pv_send_all##sfx(uint8_t vector)                                           \
	{                                                                                          \
		kvm_pv_send_many_in(nmi, true, vector);                                            \
	}

KVM_PV_SENDS(, false)
KVM_PV_SENDS(_nmi, true)

static void kvm_pv_eoi(void)
{
	wrmsr(X2APIC_MSR(LAPIC_EOI), 0);
}

/* An NMI takes no EOI (SDM vol. 3A 11.8.4). */
static void kvm_pv_nmi_eoi(void)
{
}

/* For the stall watchdog, on another CPU: the first call of cpu's latest send, as planned. */
static int kvm_pv_describe(unsigned int cpu_nr, char *buf, size_t size)
{
	const struct kvm_pvipi_call *c = cpu_nr < MAX_CPUS ? kvm_plan[cpu_nr] : NULL;

	if (!c || (!c->bitmap[0] && !c->bitmap[1]))
		return 0;
	return fmt_snprintf(
	    buf, size,
	    "KVM_HC_SEND_IPI (RAX %u, %s): RBX 0x%lx RCX 0x%lx (APIC ID bitmap), RDX %u (its lowest APIC ID), RSI the ICR low (Fixed with its vector, not kept, or NMI); the first call of the send",
	    KVM_HC_SEND_IPI, kvm_vmmcall ? "vmmcall" : "vmcall", c->bitmap[0], c->bitmap[1],
	    c->min_id);
}

static const char *kvm_pv_probe(void)
{
	static char why[160];

	if (kvm_feature_why(why, sizeof(why), KVM_FEATURE_PV_SEND_IPI_BIT, "KVM_FEATURE_PV_SEND_IPI",
			    "kvm-pv-ipi", "KVM_HC_SEND_IPI"))
		return why;
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: kvm-pv-ipi runs in x2APIC mode; add +x2apic to -cpu";
	return NULL;
}

/* Guest OS ID 0, so that KVM takes our vmcalls as KVM hypercalls: 0, or -E_PROTO (printed). */
static int kvm_pv_hv_off(void)
{
	uint64_t id = 0;

	if (!cpu.hyperv || !(cpu.hv_features_eax & HV_FEAT_HYPERCALL_MSRS) ||
	    rdmsr_safe(HV_MSR_GUEST_OS_ID, &id) || !id)
		return 0;
	if (wrmsr_safe(HV_MSR_GUEST_OS_ID, 0) || rdmsr_safe(HV_MSR_GUEST_OS_ID, &id) || id) {
		kprintf("kvm-pv-ipi: could not clear the Hyper-V guest OS ID (reads 0x%lx)\n", id);
		return -E_PROTO;
	}
	kprintf(
	    "kvm-pv-ipi: Hyper-V guest OS ID cleared (partition-wide, on the BSP inside the switch barriers): KVM takes vmcall as KVM_HC_SEND_IPI again\n");
	return 0;
}

/* BSP, the other CPUs waiting at a switch barrier. */
static int kvm_pv_activate(void)
{
	kvm_vmmcall = cpu.is_amd;
	if (!kvm_ids[0]) {
		for (unsigned int c = 0; c < ncpus; c++) {
			kvm_ids[c] = mm_alloc(ncpus * sizeof(uint32_t), CACHELINE);
			kvm_plan[c] = mm_alloc(ncpus * sizeof(struct kvm_pvipi_call), CACHELINE);
		}
	}
	return kvm_pv_hv_off();
}

static int kvm_pv_enable(void)
{
	struct percpu *p = this_cpu();
	uint32_t id = lapic_id();

	p->logical_dest = lapic_read(LAPIC_LDR);
	if (id == p->apic_id)
		return 0;
	kprintf("kvm-pv-ipi: CPU %u reports x2APIC ID %u, the MADT said %u\n", p->cpu, id,
		p->apic_id);
	return -E_PROTO;
}

static const struct ipi_ops ipi_kvm_pv_ipi = {
    .name = "kvm-pv-ipi",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_HYPERCALL,
    .words = "call=kvm-hc-send-ipi set=call-per-128-ids hv-guest-os-id=0",
    .probe = kvm_pv_probe,
    .activate = kvm_pv_activate,
    .enable = kvm_pv_enable,
    .send = kvm_pv_send,
    .send_set = kvm_pv_send_set,
    .send_self = kvm_pv_send_self,
    .send_allbutself = kvm_pv_send_allbutself,
    .send_all = kvm_pv_send_all,
    .eoi = kvm_pv_eoi,
    .describe_call = kvm_pv_describe,
};
IPI_BACKEND_REGISTER(ipi_kvm_pv_ipi, 400);

/*
 * kvm-pv-ipi-nmi: the same hypercall with a3 = delivery mode NMI, as Linux's
 * kvm.c sends NMI_VECTOR through KVM_HC_SEND_IPI (kvm_send_ipi_mask with
 * NMI_VECTOR); KVM's kvm_pv_send_ipi() hands it to kvm_apic_set_irq(),
 * which for APIC_DM_NMI calls kvm_inject_nmi().
 */
static const struct ipi_ops ipi_kvm_pv_ipi_nmi = {
    .name = "kvm-pv-ipi-nmi",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_HYPERCALL | IPI_F_NMI,
    .words = "call=kvm-hc-send-ipi set=call-per-128-ids hv-guest-os-id=0",
    .probe = kvm_pv_probe,
    .activate = kvm_pv_activate,
    .enable = kvm_pv_enable,
    .send = kvm_pv_send_nmi,
    .send_set = kvm_pv_send_set_nmi,
    .send_self = kvm_pv_send_self_nmi,
    .send_allbutself = kvm_pv_send_allbutself_nmi,
    .send_all = kvm_pv_send_all_nmi,
    .eoi = kvm_pv_nmi_eoi,
    .describe_call = kvm_pv_describe,
};
IPI_BACKEND_REGISTER(ipi_kvm_pv_ipi_nmi, 405);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * `x2apic-pv-eoi`: the x2apic backend's sends with KVM's paravirtual EOI, the
 * EOI a Linux guest on KVM pays (Linux Documentation/virt/kvm/x86/msr.rst,
 * MSR_KVM_PV_EOI_EN; arch/x86/kernel/kvm.c, kvm_guest_apic_eoi_write()).
 *
 * Each vCPU gives KVM a zeroed 4-byte word (bits 63:2 of MSR_KVM_PV_EOI_EN
 * its physical address, bit 0 enable). When KVM enters the guest with an
 * interrupt in service whose EOI it can take for the guest (nothing
 * pending in the IRR, the highest in-service vector known, not one the I/O
 * APIC needs: arch/x86/kvm/lapic.c, apic_sync_pv_eoi_to_guest()), it sets
 * bit 0 of that word. The handler's EOI tests and clears it: set, the EOI
 * is done, no exit, and KVM completes it in the ISR at the vCPU's next
 * exit (apic_sync_pv_eoi_from_guest()); clear, it writes the x2APIC EOI
 * register as usual. That owed EOI (apic_set_eoi()) waits for a full
 * exit, not a fastpath re-entry: for a spinning target, the kick of the
 * next IPI, inside the next timed region, where Linux pays it too. Any
 * exit between injection and EOI clears the bit first. KVM never sets the
 * bit while APICv or AVIC is active for the VM (kvm_apic_update_apicv()
 * keeps the ISR cache that condition reads at -1), so a Linux guest pays
 * the EOI exit only with them off, and
 * an AVIC on/off comparison of x2apic rows counts one EOI exit that Linux
 * does not pay: this backend's rows are the ones it does (docs/exits-and-
 * apicv.md). The test and clear is not locked, as Linux's
 * __test_and_clear_bit(): only this vCPU writes the word while it runs,
 * and KVM only while it does not.
 *
 * The send paths, their flags and the per-CPU set-up are x2apic's, taken
 * from the registry when the switch chooses this backend (choose): kvm/
 * never calls apic/. The switch away turns the MSR off again (disable), so
 * the backends measured after this one keep the native EOI KVM emulates.
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "kvm/probe.h"
#include "lib/error.h"
#include "lib/kvm_pvipi.h"

#define MSR_KVM_PV_EOI_EN 0x4b564d04u
#define  KVM_PV_EOI_ENABLE 1ull	/* bit 1 is reserved: the word is 4-byte aligned */

/* Per CPU, on its own line: KVM writes it as the vCPU, nobody else does. */
static struct pv_eoi_word {
	uint32_t word;
} __cacheline_aligned pv_eoi_words[MAX_CPUS];

static struct ipi_ops pv_eoi_ops; /* x2apic's table, as chosen, with this file's hooks */
static int (*pv_eoi_base_enable)(void);

static const char *pv_eoi_probe(void)
{
	static char why[160];
	const struct ipi_ops *base = ipi_backend_named("x2apic");

	if (kvm_feature_why(why, sizeof(why), KVM_FEATURE_PV_EOI_BIT, "KVM_FEATURE_PV_EOI",
			    "kvm-pv-eoi", "KVM's PV EOI"))
		return why;
	return base ? base->probe() : "no x2apic backend in this build";
}

static void pv_eoi_eoi(void)
{
	uint32_t *w = &pv_eoi_words[this_cpu()->cpu].word;
	bool done;

	asm volatile("btrl $0, %0" : "+m"(*w), "=@ccc"(done) : : "memory");
	if (!done)
		wrmsr(X2APIC_MSR(LAPIC_EOI), 0);
}

static int pv_eoi_enable(void)
{
	struct percpu *p = this_cpu();
	uint32_t *w = &pv_eoi_words[p->cpu].word;
	int err = pv_eoi_base_enable();

	if (err)
		return err;
	*w = 0; /* msr.rst: the area "must be zeroed" */
	if (wrmsr_safe(MSR_KVM_PV_EOI_EN, (uint64_t)(uintptr_t)w | KVM_PV_EOI_ENABLE)) {
		kprintf("x2apic-pv-eoi: CPU %u: #GP writing MSR_KVM_PV_EOI_EN (0x%x)\n", p->cpu,
			MSR_KVM_PV_EOI_EN);
		return -E_PROTO;
	}
	return 0;
}

static void pv_eoi_disable(void)
{
	(void)wrmsr_safe(MSR_KVM_PV_EOI_EN, 0);
}

static const struct ipi_ops ipi_x2apic_pv_eoi;

/*
 * On the BSP, before any CPU moves: x2apic's table as its own choose picks
 * it (the vendor's fences), with this backend's name, words and hooks, as
 * the registry's entry below holds them.
 */
static const struct ipi_ops *pv_eoi_choose(void)
{
	pv_eoi_base_enable = ipi_derive(&pv_eoi_ops, "x2apic", &ipi_x2apic_pv_eoi)->enable;
	return &pv_eoi_ops;
}

/* The registry's entry: what the plan, help=1 and backends= see before the switch chooses. */
static const struct ipi_ops ipi_x2apic_pv_eoi = {
    .name = "x2apic-pv-eoi",
    .mode = LAPIC_X2APIC,
    .words = "eoi=kvm-pv-eoi",
    .probe = pv_eoi_probe,
    .choose = pv_eoi_choose,
    .enable = pv_eoi_enable,
    .disable = pv_eoi_disable,
    .eoi = pv_eoi_eoi,
};
IPI_BACKEND_REGISTER(ipi_x2apic_pv_eoi, 220);

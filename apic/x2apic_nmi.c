// SPDX-License-Identifier: GPL-2.0-only
/*
 * x2apic-nmi: IPIs with delivery mode NMI in x2APIC mode, physical
 * destination (one WRMSR to the ICR, MSR 0x830, SDM vol. 3A 11.12.9), as
 * Linux's x2apic_phys sends NMI_VECTOR: APIC_DM_NMI and no vector.
 *
 * The self shorthand and the SELF IPI register (MSR 0x83f, vector only)
 * are Fixed-only (SDM "Valid Combinations for the ICR"; 11.12.11): a self
 * NMI goes to the CPU's own x2APIC ID; all-including-self is
 * all-excluding-self, which NMI allows, and then that write. The fence
 * follows the vendor rule of the Fixed x2apic backend (apic/x2apic.c:
 * MFENCE;LFENCE once per send call but on AMD and Hygon), chosen at the
 * switch. The vector the callers pass is ignored: the IPI core counts
 * every NMI as IPI_NMI_VEC (include/ipi.h). No EOI.
 */
#include "apic/apic.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "lib/error.h"

/* The ICR destination for each CPU (bits 63:32), filled by each CPU's enable. */
static uint64_t nmi_dest[MAX_CPUS];

static inline __attribute__((always_inline)) void nmi_send_in(bool fenced, unsigned int target)
{
	x2apic_fence(fenced);
	x2apic_icr_write(nmi_dest[target] | ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

/* One fence, then a WRMSR per member in CPU order, as Linux fences once per mask. */
static inline __attribute__((always_inline)) void nmi_send_set_in(bool fenced,
								  const struct cpuset *set)
{
	x2apic_fence(fenced);
	cpuset_for_each(c, set) x2apic_icr_write(nmi_dest[c] | ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

static inline __attribute__((always_inline)) void nmi_send_others_in(bool fenced, bool self_too)
{
	x2apic_fence(fenced);
	x2apic_icr_write(ICR_LOW_OTHERS | ICR_LOW_NMI);
	if (self_too)
		x2apic_icr_write(nmi_dest[this_cpu()->cpu] | ICR_LOW_PHYSICAL | ICR_LOW_NMI);
}

#define X2APIC_NMI_SENDS(sfx, fenced)                                                              \
	static void x2apic_nmi_send##sfx(unsigned int target, uint8_t vector)                      \
	{                                                                                          \
		(void)vector;                                                                      \
		nmi_send_in(fenced, target);                                                       \
	}                                                                                          \
	static void x2apic_nmi_send_set##sfx(const struct cpuset *set, uint8_t vector)             \
	{                                                                                          \
		(void)vector;                                                                      \
		nmi_send_set_in(fenced, set);                                                      \
	}                                                                                          \
	static void x2apic_nmi_send_self##sfx(uint8_t vector)                                      \
	{                                                                                          \
		(void)vector;                                                                      \
		nmi_send_in(fenced, this_cpu()->cpu);                                              \
	}                                                                                          \
	static void x2apic_nmi_send_allbutself##sfx(uint8_t vector)                                \
	{                                                                                          \
		(void)vector;                                                                      \
		nmi_send_others_in(fenced, false);                                                 \
	}                                                                                          \
	static void x2apic_nmi_send_all##sfx(uint8_t vector)                                       \
	{                                                                                          \
		(void)vector;                                                                      \
		nmi_send_others_in(fenced, true);                                                  \
	}

X2APIC_NMI_SENDS(_fenced, true)
X2APIC_NMI_SENDS(_unfenced, false)

static void x2apic_nmi_eoi(void)
{
}

static const char *x2apic_nmi_probe(void)
{
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: add +x2apic to -cpu";
	return NULL;
}

static int x2apic_nmi_enable(void)
{
	struct percpu *p = this_cpu();

	nmi_dest[p->cpu] = (uint64_t)p->apic_id << ICR_X2APIC_DEST_SHIFT;
	p->logical_dest = (uint32_t)rdmsr(ICR_X2APIC_LDR_MSR);
	return apic_check_id("x2apic-nmi", (uint32_t)rdmsr(X2APIC_MSR_ID));
}

static const struct ipi_ops ipi_x2apic_nmi, x2apic_nmi_unfenced;

static const struct ipi_ops *x2apic_nmi_choose(void)
{
	return ipi_x2apic_vendor_fences(cpu.vendor) ? &ipi_x2apic_nmi : &x2apic_nmi_unfenced;
}

#define X2APIC_NMI_OPS(sfx, fence)                                                                 \
	{                                                                                          \
	    .name = "x2apic-nmi",                                                                  \
	    .mode = LAPIC_X2APIC,                                                                  \
	    .flags = (fence) | IPI_F_NMI,                                                          \
	    .probe = x2apic_nmi_probe,                                                             \
	    .choose = x2apic_nmi_choose,                                                           \
	    .enable = x2apic_nmi_enable,                                                           \
	    .send = x2apic_nmi_send##sfx,                                                          \
	    .send_set = x2apic_nmi_send_set##sfx,                                                  \
	    .send_self = x2apic_nmi_send_self##sfx,                                                \
	    .send_allbutself = x2apic_nmi_send_allbutself##sfx,                                    \
	    .send_all = x2apic_nmi_send_all##sfx,                                                  \
	    .eoi = x2apic_nmi_eoi,                                                                 \
	}

static const struct ipi_ops ipi_x2apic_nmi = X2APIC_NMI_OPS(_fenced, IPI_F_FENCE);
static const struct ipi_ops x2apic_nmi_unfenced = X2APIC_NMI_OPS(_unfenced, 0);
IPI_BACKEND_REGISTER(ipi_x2apic_nmi, 205);

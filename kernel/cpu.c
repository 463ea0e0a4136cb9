// SPDX-License-Identifier: GPL-2.0-only
/*
 * CPU and hypervisor identification by CPUID (SDM vol. 2A, CPUID; Hyper-V
 * TLFS "Feature Discovery"; Linux Documentation/virt/kvm/x86/cpuid.rst).
 * The KVM leaves are searched at 0x40000000 + k * 0x100 because QEMU moves
 * them to 0x40000100 when Hyper-V enlightenments occupy 0x40000000.
 */
#include "include/cpu.h"
#include "include/poll.h"
#include "include/x86.h"
#include "lib/hv_abi.h"
#include "lib/kvm_pvipi.h"
#include "lib/xen_abi.h"

struct cpu_features cpu;

static void regs_to_string(char *dst, uint32_t a, uint32_t b, uint32_t c)
{
	const uint32_t w[3] = { a, b, c };

	__builtin_memcpy(dst, w, 12);
	dst[12] = 0;
}

static void cpu_identify_model(void)
{
	struct cpuid_regs r = cpuid(0, 0);
	uint32_t base_family, ext_model;

	cpu.max_leaf = r.eax;
	regs_to_string(cpu.vendor, r.ebx, r.edx, r.ecx);
	cpu.is_amd = r.ebx == 0x68747541u; /* "AuthenticAMD" (or Hygon: "HygonGenuine") */
	cpu.is_amd |= r.ebx == 0x6f677948u;
	r = cpuid(1, 0);
	/* SDM vol. 2A, CPUID leaf 1 EAX: display family and model. */
	base_family = (r.eax >> 8) & 0xf;
	ext_model = (r.eax >> 16) & 0xf;
	cpu.family = base_family == 0xf ? base_family + ((r.eax >> 20) & 0xff) : base_family;
	cpu.model = (r.eax >> 4) & 0xf;
	if (base_family == 0x6 || base_family == 0xf)
		cpu.model |= ext_model << 4;
	cpu.stepping = r.eax & 0xf;
	cpu.apic = r.edx & CPUID1_EDX_APIC;
	cpu.x2apic = r.ecx & CPUID1_ECX_X2APIC;
	cpu.tsc_deadline = r.ecx & CPUID1_ECX_TSC_DEADLINE;
	cpu.hypervisor = r.ecx & CPUID1_ECX_HYPERVISOR;

	cpu.max_ext_leaf = cpuid(0x80000000u, 0).eax;
	if (cpu.max_ext_leaf >= 0x80000001u)
		cpu.rdtscp = cpuid(0x80000001u, 0).edx & CPUID80000001_EDX_RDTSCP;
	if (cpu.max_ext_leaf >= 0x80000004u) {
		for (uint32_t i = 0; i < 3; i++) {
			r = cpuid(0x80000002u + i, 0);
			regs_to_string(cpu.brand + (size_t)16 * i, r.eax, r.ebx, r.ecx);
			__builtin_memcpy(cpu.brand + (size_t)16 * i + 12, &r.edx, 4);
		}
		cpu.brand[48] = 0;
	}
	if (cpu.max_ext_leaf >= 0x80000007u)
		cpu.invariant_tsc = cpuid(0x80000007u, 0).edx & CPUID80000007_EDX_INVTSC;
}

bool poll_yield;

static void cpu_identify_hypervisor(void)
{
	struct cpuid_regs r;

	if (!cpu.hypervisor)
		return;
	r = cpuid(HV_CPUID_VENDOR, 0);
	cpu.hv_max_leaf = r.eax;
	regs_to_string(cpu.hv_vendor, r.ebx, r.ecx, r.edx);
	/* QEMU TCG: PAUSE is how a polling vCPU lets the others run (include/poll.h). */
	poll_yield = __builtin_memcmp(cpu.hv_vendor, "TCGTCGTCGTCG", 12) == 0;
	if (r.eax >= HV_CPUID_INTERFACE &&
	    cpuid(HV_CPUID_INTERFACE, 0).eax == HV_INTERFACE_SIGNATURE) {
		cpu.hyperv = true;
		if (r.eax >= HV_CPUID_FEATURES) {
			r = cpuid(HV_CPUID_FEATURES, 0);
			cpu.hv_features_eax = r.eax;
			cpu.hv_features_ebx = r.ebx;
			cpu.hv_features_edx = r.edx;
		}
		if (cpu.hv_max_leaf >= HV_CPUID_RECOMMENDATIONS)
			cpu.hv_recommendations = cpuid(HV_CPUID_RECOMMENDATIONS, 0).eax;
	}
	/* KVM's and Xen's leaves: at 0x40000000, or further on beside Hyper-V's. */
	for (uint32_t base = KVM_CPUID_BASE_FIRST; base < KVM_CPUID_BASE_LIMIT;
	     base += KVM_CPUID_BASE_STEP) {
		r = cpuid(base, 0);
		if (!cpu.kvm_base && r.ebx == KVM_SIGNATURE_EBX && r.ecx == KVM_SIGNATURE_ECX &&
		    r.edx == KVM_SIGNATURE_EDX) {
			cpu.kvm_base = base;
			cpu.kvm_features = cpuid(base + KVM_CPUID_FEATURES_OFFSET, 0).eax;
		}
		if (!cpu.xen_base && r.ebx == XEN_SIGNATURE_EBX && r.ecx == XEN_SIGNATURE_ECX &&
		    r.edx == XEN_SIGNATURE_EDX) {
			cpu.xen_base = base;
			cpu.xen_max_leaf = r.eax;
			cpu.xen_version = cpuid(base + XEN_CPUID_VERSION_OFFSET, 0).eax;
		}
	}
}

void cpu_identify(void)
{
	cpu_identify_model();
	cpu_identify_hypervisor();
}

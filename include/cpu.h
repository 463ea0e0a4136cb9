/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What CPUID says about the virtual CPU, read once on the BSP at boot and
 * printed in the environment record: vendor and model, the features the
 * backends probe, and the hypervisor's identity and feature leaves.
 */
#ifndef INCLUDE_CPU_H
#define INCLUDE_CPU_H

#include <stdbool.h>
#include <stdint.h>

struct cpu_features {
	char vendor[13];
	char brand[49];
	uint32_t family, model, stepping;
	uint32_t max_leaf, max_ext_leaf;
	bool is_amd;		/* vmmcall rather than vmcall */
	bool apic, x2apic, tsc_deadline, rdtscp, invariant_tsc, hypervisor;
	/* Hypervisor leaves (0x40000000 block) */
	char hv_vendor[13];
	uint32_t hv_max_leaf;
	bool hyperv;		/* interface signature "Hv#1" at 0x40000001 */
	uint32_t hv_features_eax, hv_features_ebx, hv_features_edx; /* 0x40000003 */
	uint32_t hv_recommendations;	/* 0x40000004 EAX */
	uint32_t kvm_base;	/* leaf of "KVMKVMKVM", 0 if absent */
	uint32_t kvm_features;	/* kvm_base + 1, EAX */
	uint32_t xen_base;	/* leaf of "XenVMMXenVMM", 0 if absent (lib/xen_abi.h) */
	uint32_t xen_max_leaf;	/* xen_base, EAX: Xen's last leaf */
	uint32_t xen_version;	/* xen_base + 1, EAX: major << 16 | minor */
};

extern struct cpu_features cpu;

void cpu_identify(void);

#endif

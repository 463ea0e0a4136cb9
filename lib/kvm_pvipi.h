/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * KVM paravirtual send-IPI (KVM_HC_SEND_IPI): constants and a pure planner
 * that packs a set of APIC IDs into as few hypercalls as possible.
 *
 * Follows docs/hyperv-abi.md section 5 (Linux Documentation/virt/kvm/x86/
 * hypercalls.rst and cpuid.rst, include/uapi/linux/kvm_para.h). One call
 * covers a 128-ID window in 64-bit mode:
 *   RAX = KVM_HC_SEND_IPI, RBX (a0) = bitmap[0], RCX (a1) = bitmap[1],
 *   RDX (a2) = min_id, RSI (a3) = kvm_pvipi_icr(vector);
 * bit i of bitmap[0] targets APIC ID min_id + i, bit i of bitmap[1]
 * targets min_id + 64 + i. RAX returns the number of vCPUs reached, or a
 * negative KVM error below.
 */
#ifndef LIB_KVM_PVIPI_H
#define LIB_KVM_PVIPI_H

#include <stddef.h>
#include <stdint.h>

/* Bit fields are indented under their leaf (house style); clang-format would flatten them. */
/* clang-format off */
/* CPUID: scan base = 0x40000000 + k * 0x100 for the signature (0x40000100 beside Hyper-V). */
#define KVM_CPUID_BASE_FIRST	0x40000000u
#define KVM_CPUID_BASE_STEP	0x100u
#define KVM_CPUID_BASE_LIMIT	0x40010000u /* Linux scans up to here */
#define  KVM_SIGNATURE_EBX	0x4b4d564bu /* "KVMK" */
#define  KVM_SIGNATURE_ECX	0x564b4d56u /* "VMKV" */
#define  KVM_SIGNATURE_EDX	0x0000004du /* "M\0\0\0" */
#define KVM_CPUID_FEATURES_OFFSET 1 /* features leaf = base + 1; EAX: */
#define  KVM_FEATURE_PV_EOI_BIT	6
#define  KVM_FEATURE_PV_EOI	(1u << KVM_FEATURE_PV_EOI_BIT)
#define  KVM_FEATURE_PV_UNHALT	(1u << 7)
#define  KVM_FEATURE_PV_SEND_IPI_BIT 11
#define  KVM_FEATURE_PV_SEND_IPI (1u << KVM_FEATURE_PV_SEND_IPI_BIT)
#define  KVM_FEATURE_CLOCKSOURCE_STABLE_BIT (1u << 24) /* the host's TSC is stable */

/* Hypercall numbers (RAX) */
#define KVM_HC_KICK_CPU		5
#define KVM_HC_SEND_IPI		10

/* Errors, returned negated in RAX (KVM's own numbering, not errno's) */
#define KVM_EPERM		1 /* CPL != 0 */
#define KVM_EINVAL		22 /* logical destination or shorthand in a3 */
#define KVM_EOPNOTSUPP		95 /* no in-kernel APIC map */
#define KVM_ENOSYS		1000 /* unknown call, or PV_SEND_IPI absent under enforcement */

#define KVM_PVIPI_WORD_BITS	64 /* 32 in a 32-bit guest; not used here */
#define KVM_PVIPI_WINDOW	(2ull * KVM_PVIPI_WORD_BITS) /* APIC IDs per call */
/* clang-format on */

struct kvm_pvipi_call {
	uint64_t bitmap[2]; /* a0, a1 */
	uint32_t min_id;    /* a2: APIC ID of bitmap[0] bit 0 */
};

/*
 * Plan the calls that reach every APIC ID in apic_ids exactly once and no
 * other: windows in increasing min_id order, each starting at the lowest
 * ID not yet covered, which gives the fewest calls for any input order
 * (duplicates fine). Returns the number of calls, -E_NOSPC if more than
 * max_calls are needed, -E_INVAL for apic_ids NULL with n > 0.
 */
int kvm_pvipi_plan(const uint32_t *apic_ids, size_t n, struct kvm_pvipi_call *calls,
		   size_t max_calls);

/* a3: ICR low for a fixed, physical, edge IPI of vector (KVM refuses logical/shorthand). */
uint64_t kvm_pvipi_icr(uint8_t vector);
/* a3 of an NMI: delivery mode NMI (ICR bits 10:8 = 100b), no vector: 0x400. */
uint64_t kvm_pvipi_icr_nmi(void);

/* Number of APIC IDs one call targets (the vCPU count KVM returns if all exist). */
size_t kvm_pvipi_count(const struct kvm_pvipi_call *c);

#endif

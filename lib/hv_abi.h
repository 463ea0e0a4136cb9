/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hyper-V Top-Level Functional Specification (TLFS) constants and hypercall
 * input layouts used by ipibench, in one place.
 *
 * Follows docs/hyperv-abi.md (sections 1 to 4), which cites the TLFS pages
 * feature-discovery.md, hypercall-interface.md, datatypes/hv_vp_set.md and
 * hypercalls/HvCallSendSyntheticClusterIpi*.md, HvCallFlushVirtualAddress*.md,
 * and Linux's include/hyperv/hvgdk_mini.h. Every input struct is checked
 * against the documented size and offsets at compile time.
 */
#ifndef LIB_HV_ABI_H
#define LIB_HV_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Bit fields sit indented under their leaf or MSR (house style): clang-format would flatten. */
/* clang-format off */
/* CPUID leaves (look only when CPUID.1:ECX[31], hypervisor present, is set). */
#define HV_CPUID_VENDOR			0x40000000u /* EAX = highest leaf; EBX:ECX:EDX = vendor */
#define  HV_VENDOR_MICROSOFT_EBX	0x7263694du /* "Micr" */
#define  HV_VENDOR_MICROSOFT_ECX	0x666f736fu /* "osof" */
#define  HV_VENDOR_MICROSOFT_EDX	0x76482074u /* "t Hv" */
#define HV_CPUID_INTERFACE		0x40000001u
#define  HV_INTERFACE_SIGNATURE		0x31237648u /* EAX = "Hv#1": key off this, not the vendor */
#define HV_CPUID_VERSION		0x40000002u /* KVM: build 0x3839, 10.0 */
#define HV_CPUID_FEATURES		0x40000003u
/* EAX: partition privileges, low half */
#define  HV_FEAT_VP_RUNTIME		(1u << 0) /* hv-runtime */
#define  HV_FEAT_TIME_REF_COUNT		(1u << 1) /* hv-time */
#define  HV_FEAT_SYNIC			(1u << 2) /* hv-synic */
#define  HV_FEAT_SYNTIMER		(1u << 3) /* hv-stimer */
#define  HV_FEAT_APIC_MSRS		(1u << 4) /* EOI/ICR/TPR MSRs, VP assist (hv-vapic) */
#define  HV_FEAT_HYPERCALL_MSRS		(1u << 5) /* GUEST_OS_ID, HYPERCALL (any hv-*) */
#define  HV_FEAT_VP_INDEX		(1u << 6) /* hv-vpindex */
#define  HV_FEAT_RESET			(1u << 7) /* hv-reset */
#define  HV_FEAT_REF_TSC		(1u << 9) /* hv-time */
#define  HV_FEAT_FREQUENCY_MSRS		(1u << 11) /* TSC/APIC frequency MSRs (hv-frequencies) */
#define  HV_FEAT_REENLIGHTENMENT	(1u << 13) /* hv-reenlightenment */
#define  HV_FEAT_TSC_INVARIANT		(1u << 15)
/* EBX: privileges, high half (PostMessages bit 4, SignalEvents 5): recorded */
/* EDX: miscellaneous features; QEMU sets bit 3 with any hv-* flag */
#define  HV_FEAT_EDX_XMM_INPUT		(1u << 4) /* XMM-fast hypercall input (hv-xmm-input) */
#define  HV_FEAT_EDX_FREQUENCY_MSRS	(1u << 8) /* hv-frequencies */
#define  HV_FEAT_EDX_CRASH_MSRS		(1u << 10) /* hv-crash */
#define  HV_FEAT_EDX_EXT_GVA_RANGES	(1u << 14) /* hv-tlbflush-ext */
#define  HV_FEAT_EDX_XMM_OUTPUT		(1u << 15) /* KVM offers none */
#define  HV_FEAT_EDX_DIRECT_STIMER	(1u << 19) /* hv-stimer-direct */
#define HV_CPUID_RECOMMENDATIONS	0x40000004u
/* EAX: implementation recommendations; EBX: spinlock retry count */
#define  HV_REC_AS_SWITCH		(1u << 0)
#define  HV_REC_LOCAL_FLUSH		(1u << 1)
#define  HV_REC_REMOTE_FLUSH		(1u << 2) /* use FlushVirtualAddress* (hv-tlbflush) */
#define  HV_REC_APIC_MSRS		(1u << 3) /* prefer the MSRs (hv-vapic, unless hv-avic) */
#define  HV_REC_RELAXED_TIMING		(1u << 5) /* hv-relaxed */
#define  HV_REC_DEPRECATING_AEOI	(1u << 9) /* hv-avic */
#define  HV_REC_CLUSTER_IPI		(1u << 10) /* use SendSyntheticClusterIpi (hv-ipi) */
#define  HV_REC_EX_PROCESSOR_MASKS	(1u << 11) /* use the *Ex calls with HV_VP_SET */
#define  HV_REC_NESTED			(1u << 12)
#define  HV_REC_ENLIGHTENED_VMCS	(1u << 14)
#define  HV_REC_NO_NONARCH_CORESHARE	(1u << 18)
#define HV_CPUID_LIMITS			0x40000005u /* EAX = max VPs (KVM_MAX_VCPUS) */

/* Synthetic MSRs */
#define HV_MSR_GUEST_OS_ID		0x40000000u /* non-zero before HYPERCALL is enabled */
#define  HV_GUEST_OS_ID_OPEN_SOURCE	(1ull << 63)
#define  HV_GUEST_OS_ID_TYPE_SHIFT	56 /* 62:56, Linux = 1 */
#define  HV_GUEST_OS_ID_IPIBENCH	0x8100000000010000ull /* open source, type 1, version 1 */
/*
 * Microsoft's format (bit 63 clear): vendor 63:48 (1, Microsoft), OS 47:40
 * (4, Windows NT), major 39:32, minor 31:24, service pack 23:16, build
 * 15:0. Windows 10.0 here, for hv_os_id=windows only: Xen's viridian fills
 * CPUID 0x40000004 for such an ID alone (docs/xen.md); the TLFS asks an
 * open-source guest for the open-source format, which is the default.
 */
#define  HV_GUEST_OS_ID_MS_VENDOR_SHIFT	48
#define  HV_GUEST_OS_ID_MS_OS_SHIFT	40
#define  HV_GUEST_OS_ID_MS_MAJOR_SHIFT	32
#define  HV_GUEST_OS_ID_WINDOWS		0x0001040a00000000ull /* vendor 1, OS 4, 10.0 */
#define HV_MSR_HYPERCALL		0x40000001u
#define  HV_HYPERCALL_ENABLE		(1ull << 0)
#define  HV_HYPERCALL_LOCKED		(1ull << 1) /* read-only */
#define  HV_HYPERCALL_PAGE_SHIFT	12 /* 63:12 = GPA page number */
#define HV_MSR_VP_INDEX			0x40000002u /* read-only to the guest */
#define HV_MSR_RESET			0x40000003u
#define HV_MSR_TIME_REF_COUNT		0x40000020u /* 100 ns units */
#define HV_MSR_REFERENCE_TSC		0x40000021u
#define HV_MSR_TSC_FREQUENCY		0x40000022u /* Hz */
#define HV_MSR_APIC_FREQUENCY		0x40000023u /* Hz */
#define HV_MSR_EOI			0x40000070u /* write 0; 63:32 reserved */
#define HV_MSR_ICR			0x40000071u /* whole ICR; dest. per current APIC mode */
#define HV_MSR_TPR			0x40000072u /* 7:0 */
#define HV_MSR_VP_ASSIST_PAGE		0x40000073u

/* Hypercall call codes */
#define HV_CALL_FLUSH_SPACE		0x0002 /* HvCallFlushVirtualAddressSpace, simple */
#define HV_CALL_FLUSH_LIST		0x0003 /* HvCallFlushVirtualAddressList, rep */
#define HV_CALL_SEND_IPI		0x000b /* HvCallSendSyntheticClusterIpi, simple */
#define HV_CALL_FLUSH_SPACE_EX		0x0013 /* simple, variable header */
#define HV_CALL_FLUSH_LIST_EX		0x0014 /* rep, variable header */
#define HV_CALL_SEND_IPI_EX		0x0015 /* simple, variable header */

/* Hypercall input value (control word, RCX) */
#define HV_CONTROL_CODE_MASK		0xffffull /* 15:0 */
#define HV_CONTROL_FAST			(1ull << 16)
#define HV_CONTROL_VARHEAD_SHIFT	17 /* 26:17, in qwords */
#define HV_CONTROL_VARHEAD_MAX		0x3ffu
#define HV_CONTROL_REP_COUNT_SHIFT	32 /* 43:32 */
#define HV_CONTROL_REP_COUNT_MAX	0xfffu
#define HV_CONTROL_REP_START_SHIFT	48 /* 59:48 */
#define HV_CONTROL_REP_START_MAX	0xfffu
/* bits 31:27, 47:44 and 63:60 are reserved: status 3 if set */

/* Hypercall result value (RAX) */
#define HV_RESULT_STATUS_MASK		0xffffull /* 15:0 */
#define HV_RESULT_REPS_SHIFT		32 /* 43:32 = reps completed */
#define HV_RESULT_REPS_MAX		0xfffu

/* HV_STATUS_* */
#define HV_STATUS_SUCCESS		0x0
#define HV_STATUS_INVALID_HYPERCALL_CODE 0x2
#define HV_STATUS_INVALID_HYPERCALL_INPUT 0x3
#define HV_STATUS_INVALID_ALIGNMENT	0x4
#define HV_STATUS_INVALID_PARAMETER	0x5
#define HV_STATUS_ACCESS_DENIED		0x6
#define HV_STATUS_INVALID_PARTITION_STATE 0x7
#define HV_STATUS_OPERATION_DENIED	0x8
#define HV_STATUS_INSUFFICIENT_MEMORY	0xb
#define HV_STATUS_INVALID_VP_INDEX	0xe
#define HV_STATUS_INVALID_PORT_ID	0x11
#define HV_STATUS_INSUFFICIENT_BUFFERS	0x13

/* Register input limits: RDX, R8, then XMM0..XMM5 (TLFS "XMM Fast Hypercall Input") */
#define HV_FAST_GPR_QWORDS		2
#define HV_XMM_REGISTERS		6
/* 14 qwords = 112 bytes */
#define HV_XMM_MAX_QWORDS		(HV_FAST_GPR_QWORDS + 2 * HV_XMM_REGISTERS)

/* HvCallSendSyntheticClusterIpi[Ex] */
#define HV_IPI_LOW_VECTOR		0x10
#define HV_IPI_HIGH_VECTOR		0xff
#define HV_SEND_IPI_MAX_VP		63 /* the non-Ex cpu_mask covers VP 0..63 */

/* HV_VP_SET */
#define HV_GENERIC_SET_SPARSE_4K	0
#define HV_GENERIC_SET_ALL		1
#define HV_VPSET_BANK_BITS		64
#define HV_VPSET_MAX_BANKS		64 /* valid_bank_mask has 64 bits */
#define HV_VPSET_MAX_VP			(HV_VPSET_BANK_BITS * HV_VPSET_MAX_BANKS - 1) /* 4095 */

/* Flush flags (HvCallFlushVirtualAddress*) */
#define HV_FLUSH_ALL_PROCESSORS		(1ull << 0) /* ignore the mask/set */
#define HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES (1ull << 1) /* ignore address_space */
#define HV_FLUSH_NON_GLOBAL_MAPPINGS_ONLY (1ull << 2) /* Space calls only */
#define HV_FLUSH_USE_EXTENDED_RANGE_FORMAT (1ull << 3) /* List calls; CPUID EDX[14] */

/* FlushVirtualAddressList element: page-aligned GVA in 63:12, additional pages in 11:0 */
#define HV_GVA_PAGE_SHIFT		12
#define HV_GVA_EXTRA_PAGES_MASK		0xfffull
#define HV_GVA_EXTRA_PAGES_MAX		4095 /* so one element covers 1..4096 pages */
/* clang-format on */

/* Input of HvCallSendSyntheticClusterIpi (0x000b) */
struct hv_send_ipi {
	uint32_t vector;
	uint8_t target_vtl;
	uint8_t reserved[3];
	uint64_t cpu_mask;
};

/* HV_VP_SET header; bank_contents[popcount(valid_bank_mask)] follow it */
struct hv_vpset {
	uint64_t format;
	uint64_t valid_bank_mask;
};

/* Fixed part of HvCallSendSyntheticClusterIpiEx (0x0015); banks are the variable header */
struct hv_send_ipi_ex {
	uint32_t vector;
	uint8_t target_vtl;
	uint8_t reserved[3];
	struct hv_vpset vp_set;
};

/* Input of HvCallFlushVirtualAddressSpace (0x0002); List (0x0003) appends gva_list[] */
struct hv_tlb_flush {
	uint64_t address_space;
	uint64_t flags;
	uint64_t processor_mask;
};

/* Fixed part of the Ex flushes (0x0013, 0x0014): banks, then gva_list[] for 0x0014 */
struct hv_tlb_flush_ex {
	uint64_t address_space;
	uint64_t flags;
	struct hv_vpset vp_set;
};

_Static_assert(sizeof(struct hv_send_ipi) == 16, "hv_send_ipi size");
_Static_assert(offsetof(struct hv_send_ipi, vector) == 0, "hv_send_ipi.vector");
_Static_assert(offsetof(struct hv_send_ipi, target_vtl) == 4, "hv_send_ipi.target_vtl");
_Static_assert(offsetof(struct hv_send_ipi, reserved) == 5, "hv_send_ipi.reserved");
_Static_assert(offsetof(struct hv_send_ipi, cpu_mask) == 8, "hv_send_ipi.cpu_mask");

_Static_assert(sizeof(struct hv_vpset) == 16, "hv_vpset size");
_Static_assert(offsetof(struct hv_vpset, format) == 0, "hv_vpset.format");
_Static_assert(offsetof(struct hv_vpset, valid_bank_mask) == 8, "hv_vpset.valid_bank_mask");

_Static_assert(sizeof(struct hv_send_ipi_ex) == 24, "hv_send_ipi_ex size");
_Static_assert(offsetof(struct hv_send_ipi_ex, vector) == 0, "hv_send_ipi_ex.vector");
_Static_assert(offsetof(struct hv_send_ipi_ex, target_vtl) == 4, "hv_send_ipi_ex.target_vtl");
_Static_assert(offsetof(struct hv_send_ipi_ex, reserved) == 5, "hv_send_ipi_ex.reserved");
_Static_assert(offsetof(struct hv_send_ipi_ex, vp_set) == 8, "hv_send_ipi_ex.vp_set");

_Static_assert(sizeof(struct hv_tlb_flush) == 24, "hv_tlb_flush size");
_Static_assert(offsetof(struct hv_tlb_flush, address_space) == 0, "hv_tlb_flush.address_space");
_Static_assert(offsetof(struct hv_tlb_flush, flags) == 8, "hv_tlb_flush.flags");
_Static_assert(offsetof(struct hv_tlb_flush, processor_mask) == 16, "hv_tlb_flush.mask");

_Static_assert(sizeof(struct hv_tlb_flush_ex) == 32, "hv_tlb_flush_ex size");
_Static_assert(offsetof(struct hv_tlb_flush_ex, address_space) == 0, "hv_tlb_flush_ex.as");
_Static_assert(offsetof(struct hv_tlb_flush_ex, flags) == 8, "hv_tlb_flush_ex.flags");
_Static_assert(offsetof(struct hv_tlb_flush_ex, vp_set) == 16, "hv_tlb_flush_ex.vp_set");

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Xen's CPUID leaves, as Xen's public header arch-x86/cpuid.h and its
 * cpuid_hypervisor_leaves() (xen/arch/x86/cpuid.c) define them. They sit at
 * the first free 0x100-aligned base from 0x40000000: at 0x40000100 when
 * viridian puts Hyper-V's leaves at 0x40000000 (the scan is kernel/cpu.c's,
 * beside KVM's: the same bases, lib/kvm_pvipi.h). Then the hypercalls and
 * layouts the event-channel backend uses (xen/evtchn.c), from Xen 4.17's
 * public headers.
 */
#ifndef LIB_XEN_ABI_H
#define LIB_XEN_ABI_H

#include <stdint.h>

/* clang-format off */
/* Base: EAX the last Xen leaf, EBX:ECX:EDX "XenVMMXenVMM". */
#define  XEN_SIGNATURE_EBX	0x566e6558u /* "XenV" */
#define  XEN_SIGNATURE_ECX	0x65584d4du /* "MMXe" */
#define  XEN_SIGNATURE_EDX	0x4d4d566eu /* "nVMM" */
/* base + 1: EAX Xen's version, major in [31:16], minor in [15:0]. */
#define XEN_CPUID_VERSION_OFFSET 1
/* base + 2: EAX the hypercall pages, EBX the MSR that fills one (its GPA | index). */
#define XEN_CPUID_HYPERCALL_OFFSET 2
/* base + 3, the time leaf; subleaf 0: ECX the guest's TSC frequency in kHz. */
#define XEN_CPUID_TIME_OFFSET	3
/* base + 4, HVM features; subleaf 0, EAX: */
#define XEN_CPUID_HVM_OFFSET	4
#define  XEN_HVM_CPUID_VCPU_ID_PRESENT	(1u << 3) /* EBX: this vCPU's vcpu_id */
#define  XEN_HVM_CPUID_UPCALL_VECTOR	(1u << 6) /* HVMOP_set_evtchn_upcall_vector works */

/*
 * Hypercalls (public/xen.h), from an HVM or PVH guest in 64-bit mode: RAX
 * the number, RDI RSI RDX R10 R8 the arguments, RAX the result (0, or a
 * negative errno). hvm_hypercall() takes them from VMMCALL on AMD and
 * VMCALL on Intel with no hypercall page. A debug build of Xen overwrites
 * the argument registers the call used on its return, unless it was
 * preempted (clobber_regs()): callers treat them all as clobbered. Bit 31
 * of RAX set goes to viridian instead, where viridian is on (docs/xen.md).
 */
#define XEN_HC_MEMORY_OP	12
#define XEN_HC_EVENT_CHANNEL_OP	32
#define XEN_HC_HVM_OP		34

#define XEN_DOMID_SELF		0x7ff0u

/* memory_op: XENMEM_add_to_physmap, space shared_info (public/memory.h). */
#define XENMEM_ADD_TO_PHYSMAP	7
#define XENMAPSPACE_SHARED_INFO	0

/* hvm_op: HVMOP_set_param HVM_PARAM_CALLBACK_IRQ (public/hvm/params.h). */
#define XEN_HVMOP_SET_PARAM	0
#define XEN_HVMOP_SET_EVTCHN_UPCALL_VECTOR 23 /* a vCPU's own upcall vector, through its vlapic */
#define XEN_HVM_PARAM_CALLBACK_IRQ 0
#define  XEN_HVM_CALLBACK_TYPE_SHIFT	56
#define  XEN_HVM_CALLBACK_TYPE_VECTOR	2ull /* the upcall as a bare vector, on every vCPU */

/* event_channel_op commands (public/event_channel.h). */
#define EVTCHNOP_CLOSE		3
#define EVTCHNOP_SEND		4
#define EVTCHNOP_BIND_IPI	7
#define EVTCHNOP_UNMASK		9
/* clang-format on */

struct xen_add_to_physmap {
	uint16_t domid;
	uint16_t size; /* gmfn_range only */
	uint32_t space;
	uint64_t idx;
	uint64_t gpfn;
};
_Static_assert(sizeof(struct xen_add_to_physmap) == 24, "public/memory.h, 64-bit");

struct xen_hvm_param {
	uint16_t domid;
	uint16_t pad;
	uint32_t index;
	uint64_t value;
};
_Static_assert(sizeof(struct xen_hvm_param) == 16, "public/hvm/hvm_op.h");

struct xen_hvm_evtchn_upcall_vector {
	uint32_t vcpu;
	uint8_t vector;
};
_Static_assert(sizeof(struct xen_hvm_evtchn_upcall_vector) == 8, "public/hvm/hvm_op.h");

struct xen_evtchn_bind_ipi {
	uint32_t vcpu; /* IN */
	uint32_t port; /* OUT */
};

struct xen_evtchn_port {
	uint32_t port; /* evtchn_send, evtchn_unmask and evtchn_close alike */
};

/*
 * The 2-level event-channel ABI's shared_info page, 64-bit layout (Xen
 * latches it from the mode of the vCPU that sets HVM_PARAM_CALLBACK_IRQ:
 * hvm_latch_shinfo_size()). Only what the upcall reads: each vCPU's
 * vcpu_info (the first 32 vCPUs have theirs here), then one pending and
 * one mask bit per port, 64 words of 64.
 */
#define XEN_LEGACY_MAX_VCPUS 32
#define XEN_2L_WORDS	     64
#define XEN_2L_PORTS	     (XEN_2L_WORDS * 64)

struct xen_vcpu_info {
	uint8_t upcall_pending; /* Xen sets it with a word's bit in pending_sel */
	uint8_t upcall_mask;	/* PV only: HVM ignores it (hvm_set_callback_irq_level()) */
	uint8_t pad[6];
	uint64_t pending_sel; /* bit w: word w of evtchn_pending may hold a port for this vCPU */
	uint64_t arch[2];     /* cr2, pad */
	uint64_t time[4];     /* vcpu_time_info */
};
_Static_assert(sizeof(struct xen_vcpu_info) == 64, "public/xen.h struct vcpu_info");

struct xen_shared_info {
	struct xen_vcpu_info vcpu_info[XEN_LEGACY_MAX_VCPUS];
	uint64_t evtchn_pending[XEN_2L_WORDS];
	uint64_t evtchn_mask[XEN_2L_WORDS];
};
_Static_assert(sizeof(struct xen_shared_info) == 3072,
	       "public/xen.h struct shared_info, up to wc_version");

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Xen's CPUID leaves, as Xen's public header arch-x86/cpuid.h and its
 * cpuid_hypervisor_leaves() (xen/arch/x86/cpuid.c) define them. They sit at
 * the first free 0x100-aligned base from 0x40000000: at 0x40000100 when
 * viridian puts Hyper-V's leaves at 0x40000000. Constants only: the scan is
 * kernel/cpu.c's, beside KVM's (the same bases, lib/kvm_pvipi.h).
 */
#ifndef LIB_XEN_ABI_H
#define LIB_XEN_ABI_H

/* clang-format off */
/* Base: EAX the last Xen leaf, EBX:ECX:EDX "XenVMMXenVMM". */
#define  XEN_SIGNATURE_EBX	0x566e6558u /* "XenV" */
#define  XEN_SIGNATURE_ECX	0x65584d4du /* "MMXe" */
#define  XEN_SIGNATURE_EDX	0x4d4d566eu /* "nVMM" */
/* base + 1: EAX Xen's version, major in [31:16], minor in [15:0]. */
#define XEN_CPUID_VERSION_OFFSET 1
/* base + 3, the time leaf; subleaf 0: ECX the guest's TSC frequency in kHz. */
#define XEN_CPUID_TIME_OFFSET	3
/* clang-format on */

#endif

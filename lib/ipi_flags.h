/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Delivery semantics that change what a send costs, and their text form:
 * every result record carries them ("flags"), so two figures are compared
 * only when they were measured the same way.
 *
 * IPI_F_WAIT_* apply to xAPIC backends (at most one set; neither: never polls
 * the delivery-status bit), IPI_F_FENCE to x2APIC backends (clear: no fence
 * before the WRMSR, as Linux on AMD and Hygon). IPI_F_HYPERCALL replaces
 * both: no poll and no fence, as in Linux's Hyper-V and KVM PV send paths
 * (the call traps to the hypervisor).
 */
#ifndef LIB_IPI_FLAGS_H
#define LIB_IPI_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* clang-format off */
#define IPI_F_WAIT_BEFORE	(1u << 0) /* xAPIC: poll ICR delivery status idle before the write */
#define IPI_F_WAIT_AFTER	(1u << 1) /* xAPIC: poll until idle after the write */
#define IPI_F_FENCE		(1u << 2) /* x2APIC: MFENCE;LFENCE once per send call (SDM 11.12.3) */
#define IPI_F_LOGICAL		(1u << 3) /* destinations are logical IDs (LDR), not APIC IDs */
#define IPI_F_SET_ONE		(1u << 4) /* send_set: one ICR write for the whole set */
#define IPI_F_SET_CLUSTER	(1u << 5) /* send_set: one ICR write per run of a cluster */
#define IPI_F_SELF_MSR		(1u << 6) /* send_self: x2APIC SELF IPI MSR, not the shorthand */
#define IPI_F_HYPERCALL		(1u << 7) /* every send (self, shorthands too) is a hypercall */
#define IPI_F_NMI		(1u << 8) /* delivery mode NMI: no vector, no EOI, IF and TPR ignored */
#define IPI_F_UPCALL		(1u << 9) /* the hypervisor's event upcall, not the local APIC:
					   * no EOI, IF holds it, the TPR does not (xen/evtchn.c) */
/* clang-format on */

/*
 * Whether x2APIC ICR writes want MFENCE;LFENCE before them on a CPU of this
 * CPUID vendor (the 12 characters of leaf 0, EBX EDX ECX; need not be
 * NUL-terminated): Linux's X86_FEATURE_APIC_MSRS_FENCE, which it sets on
 * every CPU and clears on AMD and Hygon ("AMD CPUs don't need fencing after
 * x2APIC/TSC_DEADLINE MSR writes", arch/x86/kernel/cpu/amd.c), so true for
 * every vendor but "AuthenticAMD" and "HygonGenuine".
 */
bool ipi_x2apic_vendor_fences(const char *vendor);

/*
 * Writes the space-separated key=value words for flags into buf: dest=,
 * delivery=nmi for an NMI backend or delivery=upcall for an event-channel
 * one (Fixed says nothing, as before), then
 * fence= (x2apic: "fence=mfence+lfence fence-per=send", one fence per send
 * call however many ICR writes it makes, or "fence=none") or icr-wait=
 * (xAPIC), set=, self=, or for IPI_F_HYPERCALL
 * send=hypercall self=hypercall; then the backend's own words (may be NULL).
 * Like snprintf, buf is always NUL-terminated when size > 0. Returns the
 * length, or -E_NOSPC when it did not fit (buf then holds the cut text).
 */
int ipi_flags_text(uint32_t flags, bool x2apic, const char *words, char *buf, size_t size);

#endif

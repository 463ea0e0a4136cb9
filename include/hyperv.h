/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Hyper-V enlightenments as KVM offers them (docs/hyperv-abi.md sections 1
 * to 4; TLFS feature-discovery.md, hypercall-interface.md): probing by
 * CPUID, the guest OS ID and hypercall page, VP indices, one input page per
 * CPU, issuing a hypercall in its slow, fast or XMM-fast form with its
 * result checked. What is built on it implements the core's interfaces and
 * is reached only through them: the IPI backends (hv-icr, hv-ipi,
 * hv-ipi-slow, hv-ipi-ex, hv-ipi-ex-xmm) in include/ipi.h, the four
 * TLB-flush calls (hyperv/flush_calls.c, family hv-flush) in include/flush.h.
 * Only hyperv/ includes this header.
 *
 * Partition-wide state: the guest OS ID is one value for the whole VM, and
 * while it is non-zero KVM takes every vmcall/vmmcall as a Hyper-V
 * hypercall (KVM_HC_SEND_IPI included). hv_calls_on() and hv_calls_off()
 * run on the BSP while no other CPU can be inside a hypercall: from a
 * backend's activate hook (inside the switch barriers), or from the flush
 * family's begin and end hooks, which the suite and the flush benchmark
 * call while the other CPUs idle or spin without making calls.
 */
#ifndef INCLUDE_HYPERV_H
#define INCLUDE_HYPERV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/cpuset.h"
#include "lib/hv_encode.h"

/* What a user of the interface needs; hv_probe() names the first one missing. */
#define HV_NEED_HYPERCALL (1u << 0) /* CPUID 0x40000003 EAX[5]: GUEST_OS_ID, HYPERCALL MSRs */
#define HV_NEED_VP_INDEX  (1u << 1) /* EAX[6], hv-vpindex */
#define HV_NEED_IPI	  (1u << 2) /* 0x40000004 EAX[10], hv-ipi */
#define HV_NEED_FLUSH	  (1u << 3) /* 0x40000004 EAX[2], hv-tlbflush */
#define HV_NEED_EX	  (1u << 4) /* 0x40000004 EAX[11], hv-ipi or hv-tlbflush */
#define HV_NEED_XMM	  (1u << 5) /* 0x40000003 EDX[4], hv-xmm-input */
#define HV_NEED_APIC_MSRS (1u << 6) /* 0x40000003 EAX[4], hv-vapic */

/*
 * NULL when every need is met, else why not, naming the CPUID bit and the
 * QEMU -cpu flag that adds it (static text). Reads CPUID data only.
 */
const char *hv_probe(unsigned int needs);

/*
 * The VP index of every CPU, each read from HV_MSR_VP_INDEX on that CPU
 * (never assumed to equal the APIC ID). Read once, through the mailboxes,
 * on the first call, which must come from the BSP while the other CPUs idle
 * (the probes call it, and flush_probe_early() has the flush probes run
 * before the flush benchmark's targets start spinning). 0; -E_NODEV when a
 * CPU's read faulted, -E_TIMEDOUT when one did not answer (named on the
 * console); a failure is not retried.
 */
int hv_vp_read_all(void);
uint32_t hv_vp_index(unsigned int cpu); /* valid after hv_vp_read_all() */

/* NULL when every CPU's VP index is at most max_vp, else why not (for call). */
const char *hv_vp_check(uint32_t max_vp, const char *call);

/* On this CPU, in a backend's enable: 0 when its VP_INDEX MSR still reads the table's value. */
int hv_vp_verify(const char *backend);

/* Fills vps with the VP indices of the CPUs of set, in CPU order; returns how many. */
size_t hv_vps_of(const struct cpuset *set, uint32_t *vps);

/* Whether the guest OS ID is set and the hypercall page enabled (reads both MSRs). */
bool hv_calls_enabled(void);

/*
 * BSP, no other CPU in a hypercall: write the guest OS ID, enable the
 * hypercall page (4 KiB from mm_alloc, identity-mapped and executable) and
 * read the enable bit back, allocate every CPU's input page, pick vmcall or
 * vmmcall by vendor. Says so on the console, for `who`, when it changed
 * anything. 0; -E_NODEV (an MSR write faulted) or -E_PROTO (the enable bit
 * did not stick), printed.
 */
int hv_calls_on(const char *who);

/* The reverse (guest OS ID 0: KVM's own hypercalls reachable again); printed with `why`. */
int hv_calls_off(const char *why);

/*
 * This CPU's call buffer, in its own page so that a slow call's input
 * (8-byte aligned) never crosses a page; valid after hv_calls_on().
 */
struct hv_call *hv_call_buf(void);

/*
 * The stall watchdog's view of CPU cpu's latest call (struct ipi_ops'
 * describe_call, flush_hv's too): name, code, form, instruction, control
 * word and the first input words, read from that CPU's call buffer, which
 * the call's encoding filled before issuing it. 0 when it made none yet.
 */
int hv_describe_call(unsigned int cpu, char *buf, size_t size);

/*
 * Issue c in its encoded form and check the result: status SUCCESS and, for
 * a rep call, every rep completed (a rep call that returns early with
 * SUCCESS is reissued from where it stopped, TLFS 2.2). With
 * debug=corrupt-vpset, an Ex call's valid bank mask gets bit 63 set first,
 * which no longer matches its variable-header size. 0; -E_PROTO (a
 * non-success status) or -E_NOSPC (reps left without progress), with the
 * call, form and status described in why when why is not NULL.
 */
int hv_call_run(struct hv_call *c, char *why, size_t size);

/* hyperv/hypercall.asm. Slow: rdx = input GPA, r8 = output GPA; fast: the first 16 input bytes. */
uint64_t hv_hypercall(uint64_t control, uint64_t rdx, uint64_t r8);
/* XMM-fast: rdx = q[0], r8 = q[1], XMM0..XMM5 = q[2..13]; q 16-byte aligned. */
uint64_t hv_hypercall_xmm(uint64_t control, const uint64_t *q);
extern uint64_t hv_page_entry; /* the hypercall page, which every call jumps to */

#endif

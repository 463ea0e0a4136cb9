/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The IPI backend interface: one `static const struct ipi_ops` per backend.
 * Benchmarks and the correctness suite see only this table (through
 * this_cpu()->ops once ipi_switch() has installed it), never a mode flag.
 *
 * Destinations are dense CPU numbers; each backend maps them to what its
 * destination mode addresses (APIC ID, flat logical bit, x2APIC cluster
 * LDR) through a table filled by its per-CPU enable, so no send path scans
 * APIC IDs or reads a register back.
 *
 * Delivery is a property of the backend (IPI_F_NMI in its flags), which
 * the IPI core, the correctness suite and the benchmarks act on, never a
 * mode flag of their own:
 *  - Fixed (the default): vectors are edge-triggered and a handler must EOI
 *    through ops->eoi (ipi/irq.c does that for IPI_VEC_FIRST ..
 *    IPI_VEC_FIRST + IPI_VEC_COUNT - 1).
 *  - NMI (IPI_F_NMI): an NMI carries no vector. Every send function takes
 *    the vector argument all the same and ignores it; the IPI core's NMI
 *    dispatch (ipi_nmi(), which kernel/trap.c hands every NMI it does not
 *    own itself: the stop and the watchdog NMIs stay its own) runs the
 *    handler installed for IPI_NMI_VEC as if that vector had come, so the
 *    counting handler counts it there and a benchmark may chain its own
 *    handler in front of it as for a Fixed vector (include/bench.h). Its
 *    eoi is a no-op: an NMI sets no ISR bit and takes no EOI (SDM vol. 3A
 *    11.8.4); NMIs stay blocked until the handler's IRET. The self
 *    shorthand and the x2APIC SELF IPI register are Fixed-only (SDM "Valid
 *    Combinations for the ICR"): send_self targets the CPU's own APIC ID,
 *    send_all is all-excluding-self plus that. send_self_icr and
 *    send_self_icr2 stay NULL.
 *  - Upcall (IPI_F_UPCALL: Xen's event channels, xen/evtchn.c): the
 *    hypervisor raises one vector of its own, and the backend's upcall runs
 *    the handler of each IPI vector that came, as if it had come itself.
 *    Its eoi is a no-op: in callback mode Xen injects the vector past the
 *    local APIC (no ISR bit; IF holds it, the TPR does not); in vcpu mode
 *    the vlapic sets it in IRR, then ISR, as any Fixed vector (the TPR
 *    holds it too), and the upcall itself writes the EOI first.
 *    ops->pending says what waits.
 *
 * Paravirtual backends (hyperv/, kvm/, xen/) implement the same table. Their send
 * paths make hypercalls whose status the void send functions cannot return:
 * a failed call is noted with ipi_note_failure() and the suite collects it
 * with ipi_take_failures().
 */
#ifndef INCLUDE_IPI_H
#define INCLUDE_IPI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "include/compiler.h"
#include "include/lapic.h"
#include "lib/cpuset.h"
#include "lib/ipi_flags.h"

/* The IPI_F_* delivery flags: lib/ipi_flags.h. */


struct ipi_ops {
	const char *name;
	enum lapic_mode mode; /* APIC mode the switch puts every CPU in */
	uint32_t flags;	      /* IPI_F_* */
	/* More key=value words for the records (the hypercall and its form); may be NULL. */
	const char *words;
	/* NULL when usable here, else why not (static text). No side effects. */
	const char *(*probe)(void);
	/*
	 * NULL, or the table ipi_switch() installs in this one's place, chosen
	 * once on the BSP before any CPU moves, from what CPUID says: the same
	 * backend (name, mode, enable) with other send paths and the flags
	 * that say so (x2APIC: the unfenced sends on AMD and Hygon, as Linux).
	 * A choice made here costs the send paths no branch.
	 */
	const struct ipi_ops *(*choose)(void);
	/*
	 * NULL, or partition-wide set-up run by ipi_switch() on the BSP only,
	 * while every other CPU waits at a switch barrier with interrupts off
	 * (so none is in the middle of a hypercall): the Hyper-V guest OS ID,
	 * which decides where KVM routes every vmcall. 0, or a negative code
	 * after printing what went wrong.
	 */
	int (*activate)(void);
	/* On every CPU, IF=0, after the switch moved the APIC to `mode` and
	 * restored SVR/TPR/LVTs: logical set-up and the destination table.
	 * 0, or a negative code after printing what the hardware got wrong. */
	int (*enable)(void);
	/*
	 * NULL, or on every CPU, IF=0, when the switch leaves this backend
	 * (before the APIC moves and the next backend's enable): undoes what
	 * enable set up that would outlive it in the hypervisor and change what
	 * the next backend measures (KVM's PV EOI).
	 */
	void (*disable)(void);
	void (*send)(unsigned int cpu, uint8_t vector);
	/* NULL: the caller loops over send() (ipi_send_set does). */
	void (*send_set)(const struct cpuset *set, uint8_t vector);
	/* Where send_set's writes depend on the set's layout: how many it makes; else NULL. */
	unsigned int (*set_writes)(const struct cpuset *set);
	void (*send_self)(uint8_t vector);
	/* Where send_self uses the x2APIC SELF IPI register: the same through
	 * the ICR's self shorthand, so both can be measured; else NULL. */
	void (*send_self_icr)(uint8_t vector);
	/*
	 * xAPIC: the self shorthand as kvm-unit-tests' apic_icr_write() sends
	 * it, the delivery-status poll, an ICR2 write (the destination field,
	 * which a shorthand ignores) and the ICR write, so that the kvm-unit-tests
	 * view has vmexit.c's self_ipi_* figure; else NULL.
	 */
	void (*send_self_icr2)(uint8_t vector);
	void (*send_allbutself)(uint8_t vector);
	void (*send_all)(uint8_t vector); /* all including self */
	void (*eoi)(void);
	/*
	 * NULL, or (IPI_F_UPCALL) whether vector waits undelivered on this CPU,
	 * where the local APIC's IRR does not hold it (the suite's hold checks).
	 */
	bool (*pending)(uint8_t vector);
	/*
	 * NULL, or (hypercall backends) the stall watchdog's description of
	 * CPU cpu's latest call, read on another CPU from the input buffers
	 * that CPU's send filled before issuing it: the call, its code and its
	 * input words (include/watchdog.h, watch_describe_fn). Nothing is added
	 * to the send path for it.
	 */
	int (*describe_call)(unsigned int cpu, char *buf, size_t size);
};

/*
 * The backend registry: each backend's file registers its table with
 * IPI_BACKEND_REGISTER(ops, order), as a benchmark registers itself
 * (BENCH_REGISTER): adding a backend is one file, and a backend cannot be
 * half-listed. The order key, not link order, decides where it stands in
 * the backends= list, help=1 and the plan: xAPIC-mode backends 100-199,
 * x2APIC-mode ones 200-299, Hyper-V hypercall backends 300-399, KVM PV
 * hypercall backends 400-499, Xen event channels 500-599, each Fixed
 * backend's NMI twin its key + 5.
 * The send path decides the range: x2apic-pv-eoi (kvm/) sends through
 * x2APIC MSRs and stands at 220. The plan still puts
 * every xAPIC-mode backend first whatever its key (kernel/plan.c).
 */
/* The vector an NMI counts as (the benchmarks' BENCH_VEC). */
#define IPI_NMI_VEC IPI_VEC_FIRST

static inline bool ipi_is_nmi(const struct ipi_ops *ops)
{
	return ops && (ops->flags & IPI_F_NMI);
}

/*
 * kernel/trap.c, for an NMI that is neither a stop nor the watchdog's:
 * counts it in this CPU's irq.nmis, then, with an NMI backend in force on
 * this CPU, runs IPI_NMI_VEC's handler with the TSC of entry; without one
 * (a stray NMI, or a late one after a switch away from an NMI backend) it
 * counts it as an unexpected interrupt of vector 2, with no EOI, for the
 * suite's checks to report. The handler runs in NMI context: NMIs blocked
 * until its IRET, on the NMI's IST stack (include/bench.h says what a
 * handler chained there must not do).
 */
void ipi_nmi(uint64_t entry_tsc);

struct ipi_backend {
	unsigned int order;
	const struct ipi_ops *ops;
};

#define IPI_BACKEND_MAX 32	/* options.backends has a bit per registered backend */

#define IPI_BACKEND_REGISTER(o, key)                                                               	static const struct ipi_backend ipi_backend_##o = { (key), &(o) };                         	static const struct ipi_backend *const ipi_backend_ptr_##o                                 	    __section(".ipi_backends") __used = &ipi_backend_##o

/* The registered backends by order key; bit i of options.backends is list[i]. */
unsigned int ipi_backend_list(const struct ipi_ops *const **list);
/* The registered backend of that name, or NULL. */
const struct ipi_ops *ipi_backend_named(const char *name);
/* Whether options.backends chose it. */
bool ipi_backend_chosen(const struct ipi_ops *ops);
/*
 * A backend derived from another, for its choose hook: fills out with the
 * registered backend base_name's table as that backend's own choose picks
 * it (the vendor's fences), with own's name, words and probe and every
 * other hook own sets put over the base's; out's choose is NULL. Returns
 * the chosen base, for hooks of own that chain to it (kvm/pv_eoi.c).
 */
const struct ipi_ops *ipi_derive(struct ipi_ops *out, const char *base_name,
				 const struct ipi_ops *own);

/* Sends that found the xAPIC ICR still busy after a bounded wait (should stay 0). */
extern uint64_t ipi_icr_stuck;

/*
 * A send path (any CPU, any context) whose hypercall failed: counts it,
 * reports STATUS_FAILURE, and keeps and prints the first description since
 * the last ipi_take_failures() ("hv-ipi-ex: HvCallSendSyntheticClusterIpiEx
 * (slow) returned INVALID_HYPERCALL_INPUT (status 0x3)").
 */
void ipi_note_failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Failures noted since the last call (0: none), the first described in buf; clears them. */
unsigned int ipi_take_failures(char *buf, size_t size);

/*
 * The flags of ops as "key=value" words for records, e.g. "dest=physical
 * icr-wait=before set=loop self=shorthand" (xAPIC) or "dest=logical
 * fence=mfence+lfence fence-per=send set=write-per-cluster self=self-ipi-msr
 * self-fence=none" (x2APIC; "fence=none" on AMD and Hygon).
 * Hypercall backends: "dest=physical send=hypercall self=hypercall" and
 * their words ("call=send-ipi-ex form=xmm-fast ..."). Returns the length,
 * or -E_NOSPC (truncated, NUL-terminated).
 */
int ipi_flags_format(const struct ipi_ops *ops, char *buf, size_t size);

const char *ipi_mode_name(enum lapic_mode mode);

/*
 * Moves every CPU to ops together (barriers, interrupts off) and installs
 * it (or the table its choose hook picks) as this_cpu()->ops everywhere;
 * prints the mode every CPU is in and the installed table's flags. Runs
 * ops->activate on the BSP between the first two barriers, and first
 * prints how many sends over the previous backend failed, if any did.
 * Call on the BSP with ops->probe() == NULL. 0; -E_TIMEDOUT (a CPU missed
 * a barrier: named on the console, the environment is broken) or -E_PROTO
 * (a CPU ended in the wrong mode or its enable failed). The caller turns
 * these into ERROR / FAILURE.
 */
int ipi_switch(const struct ipi_ops *ops);

/* The switch's bound follows the benchmarks' deadline where that is over 2 s. */
void ipi_switch_bound(uint64_t deadline_us);

/* The backend in force on this CPU (ipi_switch gives every CPU the same); NULL before it ran. */
const struct ipi_ops *ipi_current(void);

/* Counting handlers for the IPI vectors; installed by the first ipi_switch(). */
void ipi_irq_install(void);

/*
 * Where the counting handler of vector puts its count against its EOI:
 * IPI_ACK_BEFORE_EOI (the default: count, then EOI) or IPI_ACK_AFTER_EOI
 * (EOI, then count, as Linux's call-function handler does). A benchmark
 * sets it around its sampling, on the BSP with the targets quiet, and puts
 * the default back. The after-EOI handler has no fault injection (debug
 * swallow-ipi and double-ipi act on the default one).
 */
enum ipi_ack { IPI_ACK_BEFORE_EOI, IPI_ACK_AFTER_EOI };
void ipi_irq_ack_order(unsigned int vector, enum ipi_ack ack);

/*
 * The count alone, without the EOI, for a handler that wrote its EOI
 * itself first (the native shootdown's after-EOI pass, ipi/flush_native.c):
 * the entry TSC, then the count released. No fault injection.
 */
void ipi_irq_count_only(unsigned int vector, uint64_t tsc);

/*
 * debug=slow-eoi on a round trip (single, single-halt): while a benchmark
 * has armed it, the count-first handler holds its EOI until the sender has
 * closed the region the count ended (ipi_irq_region_closed(), right after
 * the closing TSC read and its region-end marker), not for a fixed 2 ms.
 * So a host trace sees the EOI exit after the region's end by causality,
 * however late a loaded host runs the sender's vCPU. Arm and disarm on the
 * BSP around a sampling, with the targets quiet.
 */
extern bool ipi_irq_closes_armed;
extern uint32_t ipi_irq_closes;
/* bound_us: the longest a handler holds its EOI for a close (the deadline). */
void ipi_irq_await_close(bool on, uint64_t bound_us);

static inline __attribute__((always_inline)) void ipi_irq_region_closed(void)
{
	/* After the region-end OUT, which has no memory clobber of its own. */
	barrier();
	if (__builtin_expect(READ_ONCE(ipi_irq_closes_armed), 0))
		store_release(&ipi_irq_closes, READ_ONCE(ipi_irq_closes) + 1);
}

static inline void ipi_send_set(const struct ipi_ops *ops, const struct cpuset *set, uint8_t vector)
{
	if (ops->send_set) {
		ops->send_set(set, vector);
		return;
	}
	cpuset_for_each(member, set) ops->send((unsigned int)member, vector);
}

#endif

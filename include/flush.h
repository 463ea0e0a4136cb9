/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The remote TLB-flush interface, shaped like the IPI backends (ipi.h): one
 * `static const struct flush_ops` per way of making other CPUs drop their
 * translations of a range of pages, listed once in flush_impls[]
 * (ipi/flush_registry.c). The flush benchmark and the correctness suite walk that
 * list and never call a hypervisor themselves.
 *
 * Implementations come in families that share an interface (struct
 * flush_family): its probe, its partition-wide set-up and the suite's
 * checks. Two families today:
 *
 *   native    ipi/flush_native.c: the shootdown Linux does without help
 *             (arch/x86/mm/tlb.c), an IPI over the backend in force
 *             (this_cpu()->ops) to every target, whose handler flushes and
 *             then acknowledges by counting on its own cache line; the
 *             sender waits for every count (poll.h). native-invlpg: one
 *             INVLPG per page; native-cr3: a CR3 reload. Its figures depend
 *             on the IPI backend: per_backend.
 *   hv-flush  hyperv/flush_calls.c: HvCallFlushVirtualAddressSpace, ...List and
 *             their Ex forms, each slow and XMM-fast, eight tables.
 *
 * Another hypervisor's flush hypercall is one more file with its family and
 * tables, and its place in flush_impls[].
 *
 * All of it runs on the CPU that flushes (the BSP), with the targets either
 * idle in their mailboxes (the suite) or spinning with interrupts on (the
 * benchmark). Nothing here prints from inside flush().
 */
#ifndef INCLUDE_FLUSH_H
#define INCLUDE_FLUSH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "include/ipi.h"
#include "lib/cpuset.h"

/*
 * The vector of the native shootdown: the benchmarks' vector (bench.h's
 * BENCH_VEC), counted by ipi/irq.c's handler in the first irq_stats line,
 * beside entry_tsc and back. No other benchmark sends while a flush runs.
 */
#define FLUSH_VEC IPI_VEC_FIRST

/* flush_ops.flags */
#define FLUSH_F_WHOLE (1u << 0) /* flushes the whole address space, whatever range it is given */
#define FLUSH_F_ASIDE (1u << 1) /* reported beside the native INVLPG path, left out of the crossover */

/* prepare()'s flags */
#define FLUSH_EACH_PAGE (1u << 0) /* name each page on its own (a hypercall: one rep each) */

/* prepare() returns it when the request fits only the family's slower form (ops->fallback). */
#define FLUSH_FELL_BACK 1

/* What the implementations of one interface share. */
struct flush_family {
	/* "native", "hv-flush": the records' variant when the whole family SKIPs. */
	const char *name;
	/* What begin() switches on, for messages ("the hypercall interface"); NULL: nothing. */
	const char *what;
	/*
	 * true: sends over the IPI backend in force, so measured on every
	 * backend; false: measured once per boot, backend "none".
	 */
	bool per_backend;
	/*
	 * The suite checks the family's implementations when one of these IPI
	 * backends (names, NULL-terminated) is chosen: the Hyper-V calls with
	 * the Hyper-V hypercall backends. NULL: never (the native shootdown's
	 * IPIs are what the delivery checks are about).
	 */
	const char *const *checked_with;
	/* NULL when the family's interface is here, else why not (static text). */
	const char *(*probe)(void);
	/*
	 * NULL, or partition-wide set-up on the BSP while no other CPU can be
	 * in a flush or a hypercall: the vector's handler (native), the Hyper-V
	 * guest OS ID and hypercall page (only if they are off: `who` names the
	 * user on the console). 0, or a negative code after printing why.
	 */
	int (*begin)(const char *who);
	/* NULL, or undoes begin, leaving the partition as begin found it; `why` for the console. */
	void (*end)(const char *why);
};

struct flush_ops {
	/* The records' variant stem: "native-invlpg", "list-ex-xmm". */
	const char *name;
	/* The suite's TAP label ("hv-flush", "hv-flush-xmm"): checks run label by label. */
	const char *label;
	/* The suite's words: the call ("HvCallFlushVirtualAddressList"), its form ("XMM-fast"). */
	const char *what, *form;
	/*
	 * NULL, or the form prepare() falls back to when the request does not
	 * fit this one (FLUSH_FELL_BACK): "slow" (variant
	 * "list-ex-xmm-as-slow-33p", suite "(slow)").
	 */
	const char *fallback;
	/* Words for the records, after the backend's flags: "input=encoded-in-region". */
	const char *words;
	uint32_t flags; /* FLUSH_F_* */
	const struct flush_family *family;
	/*
	 * NULL when usable here, else why not (static text; may name the
	 * -cpu flag that adds it). No side effects, except that it may read a
	 * fact from every CPU through the mailboxes the first time (Hyper-V
	 * VP indices): see flush_probe_early().
	 */
	const char *(*probe)(void);
	/*
	 * Outside any timed region, after family->begin: the request that the
	 * following flush() calls carry out, `pages` pages from va on the CPUs
	 * of targets, in the address space this CPU runs in; flags:
	 * FLUSH_EACH_PAGE. Builds and checks it once. targets and why (size
	 * bytes, which receives the reason when this or a later flush() fails)
	 * are kept by pointer: unchanged and alive until the last flush. 0,
	 * FLUSH_FELL_BACK, or -E_INVAL when the request cannot be formed.
	 */
	int (*prepare)(const struct cpuset *targets, uint64_t va, unsigned int pages,
		       unsigned int flags, char *why, size_t size);
	/*
	 * NULL, or before each flush, outside the timed region: what flush()
	 * will wait for (each target's acknowledgement count), and until when
	 * (a TSC deadline).
	 */
	void (*arm)(uint64_t deadline);
	/*
	 * The prepared flush itself, all that a timed region holds besides the
	 * indirect call (no arguments to set up): it returns once every target
	 * has flushed (native) or the hypervisor has taken the request (a
	 * hypercall returned; the per-call work Linux does, VP indices and
	 * input, is redone inside). 0; -E_INVAL when the request could not be
	 * formed (an ERROR: ours), any other negative code when the system
	 * under test failed it (a FAILURE: a call's status, a target that did
	 * not acknowledge by the deadline), the reason in prepare's why. A
	 * hypercall that never returns is for another CPU's watchdog: the
	 * deadline bounds the waits only.
	 */
	int (*flush)(void);
};

/* Every implementation, family by family, in the order the records list them. */
extern const struct flush_ops *const flush_impls[];
extern const unsigned int flush_impl_count;

/* ipi/flush_native.c, hyperv/flush_calls.c */
extern const struct flush_family flush_native;
extern const struct flush_ops flush_native_invlpg, flush_native_invlpg_after_eoi, flush_native_cr3;
extern const struct flush_family flush_hv;
extern const struct flush_ops flush_hv_space_slow, flush_hv_space_xmm, flush_hv_list_slow,
    flush_hv_list_xmm, flush_hv_space_ex_slow, flush_hv_space_ex_xmm, flush_hv_list_ex_slow,
    flush_hv_list_ex_xmm;

/*
 * Calls every family's probe and, where it passes, every implementation's,
 * once: on the BSP while the other CPUs idle in their mailboxes, before a
 * caller sets them to other work. What the probes read from every CPU then
 * stays at hand, and later probes give the same answers without the CPUs.
 */
void flush_probe_early(void);

#endif

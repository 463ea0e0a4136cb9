/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel command line, parsed once on the BSP. Each unit with keys
 * contributes them as an option group (OPTION_GROUP: its specs and the
 * function that takes their values): the kernel's own keys fill struct
 * options (kernel/options.c), the IPI core's `backends` (ipi/core.c), the
 * benchmarks' keys their parameters (harness/params.c). kernel/options.c
 * parses the line against every group at once and knows none of them, so
 * the command-line layer imports no benchmark and no backend. `help=1`
 * prints every key, groups in their `order`.
 */
#ifndef INCLUDE_OPTIONS_H
#define INCLUDE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include "include/compiler.h"
#include "lib/cmdline.h"

enum plan { PLAN_DEFAULT, PLAN_BOOT, PLAN_CHECK, PLAN_BENCH };

/*
 * Fault injection, each a bit of options.debug: tests plant a fault to prove
 * a check fails. Each comment says what the key does, then, after "->", how
 * the run ends; docs/guest-keys.md renders them (tools/doc_reference.py), so
 * they stay one phrase each. debug_cpu= names the CPU (default the last).
 */
enum debug_key {
	DEBUG_FAULT_BSP,	/* #UD on the BSP after bring-up -> CRASH, CPU 0's register dump */
	DEBUG_FAULT_AP,		/* #UD on debug_cpu, run through its mailbox -> CRASH naming that
				   CPU and APIC ID */
	DEBUG_SKIP_SIPI,	/* never send START-UP to debug_cpu -> the AP is reported and left
				   out, ERROR */
	DEBUG_SWALLOW_IPI,	/* debug_cpu does not count its first test IPI -> FAILURE naming
				   that CPU ("lost it") */
	DEBUG_DOUBLE_IPI,	/* debug_cpu counts its first test IPI twice -> FAILURE naming that
				   CPU ("duplicate") */
	DEBUG_CORRUPT_VPSET,	/* Hyper-V Ex calls: a reserved bit (63) of the valid bank mask set
				   -> FAILURE naming the call and HV_STATUS_INVALID_HYPERCALL_INPUT
				   (KVM lane), or saying the hypervisor accepted it (Xen) */
	DEBUG_FAULT_AP_BENCH,	/* #UD on debug_cpu as it starts spinning as a benchmark target ->
				   CRASH naming the CPU and "during benchmark ..." */
	DEBUG_EXPIRE_DEADLINE,	/* `single`'s first run: deadline 1 ms, its target keeps IF=0 for
				   20 ms -> FAILURE naming CPU and benchmark; the plan goes on */
	DEBUG_TRIPLE_FAULT,	/* the BSP loads an empty IDT and raises #UD -> a triple fault: the
				   VM resets, no status (QEMU exits 0 under -no-reboot; run.sh 8) */
	DEBUG_EXTRA_EXIT,	/* every unicast send of the backend in force first reads the APIC
				   ID (a wrapped copy of its table, no branch on the send path) ->
				   the same results under TCG; under KVM without APIC
				   virtualization one exit more a send, which the lane's exits pass
				   must catch */
	DEBUG_NO_ACPI,		/* ignore ACPI: CPUs from the Intel MP table, no PM timer -> the
				   same run, CPUs listed by "mptable:" */
	DEBUG_STALL,		/* debug_cpu (the BSP allowed) becomes the sender, overriding
				   sender=, and spins with IF=0 once its first sampling on a backend
				   measures -> ERROR: a "watchdog:" report on it (run.sh 3); not
				   armed with one CPU (ERROR) */
	DEBUG_LATE_WAKE,	/* debug_cpu, once halted, keeps IF=0 for 4 x late_wake before it
				   halts again, in the wake check and in single-halt's first
				   measured pass -> FAILURE: the wake check's "woke late on wake 3"
				   (not "lost"); single-halt `none` counts late-wakes=1 */
	DEBUG_SLOW_EOI,		/* the counting handlers wait 2 ms before their EOI (after the count,
				   before it in ack-after-eoi); in single and single-halt the
				   count-first handler holds its EOI until the sender has closed the
				   region -> SUCCESS; only ack-after-eoi's regions hold the 2 ms, and
				   in the lane the EOI exit */
	DEBUG_NMI_AS_FIXED,	/* an NMI backend sends its Fixed twin's IPIs on IPI_NMI_VEC instead
				   (a copy of its table, installed by the switch) -> FAILURE: every
				   NMI check of that backend */
	DEBUG_WITHHOLD_ONE_WAY,	/* every one-way figure withheld as if the TSCs were skewed -> SKIPs
				   whose reason starts "one-way not reported: "; with --exits they
				   keep their sampling's exits (the lane's gate test) */
	DEBUG_NESTED_NMI,	/* debug_cpu's first NMI-backend NMI sends itself another and IRETs
				   to its own next instruction, unblocking NMIs, as a hypervisor that
				   ignored NMI blocking would -> FAILURE: "nested NMI on CPU N", the
				   run ends there; nothing without an NMI backend */
	DEBUG_NO_HALT_MARK,	/* debug_cpu, single-halt's target in its first measured pass, halts
				   once without publishing its entry into HLT, so the sender's wait
				   for it runs out once -> SUCCESS; single-halt `none` counts
				   rehalt_timeouts 1, the other passes 0 */
	DEBUG_STALE_TLB,	/* the native shootdown's handlers count and EOI without flushing ->
				   FAILURE of each native flush check: "still reached page 0's old
				   frame after the flush" (under TCG) */
	DEBUG_COUNT
};

/*
 * Checks a run leaves out (skip=), each a bit of options.skip: for a platform
 * known to fail them for a reason outside the hypervisor under test, named
 * where the key is given (the Xen lane: docs/xen.md).
 */
enum skip_key {
	SKIP_TPR_HOLD,		/* the TPR holds (suite/delivery.c), SKIPped instead of run */
	SKIP_SELF_TPR,		/* the self benchmark's TPR shapes (bench/self.c), which
				   write CR8 with the self IPI pending */
	SKIP_NONE,		/* nothing: a skip= of the command line's own that replaces
				   a preset's (the Xen presets skip tpr-hold, docs/xen.md) */
	SKIP_COUNT
};

/* The guest OS ID the Hyper-V backends write (hv_os_id=, lib/hv_abi.h). */
enum hv_os_id { HV_OS_ID_OPEN_SOURCE, HV_OS_ID_WINDOWS };

/* Where the console goes (console=, kernel/console.c). */
enum console_kind { CONSOLE_SERIAL, CONSOLE_VIRTIO };

#define INIT_DELAY_AUTO UINT32_MAX
#define DEBUG_CPU_LAST UINT32_MAX	/* debug_cpu not given: the last CPU */

struct options {
	enum plan plan;
	uint32_t ap_timeout_ms;
	uint32_t init_delay_us;
	uint32_t watch_floor_ms;	/* the least stall bound (kernel/watchdog.c) */
	uint64_t backends;	/* bit per enum ipi_backend_id (include/ipi.h) */
	uint64_t debug;		/* bit per enum debug_key */
	uint32_t debug_cpu;	/* victim of fault injection; DEBUG_CPU_LAST when not given */
	uint64_t skip;		/* bit per enum skip_key */
	enum hv_os_id hv_os_id;
	enum console_kind console;
	bool lava;		/* lava=1: the LAVA monitor lines (include/lava.h) */
	bool help;
};

extern struct options options;

/* One unit's keys. */
struct option_group {
	unsigned int order;		/* place of its keys in help=1, ascending */
	const struct opt_spec *specs;
	unsigned int n;
	void (*prepare)(void);		/* before parsing (fill choice lists); may be NULL */
	void (*apply)(const struct opt_value *v); /* after parsing: v[i] belongs to specs[i] */
};

#define OPTION_GROUP(g)                                                                            \
	static const struct option_group *const option_group_ptr_##g __section(".option_groups")  \
	    __used = &(g)

#define OPTIONS_MAX 32	/* keys of all groups together */

/* 0, or -E_INVAL after printing the one-line reason. */
int options_parse(const char *line);
void options_print_help(void);

static inline bool debug_on(enum debug_key k)
{
	return options.debug & (1ull << k);
}

static inline bool skip_on(enum skip_key k)
{
	return options.skip & (1ull << k);
}

/* The CPU fault injection targets: debug_cpu= (0, the BSP, included), else the last of n. */
static inline unsigned int debug_cpu_pick(unsigned int n)
{
	return options.debug_cpu == DEBUG_CPU_LAST ? n - 1 : options.debug_cpu;
}

#endif

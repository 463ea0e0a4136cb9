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

/* Fault injection (documented in docs/command-line.md), each a bit of options.debug. */
enum debug_key {
	DEBUG_FAULT_BSP,	/* #UD on the BSP after bring-up */
	DEBUG_FAULT_AP,		/* #UD on debug_cpu, run through its mailbox */
	DEBUG_SKIP_SIPI,	/* never send START-UP to debug_cpu */
	DEBUG_SWALLOW_IPI,	/* debug_cpu does not count its first test IPI */
	DEBUG_DOUBLE_IPI,	/* debug_cpu counts its first test IPI twice */
	DEBUG_CORRUPT_VPSET,	/* Hyper-V Ex calls: bit 63 of the valid bank mask set */
	DEBUG_FAULT_AP_BENCH,	/* #UD on debug_cpu as it starts spinning as a benchmark target */
	DEBUG_EXPIRE_DEADLINE,	/* `single`'s first run: deadline 1 ms, target late by 20 ms */
	DEBUG_TRIPLE_FAULT,	/* the BSP loads an empty IDT and raises #UD: a reset */
	DEBUG_EXTRA_EXIT,	/* every unicast send first reads the APIC ID: one exit more */
	DEBUG_NO_ACPI,		/* ignore ACPI: CPUs from the MP table, no PM timer */
	DEBUG_STALL,		/* debug_cpu, as sender, spins with IF=0 in its first sampling */
	DEBUG_LATE_WAKE,	/* debug_cpu, halted, answers one wake 4 x late_wake late */
	DEBUG_SLOW_EOI,		/* the counting handlers wait 2 ms before their EOI */
	DEBUG_NMI_AS_FIXED,	/* an NMI backend sends Fixed IPIs on IPI_NMI_VEC instead */
	DEBUG_WITHHOLD_ONE_WAY,	/* every one-way figure withheld as if the TSCs were skewed */
	DEBUG_NESTED_NMI,	/* debug_cpu's first NMI-backend NMI lets a second one in */
	DEBUG_NO_HALT_MARK,	/* debug_cpu, single-halt's target, once halts without saying so */
	DEBUG_STALE_TLB,	/* the native shootdown's handlers acknowledge without flushing */
	DEBUG_COUNT
};

/*
 * Checks a run leaves out (skip=), each a bit of options.skip: for a platform
 * known to fail them for a reason outside the hypervisor under test, named
 * where the key is given (the Xen lane: docs/xen.md).
 */
enum skip_key {
	SKIP_TPR_HOLD,		/* the TPR holds (suite/delivery.c), SKIPped instead of run */
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

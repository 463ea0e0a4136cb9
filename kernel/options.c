// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command-line keys. lib/cmdline does the parsing and the error
 * messages; this file only states what is accepted and where it goes.
 */
#include "include/bench.h"
#include "include/compiler.h"
#include "include/console.h"
#include "include/ipi.h"
#include "include/options.h"
#include "lib/cmdline.h"
#include "lib/error.h"

struct options options = {
	.plan = PLAN_DEFAULT,
	.ap_timeout_ms = 2000,
	.init_delay_us = INIT_DELAY_AUTO,
	.backends = (1ull << IPI_BACKEND_COUNT) - 1,
};

static const char *const plan_names[] = { "default", "boot", "check", "bench", NULL };
static const char *const debug_names[] = { "fault-bsp", "fault-ap", "skip-sipi", "swallow-ipi",
					    "double-ipi", "corrupt-vpset", "fault-ap-bench",
					    "expire-deadline", "triple-fault", NULL };
_Static_assert(ARRAY_SIZE(debug_names) == DEBUG_COUNT + 1, "one name per debug key");
/* Order = enum ipi_backend_id; ipi/core.c's table gives the same names. */
static const char *const backend_names[] = { "xapic", "xapic-logical", "x2apic",
					     "x2apic-cluster", "hv-icr", "hv-ipi", "hv-ipi-slow",
					     "hv-ipi-ex", "hv-ipi-ex-xmm", "kvm-pv-ipi", NULL };
_Static_assert(ARRAY_SIZE(backend_names) == IPI_BACKEND_COUNT + 1, "one name per backend");

/* bench= offers the registry's names, filled in name order at parse time. */
static const char *bench_names[65];

enum {
	K_PLAN,
	K_BACKENDS,
	K_BENCH,
	K_ITERS,
	K_WARMUP,
	K_BUDGET,
	K_SENDER,
	K_TARGET,
	K_MATRIX,
	K_HALT_GAP,
	K_NOROV_ITERS,
	K_DEADLINE,
	K_AP_TIMEOUT,
	K_INIT_DELAY,
	K_DEBUG,
	K_DEBUG_CPU,
	K_HELP,
	K_COUNT
};

static const struct opt_spec specs[K_COUNT] = {
	[K_PLAN] = { "plan", OPT_ENUM, 0, 0, plan_names,
		     "what to run: boot only, the correctness suite, benchmarks, or both" },
	[K_BACKENDS] = { "backends", OPT_LIST, 0, 0, backend_names,
			 "IPI backends to check and measure (default: all)" },
	[K_BENCH] = { "bench", OPT_LIST, 0, 0, bench_names, "benchmarks to run (default: all)" },
	[K_ITERS] = { "iters", OPT_UINT, 1, 10000000, NULL,
		      "most measured iterations per result (the budget calibrates below it)" },
	[K_WARMUP] = { "warmup", OPT_UINT, 0, 1000000, NULL, "iterations run before measuring" },
	[K_BUDGET] = { "budget", OPT_UINT, 1, 60000, NULL,
		       "ms of measuring per result that calibrates the iteration count" },
	[K_SENDER] = { "sender", OPT_UINT, 0, 1023, NULL,
		       "the CPU every benchmark sends from (default: 0, the BSP)" },
	[K_TARGET] = { "target", OPT_UINT, 0, 1023, NULL,
		       "target CPU of point-to-point benchmarks (default: the last)" },
	[K_MATRIX] = { "matrix", OPT_BOOL, 0, 0, NULL,
		       "single: every sender/target pair (up to 8 CPUs)" },
	[K_HALT_GAP] = { "halt_gap", OPT_UINT, 0, 1000000, NULL,
			 "us single-halt waits before each send so the target is back in HLT" },
	[K_NOROV_ITERS] = { "norov_iters", OPT_UINT, 1, 10000000, NULL,
			    "fixed loop of the ipi_benchmark view (Norov used 100000)" },
	[K_DEADLINE] = { "deadline", OPT_UINT, 1, 600000, NULL,
			 "ms after which an IPI not yet handled counts as lost (default 1000; 10000 under TCG)" },
	[K_AP_TIMEOUT] = { "ap_timeout", OPT_UINT, 1, 60000, NULL,
			   "ms an AP may take to come up before it is left out" },
	[K_INIT_DELAY] = { "init_delay", OPT_UINT, 0, 100000, NULL,
			   "us between INIT and START-UP (default: 10000, the SDM's 10 ms, on bare metal; 0 under a hypervisor, as Linux does)" },
	[K_DEBUG] = { "debug", OPT_LIST, 0, 0, debug_names, "fault injection (tests only)" },
	[K_DEBUG_CPU] = { "debug_cpu", OPT_UINT, 1, 1023, NULL,
			  "CPU number that fault injection targets (default: the last)" },
	[K_HELP] = { "help", OPT_BOOL, 0, 0, NULL, "print this list and stop" },
};

int options_parse(const char *line)
{
	struct opt_value v[K_COUNT] = { 0 };
	char err[256];
	const struct bench *const *list;
	unsigned int nb = bench_registry(&list);
	int rc;

	for (unsigned int i = 0; i < nb && i + 1 < ARRAY_SIZE(bench_names); i++)
		bench_names[i] = list[i]->name;
	rc = cmdline_parse(line, specs, K_COUNT, v, err, sizeof(err));

	if (rc < 0) {
		kprintf("ipibench: bad command line: %s\n", err);
		return -E_INVAL;
	}
	if (v[K_PLAN].set)
		options.plan = (enum plan)v[K_PLAN].u;
	if (v[K_BACKENDS].set)
		options.backends = v[K_BACKENDS].u;
	if (v[K_BENCH].set)
		bench_selected = v[K_BENCH].u;
	if (v[K_ITERS].set) {
		bench_params.explicit_keys |= BENCH_KEY_ITERS;
		bench_params.max_iters = v[K_ITERS].u;
		if (bench_params.min_iters > bench_params.max_iters)
			bench_params.min_iters = bench_params.max_iters;
	}
	if (v[K_WARMUP].set) {
		bench_params.explicit_keys |= BENCH_KEY_WARMUP;
		bench_params.warmup = v[K_WARMUP].u;
	}
	if (v[K_BUDGET].set) {
		bench_params.explicit_keys |= BENCH_KEY_BUDGET;
		bench_params.budget_us = v[K_BUDGET].u * 1000;
	}
	if (v[K_SENDER].set)
		bench_params.sender = (uint32_t)v[K_SENDER].u;
	if (v[K_TARGET].set) {
		bench_params.target = (uint32_t)v[K_TARGET].u;
		bench_params.target_set = true;
	}
	if (v[K_MATRIX].set)
		bench_params.matrix = v[K_MATRIX].u;
	if (v[K_HALT_GAP].set)
		bench_params.halt_gap_us = (uint32_t)v[K_HALT_GAP].u;
	if (v[K_NOROV_ITERS].set) {
		bench_params.explicit_keys |= BENCH_KEY_NOROV;
		bench_params.norov_iters = v[K_NOROV_ITERS].u;
	}
	if (v[K_DEADLINE].set) {
		bench_params.explicit_keys |= BENCH_KEY_DEADLINE;
		bench_params.deadline_us = v[K_DEADLINE].u * 1000;
	}
	if (v[K_AP_TIMEOUT].set)
		options.ap_timeout_ms = (uint32_t)v[K_AP_TIMEOUT].u;
	if (v[K_INIT_DELAY].set)
		options.init_delay_us = (uint32_t)v[K_INIT_DELAY].u;
	if (v[K_DEBUG].set)
		options.debug = v[K_DEBUG].u;
	if (v[K_DEBUG_CPU].set)
		options.debug_cpu = (uint32_t)v[K_DEBUG_CPU].u;
	options.help = v[K_HELP].set && v[K_HELP].u;
	return 0;
}

void options_print_help(void)
{
	static char buf[4096];

	cmdline_help(buf, sizeof(buf), specs, K_COUNT);
	kprintf("ipibench: command-line keys (key=value, separated by spaces):\n%s", buf);
}

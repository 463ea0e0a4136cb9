// SPDX-License-Identifier: GPL-2.0-only
/*
 * The benchmarks' parameters and their command-line keys (an option group,
 * include/options.h): what bench= may name comes from the registry itself,
 * so the command-line layer knows no benchmark.
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/options.h"

struct bench_params bench_params = {
	.max_iters = 20000,
	.min_iters = 50,
	.warmup = 20,
	.budget_us = 20000,
	.deadline_us = 1000000,
	.sender = 0,
	.target = 0,	/* 0: the last CPU */
	.halt_gap_us = 50,
	.halt_poll_ns = BENCH_KVM_HALT_POLL_NS_DEFAULT,
	.halt_poll_grow = BENCH_KVM_HALT_POLL_GROW_DEFAULT,
	.late_wake_us = 10000,
	.norov_iters = 10000,	/* Norov used 100000; the record states the count */
};

/* bench= offers the registry's names, in name order (bench_selected has a bit per entry). */
static const char *bench_names[CMDLINE_MAX_CHOICES + 1];

enum {
	K_BENCH,
	K_ITERS,
	K_WARMUP,
	K_BUDGET,
	K_SENDER,
	K_TARGET,
	K_MATRIX,
	K_HALT_GAP,
	K_BLOCK_GAP,
	K_HALT_POLL_NS,
	K_HALT_POLL_GROW,
	K_LATE_WAKE,
	K_NOROV_ITERS,
	K_DEADLINE,
	K_MARKERS,
	K_HOST_STATS,
	K_COUNT
};

/*
 * The defaults are bench_params' above; under TCG bench_params_for_emulation()
 * shortens warmup, budget, norov_iters, deadline and late_wake, and the KVM
 * and Xen lanes give every frame the same (host/lane/nested-defaults.sh),
 * unless the command line names them. help=1 prints each help phrase on
 * its key's line, so a phrase says the default and what surprises;
 * docs/guest-keys.md renders them from the ELF.
 */
static const struct opt_spec specs[K_COUNT] = {
    [K_BENCH] = {"bench", OPT_LIST, 0, 0, bench_names,
		 "benchmarks to run (default: all; docs/timed-regions.md)"},
    /* Calibration grows the count to 16 timed iterations after the warm-up
     * and on to the budget; at or below min_iters (50) the count is iters
     * itself and one iteration sizes the watchdog's budget, so warmup is
     * then nearly all the warm-up a sampling gets. */
    [K_ITERS] = {"iters", OPT_UINT, 1, 10000000, NULL,
		 "most measured iterations per result; the budget calibrates below it (default 20000)"},
    [K_WARMUP] = {"warmup", OPT_UINT, 0, 1000000, NULL,
		  "iterations run before measuring (default 20; 5 under TCG)"},
    [K_BUDGET] = {"budget", OPT_UINT, 1, 60000, NULL,
		  "ms of measuring per result that calibrates the iteration count (default 20; 2 under TCG)"},
    [K_SENDER] = {"sender", OPT_UINT, 0, 1023, NULL,
		  "the CPU every benchmark sends from (default: 0, the BSP; flush SKIPs on any other)"},
    [K_TARGET] = {"target", OPT_UINT, 0, 1023, NULL,
		  "target CPU of point-to-point benchmarks (default: the last, or 0 when the sender is the last)"},
    [K_MATRIX] = {"matrix", OPT_BOOL, 0, 0, NULL,
		  "single: every sender/target pair, with a matrix table (up to 8 CPUs)"},
    /* From the target's latest entry into HLT: its idle loop counts each,
     * so the wait first lasts until the target is back in HLT. */
    [K_HALT_GAP] = {"halt_gap", OPT_UINT, 0, 1000000, NULL,
		    "us single-halt waits before each send, once the target is back in HLT (default 50; 0: at once, kvm-unit-tests' ipi)"},
    /* Also the wake check's gap (suite/). */
    [K_BLOCK_GAP] =
	{"block_gap", OPT_UINT, 1, 10000000, NULL,
	 "us single-halt's block pass idles before each send (default: 10 x halt_poll_ns, at least 1000)"},
    /* A gap under half the window is wake-aim=poll, the rest wake-aim=block. */
    [K_HALT_POLL_NS] =
	{"halt_poll_ns", OPT_UINT, 0, 1000000000, NULL,
	 "the host's kvm.halt_poll_ns (run.sh passes it under KVM; default: KVM's 200000, said to be assumed)"},
    [K_HALT_POLL_GROW] =
	{"halt_poll_grow", OPT_UINT, 0, 1000, NULL,
	 "the host's kvm.halt_poll_ns_grow (run.sh passes it under KVM; 0: a vCPU's polling window never grows; default: KVM's 2, assumed)"},
    /* In the wake check: from the send to the target's handler entry on its
     * own TSC, one retry before a FAILURE. In single-halt's count: with 10 x
     * the median, whichever is more. */
    [K_LATE_WAKE] =
	{"late_wake", OPT_UINT, 1, 60000000, NULL,
	 "us after which a halted CPU's wake counts as late, with 10 x the median (default 10000; 200000 under TCG)"},
    [K_NOROV_ITERS] = {"norov_iters", OPT_UINT, 1, 10000000, NULL,
		       "fixed loop of the ipi_benchmark view (default 10000; 100 under TCG; Norov used 100000)"},
    /* The stall watchdog's bound is 2 x deadline, at least watch_floor
     * (kernel/watchdog.c), and a backend switch waits deadline where it is
     * over 2 s. */
    [K_DEADLINE] =
	{"deadline", OPT_UINT, 1, 600000, NULL,
	 "ms after which an IPI not yet handled counts as lost; also sets the watchdog's bound (default 1000; 10000 under TCG)"},
    [K_MARKERS] =
	{"markers", OPT_BOOL, 0, 0, NULL,
	 "phase markers for host exit accounting: OUT to port 0xed around each sampling's measured iterations (run.sh --exits sets it)"},
    /* At each pass's edges the sender prints "@@@ host-read begin|end SEQ
     * cpu=N go" and waits, up to deadline, for the host's byte on COM2;
     * records say host_read and host_read_state (docs/record-fields.md). */
    [K_HOST_STATS] =
	{"host_stats", OPT_BOOL, 0, 0, NULL,
	 "single-halt: wait at each pass's edges for the host to read KVM's statistics (COM2; run.sh sets it under KVM)"},
};

static void params_prepare(void)
{
	const struct bench *const *list;
	unsigned int nb = bench_registry(&list);

	for (unsigned int i = 0; i < nb && i < CMDLINE_MAX_CHOICES; i++)
		bench_names[i] = list[i]->name;
}

/* A key given on the command line: TCG's short defaults leave it alone. */
static bool given(const struct opt_value *v, unsigned int key, uint32_t flag)
{
	if (v[key].set)
		bench_params.explicit_keys |= flag;
	return v[key].set;
}

static void params_apply(const struct opt_value *v)
{
	if (v[K_BENCH].set)
		bench_selected = v[K_BENCH].u;
	if (given(v, K_ITERS, BENCH_KEY_ITERS)) {
		bench_params.max_iters = v[K_ITERS].u;
		if (bench_params.min_iters > bench_params.max_iters)
			bench_params.min_iters = bench_params.max_iters;
	}
	if (given(v, K_WARMUP, BENCH_KEY_WARMUP))
		bench_params.warmup = v[K_WARMUP].u;
	if (given(v, K_BUDGET, BENCH_KEY_BUDGET))
		bench_params.budget_us = v[K_BUDGET].u * 1000;
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
	if (v[K_BLOCK_GAP].set)
		bench_params.block_gap_us = (uint32_t)v[K_BLOCK_GAP].u;
	if (v[K_HALT_POLL_NS].set) {
		bench_params.halt_poll_ns = v[K_HALT_POLL_NS].u;
		bench_params.halt_poll_known = true;
	}
	if (v[K_HALT_POLL_GROW].set) {
		bench_params.halt_poll_grow = (uint32_t)v[K_HALT_POLL_GROW].u;
		bench_params.halt_grow_known = true;
	}
	if (given(v, K_LATE_WAKE, BENCH_KEY_LATE_WAKE))
		bench_params.late_wake_us = v[K_LATE_WAKE].u;
	if (given(v, K_NOROV_ITERS, BENCH_KEY_NOROV))
		bench_params.norov_iters = v[K_NOROV_ITERS].u;
	if (given(v, K_DEADLINE, BENCH_KEY_DEADLINE))
		bench_params.deadline_us = v[K_DEADLINE].u * 1000;
	if (v[K_MARKERS].set)
		bench_params.markers = v[K_MARKERS].u;
	if (v[K_HOST_STATS].set)
		bench_params.host_stats = v[K_HOST_STATS].u;
}

static const struct option_group params_group = { 20, specs, K_COUNT, params_prepare,
						  params_apply };
OPTION_GROUP(params_group);

void bench_params_for_emulation(void)
{
	if (__builtin_memcmp(cpu.hv_vendor, "TCGTCGTCGTCG", 12) != 0)
		return;
	if (!(bench_params.explicit_keys & BENCH_KEY_ITERS))
		bench_params.min_iters = 10;
	if (!(bench_params.explicit_keys & BENCH_KEY_WARMUP))
		bench_params.warmup = 5;
	if (!(bench_params.explicit_keys & BENCH_KEY_BUDGET))
		bench_params.budget_us = 2000;
	if (!(bench_params.explicit_keys & BENCH_KEY_NOROV))
		bench_params.norov_iters = 100;
	/* TCG runs each vCPU as a host thread: on a loaded host a spinning
	 * target can wait seconds for a core. Late is not lost. */
	if (!(bench_params.explicit_keys & BENCH_KEY_DEADLINE))
		bench_params.deadline_us = 10000000;
	if (!(bench_params.explicit_keys & BENCH_KEY_LATE_WAKE))
		bench_params.late_wake_us = 200000;
	/* What TCG's figures are worth is the trust warning tcg's to say, once. */
	kprintf(
	    "bench: short defaults for QEMU TCG (min %lu iterations, warm-up %lu, budget %lu us, norov_iters %lu, deadline %lu us, late_wake %lu us)\n",
	    bench_params.min_iters, bench_params.warmup, bench_params.budget_us,
	    bench_params.norov_iters, bench_params.deadline_us, bench_params.late_wake_us);
}

uint32_t bench_block_gap_us(void)
{
	uint64_t us = bench_params.halt_poll_ns / 100; /* 10 x halt_poll_ns, in us */

	if (bench_params.block_gap_us)
		return bench_params.block_gap_us;
	return us < 1000 ? 1000 : (uint32_t)(us > 10000000 ? 10000000 : us);
}

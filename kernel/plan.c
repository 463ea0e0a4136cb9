// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plan: what runs after bring-up. The fault-injection keys of the boot
 * tests, then the correctness suite (plan=check, and plan=default before
 * any timing); the benchmarks join here.
 */
#include <stddef.h>
#include "bench/check.h"
#include "include/bench.h"
#include "include/ipi.h"
#include "include/console.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/watchdog.h"
#include "kernel/plan.h"

static void fault_now(void *arg)
{
	(void)arg;
	asm volatile("ud2");
}

/*
 * With an IDT limit of 0 the #UD cannot be delivered (#GP), nor can the #GP
 * (#DF), nor the #DF: a shutdown, which a hypervisor turns into a reset of
 * the VM (SDM vol. 3A 7.15, interrupt 8). The lanes use it to show that a
 * guest reset is told apart from their own faults.
 */
static void __noreturn triple_fault_now(void)
{
	const struct {
		uint16_t limit;
		uint64_t base;
	} __packed empty = { 0, 0 };

	asm volatile("lidt %0\n\tud2" : : "m"(empty) : "memory");
	__builtin_unreachable();
}

static void plan_debug_faults(void)
{
	if (debug_on(DEBUG_TRIPLE_FAULT)) {
		kprintf("debug: empty IDT and #UD on the BSP: a triple fault\n");
		triple_fault_now();
	}
	if (debug_on(DEBUG_FAULT_BSP)) {
		kprintf("debug: raising #UD on the BSP\n");
		fault_now(NULL);
	}
	if (debug_on(DEBUG_FAULT_AP)) {
		unsigned int c = debug_cpu_pick(ncpus);

		if (c == 0 || c >= ncpus) {
			kprintf("debug: fault-ap needs an AP (CPU %u is not one)\n", c);
			status_report(STATUS_ERROR);
			return;
		}
		kprintf("debug: raising #UD on CPU %u\n", c);
		smp_call(c, fault_now, NULL, 1000000);
	}
}

/*
 * debug=stall: debug_cpu (default the last; 0, the BSP, allowed) becomes
 * the benchmarks' sender, so that it is the CPU that measures, and spins
 * with interrupts off once its first sampling on a backend starts measuring
 * (bench/engine.c). Nobody waits on a sender with a deadline of its own
 * short enough to matter (a spinning target, or the BSP's 120 s in
 * bench_on_sender), so the watchdog is what must end the run: ERROR, its
 * line naming that CPU. Needs a second CPU to watch it.
 */
static void plan_debug_stall(void)
{
	unsigned int c = debug_cpu_pick(ncpus);

	if (!debug_on(DEBUG_STALL))
		return;
	if (ncpus < 2 || c >= ncpus) {
		kprintf("debug: stall needs another CPU to watch CPU %u (%u online): not armed\n", c,
			ncpus);
		options.debug &= ~(1ull << DEBUG_STALL);
		status_report(STATUS_ERROR);
		return;
	}
	bench_params.sender = c;
	kprintf("debug: stall: CPU %u (APIC ID %u) is the sender and spins with interrupts off once "
		"its first sampling on a backend measures\n", c, percpu_of[c]->apic_id);
}

static void plan_bench(void)
{
	const struct ipi_ops *list[IPI_BACKEND_COUNT];
	unsigned int n = 0;

	for (unsigned int i = 0; i < IPI_BACKEND_COUNT; i++) {
		if (options.backends & (1ull << i))
			list[n++] = ipi_backends[i];
	}
	bench_run_all(list, n);
}

void plan_run(void)
{
	bench_params_for_emulation();
	watchdog_start(bench_params.deadline_us);
	plan_debug_stall();
	bench_measure_dryrun();
	env_record_print();
	plan_debug_faults();
	if (options.plan == PLAN_DEFAULT || options.plan == PLAN_CHECK) {
		crash_context = "the correctness suite";
		check_run();
		crash_context = NULL;
	}
	if (options.plan == PLAN_DEFAULT || options.plan == PLAN_BENCH)
		plan_bench();
	end_record_print(status_name(status_worst()), bench_results_printed);
}

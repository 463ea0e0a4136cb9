// SPDX-License-Identifier: GPL-2.0-only
/*
 * The plan: what runs after bring-up. The fault-injection keys of the boot
 * tests, then, for the xAPIC-mode backends and then for the x2APIC-mode
 * ones, the correctness suite (plan=check, and plan=default before any
 * timing of that group) and the benchmarks (plan=bench, plan=default).
 */
#include <stddef.h>
#include "suite/suite.h"
#include "include/bench.h"
#include "include/ipi.h"
#include "include/console.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/watchdog.h"
#include "kernel/plan.h"

static const struct ipi_ops *plan_list[IPI_BACKEND_MAX];
static unsigned int plan_n;

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
 * (harness/engine.c). Nobody waits on a sender with a deadline of its own
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
	kprintf(
	    "debug: stall: CPU %u (APIC ID %u) is the sender and spins with interrupts off once its first sampling on a backend measures\n",
	    c, percpu_of[c]->apic_id);
}

/* key=v against CPUs 0 to n - 1: the online ones, or with against_listed the listed ones. */
static bool plan_cpu_key_bad(const char *key, uint32_t v, unsigned int n, unsigned int listed,
			     bool against_listed)
{
	if (v < n)
		return false;
	kprintf("ipibench: bad command line: %s=%u names no CPU: ", key, v);
	if (against_listed)
		kprintf("the machine lists ");
	else if (n == 1)
		kprintf("only ");
	if (n == 1)
		kprintf("CPU 0");
	else
		kprintf("CPUs 0-%u", n - 1);
	if (!against_listed)
		kprintf(n == 1 ? " is online" : " are online");
	if (!against_listed && n < listed)
		kprintf(" (%u of %u listed)", n, listed);
	kprintf("\n");
	return true;
}

/*
 * sender=, target= and debug_cpu= are parsed before bring-up: only now can
 * they be held against the CPUs there are. A CPU beyond them used to SKIP
 * every benchmark and pass, a run that measured nothing it was asked for.
 * skip-sipi's debug_cpu names a CPU that is listed but kept down on
 * purpose, so it is held against the listed CPUs instead.
 */
void plan_check_cpu_keys(unsigned int listed)
{
	bool skip_sipi = debug_on(DEBUG_SKIP_SIPI);

	if (plan_cpu_key_bad("sender", bench_params.sender, ncpus, listed, false) ||
	    (bench_params.target_set &&
	     plan_cpu_key_bad("target", bench_params.target, ncpus, listed, false)) ||
	    (options.debug_cpu != DEBUG_CPU_LAST &&
	     plan_cpu_key_bad("debug_cpu", options.debug_cpu, skip_sipi ? listed : ncpus, listed,
			      skip_sipi)))
		status_exit(STATUS_BADCMD);
}

/*
 * The plan's order: every backend that runs in xAPIC mode, then the
 * x2APIC ones, each group in the registry's order. On AMD AVIC without
 * x2AVIC (Zen 1 to 3), KVM since Linux 6.3 (commit 2008fab34530, "KVM:
 * x86: Inhibit APIC memslot if x2APIC and AVIC are enabled") deletes the
 * APIC-access memslot the first time any vCPU enters x2APIC mode and never
 * brings it back (kvm_vcpu_update_apicv() -> kvm_inhibit_apic_access_page(),
 * armed only while x2avic_enabled is false: svm_hardware_setup(), later
 * avic_hardware_setup()): from then on every xAPIC access is trapped and
 * emulated while AVIC still reads as active, with no inhibit reason to
 * show for it.
 * So nothing measured or checked in xAPIC mode may come after the first
 * x2APIC switch; each record says whether it did (after_x2apic).
 */
static unsigned int plan_order(const struct ipi_ops **list, unsigned int *n_xapic)
{
	const struct ipi_ops *const *all;
	unsigned int n = 0, count = ipi_backend_list(&all);

	for (int pass = 0; pass < 2; pass++) {
		for (unsigned int i = 0; i < count; i++) {
			const struct ipi_ops *ops = all[i];

			if ((options.backends & (1ull << i)) &&
			    (ops->mode == LAPIC_X2APIC) == (pass == 1))
				list[n++] = ops;
		}
		if (pass == 0)
			*n_xapic = n;
	}
	return n;
}

/*
 * Each mode's backends: their checks (plan=default, plan=check), then
 * their benchmarks (plan=default, plan=bench). The flush calls, which the
 * x2APIC-mode hypercall backends bring, are checked with the last group.
 */
static void plan_group(const struct ipi_ops *const *list, unsigned int n, bool last,
		       bool check, bool bench)
{
	static bool bench_begun;

	if (check) {
		check_begin(last ? "x2APIC-mode backends" : "xAPIC-mode backends, before any x2APIC switch");
		crash_context = "the correctness suite";
		for (unsigned int i = 0; i < n; i++)
			check_backend_run(list[i]);
		if (last)
			check_flush_run();
		crash_context = NULL;
	}
	if (!bench)
		return;
	if (!bench_begun) {
		bench_begun = true;
		bench_plan_begin(plan_list, plan_n);
	}
	for (unsigned int i = 0; i < n; i++)
		bench_plan_backend(list[i]);
}

void plan_run(void)
{
	enum lapic_mode boot_mode = lapic_mode;
	bool check = options.plan == PLAN_DEFAULT || options.plan == PLAN_CHECK;
	bool bench = options.plan == PLAN_DEFAULT || options.plan == PLAN_BENCH;
	unsigned int n_xapic;

	bench_params_for_emulation();
	watchdog_start(bench_params.deadline_us);
	ipi_switch_bound(bench_params.deadline_us);
	plan_debug_stall();
	bench_measure_dryrun();
	env_record_print();
	plan_debug_faults();
	plan_n = plan_order(plan_list, &n_xapic);
	plan_group(plan_list, n_xapic, false, check, bench);
	plan_group(plan_list + n_xapic, plan_n - n_xapic, true, check, bench);
	if (check) {
		crash_context = "the correctness suite";
		check_end(boot_mode);
		crash_context = NULL;
	}
	if (bench)
		bench_plan_end();
	end_record_print(status_name(status_worst()), bench_results_printed);
}

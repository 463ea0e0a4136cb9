// SPDX-License-Identifier: GPL-2.0-only
/*
 * Walks the benchmark registry in name order over each backend the plan
 * hands it, in the plan's order (kernel/plan.c: xAPIC-mode backends before
 * the first x2APIC switch): every backend switches all CPUs at once, then
 * every selected benchmark that can run there does; the rest get a SKIP
 * record with the reason.
 *
 * Each unit of that walk opens with a "phase" record (docs/results.md):
 * its index, the total, backend and benchmark, so that the host can show
 * progress against a total known from the first one. A unit is a benchmark
 * that sends no IPI, one benchmark on one usable backend, or a whole
 * backend whose probe refused it (its benchmarks SKIP with that reason).
 */
#include "harness/kut_view.h"
#include "include/bench.h"
#include "include/console.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/status.h"
#include "lib/fmt.h"
#include "lib/record.h"

extern const struct bench *const __bench_registry_start[], *const __bench_registry_end[];

static const struct bench *sorted[64];
static unsigned int nbench;
uint64_t bench_selected = ~0ull;	/* bit i: sorted[i]; set by options */
static unsigned int phase_index, phase_count, per_backend_chosen;

/* The registry by name; the command line's bench= choices come from here. */
unsigned int bench_registry(const struct bench *const **list)
{
	if (!nbench) {
		size_t n = ((uintptr_t)__bench_registry_end - (uintptr_t)__bench_registry_start) /
			   sizeof(const struct bench *);

		for (size_t i = 0; i < n && nbench < ARRAY_SIZE(sorted); i++) {
			unsigned int j = nbench++;

			/* insertion sort: a handful of entries */
			while (j > 0 && __builtin_strcmp(sorted[j - 1]->name,
							 __bench_registry_start[i]->name) > 0) {
				sorted[j] = sorted[j - 1];
				j--;
			}
			sorted[j] = __bench_registry_start[i];
		}
	}
	*list = sorted;
	return nbench;
}

static struct bench_run *bench_new_run(const struct bench *b, const struct ipi_ops *ops)
{
	static struct bench_run *run;

	if (!run)
		run = mm_alloc(sizeof(*run), CACHELINE);
	__builtin_memset(run, 0, sizeof(*run));
	run->b = b;
	run->ops = ops;
	run->sender = bench_params.sender;
	run->target = bench_default_target(run->sender);
	return run;
}

static const char *bench_why_not(const struct bench *b, const struct ipi_ops *ops)
{
	static char why[96];

	if (ncpus < b->min_cpus) {
		fmt_snprintf(why, sizeof(why), "needs %u CPUs, %u online", b->min_cpus, ncpus);
		return why;
	}
	if (bench_params.sender >= ncpus || bench_params.target >= ncpus) {
		fmt_snprintf(why, sizeof(why), "sender %u / target %u: only %u CPUs online",
			     bench_params.sender, bench_params.target, ncpus);
		return why;
	}
	return b->valid && ops ? b->valid(ops) : NULL;
}

/*
 * debug=expire-deadline: the first `single` runs with a 1 ms deadline while
 * its target keeps interrupts off for 20 ms, so the wait must expire; the
 * deadline comes back for the rest of the plan.
 */
static void bench_run_expiring(struct bench_run *r)
{
	static bool done;
	uint64_t saved = bench_params.deadline_us;

	if (done || __builtin_strcmp(r->b->name, "single") != 0) {
		r->b->run(r);
		return;
	}
	done = true;
	kprintf("debug: %s on %s: deadline 1 ms, CPU %u answers 20 ms late\n", r->b->name,
		r->ops ? r->ops->name : "-", r->target);
	bench_params.deadline_us = 1000;
	WRITE_ONCE(bench_late_cpu, r->target);
	r->b->run(r);
	WRITE_ONCE(bench_late_cpu, ~0u);
	bench_params.deadline_us = saved;
}

static void bench_run_one(const struct bench *b, const struct ipi_ops *ops)
{
	static char context[80];
	struct bench_run *r = bench_new_run(b, ops);
	const char *why = bench_why_not(b, ops);

	if (why) {
		bench_emit_status(r, "-", "SKIP", why);
		status_report(STATUS_SKIP);
		return;
	}
	fmt_snprintf(context, sizeof(context), "benchmark %s on %s", b->name,
		     ops ? ops->name : "no backend");
	crash_context = context;
	if (debug_on(DEBUG_EXPIRE_DEADLINE))
		bench_run_expiring(r);
	else
		b->run(r);
	crash_context = NULL;
}

/* The next unit of the walk opens (lib/record.h, record_phase()). */
static void bench_phase(const char *backend, const char *bench)
{
	static char line[256];

	if (record_phase(line, sizeof(line), ++phase_index, phase_count, backend, bench) >= 0)
		kprintf("%s\n", line);
}

static bool bench_chosen(unsigned int i, bool per_backend)
{
	return (bench_selected & (1ull << i)) && sorted[i]->per_backend == per_backend;
}

/* All CPUs to ops; false (said, and an ERROR) when the switch failed. */
static bool bench_switch(const struct ipi_ops *ops)
{
	if (!ipi_switch(ops))
		return true;
	kprintf("bench: switching to %s failed; its benchmarks do not run\n", ops->name);
	status_report(STATUS_ERROR);
	return false;
}

/*
 * why: the backend's probe's refusal, asked once by bench_plan_begin(), or NULL.
 * The first unit opens before the switch, so that a switch that hangs is
 * seen inside it; every announced unit opens, even after a failed switch.
 */
static void bench_backend(const struct ipi_ops *ops, const char *why)
{
	bool first = true, switched = false;

	if (why && per_backend_chosen)
		bench_phase(ops->name, "all");
	for (unsigned int i = 0; i < nbench; i++) {
		if (!bench_chosen(i, true))
			continue;
		if (why) {
			bench_emit_status(bench_new_run(sorted[i], ops), "-", "SKIP", why);
			status_report(STATUS_SKIP);
			continue;
		}
		bench_phase(ops->name, sorted[i]->name);
		if (first) {
			switched = bench_switch(ops);
			first = false;
			/* The table the switch installed: its own, or a debug key's wrapper. */
			if (switched)
				ops = ipi_current();
		}
		if (switched)
			bench_run_one(sorted[i], ops);
	}
	if (!why && first)
		bench_switch(ops); /* no benchmark of its own chosen: switched all the same */
}

/* The plan's backends and their probes' answers, asked once by bench_plan_begin(). */
static const struct ipi_ops *plan_ops[IPI_BACKEND_MAX];
static const char *plan_why[IPI_BACKEND_MAX];
static unsigned int plan_n;

void bench_plan_begin(const struct ipi_ops *const *backends, unsigned int n)
{
	const struct bench *const *list;
	char header[160];

	bench_registry(&list);
	for (unsigned int i = 0; i < nbench; i++) {
		per_backend_chosen += bench_chosen(i, true);
		phase_count += bench_chosen(i, false);
	}
	/*
	 * Asked once here, on the BSP with the APs idle, their answers decide the
	 * units. A probe changes nothing that outlives it; a Hyper-V probe may
	 * write the guest OS ID for a moment and put it back (hyperv/hv.c).
	 */
	for (plan_n = 0; plan_n < n && plan_n < IPI_BACKEND_MAX; plan_n++) {
		plan_ops[plan_n] = backends[plan_n];
		plan_why[plan_n] = backends[plan_n]->probe();
		if (per_backend_chosen)
			phase_count += plan_why[plan_n] ? 1 : per_backend_chosen;
	}
	record_table_header(header, sizeof(header));
	bench_measure_dryrun_on_sender();
	kprintf("bench: harness cost %lu cycles on CPU %u (median empty timed region)\n",
		bench_dryrun_cycles, bench_params.sender < ncpus ? bench_params.sender : 0);
	kprintf("%s\n", header);
	for (unsigned int i = 0; i < nbench; i++) {
		if (!bench_chosen(i, false))
			continue;
		bench_phase("none", sorted[i]->name);
		bench_run_one(sorted[i], NULL);
	}
}

void bench_plan_backend(const struct ipi_ops *ops)
{
	for (unsigned int k = 0; k < plan_n; k++) {
		if (plan_ops[k] == ops)
			bench_backend(ops, plan_why[k]);
	}
}

void bench_plan_end(void)
{
	kut_view_print();
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The view of Yury Norov's ipi_benchmark module ("[PATCH v2] IPI
 * performance benchmark", lkml 2017-12-19), so that figures can be set
 * beside those quoted in KVM patch series (e.g. the PV send-IPI series):
 * five tests under their names there, each a fixed loop of norov_iters
 * synchronous iterations, reported as total ns and, where the test
 * timestamps delivery, the summed send-to-handler-entry time.
 *
 *  Dry-run         the loop without sending
 *  Self-IPI        to this CPU, wait until handled
 *  Normal IPI      to one other CPU, wait until handled
 *  Broadcast IPI   to every other CPU (the backend's set send), wait for all
 *  Broadcast lock  the same, each handler taking and releasing one shared lock
 *
 * Norov's module ran 100000 iterations; the default here is smaller so the
 * plan fits TCG, and the record states the count.
 */
#include "include/bench.h"
#include "include/console.h"
#include "include/irq.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/record.h"

#define LOCK_VEC (IPI_VEC_FIRST + IPI_VEC_COUNT - 1)

enum norov_test { NOROV_DRY, NOROV_SELF, NOROV_NORMAL, NOROV_BCAST, NOROV_LOCK, NOROV_COUNT };

static const char *const test_names[NOROV_COUNT] = { "Dry-run", "Self-IPI", "Normal IPI",
						     "Broadcast IPI", "Broadcast lock" };
static int shared_lock __cacheline_aligned;
static uint32_t want[MAX_CPUS];

static void lock_handler(unsigned int vector, uint64_t tsc)
{
	struct percpu *p = this_cpu();

	while (__atomic_exchange_n(&shared_lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
	__atomic_store_n(&shared_lock, 0, __ATOMIC_RELEASE);
	WRITE_ONCE(p->irq.entry_tsc, tsc);
	store_release(&p->irq.count[vector - IPI_VEC_FIRST],
		      p->irq.count[vector - IPI_VEC_FIRST] + 1);
	p->ops->eoi();
}

static uint32_t count_of(unsigned int cpu_nr, unsigned int vec)
{
	return READ_ONCE(percpu_of[cpu_nr]->irq.count[vec - IPI_VEC_FIRST]);
}

/* One synchronous iteration; adds the delivery time; 0 or the CPU that lost it + 1. */
static unsigned int norov_iter(const struct ipi_ops *ops, enum norov_test t, unsigned int target,
			       const struct cpuset *others, uint64_t *delivery)
{
	unsigned int me = this_cpu()->cpu, vec = t == NOROV_LOCK ? LOCK_VEC : BENCH_VEC;
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0;
	const bool point = t == NOROV_SELF || t == NOROV_NORMAL;
	const unsigned int dst = t == NOROV_SELF ? me : target;
	const struct cpuset *wait = others;
	struct cpuset one;

	cpuset_clear(&one);
	if (point) {
		cpuset_add(&one, dst);
		wait = &one;
	}
	cpuset_for_each(c, wait) want[c] = count_of((unsigned int)c, vec) + 1;
	t0 = tsc_begin();
	if (t == NOROV_SELF)
		ops->send_self((uint8_t)vec);
	else if (t == NOROV_NORMAL)
		ops->send(target, (uint8_t)vec);
	else
		ipi_send_set(ops, others, (uint8_t)vec);
	cpuset_for_each(c, wait) {
		while ((int32_t)(count_of((unsigned int)c, vec) - want[c]) < 0) {
			if (tsc_expired(deadline))
				return (unsigned int)c + 1;
			cpu_relax();
		}
	}
	if (point)
		*delivery += bench_entry_tsc(dst) - t0;
	return 0;
}

static void norov_print(const struct ipi_ops *ops, enum norov_test t, uint64_t delivery,
			uint64_t total, bool ok)
{
	static char line[RECORD_MAX];
	struct norov n = { test_names[t], ops->name, bench_params.norov_iters,
			   stats_cycles_to_ns(delivery, tsc_khz), stats_cycles_to_ns(total, tsc_khz),
			   ok ? "SUCCESS" : "FAILURE" };

	kprintf("norov %-14s %-15s %12lu ns delivery %12lu ns total (%lu iterations)\n",
		ops->name, n.test, n.delivery_ns, n.total_ns, n.iterations);
	if (record_norov(line, sizeof(line), &n) >= 0)
		kprintf("%s\n", line);
}

static void norov_test(struct bench_run *r, enum norov_test t, const struct cpuset *others)
{
	uint64_t delivery = 0, t0 = tsc_begin(), total;
	unsigned int lost = 0;

	for (uint64_t i = 0; i < bench_params.norov_iters && !lost; i++) {
		if (t == NOROV_DRY)
			continue;
		lost = norov_iter(r->ops, t, r->target, others, &delivery);
	}
	total = bench_tsc_end() - t0;
	if (lost) {
		bench_fail(r, "%s: CPU %u (APIC ID %u) did not handle its IPI within %lu us",
			   test_names[t], lost - 1, percpu_of[lost - 1]->apic_id,
			   bench_params.deadline_us);
		return;
	}
	norov_print(r->ops, t, delivery, total, true);
}

static void norov_run(struct bench_run *r)
{
	static const char *const names[] = { "total" };
	irq_handler_t saved = irq_get_handler(LOCK_VEC);
	struct cpuset others;

	bench_metrics(r, 1, names);
	r->target_state = "spin";
	cpuset_fill(&others, ncpus);
	cpuset_remove(&others, this_cpu()->cpu);
	irq_set_handler(LOCK_VEC, lock_handler);
	for (enum norov_test t = NOROV_DRY; t < NOROV_COUNT; t++) {
		struct cpuset spin;

		/* Only the CPUs a test involves spin: idle ones would just take
		 * host time from them (on an emulator, a lot of it). */
		cpuset_clear(&spin);
		if (t == NOROV_NORMAL)
			cpuset_add(&spin, r->target);
		else if (t == NOROV_BCAST || t == NOROV_LOCK)
			spin = others;
		bench_targets_spin(&spin);
		norov_test(r, t, &others);
		if (bench_targets_stop())
			status_report(STATUS_ERROR);
	}
	irq_set_handler(LOCK_VEC, saved);
}

static const struct bench bench_norov = {
	.name = "ipi_benchmark",
	.summary = "Norov's five figures (Dry-run, Self-IPI, Normal IPI, Broadcast IPI, Broadcast lock)",
	.min_cpus = 2,
	.per_backend = true,
	.run = norov_run,
};
BENCH_REGISTER(bench_norov);

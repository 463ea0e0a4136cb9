// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reference exits, so figures from different hosts can be normalised: what
 * one CPUID (leaf 0; always intercepted by VMX and SVM) and one I/O-port
 * write (port 0x80, the POST/delay port; QEMU handles it in user space
 * unless the host's KVM short-cuts it) cost here.
 */
#include "include/bench.h"
#include "include/x86.h"

static int cpuid_iter(struct bench_run *r, uint64_t *out)
{
	uint64_t t0 = tsc_begin();

	(void)r;
	(void)cpuid(0, 0);
	out[0] = bench_tsc_end() - t0;
	return 0;
}

static int pio_iter(struct bench_run *r, uint64_t *out)
{
	uint64_t t0 = tsc_begin();

	(void)r;
	outb(0x80, 0);
	out[0] = bench_tsc_end() - t0;
	return 0;
}

static void exit_ref_run(struct bench_run *r)
{
	static const char *const cpuid_name[] = { "cpuid" }, *const pio_name[] = { "pio-0x80" };

	r->target_state = "none";
	r->sender = this_cpu()->cpu;	/* runs where the plan runs, whatever sender= says */
	bench_metrics(r, 1, cpuid_name);
	if (!bench_sample(r, cpuid_iter))
		bench_emit(r);
	bench_metrics(r, 1, pio_name);
	if (!bench_sample(r, pio_iter))
		bench_emit(r);
}

static const struct bench bench_exit_ref = {
	.name = "exit-ref",
	.summary = "reference costs of a CPUID exit and an I/O-port exit",
	.min_cpus = 1,
	.run = exit_ref_run,
};
BENCH_REGISTER(bench_exit_ref);

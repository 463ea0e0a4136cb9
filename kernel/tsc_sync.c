// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC skew between the BSP and each AP, bounded by ping-pong.
 *
 * Round r: the BSP reads t1, publishes ping = r; the AP, on seeing it, reads
 * t_ap and publishes it with pong = r; the BSP, on seeing that, reads t2.
 * If the AP's TSC runs d cycles ahead of the BSP's, causality gives
 * t1 <= t_ap - d <= t2, so d lies in [t_ap - t2, t_ap - t1] for every
 * round; the intersection over all rounds is the tightest interval, and
 * max(|lo|, |hi|) bounds the skew. An empty intersection means the TSCs are
 * not consistent (one ran backwards against the other).
 *
 * ping and pong live on separate lines, each written by one side only.
 *
 * Each AP's interval is kept, so that a pair of APs gets a sound bound of
 * its own (lib/skew.h), at most the sum of their bounds against the BSP.
 */
#include "include/console.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/tsc.h"
#include "lib/skew.h"

#define SKEW_ROUNDS 64
#define SKEW_TIMEOUT_US 2000000

uint64_t tsc_skew_bound;
bool tsc_skew_consistent = true;

/* CPU c's TSC runs d_c ahead of the BSP's, d_c in [skew_lo[c], skew_hi[c]]; 0 for the BSP. */
static int64_t skew_lo[MAX_CPUS], skew_hi[MAX_CPUS];
static bool skew_known[MAX_CPUS] = { true };

static struct {
	uint32_t ping __cacheline_aligned;
	uint32_t pong __cacheline_aligned;
	uint64_t t_ap;
	uint64_t deadline;
} probe;

static void skew_ap(void *arg)
{
	(void)arg;
	for (uint32_t r = 1; r <= SKEW_ROUNDS; r++) {
		while (load_acquire(&probe.ping) != r) {
			if (tsc_expired(probe.deadline))
				return;
			cpu_relax();
		}
		WRITE_ONCE(probe.t_ap, tsc_begin());
		store_release(&probe.pong, r);
	}
}

static int skew_one(unsigned int cpu, int64_t *lo, int64_t *hi)
{
	probe.ping = probe.pong = 0;
	probe.deadline = tsc_deadline_us(SKEW_TIMEOUT_US);
	*lo = INT64_MIN;
	*hi = INT64_MAX;
	smp_post(cpu, skew_ap, NULL);
	for (uint32_t r = 1; r <= SKEW_ROUNDS; r++) {
		uint64_t t1 = tsc_begin(), t2, tap;

		store_release(&probe.ping, r);
		while (load_acquire(&probe.pong) != r) {
			if (tsc_expired(probe.deadline))
				return -1;
			cpu_relax();
		}
		t2 = tsc_end_nop();
		tap = READ_ONCE(probe.t_ap);
		if ((int64_t)(tap - t2) > *lo)
			*lo = (int64_t)(tap - t2);
		if ((int64_t)(tap - t1) < *hi)
			*hi = (int64_t)(tap - t1);
	}
	return smp_wait(cpu, probe.deadline);
}

static uint64_t abs64(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

void tsc_measure_skew(void)
{
	for (unsigned int c = 1; c < ncpus; c++) {
		int64_t lo, hi;
		uint64_t b;

		if (skew_one(c, &lo, &hi)) {
			kprintf("tsc: CPU %u did not answer the skew probe; bound unknown\n", c);
			tsc_skew_consistent = false;
			tsc_skew_bound = UINT64_MAX;
			continue;
		}
		if (lo > hi) {
			kprintf(
			    "tsc: CPU %u TSC inconsistent with the BSP's: offset interval [%ld, %ld] is empty\n",
			    c, lo, hi);
			tsc_skew_consistent = false;
		}
		skew_lo[c] = lo;
		skew_hi[c] = hi;
		skew_known[c] = true;
		b = abs64(lo) > abs64(hi) ? abs64(lo) : abs64(hi);
		if (b > tsc_skew_bound)
			tsc_skew_bound = b;
	}
	if (ncpus > 1)
		kprintf("tsc: skew bound over %u APs: %lu cycles (%s)\n", ncpus - 1,
			tsc_skew_bound, tsc_skew_consistent ? "consistent" : "INCONSISTENT");
}

uint64_t tsc_skew_pair(unsigned int a, unsigned int b)
{
	if (a == b)
		return 0;
	if (a >= ncpus || b >= ncpus || !skew_known[a] || !skew_known[b])
		return UINT64_MAX;
	return skew_pair_bound(skew_lo[a], skew_hi[a], skew_lo[b], skew_hi[b]);
}

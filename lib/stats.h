/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Integer statistics over benchmark samples: keep every sample of a run in a
 * bounded buffer; report min, median, mean, p90, p99, max and standard
 * deviation, in cycles and in ns.
 *
 * Integers only: the kernel is built with -mgeneral-regs-only. Wide
 * intermediates use unsigned __int128 (and 192 bits for the sum of squared
 * deviations); no division helper from libgcc is needed.
 */
#ifndef LIB_STATS_H
#define LIB_STATS_H

#include <stddef.h>
#include <stdint.h>

/*
 * Sample store over a caller-provided buffer. The first cap samples are kept
 * as offered; after that it is a uniform reservoir (Vitter's Algorithm R): the
 * i-th sample offered (1-based) replaces a random slot with probability
 * cap / i, so at any time every offered sample is kept with equal probability.
 * The random source is xorshift64*, seeded by the caller, so runs repeat.
 */
struct samples {
	uint64_t *buf;
	size_t cap;
	size_t len;    /* kept samples, at most cap */
	uint64_t seen; /* samples offered */
	uint64_t rng;  /* xorshift64* state, never 0 */
};

/* seed 0 is replaced by a fixed non-zero constant (xorshift's state must not be 0). */
void samples_init(struct samples *s, uint64_t *buf, size_t cap, uint64_t seed);
/* Offer one sample. With cap 0 it only counts. */
void samples_add(struct samples *s, uint64_t v);

struct stats {
	uint64_t n;    /* samples summarised */
	uint64_t seen; /* samples offered (>= n when a reservoir dropped some) */
	uint64_t min, p50, p90, p99, max;
	uint64_t mean;	 /* rounded to nearest, halves up */
	uint64_t stddev; /* population standard deviation, rounded to nearest, halves up */
	uint64_t sum;	 /* of the summarised samples, saturating at UINT64_MAX */
};

/*
 * Summarise v[0..n), sorting v in place. seen is set to n. Returns 0, or
 * -E_INVAL with *st zeroed when n is 0 (or v is NULL).
 *
 * Percentiles use the nearest-rank definition: pN is the smallest sample such
 * that at least N% of the samples are <= it, i.e. sorted[ceil(N * n / 100) - 1].
 * It is always one of the samples, never an interpolation.
 *
 * Mean and stddev are exact before rounding for any n and any uint64_t values
 * (128-bit sums, a 192-bit sum of squared deviations, an exact integer square
 * root), so n up to 2^32 samples of values up to 2^63 cannot overflow.
 */
int stats_compute(struct stats *st, uint64_t *v, size_t n);

/* stats_compute() over the kept samples of s (sorting them), with seen = s->seen. */
int stats_compute_samples(struct stats *st, struct samples *s);

/*
 * Nearest-rank percentile of sorted[0..n), pct_x100 in hundredths of a percent
 * (5000 = p50, 9900 = p99, 9990 = p99.9). 0 gives the minimum, values above
 * 10000 are treated as 10000 (the maximum). n == 0 gives 0.
 */
uint64_t stats_percentile(const uint64_t *sorted, size_t n, unsigned pct_x100);

/*
 * cycles * 10^6 / tsc_khz, rounded to nearest, halves up; saturates at
 * UINT64_MAX. tsc_khz == 0 (unknown frequency) gives 0.
 */
uint64_t stats_cycles_to_ns(uint64_t cycles, uint64_t tsc_khz);

/*
 * Coefficient of variation stddev / mean in basis points (parts per 10000),
 * rounded to nearest, halves up; saturates at UINT64_MAX. mean == 0 gives 0:
 * no meaningful relative spread.
 */
uint64_t stats_cv_bp(uint64_t mean, uint64_t stddev);

/*
 * Log-bucketed histogram, 4 sub-buckets per power of two (as in HDR
 * histograms), covering 0..UINT64_MAX with relative bucket width <= 1/4.
 *
 * Layout: values 0..3 have buckets 0..3. A value v >= 4 with e = floor(log2 v)
 * (2..63) and s = the two bits below its top bit, (v >> (e - 2)) & 3, goes to
 * bucket 4 * (e - 1) + s, which spans [(4 + s) << (e - 2), ((5 + s) << (e - 2)) - 1].
 * So 0..7 get exact buckets, 8..15 buckets of width 2, 16..31 width 4, ...,
 * and the last bucket, 251, is [7 << 61, UINT64_MAX].
 */
#define HISTO_BUCKETS 252

struct histo {
	uint32_t count[HISTO_BUCKETS]; /* saturates at UINT32_MAX */
	uint64_t total;		       /* values added, saturating */
};

void histo_init(struct histo *h);
void histo_add(struct histo *h, uint64_t v);
unsigned histo_bucket(uint64_t v);
/* Inclusive bounds of bucket b; UINT64_MAX for b >= HISTO_BUCKETS. */
uint64_t histo_bucket_low(unsigned b);
uint64_t histo_bucket_high(unsigned b);

#endif

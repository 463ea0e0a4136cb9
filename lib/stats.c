// SPDX-License-Identifier: GPL-2.0-only
/*
 * Integer statistics, sample reservoir and log histogram (lib/stats.h): every
 * sample of a run is kept in a bounded buffer and summarised in integers.
 *
 * Division of 128-bit values is written out here (stats_div128) instead of
 * using the / operator, which would call libgcc's __udivti3: the kernel does
 * not link libgcc.
 */
#include "lib/stats.h"
#include "lib/error.h"
#include "lib/sort.h"

typedef unsigned __int128 u128;

/* A 192-bit accumulator: the sum of up to 2^64 squares of 64-bit values. */
struct stats_u192 {
	u128 lo;
	uint64_t hi;
};

/*
 * (hi:lo) / d for hi < d, so the quotient fits in 64 bits: restoring binary
 * long division. Slow (64 steps) but only used when summarising.
 */
static uint64_t stats_div_step(uint64_t hi, uint64_t lo, uint64_t d, uint64_t *rem)
{
	for (int i = 0; i < 64; i++) {
		uint64_t top = hi >> 63;

		hi = (hi << 1) | (lo >> 63);
		lo <<= 1;
		/* With top set the true value is >= 2^64 > d; the wrap is exact. */
		if (top || hi >= d) {
			hi -= d;
			lo |= 1;
		}
	}
	*rem = hi;
	return lo;
}

/* num / d and num % d for d != 0. */
static u128 stats_div128(u128 num, uint64_t d, uint64_t *rem)
{
	uint64_t hi = (uint64_t)(num >> 64);
	uint64_t lo = (uint64_t)num;
	uint64_t qlo;

	if (hi == 0) {
		*rem = lo % d;
		return lo / d;
	}
	qlo = stats_div_step(hi % d, lo, d, rem);
	return ((u128)(hi / d) << 64) | qlo;
}

/* num / d rounded to nearest, halves up, saturated to 64 bits; d != 0. */
static uint64_t stats_div_round(u128 num, uint64_t d)
{
	uint64_t rem;
	u128 q = stats_div128(num, d, &rem);

	if (rem >= d - rem)
		q++;
	return (q >> 64) ? UINT64_MAX : (uint64_t)q;
}

static void stats_u192_add(struct stats_u192 *a, u128 x)
{
	a->lo += x;
	if (a->lo < x)
		a->hi++;
}

/* floor(a / d), for a quotient known to fit in 128 bits (a->hi < d). */
static u128 stats_u192_div(const struct stats_u192 *a, uint64_t d)
{
	uint64_t rem;
	uint64_t q1 = stats_div_step(a->hi, (uint64_t)(a->lo >> 64), d, &rem);
	uint64_t q0 = stats_div_step(rem, (uint64_t)a->lo, d, &rem);

	return ((u128)q1 << 64) | q0;
}

/* floor(sqrt(x)), digit by digit in base 4: no division, exact. */
static uint64_t stats_isqrt(u128 x)
{
	u128 bit = (u128)1 << 126;
	u128 res = 0;

	while (bit > x)
		bit >>= 2;
	while (bit) {
		if (x >= res + bit) {
			x -= res + bit;
			res = (res >> 1) + bit;
		} else {
			res >>= 1;
		}
		bit >>= 2;
	}
	return (uint64_t)res;
}

/* xorshift64* (Vigna): small, fast, and good enough to pick reservoir slots. */
static uint64_t stats_rng_next(uint64_t *state)
{
	uint64_t x = *state;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*state = x;
	return x * 0x2545f4914f6cdd1dULL;
}

void samples_init(struct samples *s, uint64_t *buf, size_t cap, uint64_t seed)
{
	s->buf = buf;
	s->cap = buf ? cap : 0;
	s->len = 0;
	s->seen = 0;
	s->rng = seed ? seed : 0x9e3779b97f4a7c15ULL;
}

void samples_add(struct samples *s, uint64_t v)
{
	uint64_t slot;

	s->seen++;
	if (s->len < s->cap) {
		s->buf[s->len++] = v;
		return;
	}
	if (s->cap == 0)
		return;
	/* Algorithm R: slot uniform in [0, seen), by multiply-high (bias < seen / 2^64). */
	slot = (uint64_t)(((u128)stats_rng_next(&s->rng) * s->seen) >> 64);
	if (slot < s->cap)
		s->buf[slot] = v;
}

uint64_t stats_percentile(const uint64_t *sorted, size_t n, unsigned pct_x100)
{
	size_t rank;

	if (n == 0 || !sorted)
		return 0;
	if (pct_x100 > 10000)
		pct_x100 = 10000;
	/* ceil(pct * n / 10000), split so that pct * n cannot overflow. */
	rank = n / 10000 * pct_x100 + ((n % 10000) * pct_x100 + 9999) / 10000;
	return sorted[rank ? rank - 1 : 0];
}

/*
 * Population standard deviation, rounded, of v[0..n) whose sum is sum.
 *
 * With m = floor(sum / n), r = sum % n and D = sum of (v[i] - m)^2, the
 * variance is V = (n * D - r^2) / n^2. round(sqrt(V)) is the largest k with
 * (2k - 1)^2 <= 4V, i.e. (isqrt(floor(4V)) + 1) / 2, and
 * floor(4V) = floor((4D - ceil(4 r^2 / n)) / n). All exact; D needs 192 bits.
 * 4V < 2^128 for any uint64_t values, so the final quotient fits.
 */
static uint64_t stats_stddev(const uint64_t *v, size_t n, u128 sum)
{
	struct stats_u192 acc = {0, 0};
	uint64_t r, rem, s;
	uint64_t m = (uint64_t)stats_div128(sum, n, &r);
	u128 corr;

	for (size_t i = 0; i < n; i++) {
		uint64_t dev = v[i] >= m ? v[i] - m : m - v[i];

		stats_u192_add(&acc, (u128)dev * dev);
	}
	/* r < n <= 2^61 (n counts 8-byte samples in memory), so 4 r^2 < 2^124. */
	corr = stats_div128((u128)r * r * 4, n, &rem) + (rem != 0);
	acc.hi = (acc.hi << 2) | (uint64_t)(acc.lo >> 126);
	acc.lo <<= 2;
	if (acc.lo < corr)
		acc.hi--;
	acc.lo -= corr;
	s = stats_isqrt(stats_u192_div(&acc, n));
	return (s >> 1) + (s & 1);
}

int stats_compute(struct stats *st, uint64_t *v, size_t n)
{
	u128 sum = 0;

	*st = (struct stats){0};
	if (n == 0 || !v)
		return -E_INVAL;
	sort_u64(v, n);
	for (size_t i = 0; i < n; i++)
		sum += v[i];
	st->n = n;
	st->seen = n;
	st->min = v[0];
	st->max = v[n - 1];
	st->p50 = stats_percentile(v, n, 5000);
	st->p90 = stats_percentile(v, n, 9000);
	st->p99 = stats_percentile(v, n, 9900);
	st->sum = (sum >> 64) ? UINT64_MAX : (uint64_t)sum;
	st->mean = stats_div_round(sum, n);
	st->stddev = stats_stddev(v, n, sum);
	return 0;
}

int stats_compute_samples(struct stats *st, struct samples *s)
{
	int err = stats_compute(st, s->buf, s->len);

	st->seen = s->seen;
	return err;
}

uint64_t stats_cycles_to_ns(uint64_t cycles, uint64_t tsc_khz)
{
	if (tsc_khz == 0)
		return 0;
	return stats_div_round((u128)cycles * 1000000, tsc_khz);
}

uint64_t stats_cv_bp(uint64_t mean, uint64_t stddev)
{
	if (mean == 0)
		return 0;
	return stats_div_round((u128)stddev * 10000, mean);
}

void histo_init(struct histo *h)
{
	*h = (struct histo){0};
}

unsigned histo_bucket(uint64_t v)
{
	unsigned e;

	if (v < 4)
		return (unsigned)v;
	e = 63 - (unsigned)__builtin_clzll(v);
	return 4 * (e - 1) + (unsigned)((v >> (e - 2)) & 3);
}

uint64_t histo_bucket_low(unsigned b)
{
	if (b >= HISTO_BUCKETS)
		return UINT64_MAX;
	if (b < 4)
		return b;
	return (uint64_t)(4 + b % 4) << (b / 4 - 1);
}

uint64_t histo_bucket_high(unsigned b)
{
	if (b >= HISTO_BUCKETS)
		return UINT64_MAX;
	if (b < 4)
		return b;
	/* Width 2^(e - 2) with e = b / 4 + 1; written so the last bucket does not wrap. */
	return histo_bucket_low(b) + (((uint64_t)1 << (b / 4 - 1)) - 1);
}

void histo_add(struct histo *h, uint64_t v)
{
	unsigned b = histo_bucket(v);

	if (h->count[b] != UINT32_MAX)
		h->count[b]++;
	if (h->total != UINT64_MAX)
		h->total++;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/sort.c and lib/stats.c: sorting against qsort,
 * statistics against a naive reference (percentiles by their definition,
 * mean and standard deviation in long double and in exact integers), the
 * reservoir's uniformity, and the histogram's bucket layout.
 */
#include <stdlib.h>

#include "lib/error.h"
#include "lib/sort.h"
#include "lib/stats.h"
#include "tests/unit/check.h"

typedef unsigned __int128 u128;

static uint64_t rng_state;

/* splitmix64: a test-only generator independent of the one under test. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* A random value below 2^bits (bits 1..64). */
static uint64_t rnd_bits(unsigned bits)
{
	return bits >= 64 ? rnd() : rnd() & ((1ULL << bits) - 1);
}

/*
 * sqrt and round for long double without libm (the documented test command
 * does not link it): Newton from above, which decreases until it converges.
 */
static long double ld_sqrt(long double x)
{
	long double r = x > 1 ? x : 1;

	if (x <= 0)
		return 0;
	for (int i = 0; i < 1000; i++) {
		long double next = (r + x / r) / 2;

		if (next >= r)
			break;
		r = next;
	}
	return r;
}

/* Halves up, like llroundl for non-negative values. */
static uint64_t ld_round(long double x)
{
	return (uint64_t)(x + 0.5L);
}

static long double ld_abs(long double x)
{
	return x < 0 ? -x : x;
}

/*
 * Byte fill and copy as loops: clang-tidy's insecureAPI check flags the libc
 * calls (it wants C11 Annex K's _s variants, which glibc lacks).
 */
static void fill_bytes(void *p, unsigned char c, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((unsigned char *)p)[i] = c;
}

static void copy_u64(uint64_t *dst, const uint64_t *src, size_t n)
{
	for (size_t i = 0; i < n; i++)
		dst[i] = src[i];
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* Sort a copy with sort_u64 and one with qsort; they must agree. */
static void check_sort(const uint64_t *in, size_t n)
{
	uint64_t *a = malloc((n + 1) * sizeof(*a));
	uint64_t *b = malloc((n + 1) * sizeof(*b));

	copy_u64(a, in, n);
	copy_u64(b, in, n);
	sort_u64(a, n);
	qsort(b, n, sizeof(*b), cmp_u64);
	CHECK(memcmp(a, b, n * sizeof(*a)) == 0);
	free(a);
	free(b);
}

TEST(sort_small)
{
	static const uint64_t perms[][3] = {{1, 2, 3}, {1, 3, 2}, {2, 1, 3},
					    {2, 3, 1}, {3, 1, 2}, {3, 2, 1}};
	uint64_t one = 5;

	sort_u64(NULL, 0);
	sort_u64(&one, 1);
	CHECK_EQ(one, 5);
	for (size_t i = 0; i < 6; i++) {
		uint64_t v[3] = {perms[i][0], perms[i][1], perms[i][2]};

		sort_u64(v, 2);
		CHECK(v[0] <= v[1]);
		v[0] = perms[i][0], v[1] = perms[i][1];
		sort_u64(v, 3);
		CHECK(v[0] == 1 && v[1] == 2 && v[2] == 3);
	}
}

TEST(sort_random)
{
	uint64_t *v = malloc(5000 * sizeof(*v));

	rng_state = 1;
	for (int round = 0; round < 200; round++) {
		size_t n = rnd() % 5000;
		unsigned bits = 1 + rnd() % 64;

		for (size_t i = 0; i < n; i++)
			v[i] = rnd_bits(bits);
		check_sort(v, n);
	}
	free(v);
}

TEST(sort_patterns)
{
	enum { N = 4097 };
	static uint64_t v[N];

	for (size_t i = 0; i < N; i++)
		v[i] = i;
	check_sort(v, N); /* sorted */
	for (size_t i = 0; i < N; i++)
		v[i] = N - i;
	check_sort(v, N); /* reversed */
	for (size_t i = 0; i < N; i++)
		v[i] = 42;
	check_sort(v, N); /* all equal */
	for (size_t i = 0; i < N; i++)
		v[i] = i < N / 2 ? i : N - i;
	check_sort(v, N); /* organ pipe */
	for (size_t i = 0; i < N; i++)
		v[i] = (i * 7) % 3 ? UINT64_MAX : 0;
	check_sort(v, N); /* extremes, many duplicates */
}

/* Percentile by its definition: the smallest sample x with count(<= x) >= pct% of n. */
static uint64_t ref_percentile(const uint64_t *sorted, size_t n, unsigned pct_x100)
{
	for (size_t i = 0; i < n; i++) {
		size_t last = i;

		while (last + 1 < n && sorted[last + 1] == sorted[i])
			last++;
		if ((u128)(last + 1) * 10000 >= (u128)pct_x100 * n)
			return sorted[i];
	}
	return sorted[n - 1];
}

/* True when k = round(sqrt(q) / n) (halves up): (2k - 1)^2 n^2 <= 4q < (2k + 1)^2 n^2. */
static int sd_exact_ok(uint64_t k, u128 q, uint64_t n)
{
	u128 nn = (u128)n * n;
	u128 hi = (u128)(2 * k + 1) * (2 * k + 1) * nn;

	if (k == 0)
		return 4 * q < nn;
	return (u128)(2 * k - 1) * (2 * k - 1) * nn <= 4 * q && 4 * q < hi;
}

/* Compare stats_compute() on v[0..n) with the naive reference; values below 2^40. */
static void check_against_reference(const uint64_t *in, size_t n)
{
	uint64_t *v = malloc(n * sizeof(*v));
	uint64_t *ref = malloc(n * sizeof(*ref));
	struct stats st;
	u128 sum = 0, sumsq = 0;
	long double mean, var = 0;

	copy_u64(v, in, n);
	copy_u64(ref, in, n);
	qsort(ref, n, sizeof(*ref), cmp_u64);
	CHECK_EQ(stats_compute(&st, v, n), 0);
	CHECK(memcmp(v, ref, n * sizeof(*v)) == 0);
	for (size_t i = 0; i < n; i++) {
		sum += ref[i];
		sumsq += (u128)ref[i] * ref[i];
	}
	mean = (long double)sum / n;
	for (size_t i = 0; i < n; i++)
		var += ((long double)ref[i] - mean) * ((long double)ref[i] - mean);
	CHECK_EQ(st.n, n);
	CHECK_EQ(st.seen, n);
	CHECK_EQ(st.min, ref[0]);
	CHECK_EQ(st.max, ref[n - 1]);
	CHECK_EQ(st.p50, ref_percentile(ref, n, 5000));
	CHECK_EQ(st.p90, ref_percentile(ref, n, 9000));
	CHECK_EQ(st.p99, ref_percentile(ref, n, 9900));
	CHECK_EQ(st.sum, (uint64_t)sum);
	CHECK_EQ(st.mean, (uint64_t)((sum * 2 + n) / (2 * (u128)n)));
	CHECK_EQ(st.mean, (uint64_t)ld_round(mean));
	CHECK_EQ(st.stddev, (uint64_t)ld_round(ld_sqrt(var / n)));
	CHECK(sd_exact_ok(st.stddev, (u128)n * sumsq - sum * sum, n));
	for (int i = 0; i < 20; i++) {
		unsigned pct = rnd() % 10001;

		CHECK_EQ(stats_percentile(ref, n, pct), ref_percentile(ref, n, pct));
	}
	free(v);
	free(ref);
}

TEST(stats_empty)
{
	struct stats st;
	uint64_t v[1] = {3};

	fill_bytes(&st, 0xff, sizeof(st));
	CHECK_EQ(stats_compute(&st, v, 0), -E_INVAL);
	CHECK_EQ(st.n | st.seen | st.min | st.p50 | st.p90 | st.p99 | st.max, 0);
	CHECK_EQ(st.mean | st.stddev | st.sum, 0);
	fill_bytes(&st, 0xff, sizeof(st));
	CHECK_EQ(stats_compute(&st, NULL, 4), -E_INVAL);
	CHECK_EQ(st.n | st.max | st.sum, 0);
	CHECK_EQ(stats_percentile(v, 0, 5000), 0);
	CHECK_EQ(stats_percentile(NULL, 3, 5000), 0);
}

TEST(stats_one)
{
	struct stats st;
	uint64_t v[1] = {42};

	CHECK_EQ(stats_compute(&st, v, 1), 0);
	CHECK_EQ(st.n, 1);
	CHECK_EQ(st.seen, 1);
	CHECK(st.min == 42 && st.p50 == 42 && st.p90 == 42 && st.p99 == 42 && st.max == 42);
	CHECK_EQ(st.mean, 42);
	CHECK_EQ(st.stddev, 0);
	CHECK_EQ(st.sum, 42);
}

TEST(stats_two)
{
	struct stats st;
	uint64_t v[2] = {10, 3};
	uint64_t w[2] = {1, 0};

	/* mean 6.5 -> 7, sd 3.5 -> 4 (halves up); p50 = sorted[ceil(1) - 1]. */
	CHECK_EQ(stats_compute(&st, v, 2), 0);
	CHECK(v[0] == 3 && v[1] == 10);
	CHECK_EQ(st.min, 3);
	CHECK_EQ(st.p50, 3);
	CHECK_EQ(st.p90, 10);
	CHECK_EQ(st.p99, 10);
	CHECK_EQ(st.max, 10);
	CHECK_EQ(st.mean, 7);
	CHECK_EQ(st.stddev, 4);
	CHECK_EQ(st.sum, 13);
	/* sd exactly 0.5 rounds up to 1; mean 0.5 rounds up to 1. */
	CHECK_EQ(stats_compute(&st, w, 2), 0);
	CHECK_EQ(st.mean, 1);
	CHECK_EQ(st.stddev, 1);
}

TEST(stats_small_vectors)
{
	struct stats st;
	uint64_t a[4] = {4, 1, 3, 2};		  /* mean 2.5, sd 1.118 */
	uint64_t b[8] = {2, 4, 4, 4, 5, 5, 7, 9}; /* the textbook mean 5, sd 2 */
	uint64_t c[3] = {0, 0, 1};		  /* mean 0.333, sd 0.471 */

	CHECK_EQ(stats_compute(&st, a, 4), 0);
	CHECK_EQ(st.mean, 3);
	CHECK_EQ(st.stddev, 1);
	CHECK_EQ(st.p50, 2);
	CHECK_EQ(stats_compute(&st, b, 8), 0);
	CHECK_EQ(st.mean, 5);
	CHECK_EQ(st.stddev, 2);
	CHECK_EQ(st.p50, 4);
	CHECK_EQ(st.p90, 9);
	CHECK_EQ(stats_compute(&st, c, 3), 0);
	CHECK_EQ(st.mean, 0);
	CHECK_EQ(st.stddev, 0);
}

TEST(stats_all_equal)
{
	static uint64_t v[1000];
	struct stats st;

	for (size_t i = 0; i < 1000; i++)
		v[i] = 7;
	CHECK_EQ(stats_compute(&st, v, 1000), 0);
	CHECK(st.min == 7 && st.p50 == 7 && st.p90 == 7 && st.p99 == 7 && st.max == 7);
	CHECK_EQ(st.mean, 7);
	CHECK_EQ(st.stddev, 0);
	CHECK_EQ(st.sum, 7000);
}

TEST(stats_vs_reference)
{
	uint64_t *v = malloc(3000 * sizeof(*v));

	rng_state = 12345;
	for (int round = 0; round < 500; round++) {
		size_t n = 1 + rnd() % 3000;
		unsigned bits = 1 + rnd() % 40;

		for (size_t i = 0; i < n; i++)
			v[i] = rnd_bits(bits);
		check_against_reference(v, n);
	}
	/* Small n, tiny values: where rounding ties are most likely. */
	for (int round = 0; round < 5000; round++) {
		size_t n = 1 + rnd() % 8;

		for (size_t i = 0; i < n; i++)
			v[i] = rnd_bits(3);
		check_against_reference(v, n);
	}
	free(v);
}

TEST(stats_large_values)
{
	enum { N = 100000 };
	static uint64_t v[N];
	struct stats st;
	uint64_t e[2] = {0, UINT64_MAX};

	/* Half 0, half 2^63: mean 2^62, sd 2^62, sum saturates. */
	for (size_t i = 0; i < N; i++)
		v[i] = i % 2 ? 1ULL << 63 : 0;
	CHECK_EQ(stats_compute(&st, v, N), 0);
	CHECK_EQ(st.mean, 1ULL << 62);
	CHECK_EQ(st.stddev, 1ULL << 62);
	CHECK_EQ(st.sum, UINT64_MAX);
	CHECK_EQ(st.p50, 0);
	CHECK_EQ(st.p90, 1ULL << 63);
	/* Mean and sd (2^64 - 1) / 2 = 2^63 - 0.5, rounded up. */
	CHECK_EQ(stats_compute(&st, e, 2), 0);
	CHECK_EQ(st.mean, 1ULL << 63);
	CHECK_EQ(st.stddev, 1ULL << 63);
	for (size_t i = 0; i < 3; i++)
		v[i] = UINT64_MAX;
	CHECK_EQ(stats_compute(&st, v, 3), 0);
	CHECK_EQ(st.mean, UINT64_MAX);
	CHECK_EQ(st.stddev, 0);
	CHECK_EQ(st.sum, UINT64_MAX);
}

/* A shift by a constant near 2^63 moves the mean by it and keeps the sd: exact checks. */
TEST(stats_shift_invariance)
{
	enum { N = 2000 };
	static uint64_t v[N], w[N];
	const uint64_t base = (1ULL << 63) - (1ULL << 40);
	struct stats small, big;

	rng_state = 777;
	for (int round = 0; round < 50; round++) {
		size_t n = 1 + rnd() % N;
		unsigned bits = 1 + rnd() % 40;

		for (size_t i = 0; i < n; i++) {
			v[i] = rnd_bits(bits);
			w[i] = v[i] + base;
		}
		CHECK_EQ(stats_compute(&small, v, n), 0);
		CHECK_EQ(stats_compute(&big, w, n), 0);
		CHECK_EQ(big.mean, small.mean + base);
		CHECK_EQ(big.stddev, small.stddev);
		CHECK_EQ(big.p50, small.p50 + base);
		CHECK_EQ(big.p99, small.p99 + base);
	}
}

/*
 * Spread over the whole range. Exact figures for the first rounds were
 * computed with Python's big integers; long double (64-bit mantissa, error
 * growing with n) is only a loose cross-check here.
 */
TEST(stats_wide_values)
{
	enum { N = 1000 };
	static const uint64_t exact[3][2] = {{4681198783706809105ULL, 2717473525131704949ULL},
					     {4578215479899537567ULL, 2663222219809296302ULL},
					     {4609148195473990194ULL, 2692996472205876202ULL}};
	static uint64_t v[2048];
	struct stats st;

	rng_state = 99;
	for (int round = 0; round < 50; round++) {
		long double mean, var = 0, sd;
		u128 sum = 0;

		for (size_t i = 0; i < N; i++) {
			v[i] = rnd() >> 1; /* below 2^63 */
			sum += v[i];
		}
		mean = (long double)sum / N; /* summing in long double would lose ~2^8 */
		for (size_t i = 0; i < N; i++)
			var += ((long double)v[i] - mean) * ((long double)v[i] - mean);
		sd = ld_sqrt(var / N);
		CHECK_EQ(stats_compute(&st, v, N), 0);
		CHECK(ld_abs((long double)st.mean - mean) <= 1);
		CHECK(ld_abs((long double)st.stddev - sd) <= sd * 0x1p-50L);
		if (round < 3) {
			CHECK_EQ(st.mean, exact[round][0]);
			CHECK_EQ(st.stddev, exact[round][1]);
		}
	}
	/* i * 2^52 for i < 2048: sd = 2^52 * sqrt((2048^2 - 1) / 12), by Python. */
	for (uint64_t i = 0; i < 2048; i++)
		v[i] = i << 52;
	CHECK_EQ(stats_compute(&st, v, 2048), 0);
	CHECK_EQ(st.mean, 4609434218613702656ULL);
	CHECK_EQ(st.stddev, 2662557846755399795ULL);
}

TEST(stats_percentile_defs)
{
	enum { N = 123457 };
	static uint64_t v[N];
	uint64_t ten[10] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};

	CHECK_EQ(stats_percentile(ten, 10, 0), 1);
	CHECK_EQ(stats_percentile(ten, 10, 1000), 1);
	CHECK_EQ(stats_percentile(ten, 10, 1001), 2);
	CHECK_EQ(stats_percentile(ten, 10, 5000), 5);
	CHECK_EQ(stats_percentile(ten, 10, 9000), 9);
	CHECK_EQ(stats_percentile(ten, 10, 9900), 10);
	CHECK_EQ(stats_percentile(ten, 10, 9990), 10);
	CHECK_EQ(stats_percentile(ten, 10, 10000), 10);
	CHECK_EQ(stats_percentile(ten, 10, 20000), 10);
	/* n above 10000 uses the split ceil(); value i + 1 at index i gives the rank back. */
	for (size_t i = 0; i < N; i++)
		v[i] = i + 1;
	for (unsigned pct = 0; pct <= 10000; pct++) {
		u128 rank = ((u128)pct * N + 9999) / 10000;

		CHECK_EQ(stats_percentile(v, N, pct), rank ? rank : 1);
	}
	CHECK_EQ(stats_percentile(v, 1000, 9990), 999);
	CHECK_EQ(stats_percentile(v, 100, 9900), 99);
}

TEST(stats_cycles_to_ns)
{
	CHECK_EQ(stats_cycles_to_ns(3000000, 3000000), 1000000);
	CHECK_EQ(stats_cycles_to_ns(1, 3000000), 0);
	CHECK_EQ(stats_cycles_to_ns(2, 4000000), 1); /* 0.5 rounds up */
	CHECK_EQ(stats_cycles_to_ns(2, 3000000), 1); /* 0.667 */
	CHECK_EQ(stats_cycles_to_ns(0, 5), 0);
	CHECK_EQ(stats_cycles_to_ns(12345, 0), 0);
	CHECK_EQ(stats_cycles_to_ns(UINT64_MAX, 1), UINT64_MAX);
	CHECK_EQ(stats_cycles_to_ns(UINT64_MAX, 1000000), UINT64_MAX);
	CHECK_EQ(stats_cycles_to_ns(UINT64_MAX, 2000000), 1ULL << 63);
	CHECK_EQ(stats_cycles_to_ns(UINT64_MAX, UINT64_MAX), 1000000);
	rng_state = 5;
	for (int i = 0; i < 100000; i++) {
		uint64_t c = rnd_bits(1 + rnd() % 64), khz = rnd_bits(1 + rnd() % 64);
		u128 q;

		if (khz == 0)
			continue;
		q = ((u128)c * 2000000 + khz) / (2 * (u128)khz);
		CHECK_EQ(stats_cycles_to_ns(c, khz), q >> 64 ? UINT64_MAX : (uint64_t)q);
	}
}

TEST(stats_cv_bp)
{
	CHECK_EQ(stats_cv_bp(0, 5), 0);
	CHECK_EQ(stats_cv_bp(100, 5), 500);
	CHECK_EQ(stats_cv_bp(3, 1), 3333);
	CHECK_EQ(stats_cv_bp(3, 2), 6667);
	CHECK_EQ(stats_cv_bp(20000, 1), 1); /* 0.5 rounds up */
	CHECK_EQ(stats_cv_bp(20001, 1), 0);
	CHECK_EQ(stats_cv_bp(UINT64_MAX, UINT64_MAX), 10000);
	CHECK_EQ(stats_cv_bp(1, UINT64_MAX), UINT64_MAX);
}

TEST(samples_fill_then_reservoir)
{
	enum { CAP = 1000, OFFER = 100000 };
	static uint64_t buf[CAP];
	static unsigned char kept[OFFER];
	struct samples s;
	unsigned decile[10] = {0};
	uint64_t chi2_x100 = 0;

	samples_init(&s, buf, CAP, 2024);
	for (uint64_t i = 0; i < CAP; i++)
		samples_add(&s, i);
	CHECK_EQ(s.len, CAP);
	for (size_t i = 0; i < CAP; i++)
		CHECK_EQ(buf[i], i); /* kept in order until full */
	for (uint64_t i = CAP; i < OFFER; i++)
		samples_add(&s, i);
	CHECK_EQ(s.len, CAP);
	CHECK_EQ(s.cap, CAP);
	CHECK_EQ(s.seen, OFFER);
	for (size_t i = 0; i < CAP; i++) {
		CHECK(buf[i] < OFFER);
		if (buf[i] >= OFFER)
			continue;
		CHECK(!kept[buf[i]]); /* each offered once, so kept at most once */
		kept[buf[i]] = 1;
		decile[buf[i] * 10 / OFFER]++;
	}
	/* Chi-square over 10 deciles, 9 degrees of freedom: p = 0.001 at 27.9; allow 40. */
	for (int d = 0; d < 10; d++)
		chi2_x100 += (uint64_t)(((int64_t)decile[d] - 100) * ((int64_t)decile[d] - 100));
	printf("# deciles chi2 = %" PRIu64 ".%02" PRIu64 "\n", chi2_x100 / 100, chi2_x100 % 100);
	CHECK(chi2_x100 < 4000);
	CHECK(decile[0] < CAP / 2); /* not stuck on the first samples */
}

TEST(samples_deterministic)
{
	static uint64_t a[100], b[100];
	struct samples sa, sb, sz;

	samples_init(&sa, a, 100, 7);
	samples_init(&sb, b, 100, 7);
	samples_init(&sz, NULL, 100, 0); /* no buffer: counts only */
	CHECK(sz.rng != 0);
	for (uint64_t i = 0; i < 10000; i++) {
		samples_add(&sa, i * 3);
		samples_add(&sb, i * 3);
		samples_add(&sz, i);
	}
	CHECK(memcmp(a, b, sizeof(a)) == 0);
	CHECK_EQ(sz.len, 0);
	CHECK_EQ(sz.seen, 10000);
}

TEST(stats_compute_samples)
{
	static uint64_t buf[10];
	struct samples s;
	struct stats st;

	samples_init(&s, buf, 10, 1);
	CHECK_EQ(stats_compute_samples(&st, &s), -E_INVAL);
	for (uint64_t i = 1; i <= 25; i++)
		samples_add(&s, i);
	CHECK_EQ(stats_compute_samples(&st, &s), 0);
	CHECK_EQ(st.n, 10);
	CHECK_EQ(st.seen, 25);
	CHECK(st.min >= 1 && st.max <= 25 && st.min < st.max);
}

TEST(histo_layout)
{
	CHECK_EQ(histo_bucket_low(0), 0);
	CHECK_EQ(histo_bucket_high(HISTO_BUCKETS - 1), UINT64_MAX);
	for (unsigned b = 0; b < HISTO_BUCKETS; b++) {
		uint64_t lo = histo_bucket_low(b), hi = histo_bucket_high(b);

		CHECK(lo <= hi);
		if (b > 0)
			CHECK_EQ(lo, histo_bucket_high(b - 1) + 1);
		CHECK_EQ(histo_bucket(lo), b);
		CHECK_EQ(histo_bucket(hi), b);
		if (b < 8)
			CHECK(lo == b && hi == b); /* 0..7 exact */
		else
			CHECK(hi - lo < lo / 4); /* width at most a quarter of the value */
	}
	CHECK_EQ(histo_bucket(UINT64_MAX), HISTO_BUCKETS - 1);
	CHECK_EQ(histo_bucket(8), 8);
	CHECK_EQ(histo_bucket(9), 8);
	CHECK_EQ(histo_bucket(10), 9);
	CHECK_EQ(histo_bucket(1ULL << 63), 4 * 62);
	CHECK_EQ(histo_bucket_low(HISTO_BUCKETS), UINT64_MAX);
	CHECK_EQ(histo_bucket_high(HISTO_BUCKETS), UINT64_MAX);
	rng_state = 31337;
	for (int i = 0; i < 1000000; i++) {
		uint64_t v = rnd_bits(1 + rnd() % 64);
		unsigned b = histo_bucket(v);

		CHECK(b < HISTO_BUCKETS);
		if (b < HISTO_BUCKETS)
			CHECK(histo_bucket_low(b) <= v && v <= histo_bucket_high(b));
	}
}

TEST(histo_counts)
{
	struct histo h;
	unsigned b = histo_bucket(1000);

	fill_bytes(&h, 0xff, sizeof(h));
	histo_init(&h);
	for (unsigned i = 0; i < HISTO_BUCKETS; i++)
		CHECK_EQ(h.count[i], 0);
	CHECK_EQ(h.total, 0);
	histo_add(&h, 0);
	histo_add(&h, 1000);
	histo_add(&h, 1001);
	histo_add(&h, UINT64_MAX);
	CHECK_EQ(h.count[0], 1);
	CHECK_EQ(h.count[b], 2);
	CHECK_EQ(h.count[HISTO_BUCKETS - 1], 1);
	CHECK_EQ(h.total, 4);
	h.count[b] = UINT32_MAX - 1;
	histo_add(&h, 1000);
	CHECK_EQ(h.count[b], UINT32_MAX);
	histo_add(&h, 1000);
	CHECK_EQ(h.count[b], UINT32_MAX); /* saturates, no wrap to 0 */
	CHECK_EQ(h.total, 6);
	h.total = UINT64_MAX;
	histo_add(&h, 5);
	CHECK_EQ(h.total, UINT64_MAX);
	CHECK_EQ(h.count[5], 1);
}

TEST_MAIN(T(sort_small), T(sort_random), T(sort_patterns), T(stats_empty), T(stats_one),
	  T(stats_two), T(stats_small_vectors), T(stats_all_equal), T(stats_vs_reference),
	  T(stats_large_values), T(stats_shift_invariance), T(stats_wide_values),
	  T(stats_percentile_defs), T(stats_cycles_to_ns), T(stats_cv_bp),
	  T(samples_fill_then_reservoir), T(samples_deterministic), T(stats_compute_samples),
	  T(histo_layout), T(histo_counts))

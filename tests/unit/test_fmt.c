// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of lib/fmt.c: differential against the host libc's snprintf
 * (glibc) over a generated table of flags, widths, precisions, length
 * modifiers and edge values, a seeded random sweep, hand-checked vectors,
 * truncation and return values, and the streaming callback.
 */
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/error.h"
#include "lib/fmt.h"
#include "tests/unit/check.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

enum len { L_HH, L_H, L_NONE, L_L, L_LL, L_Z, L_T, L_J, L_COUNT };

static const char *const len_text[L_COUNT] = {"hh", "h", "", "l", "ll", "z", "t", "j"};

static const int64_t edge_values[] = {
    0,		1,	   -1,	      7,	   -8,
    42,		127,	   -128,      255,	   256,
    32767,	-32768,	   65535,     INT32_MAX,   INT32_MIN,
    UINT32_MAX, INT64_MAX, INT64_MIN, -1234567890, 0x7f00ff00aa55LL,
};

static int mismatches;

/*
 * Formats with both engines from the same arguments; reports the first few
 * differences. clang-tidy's insecureAPI check wants C11 Annex K's vsnprintf_s,
 * which glibc lacks; vsnprintf is bounded and is the reference under test.
 */
static void diff_check(const char *fmt, ...)
{
	char want[1024], got[1024];
	va_list ap;
	int rw, rg;

	va_start(ap, fmt);
	rw =
	    vsnprintf(want, sizeof(want), fmt, ap); // NOLINT(clang-analyzer-security.insecureAPI.*)
	va_end(ap);
	va_start(ap, fmt);
	rg = fmt_vsnprintf(got, sizeof(got), fmt, ap);
	va_end(ap);
	if (rw == rg && strcmp(want, got) == 0)
		return;
	if (mismatches++ < 20)
		printf("#   fmt \"%s\": libc %d \"%s\", fmt %d \"%s\"\n", fmt, rw, want, rg, got);
	check_failed = 1;
}

/* Passes v with exactly the type the length modifier names. */
static void diff_integer(const char *fmt, enum len len, bool is_signed, int64_t v)
{
	uint64_t u = (uint64_t)v;

	switch (len) {
	case L_HH:
	case L_H:
	case L_NONE:
		if (is_signed)
			diff_check(fmt, (int)v);
		else
			diff_check(fmt, (unsigned int)u);
		break;
	case L_L:
		if (is_signed)
			diff_check(fmt, (long)v);
		else
			diff_check(fmt, (unsigned long)u);
		break;
	case L_LL:
		if (is_signed)
			diff_check(fmt, (long long)v);
		else
			diff_check(fmt, (unsigned long long)u);
		break;
	case L_Z:
		diff_check(fmt, (size_t)u); /* %zd reads the signed type of the same size */
		break;
	case L_T:
		diff_check(fmt, (ptrdiff_t)v);
		break;
	default:
		if (is_signed)
			diff_check(fmt, (intmax_t)v);
		else
			diff_check(fmt, (uintmax_t)u);
		break;
	}
}

/* Format-building helpers: each appends to p, NUL-terminates and returns the new end. */
static char *put_str(char *p, const char *s)
{
	while (*s)
		*p++ = *s++;
	*p = '\0';
	return p;
}

static char *put_char(char *p, char c)
{
	*p++ = c;
	*p = '\0';
	return p;
}

static char *put_uint(char *p, unsigned int v)
{
	if (v >= 10)
		p = put_uint(p, v / 10);
	return put_char(p, (char)('0' + v % 10));
}

/* Appends the flags of bit set f (one bit per flag character) to p. */
static char *put_flags(char *p, unsigned int f)
{
	static const char flag_chars[] = "-0+ #";

	for (unsigned int i = 0; i < 5; i++)
		if (f & (1u << i))
			*p++ = flag_chars[i];
	return p;
}

/* Compares "[%<flags><width><prec><len><conv>]" for every length, conversion and edge value. */
static long diff_integer_formats(const char *flags_width_prec)
{
	static const char convs[] = "diuoxX";
	char fmt[64];
	long n = 0;

	for (int len = 0; len < L_COUNT; len++) {
		for (const char *c = convs; *c; c++) {
			char *p = put_str(put_str(fmt, "[%"), flags_width_prec);

			put_char(put_char(put_str(p, len_text[len]), *c), ']');
			for (size_t v = 0; v < N_ELEMS(edge_values); v++, n++)
				diff_integer(fmt, (enum len)len, *c == 'd' || *c == 'i',
					     edge_values[v]);
		}
	}
	return n;
}

TEST(diff_integers_table)
{
	static const char *const widths[] = {"", "1", "6", "25"};
	static const char *const precs[] = {"", ".", ".0", ".1", ".4", ".23"};
	char spec[32];
	long n = 0;

	mismatches = 0;
	for (unsigned int f = 0; f < 32; f++) {
		for (size_t w = 0; w < N_ELEMS(widths); w++) {
			for (size_t pr = 0; pr < N_ELEMS(precs); pr++) {
				put_str(put_str(put_flags(spec, f), widths[w]), precs[pr]);
				n += diff_integer_formats(spec);
			}
		}
	}
	printf("#   %ld integer comparisons, %d mismatches\n", n, mismatches);
	CHECK_EQ(mismatches, 0);
}

TEST(diff_strings_chars_pointers)
{
	static const char *const strs[] = {"", "a", "hello, world", "tab\there", NULL};
	static const char *const sfmts[] = {"%s",	"[%10s]",  "[%-10s]", "[%.3s]",
					    "[%.0s]",	"[%.6s]",  "[%.5s]",  "[%08s]",
					    "[%-4.2s]", "[%.20s]", "[%1s]"};
	static const char *const cfmts[] = {"%c", "[%5c]", "[%-5c]", "[%05c]", "[%.0c]"};
	static const char *const pfmts[] = {"%p",     "[%20p]",	  "[%-20p]", "[%020p]",
					    "[%.8p]", "[%+p]",	  "[% p]",   "[%.0p]",
					    "[%#p]",  "[%-8.3p]", "[%1p]"};
	static const uintptr_t ptrs[] = {0, 1, 0xdeadbeef, 0xffff800000001000, UINTPTR_MAX};
	static const int chars[] = {'a', ' ', '%', 0x7f, 0xe9, 'Z'};

	mismatches = 0;
	for (size_t f = 0; f < N_ELEMS(sfmts); f++)
		for (size_t i = 0; i < N_ELEMS(strs); i++)
			diff_check(sfmts[f], strs[i]);
	for (size_t f = 0; f < N_ELEMS(cfmts); f++)
		for (size_t i = 0; i < N_ELEMS(chars); i++)
			diff_check(cfmts[f], chars[i]);
	for (size_t f = 0; f < N_ELEMS(pfmts); f++)
		for (size_t i = 0; i < N_ELEMS(ptrs); i++)
			diff_check(pfmts[f], (void *)ptrs[i]);
	diff_check("100%% literal only");
	diff_check("%s=%d, %s=%#x%c", "a", -5, "bb", 255u, '!');
	CHECK_EQ(mismatches, 0);
}

TEST(diff_star_width_precision)
{
	static const int stars[] = {-30, -5, -1, 0, 1, 3, 7, 30};

	mismatches = 0;
	for (size_t i = 0; i < N_ELEMS(stars); i++)
		for (size_t j = 0; j < N_ELEMS(stars); j++)
			for (size_t v = 0; v < N_ELEMS(edge_values); v++) {
				diff_check("[%*.*lld]", stars[i], stars[j],
					   (long long)edge_values[v]);
				diff_check("[%-*.*llx]", stars[i], stars[j],
					   (unsigned long long)edge_values[v]);
				diff_check("[%0*d]", stars[i], (int)edge_values[v]);
				diff_check("[%.*s|%*s]", stars[i], "abcdefgh", stars[j], "xy");
			}
	CHECK_EQ(mismatches, 0);
}

/* xorshift64*: a fixed seed gives the same sweep on every run and host. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t rng_next(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

static int64_t rng_value(void)
{
	if (rng_next() % 2)
		return edge_values[rng_next() % N_ELEMS(edge_values)];
	return (int64_t)(rng_next() >> (rng_next() % 64));
}

/* Appends flags, width and precision of a random specification; stars[] gets the '*' values. */
static char *rng_spec(char *p, int stars[2], int *nstars)
{
	*nstars = 0;
	*p++ = '%';
	p = put_flags(p, (unsigned int)(rng_next() % 32));
	switch (rng_next() % 4) {
	case 0:
		*p++ = '*';
		stars[(*nstars)++] = (int)(rng_next() % 41) - 20;
		break;
	case 1:
		p = put_uint(p, (unsigned int)(rng_next() % 30));
		break;
	}
	switch (rng_next() % 4) {
	case 0:
		p = put_str(p, ".*");
		stars[(*nstars)++] = (int)(rng_next() % 41) - 20;
		break;
	case 1:
		p = put_uint(put_char(p, '.'), (unsigned int)(rng_next() % 30));
		break;
	}
	return p;
}

/* Passes the '*' arguments of a random specification, then its value. */
#define DIFF_STARS(fmt, stars, nstars, arg)                                                        \
	((nstars) == 0	 ? diff_check(fmt, arg)                                                    \
	 : (nstars) == 1 ? diff_check(fmt, (stars)[0], arg)                                        \
			 : diff_check(fmt, (stars)[0], (stars)[1], arg))

static void rng_one(void)
{
	static const char convs[] = "diuoxXcsp";
	char fmt[64];
	int stars[2], nstars;
	char conv = convs[rng_next() % 9];
	char *p = rng_spec(fmt, stars, &nstars);
	enum len len = (enum len)(rng_next() % L_COUNT);
	int64_t v = rng_value();
	const char *s = rng_next() % 5 ? "random text" : NULL;

	if (conv == 's' || conv == 'p' || conv == 'c')
		len = L_NONE;
	else if (nstars > 0)
		len = L_LL; /* one argument type to pass after the stars */
	put_char(put_char(put_str(p, len_text[len]), conv), '<');
	switch (conv) {
	case 's':
		DIFF_STARS(fmt, stars, nstars, s);
		break;
	case 'p':
		DIFF_STARS(fmt, stars, nstars, (void *)(uintptr_t)v);
		break;
	case 'c':
		DIFF_STARS(fmt, stars, nstars, (int)(v & 0xff));
		break;
	default:
		if (nstars == 0)
			diff_integer(fmt, len, conv == 'd' || conv == 'i', v);
		else
			DIFF_STARS(fmt, stars, nstars, (long long)v);
		break;
	}
}

TEST(diff_random_sweep)
{
	mismatches = 0;
	rng_state = 0x9e3779b97f4a7c15ULL;
	for (int i = 0; i < 3000; i++)
		rng_one();
	CHECK_EQ(mismatches, 0);
}

/* Values worked out by hand, so a shared misunderstanding with libc would still show. */
TEST(hand_vectors)
{
	char b[128];

	CHECK_EQ(fmt_snprintf(b, sizeof(b), "%lld", (long long)INT64_MIN), 20);
	CHECK_STR(b, "-9223372036854775808");
	CHECK_EQ(fmt_snprintf(b, sizeof(b), "%llu", (unsigned long long)UINT64_MAX), 20);
	CHECK_STR(b, "18446744073709551615");
	fmt_snprintf(b, sizeof(b), "%#llo", (unsigned long long)UINT64_MAX);
	CHECK_STR(b, "01777777777777777777777");
	fmt_snprintf(b, sizeof(b), "%#jX|%#x|%#o|%.0d|%#.0o", (uintmax_t)0xabcdefULL, 0u, 0u, 0,
		     0u);
	CHECK_STR(b, "0XABCDEF|0|0||0");
	const char *f5pct = "[%5%][%-3%]";
	const char *narrow = "[%hhd][%hhu][%hd][%hu]"; /* clang warns on out-of-range literals */
	const char *zero_and_prec =
	    "[%-+6d][%06d][% 05d][%+.3d][%08.3d]"; /* gcc warns on a literal */

	fmt_snprintf(b, sizeof(b), zero_and_prec, 42, -42, 42, 7, -5);
	CHECK_STR(b, "[+42   ][-00042][ 0042][+007][    -005]");
	fmt_snprintf(b, sizeof(b), narrow, 300, 511, 70000, -1);
	CHECK_STR(b, "[44][255][4464][65535]");
	fmt_snprintf(b, sizeof(b), "[%p][%p][%s][%.3s][%c]", (void *)NULL, (void *)0x1000,
		     (char *)NULL, "abcdef", 'q');
	CHECK_STR(b, "[(nil)][0x1000][(null)][abc][q]");
	fmt_snprintf(b, sizeof(b), "[%*d][%-*d][%.*d]", -4, 1, 3, 2, -1, 3);
	CHECK_STR(b, "[1   ][2  ][3]");
	fmt_snprintf(b, sizeof(b), f5pct, 0);
	CHECK_STR(b, "[%][%]"); /* glibc ignores width on %% (ASan's interceptor rejects it) */
	fmt_snprintf(b, sizeof(b), "[%zu][%zd][%td][%ju]", (size_t)-1, (size_t)-1, (ptrdiff_t)-9,
		     (uintmax_t)5);
	CHECK_STR(b, "[18446744073709551615][-1][-9][5]");
}

/* Unsupported or malformed specifications are copied through, consuming nothing. */
TEST(bad_specs_shown)
{
	char b[64];
	const char *f1 = "a%yb", *f2 = "x%", *f3 = "%-5", *f4 = "%n|%f|%ls|%lc|%lp|%d";

	CHECK_EQ(fmt_snprintf(b, sizeof(b), f1, 0), 4);
	CHECK_STR(b, "a%yb");
	CHECK_EQ(fmt_snprintf(b, sizeof(b), f2, 0), 2);
	CHECK_STR(b, "x%");
	CHECK_EQ(fmt_snprintf(b, sizeof(b), f3, 0), 3);
	CHECK_STR(b, "%-5");
	fmt_snprintf(b, sizeof(b), f4, 9);
	CHECK_STR(b, "%n|%f|%ls|%lc|%lp|9");
}

/* Fills buf with a sentinel, formats into its first size bytes, checks nothing beyond. */
static int trunc_case(char *buf, size_t size, const char *want_prefix, int want_ret)
{
	int ret;
	bool clean = true;

	for (size_t i = 0; i < 64; i++)
		buf[i] = 0x5a;
	ret = fmt_snprintf(size ? buf : NULL, size, "%s-%05d", "abc", 42);
	for (size_t i = size; i < 64; i++)
		clean &= buf[i] == 0x5a;
	CHECK(clean);
	CHECK_EQ(ret, want_ret);
	if (size > 0)
		CHECK_STR(buf, want_prefix);
	return ret;
}

TEST(truncation)
{
	char buf[64];

	trunc_case(buf, 0, "", 9);
	trunc_case(buf, 1, "", 9);
	trunc_case(buf, 2, "a", 9);
	trunc_case(buf, 4, "abc", 9);
	trunc_case(buf, 5, "abc-", 9);
	trunc_case(buf, 9, "abc-0004", 9);
	trunc_case(buf, 10, "abc-00042", 9); /* exact fit */
	trunc_case(buf, 11, "abc-00042", 9);
	CHECK_EQ(fmt_snprintf(buf, 4, "%1000d", 7), 1000);
	CHECK_STR(buf, "   ");
	CHECK_EQ(fmt_snprintf(buf, sizeof(buf), "%s", ""), 0);
	CHECK_STR(buf, "");
}

struct collect {
	char text[4096];
	size_t len;
	int calls;
	bool overflow;
};

static void collect_out(void *ctx, const char *s, size_t n)
{
	struct collect *c = ctx;

	c->calls++;
	CHECK(n > 0);
	if (c->len + n >= sizeof(c->text)) {
		c->overflow = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		c->text[c->len++] = s[i];
	c->text[c->len] = '\0';
}

static int collect_printf(struct collect *c, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fmt_vcallback(collect_out, c, fmt, ap);
	va_end(ap);
	return ret;
}

static void discard_out(void *ctx, const char *s, size_t n)
{
	(void)s;
	*(uint64_t *)ctx += n;
}

static int discard_printf(uint64_t *total, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fmt_vcallback(discard_out, total, fmt, ap);
	va_end(ap);
	return ret;
}

TEST(callback)
{
	struct collect c = {.len = 0};
	char want[4096];
	uint64_t total = 0;

	CHECK_EQ(collect_printf(&c, "cpu %u: %-8s %#llx%%", 3u, "x2apic", 0xfee00000ULL), 27);
	CHECK_STR(c.text, "cpu 3: x2apic   0xfee00000%");
	c = (struct collect){.len = 0};
	/* A width larger than any internal chunk, streamed without a buffer limit. */
	CHECK_EQ(collect_printf(&c, "<%3000d>%s", -1, "end"), 3005);
	want[0] = '<';
	for (int i = 1; i < 2999; i++)
		want[i] = ' ';
	put_str(want + 2999, "-1>end");
	CHECK(!c.overflow);
	CHECK_STR(c.text, want);
	CHECK(c.calls > 2);
	c = (struct collect){.len = 0};
	CHECK_EQ(collect_printf(&c, "%s", ""), 0);
	CHECK_EQ(c.calls, 0);
	/* Output past INT_MAX is still streamed, but the count no longer fits the int. */
	CHECK_EQ(discard_printf(&total, "%*d%*d", 1 << 30, 1, 1 << 30, 2), -E_2BIG);
	CHECK_EQ(total, 1ULL << 31);
}

TEST_MAIN(T(diff_integers_table), T(diff_strings_chars_pointers), T(diff_star_width_precision),
	  T(diff_random_sweep), T(hand_vectors), T(bad_specs_shown), T(truncation), T(callback))

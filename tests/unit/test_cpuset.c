// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/cpuset.c: membership at the word edges (63/64, 1023),
 * the walk against a naive scan, set algebra, and the text form both ways
 * with every error path.
 */
#include <stdlib.h>
#include "lib/cpuset.h"
#include "lib/error.h"
#include "tests/unit/check.h"

static struct cpuset set_of(const char *text)
{
	struct cpuset s;

	if (cpuset_parse(text, strlen(text), &s)) {
		printf("#   bad fixture \"%s\"\n", text);
		abort();
	}
	return s;
}

TEST(add_remove_has)
{
	struct cpuset s;

	cpuset_clear(&s);
	CHECK(cpuset_empty(&s));
	CHECK_EQ(cpuset_add(&s, 0), 0);
	CHECK_EQ(cpuset_add(&s, 63), 0);
	CHECK_EQ(cpuset_add(&s, 64), 0);
	CHECK_EQ(cpuset_add(&s, 1023), 0);
	CHECK_EQ(s.w[0], 0x8000000000000001ull);
	CHECK_EQ(s.w[1], 1);
	CHECK_EQ(s.w[15], 0x8000000000000000ull);
	CHECK(cpuset_has(&s, 63) && cpuset_has(&s, 64) && !cpuset_has(&s, 62));
	CHECK_EQ(cpuset_count(&s), 4);
	CHECK_EQ(cpuset_add(&s, 1024), -E_RANGE);
	CHECK_EQ(cpuset_remove(&s, 1024), -E_RANGE);
	CHECK(!cpuset_has(&s, 1024));
	CHECK(!cpuset_has(&s, 0xffffffffu));
	CHECK_EQ(cpuset_remove(&s, 63), 0);
	CHECK_EQ(cpuset_remove(&s, 63), 0); /* removing a non-member is fine */
	CHECK(!cpuset_has(&s, 63));
	CHECK_EQ(cpuset_count(&s), 3);
	CHECK(!cpuset_empty(&s));
}

TEST(fill)
{
	struct cpuset s;

	CHECK_EQ(cpuset_fill(&s, 0), 0);
	CHECK(cpuset_empty(&s));
	CHECK_EQ(cpuset_fill(&s, 1), 0);
	CHECK_EQ(s.w[0], 1);
	CHECK_EQ(cpuset_fill(&s, 64), 0);
	CHECK_EQ(s.w[0], ~0ull);
	CHECK_EQ(s.w[1], 0);
	CHECK_EQ(cpuset_fill(&s, 65), 0);
	CHECK_EQ(s.w[1], 1);
	CHECK_EQ(cpuset_count(&s), 65);
	CHECK_EQ(cpuset_fill(&s, 1024), 0);
	CHECK_EQ(cpuset_count(&s), 1024);
	CHECK_EQ(s.w[15], ~0ull);
	CHECK_EQ(cpuset_fill(&s, 1025), -E_RANGE);
	CHECK_EQ(cpuset_count(&s), 1024); /* untouched */
}

TEST(next_and_for_each)
{
	struct cpuset s = set_of("3,63-65,700,1023");
	static const int want[] = {3, 63, 64, 65, 700, 1023};
	size_t n = 0;

	CHECK_EQ(cpuset_next(&s, 0), 3);
	CHECK_EQ(cpuset_next(&s, 3), 3);
	CHECK_EQ(cpuset_next(&s, 4), 63);
	CHECK_EQ(cpuset_next(&s, 66), 700);
	CHECK_EQ(cpuset_next(&s, 1023), 1023);
	CHECK_EQ(cpuset_next(&s, 1024), -E_NOENT);
	CHECK_EQ(cpuset_next(&s, 0xffffffffu), -E_NOENT);
	cpuset_for_each(c, &s)
	{
		CHECK(n < sizeof(want) / sizeof(want[0]) && c == want[n]);
		n++;
	}
	CHECK_EQ(n, 6);
	cpuset_clear(&s);
	CHECK_EQ(cpuset_next(&s, 0), -E_NOENT);
	cpuset_for_each(c, &s) CHECK(c < 0); /* never runs */
}

/* The walk agrees with a bit-by-bit scan on pseudo-random sets. */
TEST(next_matches_naive)
{
	uint64_t x = 0x9e3779b97f4a7c15ull;

	for (int round = 0; round < 200; round++) {
		struct cpuset s;
		unsigned int from;
		int naive = -E_NOENT;

		for (unsigned int i = 0; i < CPUSET_WORDS; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s.w[i] = round % 3 ? x & (x >> 11) & (x >> 23) : 0; /* sparse or empty */
		}
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		from = (unsigned int)(x % 1030);
		for (unsigned int c = from; c < CPUSET_BITS; c++) {
			if (s.w[c / 64] >> (c % 64) & 1) {
				naive = (int)c;
				break;
			}
		}
		CHECK_EQ(cpuset_next(&s, from), naive);
	}
}

TEST(algebra)
{
	struct cpuset a = set_of("0-5,64"), b = set_of("4-7,1000"), d;

	cpuset_or(&d, &a, &b);
	CHECK(cpuset_equal(&d, &(struct cpuset){0}) == false);
	CHECK(cpuset_equal(&d, &(const struct cpuset){{0xff, 1, [15] = 1ull << 40}}));
	cpuset_and(&d, &a, &b);
	CHECK_EQ(d.w[0], 0x30);
	CHECK_EQ(cpuset_count(&d), 2);
	cpuset_andnot(&d, &a, &b);
	CHECK_EQ(d.w[0], 0x0f);
	CHECK_EQ(d.w[1], 1);
	CHECK_EQ(cpuset_count(&d), 5);
	cpuset_andnot(&a, &a, &a); /* aliasing */
	CHECK(cpuset_empty(&a));
}

TEST(format)
{
	struct cpuset s;
	char buf[64];

	cpuset_clear(&s);
	CHECK_EQ(cpuset_format(&s, buf, sizeof(buf)), 4);
	CHECK_STR(buf, "none");
	s = set_of("0");
	CHECK_EQ(cpuset_format(&s, buf, sizeof(buf)), 1);
	CHECK_STR(buf, "0");
	s = set_of("0-3,5,7-8,63-64,1023");
	CHECK_EQ(cpuset_format(&s, buf, sizeof(buf)), 20);
	CHECK_STR(buf, "0-3,5,7-8,63-64,1023");
	cpuset_fill(&s, 1024);
	CHECK_EQ(cpuset_format(&s, buf, sizeof(buf)), 6);
	CHECK_STR(buf, "0-1023");
	s = set_of("1,3,5");
	CHECK_EQ(cpuset_format(&s, buf, sizeof(buf)), 5);
	CHECK_STR(buf, "1,3,5");
}

TEST(format_truncates)
{
	struct cpuset s = set_of("10-20,300");
	char buf[16];

	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(cpuset_format(&s, buf, 8), -E_NOSPC);
	CHECK_STR(buf, "10-20,3"); /* 7 characters and the NUL */
	CHECK_EQ(cpuset_format(&s, buf, 10), 9);
	CHECK_STR(buf, "10-20,300");
	CHECK_EQ(cpuset_format(&s, buf, 9), -E_NOSPC);
	CHECK_STR(buf, "10-20,30");
	CHECK_EQ(cpuset_format(&s, NULL, 0), -E_NOSPC);
	buf[0] = 'x';
	CHECK_EQ(cpuset_format(&s, buf, 1), -E_NOSPC);
	CHECK_EQ(buf[0], 0);
}

TEST(parse)
{
	struct cpuset s;

	CHECK_EQ(cpuset_parse("none", 4, &s), 0);
	CHECK(cpuset_empty(&s));
	CHECK_EQ(cpuset_parse("2-4,9", 5, &s), 0);
	CHECK_EQ(s.w[0], 0x21c);
	CHECK_EQ(cpuset_parse("1023", 4, &s), 0);
	CHECK(cpuset_has(&s, 1023) && cpuset_count(&s) == 1);
	CHECK_EQ(cpuset_parse("0-1023", 6, &s), 0);
	CHECK_EQ(cpuset_count(&s), 1024);
	CHECK_EQ(cpuset_parse("7-7", 3, &s), 0);
	CHECK_EQ(s.w[0], 0x80);
	/* len bounds the text: a trailing ",9" outside it is not read */
	CHECK_EQ(cpuset_parse("1,9", 1, &s), 0);
	CHECK_EQ(s.w[0], 2);
}

TEST(parse_errors)
{
	static const struct {
		const char *text;
		int err;
	} bad[] = {
	    {"", -E_INVAL},	{",", -E_INVAL},      {"1,", -E_INVAL},
	    {",1", -E_INVAL},	{"1,,2", -E_INVAL},   {"1-", -E_INVAL},
	    {"-1", -E_INVAL},	{"3-1", -E_INVAL},    {"1 2", -E_INVAL},
	    {"a", -E_INVAL},	{"1,1", -E_INVAL},    {"0-3,2", -E_INVAL},
	    {"1024", -E_RANGE}, {"0-1024", -E_RANGE}, {"99999999999", -E_RANGE},
	    {"nonE", -E_INVAL}, {"none,1", -E_INVAL}, {"1-2-3", -E_INVAL},
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct cpuset s;
		int rc = cpuset_parse(bad[i].text, strlen(bad[i].text), &s);

		if (rc != bad[i].err)
			printf("#   \"%s\": got %d, want %d\n", bad[i].text, rc, bad[i].err);
		CHECK_EQ(rc, bad[i].err);
	}
}

/* format then parse gives the same set back. */
TEST(round_trip)
{
	uint64_t x = 0x243f6a8885a308d3ull;
	static char buf[8192];

	for (int round = 0; round < 50; round++) {
		struct cpuset s, t;
		int len;

		for (unsigned int i = 0; i < CPUSET_WORDS; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17;
			s.w[i] = round & 1 ? x : x & (x >> 3);
		}
		len = cpuset_format(&s, buf, sizeof(buf));
		CHECK(len > 0);
		CHECK_EQ(cpuset_parse(buf, (size_t)len, &t), 0);
		CHECK(cpuset_equal(&s, &t));
	}
}

TEST_MAIN(T(add_remove_has), T(fill), T(next_and_for_each), T(next_matches_naive), T(algebra),
	  T(format), T(format_truncates), T(parse), T(parse_errors), T(round_trip))

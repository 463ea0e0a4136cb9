/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A ten-line test harness for host unit tests of lib/.
 *
 * Each test file defines its cases with TEST(name), lists them in a
 * TEST_LIST and ends with TEST_MAIN(). Every case prints one TAP line
 * ("ok - file:case" or "not ok - file:case"), which tests/run counts.
 */
#ifndef TESTS_UNIT_CHECK_H
#define TESTS_UNIT_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failed;

#define CHECK(c)                                                                                   \
	do {                                                                                       \
		if (!(c)) {                                                                        \
			printf("#   %s:%d: CHECK(%s)\n", __FILE__, __LINE__, #c);                     \
			check_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_EQ(a, b)                                                                             \
	do {                                                                                       \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                                   \
		if (a_ != b_) {                                                                    \
			printf("#   %s:%d: %s == %s: 0x%" PRIx64 " != 0x%" PRIx64 "\n", __FILE__,  \
			       __LINE__, #a, #b, a_, b_);                                          \
			check_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

#define CHECK_STR(a, b)                                                                            \
	do {                                                                                       \
		const char *a_ = (a), *b_ = (b);                                                   \
		if (strcmp(a_, b_) != 0) {                                                         \
			printf("#   %s:%d: %s == %s: \"%s\" != \"%s\"\n", __FILE__, __LINE__, #a, #b, \
			       a_, b_);                                                            \
			check_failed = 1;                                                          \
		}                                                                                  \
	} while (0)

struct test_case {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void test_##name(void)
#define T(name) { #name, test_##name }

#define TEST_MAIN(...)                                                                             \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct test_case cases[] = { __VA_ARGS__ };                           \
		int bad = 0;                                                                       \
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {                   \
			check_failed = 0;                                                          \
			cases[i].fn();                                                             \
			printf("%s - %s:%s\n", check_failed ? "not ok" : "ok", __FILE__,           \
			       cases[i].name);                                                     \
			bad |= check_failed;                                                       \
		}                                                                                  \
		return bad;                                                                        \
	}

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: cpuset_parse (lib/cpuset.c), the text form of a CPU set
 * ("0-3,5", "none"; lib/cpuset.h), on any bytes. An accepted set must format
 * back to text that parses to the same set; formatting into a buffer whose
 * size the input picks must give the same text, cut and NUL-terminated, or
 * -E_NOSPC.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cpuset.h"
#include "lib/error.h"
#include "tests/fuzz/fuzz.h"

/* "0,2,4,...,1022" is the longest text: 512 numbers of up to 4 digits and their commas */
#define TEXT_MAX 2560

static void check_round_trip(const struct cpuset *s, size_t small_size)
{
	static char text[TEXT_MAX], small[64];
	struct cpuset again;
	int len = cpuset_format(s, text, sizeof(text));

	FUZZ_ASSERT(len > 0 && (size_t)len < sizeof(text) && text[len] == '\0');
	FUZZ_ASSERT(cpuset_parse(text, (size_t)len, &again) == 0);
	FUZZ_ASSERT(cpuset_equal(s, &again));

	small_size %= sizeof(small);
	FUZZ_ASSERT(cpuset_format(s, small, small_size) ==
		    ((size_t)len < small_size ? len : -E_NOSPC));
	if (small_size > 0) {
		size_t kept = (size_t)len < small_size ? (size_t)len : small_size - 1;

		FUZZ_ASSERT(small[kept] == '\0' && memcmp(small, text, kept) == 0);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = (char *)fuzz_dup(data, size, 0);
	struct cpuset s;
	int rc = cpuset_parse(text, size, &s);

	FUZZ_ASSERT(rc == 0 || rc == -E_INVAL || rc == -E_RANGE);
	if (rc == 0)
		check_round_trip(&s, size);
	free(text);
	return 0;
}

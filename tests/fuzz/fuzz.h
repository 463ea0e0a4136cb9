/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Shared by the libFuzzer targets of tests/fuzz (llvm.org/docs/LibFuzzer.html):
 * the entry point's prototype and an assertion that reports through abort(),
 * so that libFuzzer saves the input that broke a property, exactly as it does
 * for a sanitizer report.
 */
#ifndef TESTS_FUZZ_FUZZ_H
#define TESTS_FUZZ_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: property broken: %s\n", __FILE__, __LINE__,        \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* An exact-size heap copy, so that AddressSanitizer flags a read one byte past its end. */
static inline uint8_t *fuzz_dup(const uint8_t *data, size_t size, size_t extra)
{
	size_t n = size + extra;
	uint8_t *p = malloc(n ? n : 1);

	FUZZ_ASSERT(p != NULL);
	for (size_t i = 0; i < size; i++)
		p[i] = data[i];
	return p;
}

#endif

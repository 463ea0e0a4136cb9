// SPDX-License-Identifier: GPL-2.0-only
/* Fault-free stack reads for the stall report (lib/backtrace.h). */
#include "lib/backtrace.h"

/* [at, at + bytes) lies inside [lo, hi), without overflow. */
static int inside(uint64_t at, uint64_t bytes, uint64_t lo, uint64_t hi)
{
	return at >= lo && at < hi && bytes <= hi - at;
}

static uint64_t word_at(uint64_t at)
{
	return *(const volatile uint64_t *)(uintptr_t)at;
}

unsigned int stack_peek(uint64_t at, uint64_t lo, uint64_t hi, uint64_t *out, unsigned int n)
{
	unsigned int got = 0;

	if (at & 7)
		return 0;
	while (got < n && inside(at + 8ull * got, 8, lo, hi)) {
		out[got] = word_at(at + 8ull * got);
		got++;
	}
	return got;
}

unsigned int fp_backtrace(uint64_t rbp, uint64_t lo, uint64_t hi, uint64_t text_lo,
			  uint64_t text_hi, uint64_t *out, unsigned int max)
{
	unsigned int got = 0;

	while (got < max && !(rbp & 7) && inside(rbp, 16, lo, hi)) {
		uint64_t next = word_at(rbp), ret = word_at(rbp + 8);

		if (ret < text_lo || ret >= text_hi)
			break;
		out[got++] = ret;
		if (next <= rbp)
			break;
		rbp = next;
	}
	return got;
}

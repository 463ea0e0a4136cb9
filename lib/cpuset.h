/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fixed-size set of dense CPU numbers (0 .. CPUSET_BITS - 1), pure code.
 *
 * The IPI backends take a set as their destination and walk it on the send
 * path, so the walk (cpuset_next, cpuset_for_each) is inline and costs one
 * count-trailing-zeros per member. Text form, for messages and the command
 * line: comma-separated numbers and inclusive ranges, "0-3,5,7-8"; the empty
 * set is "none".
 */
#ifndef LIB_CPUSET_H
#define LIB_CPUSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/error.h"

#define CPUSET_BITS	 1024 /* = MAX_CPUS of the kernel */
#define CPUSET_WORD_BITS 64
#define CPUSET_WORDS	 (CPUSET_BITS / CPUSET_WORD_BITS)

struct cpuset {
	uint64_t w[CPUSET_WORDS]; /* bit c % 64 of word c / 64 is CPU c */
};

void cpuset_clear(struct cpuset *s);
/* s = {0 .. n-1}; -E_RANGE (s untouched) if n > CPUSET_BITS. */
int cpuset_fill(struct cpuset *s, unsigned int n);
/* 0, or -E_RANGE if c >= CPUSET_BITS. */
int cpuset_add(struct cpuset *s, unsigned int c);
int cpuset_remove(struct cpuset *s, unsigned int c);
unsigned int cpuset_count(const struct cpuset *s);
bool cpuset_empty(const struct cpuset *s);
bool cpuset_equal(const struct cpuset *a, const struct cpuset *b);
/* dst may alias a or b. */
void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);
void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b);

/*
 * Text form ("0-3,5" or "none") into buf. Returns the length the whole text
 * has, or -E_NOSPC when it did not fit (buf then holds a truncated,
 * NUL-terminated prefix when size > 0).
 */
int cpuset_format(const struct cpuset *s, char *buf, size_t size);

/*
 * Parses len bytes of text form into s (cleared first). Numbers are decimal;
 * a range needs lo <= hi; "none" is the empty set. -E_INVAL for malformed
 * text (empty item, stray character, lo > hi, a CPU listed twice), -E_RANGE
 * for a CPU >= CPUSET_BITS.
 */
int cpuset_parse(const char *text, size_t len, struct cpuset *s);

static inline bool cpuset_has(const struct cpuset *s, unsigned int c)
{
	if (c >= CPUSET_BITS)
		return false;
	return (s->w[c / CPUSET_WORD_BITS] >> (c % CPUSET_WORD_BITS)) & 1;
}

/* The smallest member >= from, or -E_NOENT when there is none. */
static inline int cpuset_next(const struct cpuset *s, unsigned int from)
{
	unsigned int i = from / CPUSET_WORD_BITS;
	uint64_t word;

	if (from >= CPUSET_BITS)
		return -E_NOENT;
	word = s->w[i] & (~0ull << (from % CPUSET_WORD_BITS));
	for (;;) {
		if (word)
			return (int)(i * CPUSET_WORD_BITS + (unsigned int)__builtin_ctzll(word));
		if (++i == CPUSET_WORDS)
			return -E_NOENT;
		word = s->w[i];
	}
}

/* for each member cpu of s, in increasing order; cpu is an int. */
#define cpuset_for_each(cpu, s)                                                                    \
	for (int(cpu) = cpuset_next((s), 0); (cpu) >= 0;                                           \
	     (cpu) = cpuset_next((s), (unsigned int)(cpu) + 1))

#endif

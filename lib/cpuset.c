// SPDX-License-Identifier: GPL-2.0-only
/* A fixed 1024-bit set of dense CPU numbers: set algebra and text form. */
#include "lib/cpuset.h"
#include "lib/error.h"

void cpuset_clear(struct cpuset *s)
{
	__builtin_memset(s, 0, sizeof(*s));
}

int cpuset_fill(struct cpuset *s, unsigned int n)
{
	if (n > CPUSET_BITS)
		return -E_RANGE;
	for (unsigned int i = 0; i < CPUSET_WORDS; i++) {
		unsigned int lo = i * CPUSET_WORD_BITS;

		if (n >= lo + CPUSET_WORD_BITS)
			s->w[i] = ~0ull;
		else if (n > lo)
			s->w[i] = (1ull << (n - lo)) - 1;
		else
			s->w[i] = 0;
	}
	return 0;
}

int cpuset_add(struct cpuset *s, unsigned int c)
{
	if (c >= CPUSET_BITS)
		return -E_RANGE;
	s->w[c / CPUSET_WORD_BITS] |= 1ull << (c % CPUSET_WORD_BITS);
	return 0;
}

int cpuset_remove(struct cpuset *s, unsigned int c)
{
	if (c >= CPUSET_BITS)
		return -E_RANGE;
	s->w[c / CPUSET_WORD_BITS] &= ~(1ull << (c % CPUSET_WORD_BITS));
	return 0;
}

/* SWAR bit count: __builtin_popcountll needs libgcc unless the kernel is built with -mpopcnt. */
static unsigned int cpuset_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

unsigned int cpuset_count(const struct cpuset *s)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < CPUSET_WORDS; i++)
		n += cpuset_popcount(s->w[i]);
	return n;
}

bool cpuset_empty(const struct cpuset *s)
{
	for (unsigned int i = 0; i < CPUSET_WORDS; i++) {
		if (s->w[i])
			return false;
	}
	return true;
}

bool cpuset_equal(const struct cpuset *a, const struct cpuset *b)
{
	return __builtin_memcmp(a, b, sizeof(*a)) == 0;
}

void cpuset_or(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] | b->w[i];
}

void cpuset_and(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & b->w[i];
}

void cpuset_andnot(struct cpuset *dst, const struct cpuset *a, const struct cpuset *b)
{
	for (unsigned int i = 0; i < CPUSET_WORDS; i++)
		dst->w[i] = a->w[i] & ~b->w[i];
}

/* Appends text at *len, keeping buf NUL-terminated; *len counts what did not fit too. */
static void cpuset_put(char *buf, size_t size, size_t *len, const char *text, size_t n)
{
	for (size_t i = 0; i < n; i++, (*len)++) {
		if (*len + 1 < size)
			buf[*len] = text[i];
	}
	if (size)
		buf[*len < size ? *len : size - 1] = 0;
}

static void cpuset_put_uint(char *buf, size_t size, size_t *len, unsigned int v)
{
	char digits[10];
	size_t n = 0;

	do {
		digits[sizeof(digits) - 1 - n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	cpuset_put(buf, size, len, digits + sizeof(digits) - n, n);
}

int cpuset_format(const struct cpuset *s, char *buf, size_t size)
{
	size_t len = 0;
	int lo = cpuset_next(s, 0);

	if (size)
		buf[0] = 0;
	if (lo < 0)
		cpuset_put(buf, size, &len, "none", 4);
	while (lo >= 0) {
		int hi = lo;

		while (cpuset_has(s, (unsigned int)hi + 1))
			hi++;
		if (len)
			cpuset_put(buf, size, &len, ",", 1);
		cpuset_put_uint(buf, size, &len, (unsigned int)lo);
		if (hi > lo) {
			cpuset_put(buf, size, &len, "-", 1);
			cpuset_put_uint(buf, size, &len, (unsigned int)hi);
		}
		lo = cpuset_next(s, (unsigned int)hi + 1);
	}
	return len < size ? (int)len : -E_NOSPC;
}

/* A decimal number at text[*pos]; -E_INVAL if none, -E_RANGE if >= CPUSET_BITS. */
static int cpuset_parse_uint(const char *text, size_t len, size_t *pos, unsigned int *out)
{
	size_t start = *pos;
	unsigned int v = 0;

	while (*pos < len && text[*pos] >= '0' && text[*pos] <= '9') {
		v = v * 10 + (unsigned int)(text[*pos] - '0');
		if (v >= CPUSET_BITS)
			return -E_RANGE;
		(*pos)++;
	}
	if (*pos == start)
		return -E_INVAL;
	*out = v;
	return 0;
}

/* One item, "n" or "lo-hi", at text[*pos]; adds its CPUs to s. */
static int cpuset_parse_item(const char *text, size_t len, size_t *pos, struct cpuset *s)
{
	unsigned int lo, hi;
	int err = cpuset_parse_uint(text, len, pos, &lo);

	if (err)
		return err;
	hi = lo;
	if (*pos < len && text[*pos] == '-') {
		(*pos)++;
		err = cpuset_parse_uint(text, len, pos, &hi);
		if (err)
			return err;
		if (hi < lo)
			return -E_INVAL;
	}
	for (unsigned int c = lo; c <= hi; c++) {
		if (cpuset_has(s, c))
			return -E_INVAL;
		cpuset_add(s, c);
	}
	return 0;
}

int cpuset_parse(const char *text, size_t len, struct cpuset *s)
{
	size_t pos = 0;

	cpuset_clear(s);
	if (len == 4 && __builtin_memcmp(text, "none", 4) == 0)
		return 0;
	for (;;) {
		int err = cpuset_parse_item(text, len, &pos, s);

		if (err)
			return err;
		if (pos == len)
			return 0;
		if (text[pos] != ',')
			return -E_INVAL;
		pos++;
	}
}

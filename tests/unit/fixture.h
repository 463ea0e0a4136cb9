/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the firmware-table tests share (test_acpi.c, test_mptable.c): byte
 * helpers, captured fixtures read from tests/fixtures/, and a synthetic
 * physical memory of a few regions behind an acpi_map_fn, each region an
 * exact heap copy so AddressSanitizer catches a read one byte past it.
 */
#ifndef TESTS_UNIT_FIXTURE_H
#define TESTS_UNIT_FIXTURE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fill and copy as loops: clang-tidy's insecureAPI check flags every libc
 * memset/memcpy call, and these sizes are all local and obvious. */
static inline void bytes_fill(void *dst, int v, size_t n)
{
	uint8_t *d = dst;

	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)v;
}

static inline void bytes_copy(void *dst, const void *src, size_t n)
{
	uint8_t *d = dst;
	const uint8_t *s = src;

	for (size_t i = 0; i < n; i++)
		d[i] = s[i];
}

static inline void put_le16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static inline uint8_t *dup_exact(const void *src, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		abort();
	if (len)
		bytes_copy(p, src, len);
	return p;
}

/*
 * Reads dir/name/suffix (run from the repository root) into an exactly-sized
 * buffer; a missing fixture bails out of the whole run.
 */
static inline uint8_t *fixture_load(const char *dir, const char *name, const char *suffix,
				    size_t *len)
{
	char path[256];
	FILE *f;
	long n;
	uint8_t *buf;

	if ((size_t)snprintf(path, sizeof(path), "%s%s%s", dir, name, suffix) >= sizeof(path))
		abort();
	f = fopen(path, "rb");
	if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		printf("Bail out! cannot read %s (run from the repository root)\n", path);
		exit(1);
	}
	buf = malloc((size_t)n);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
		abort();
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* A synthetic physical memory of a few regions. */
struct region {
	uint64_t phys;
	uint8_t *buf; /* exactly len bytes */
	size_t len;
};

struct memory {
	struct region r[8];
	size_t n;
	size_t maps; /* calls of mem_map, for tests that bound them */
};

/* An acpi_map_fn (lib/acpi.h) over a struct memory: NULL outside every region. */
static inline const void *mem_map(void *ctx, uint64_t phys, size_t len)
{
	struct memory *m = ctx;

	m->maps++;
	for (size_t i = 0; i < m->n; i++) {
		const struct region *r = &m->r[i];

		if (phys >= r->phys && phys - r->phys <= r->len && len <= r->len - (phys - r->phys))
			return r->buf + (phys - r->phys);
	}
	return NULL;
}

static inline uint8_t *mem_add(struct memory *m, uint64_t phys, const void *src, size_t len)
{
	struct region *r;

	if (m->n == sizeof(m->r) / sizeof(m->r[0]))
		abort();
	r = &m->r[m->n++];
	r->phys = phys;
	r->buf = dup_exact(src, len);
	r->len = len;
	return r->buf;
}

static inline void mem_free(struct memory *m)
{
	for (size_t i = 0; i < m->n; i++)
		free(m->r[i].buf);
	m->n = 0;
}

#endif

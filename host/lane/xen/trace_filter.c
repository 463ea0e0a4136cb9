// SPDX-License-Identifier: GPL-2.0-only
/*
 * xentrace-filter IN OUT: a copy of xentrace's binary file IN without the
 * scheduler's own records (class 0x0002, subclass 2: credit2's tickles,
 * load updates and run-queue picks), each window's size made what is left.
 *
 * Why: the Xen lane's dom0 sends a traced frame's file over the outer VM's
 * serial line, and credit2's records were some 70% of it. The xentrace
 * mask cannot leave them out: Xen matches class and subclass bits apart
 * (__trace_var()), and the HVM handler records, which carry the exits'
 * MSRs, ports and hypercalls, are subclass 2 of their class too. The
 * reader (host/ipibench/xenhost/xentrace.py) reads past these records, so
 * what it makes of a whole file is the same without them: the runstate
 * changes (subclass 1) that place HVM records on vCPUs stay, and so do the
 * lost-records and wrap records; the times it writes are the exits' and
 * entries' own TSCs. (Of a file cut short, --cut, it may keep other
 * lines: a CPU's last record, which says how far its stream came, can be
 * another, and a CPU that wrote only these records no longer counts.)
 * Xen's own buffers still hold them: xentrace -S 256 is 1 MiB a CPU
 * (xen-frames.sh), drained every 100 ms; a traced HVM frame of 3 vCPUs
 * wrote 4.3 MB in 15 s on 2 CPUs, some 140 KB a CPU a second.
 *
 * The file (xentrace.c, Xen 4.17): windows, each a TRC_TRACE_CPU_CHANGE
 * record (the CPU, the window's bytes) and that many bytes of records; a
 * record is a 32-bit header (event in bits 27:0, the count of 32-bit words
 * after it in 30:28, bit 31 when a 64-bit TSC comes first) and its words.
 *
 * Exit: 0 written; 1 IN is not such a file or cannot be read, or OUT
 * cannot be written (the caller then sends IN whole); 2 usage.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRC_TRACE_CPU_CHANGE 0x0001f003u
#define EVENT_MASK	     0x0fffffffu
#define CLASS_SUBCLASS(ev)   ((ev)&0x0ffff000u)
#define TRC_SCHED_CLASS	     0x00022000u /* the scheduler's own records */

static uint32_t get32(const unsigned char *p)
{
	uint32_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

/* The bytes of the record whose header is h: header, TSC, words. */
static size_t record_size(uint32_t h)
{
	return 4 + ((h >> 31) ? 8 : 0) + 4 * ((h >> 28) & 7);
}

static unsigned char *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = NULL;
	size_t cap = 0;

	*n = 0;
	if (!f)
		return NULL;
	for (;;) {
		if (*n == cap) {
			unsigned char *more = realloc(buf, cap ? 2 * cap : 1 << 20);

			if (!more) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = more;
			cap = cap ? 2 * cap : 1 << 20;
		}
		size_t got = fread(buf + *n, 1, cap - *n, f);

		*n += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/*
 * Filters in[0..n) into out (at most n bytes); the bytes written, or -1
 * for a file that is not windows of whole records.
 */
static long filter(const unsigned char *in, size_t n, unsigned char *out)
{
	size_t pos = 0, w = 0;

	while (pos < n) {
		if (n - pos < 12)
			return -1;
		uint32_t h = get32(in + pos);

		/* A window: its CPU-change record (no TSC, two words), then its bytes. */
		if ((h & EVENT_MASK) != TRC_TRACE_CPU_CHANGE || record_size(h) != 12)
			return -1;
		size_t size = get32(in + pos + 8), head = w, end = pos + 12 + size;

		if (size > n - pos - 12)
			return -1;
		memcpy(out + w, in + pos, 12);
		w += 12;
		for (pos += 12; pos < end;) {
			uint32_t r = get32(in + pos);
			size_t len = record_size(r);

			if (len > end - pos)
				return -1;
			if (CLASS_SUBCLASS(r & EVENT_MASK) != TRC_SCHED_CLASS) {
				memcpy(out + w, in + pos, len);
				w += len;
			}
			pos += len;
		}
		uint32_t kept = (uint32_t)(w - head - 12);

		memcpy(out + head + 8, &kept, sizeof(kept));
	}
	return (long)w;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: xentrace-filter IN OUT\n");
		return 2;
	}
	size_t n;
	unsigned char *in = read_all(argv[1], &n);
	unsigned char *out = in ? malloc(n ? n : 1) : NULL;

	if (!out) {
		fprintf(stderr, "xentrace-filter: cannot read %s\n", argv[1]);
		free(in);
		return 1;
	}
	long w = filter(in, n, out);
	int rc = 0;

	if (w < 0) {
		fprintf(stderr, "xentrace-filter: %s is not xentrace's windows of whole records\n",
			argv[1]);
		rc = 1;
	} else {
		FILE *f = fopen(argv[2], "wb");
		int ok = f && fwrite(out, 1, (size_t)w, f) == (size_t)w;

		if (f && fclose(f) != 0)
			ok = 0;
		if (!ok) {
			fprintf(stderr, "xentrace-filter: cannot write %s\n", argv[2]);
			rc = 1;
		}
	}
	free(in);
	free(out);
	return rc;
}

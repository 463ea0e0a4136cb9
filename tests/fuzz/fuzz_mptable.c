// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the Intel MP table code of lib/mptable.c (MultiProcessor
 * Specification 1.4, sections 4.1-4.3 and chapter 5), two ways per input.
 *
 * Input: one control byte, then the payload.
 *   1. The payload as an MP Configuration Table: mptable_parse as it is, then
 *      with the checksum byte (header offset 7) set so that the base table
 *      sums to zero, which random mutations almost never keep; the fixed copy
 *      is parsed three ways (room for every CPU, for one, none), which must
 *      agree on everything but the truncation.
 *   2. The payload as memory at IMAGE_BASE (the BIOS ROM area), as
 *      kernel/topology.c sees it: mptable_find_fps, then mptable_read through
 *      a map callback that hands out only what lies inside the image.
 *      Control bit 0: fix the floating pointers' checksums before the scan
 *      and a table's as it is mapped whole; bit 1: map into exact-size heap
 *      copies, so AddressSanitizer flags a read past what was mapped.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/mptable.h"
#include "tests/fuzz/fuzz.h"

#define IMAGE_BASE 0xf0000u
#define MAX_MAPS   16
#define CTL_FIX	   0x01
#define CTL_COPY   0x02
/* A base table of at most 65535 bytes holds at most (65535 - 44) / 20 processor entries */
#define MAX_CPUS 3275

struct image {
	uint8_t *mem;
	size_t size;
	bool fix, copy;
	size_t nmaps;
	uint8_t *maps[MAX_MAPS];
};

static uint16_t get_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void set_sum(uint8_t *p, size_t len, size_t at)
{
	p[at] = 0;
	p[at] = (uint8_t)(0x100 - acpi_checksum(p, len));
}

/* The base table's checksum byte over its length, or over what there is of it. */
static void fix_table(uint8_t *t, size_t size)
{
	size_t len;

	if (size < 8)
		return;
	len = get_le16(t + 4);
	if (len > size || len < 8)
		len = size;
	set_sum(t, len, 7);
}

static void check_info(int rc, const struct mptable_info *info, const struct madt_cpu *cpus)
{
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E_INVAL || rc == -E_BADMSG);
		FUZZ_ASSERT(info->reason != NULL);
		return;
	}
	FUZZ_ASSERT((size_t)rc == info->ncpus && info->reason == NULL);
	FUZZ_ASSERT(info->spec_rev == 1 || info->spec_rev == 4);
	FUZZ_ASSERT(info->lapic_phys != 0);
	/* Every CPU comes from one processor entry; the first enabled listing of an ID wins */
	FUZZ_ASSERT(info->ncpus + info->ndisabled + info->nduplicates + info->ntruncated_list <=
		    info->nentries);
	FUZZ_ASSERT(info->nbsp <= info->nentries);
	for (size_t i = 0; cpus && i < info->ncpus; i++) {
		FUZZ_ASSERT(cpus[i].apic_id <= 0xff && cpus[i].acpi_uid == MPTABLE_NO_UID);
		for (size_t j = 0; j < i; j++)
			FUZZ_ASSERT(cpus[i].apic_id != cpus[j].apic_id);
	}
}

/* Room for one CPU or for none must change nothing but how many were listed. */
static void check_same(int rc_a, const struct mptable_info *a, const struct madt_cpu *ca, int rc_b,
		       const struct mptable_info *b, const struct madt_cpu *cb)
{
	FUZZ_ASSERT((rc_a < 0) == (rc_b < 0));
	if (rc_a < 0) {
		FUZZ_ASSERT(rc_a == rc_b && a->reason == b->reason);
		return;
	}
	FUZZ_ASSERT(a->ncpus + a->ntruncated_list == b->ncpus + b->ntruncated_list);
	FUZZ_ASSERT(a->ndisabled == b->ndisabled && a->nduplicates == b->nduplicates);
	FUZZ_ASSERT(a->nbsp == b->nbsp && a->nentries == b->nentries);
	FUZZ_ASSERT(a->nbsp == 0 || a->bsp_apic_id == b->bsp_apic_id);
	FUZZ_ASSERT(a->lapic_phys == b->lapic_phys && a->entry_count == b->entry_count);
	FUZZ_ASSERT(cb || b->ncpus == 0);
	for (size_t i = 0; cb && i < b->ncpus; i++)
		FUZZ_ASSERT(ca[i].apic_id == cb[i].apic_id);
}

static void fuzz_table(const uint8_t *data, size_t size)
{
	static struct madt_cpu all[MAX_CPUS];
	struct madt_cpu one[1];
	struct mptable_info info, info_one, info_none;
	uint8_t *t = fuzz_dup(data, size, 0);
	int rc, rc_one, rc_none;

	rc = mptable_parse(t, size, all, MAX_CPUS, &info);
	check_info(rc, &info, all);
	fix_table(t, size);
	rc = mptable_parse(t, size, all, MAX_CPUS, &info);
	check_info(rc, &info, all);
	FUZZ_ASSERT(rc < 0 || info.ntruncated_list == 0);
	rc_one = mptable_parse(t, size, one, 1, &info_one);
	check_info(rc_one, &info_one, one);
	check_same(rc, &info, all, rc_one, &info_one, one);
	rc_none = mptable_parse(t, size, NULL, 0, &info_none);
	check_info(rc_none, &info_none, NULL);
	check_same(rc, &info, all, rc_none, &info_none, NULL);
	FUZZ_ASSERT(mptable_parse(t, size, all, MAX_CPUS, NULL) == -E_INVAL);
	free(t);
}

/* 4.1: the structure's 16 * length bytes sum to zero through byte 10. */
static void fix_fps(uint8_t *mem, size_t size)
{
	for (size_t off = 0; size >= MPTABLE_FPS_LEN && off <= size - MPTABLE_FPS_LEN; off += 16) {
		size_t len = (size_t)mem[off + 8] * 16;

		if (memcmp(mem + off, "_MP_", 4) == 0 && len >= MPTABLE_FPS_LEN &&
		    len <= size - off)
			set_sum(mem + off, len, 10);
	}
}

static const void *image_map(void *ctx, uint64_t phys, size_t len)
{
	struct image *im = ctx;
	uint8_t *p;
	size_t off;

	if (phys < IMAGE_BASE || phys - IMAGE_BASE > im->size)
		return NULL;
	off = (size_t)(phys - IMAGE_BASE);
	if (len > im->size - off || im->nmaps == MAX_MAPS)
		return NULL;
	p = im->copy ? fuzz_dup(im->mem + off, len, 0) : im->mem + off;
	/* A whole-base-table map (len = its length field) gets its checksum fixed */
	if (im->fix && len >= MPTABLE_HEADER_LEN && get_le16(p + 4) == len)
		set_sum(p, len, 7);
	im->maps[im->nmaps++] = p;
	return p;
}

static void fuzz_image(struct image *im)
{
	static struct madt_cpu cpus[MAX_CPUS];
	struct mptable_info info;
	size_t off;
	int rc;

	if (im->fix)
		fix_fps(im->mem, im->size);
	rc = mptable_find_fps(im->mem, im->size, &off);
	FUZZ_ASSERT(rc == 0 || rc == -E_NOENT || rc == -E_BADMSG);
	if (rc)
		return;
	FUZZ_ASSERT(off % 16 == 0 && off + MPTABLE_FPS_LEN <= im->size);
	rc = mptable_read(im->mem + off, image_map, im, cpus, MAX_CPUS, &info);
	FUZZ_ASSERT(im->nmaps <= 2);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E_BADMSG || rc == -E_RANGE || rc == -E_INVAL);
		FUZZ_ASSERT(info.reason != NULL);
		return;
	}
	FUZZ_ASSERT((size_t)rc == info.ncpus && info.reason == NULL);
	if (info.default_config) {
		/* Chapter 5: two CPUs, APIC IDs 0 and 1, nothing mapped */
		FUZZ_ASSERT(info.default_config <= MPTABLE_DEFAULT_MAX && im->nmaps == 0);
		FUZZ_ASSERT(rc == 2 && cpus[0].apic_id == 0 && cpus[1].apic_id == 1);
	} else {
		FUZZ_ASSERT(im->nmaps == 2);
		check_info(rc, &info, cpus);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image im;

	if (size < 1)
		return 0;
	fuzz_table(data + 1, size - 1);
	im.fix = data[0] & CTL_FIX;
	im.copy = data[0] & CTL_COPY;
	im.size = size - 1;
	im.mem = fuzz_dup(data + 1, im.size, 0);
	im.nmaps = 0;
	fuzz_image(&im);
	for (size_t i = 0; im.copy && i < im.nmaps; i++)
		free(im.maps[i]);
	free(im.mem);
	return 0;
}

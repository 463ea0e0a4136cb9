// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the ACPI table walk of lib/acpi.c, as kernel/topology.c
 * runs it: acpi_find_rsdp over a memory image (ACPI 6.5 5.2.5.1), then
 * acpi_find_table for "APIC" through the XSDT or RSDT (5.2.7, 5.2.8), then
 * madt_parse on what it found (5.2.12).
 *
 * Input: one control byte, then the image, which sits at physical address
 * IMAGE_BASE. The map callback hands out only what lies inside the image:
 *   bit 0  fix checksums: the RSDP's (both) before the scan, and each table's
 *          as it is mapped whole, so that mutations reach the walk behind them;
 *   bit 1  map into exact-size heap copies (the contract allows a fresh copy
 *          per call), so AddressSanitizer flags a read past what was mapped;
 *          otherwise return pointers into the image, like the identity map.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "lib/error.h"
#include "tests/fuzz/fuzz.h"

#define IMAGE_BASE 0xe0000u /* the BIOS area, where the RSDP usually is */
#define MAX_MAPS   4096	    /* then map fails, as an unreachable address would */
#define CTL_FIX	   0x01
#define CTL_COPY   0x02

struct image {
	uint8_t *mem;
	size_t size;
	bool fix, copy;
	size_t nmaps;
	uint8_t *maps[MAX_MAPS];
	size_t map_len[MAX_MAPS];
};

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Makes p[0..len) sum to zero by setting p[at]. */
static void set_sum(uint8_t *p, size_t len, size_t at)
{
	p[at] = 0;
	p[at] = (uint8_t)(0x100 - acpi_checksum(p, len));
}

/* 5.2.5.3: checksum over the first 20 bytes, extended checksum over Length (revision >= 2). */
static void fix_rsdps(uint8_t *mem, size_t size)
{
	for (size_t off = 0; size >= ACPI_RSDP_V1_LEN && off <= size - ACPI_RSDP_V1_LEN;
	     off += 16) {
		uint8_t *p = mem + off;
		uint32_t length;

		if (memcmp(p, "RSD PTR ", 8) != 0)
			continue;
		set_sum(p, ACPI_RSDP_V1_LEN, 8);
		if (p[15] < 2 || size - off < ACPI_RSDP_V2_LEN)
			continue;
		length = get_le32(p + 20);
		if (length >= ACPI_RSDP_V2_LEN && length <= size - off)
			set_sum(p, length, 32);
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
	/* A whole-table map (len = its Length field) gets its checksum fixed */
	if (im->fix && len >= 10 && get_le32(p + 4) == len)
		set_sum(p, len, 9);
	im->maps[im->nmaps] = p;
	im->map_len[im->nmaps++] = len;
	return p;
}

/* What acpi_find_table returns must be a whole mapping: header, length and sum checked. */
static void check_table(const struct image *im, const uint8_t *t, size_t len)
{
	bool mapped = false;

	for (size_t i = 0; i < im->nmaps && !mapped; i++)
		mapped = t >= im->maps[i] && len <= im->map_len[i] &&
			 (size_t)(t - im->maps[i]) <= im->map_len[i] - len;
	FUZZ_ASSERT(mapped);
	FUZZ_ASSERT(len >= ACPI_HEADER_LEN && memcmp(t, "APIC", 4) == 0);
	FUZZ_ASSERT(get_le32(t + 4) == len && acpi_checksum(t, len) == 0);
}

static void walk(struct image *im)
{
	static struct madt_cpu cpus[4096];
	struct madt_info info;
	const void *table;
	size_t off, len;
	int rc;

	rc = acpi_find_rsdp(im->mem, im->size, &off);
	FUZZ_ASSERT(rc == 0 || rc == -E_NOENT || rc == -E_BADMSG);
	if (rc)
		return;
	FUZZ_ASSERT(off % 16 == 0 && off + ACPI_RSDP_V1_LEN <= im->size);
	rc = acpi_find_table(im->mem + off, image_map, im, "APIC", &table, &len);
	FUZZ_ASSERT(rc == 0 || rc == -E_NOENT || rc == -E_BADMSG || rc == -E_RANGE);
	if (rc)
		return;
	check_table(im, table, len);
	rc = madt_parse(table, len, cpus, sizeof(cpus) / sizeof(cpus[0]), &info);
	FUZZ_ASSERT(rc == (int)info.ncpus || rc == -E_INVAL || rc == -E_BADMSG);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct image im;

	if (size < 1)
		return 0;
	im.fix = data[0] & CTL_FIX;
	im.copy = data[0] & CTL_COPY;
	im.size = size - 1;
	im.mem = fuzz_dup(data + 1, im.size, 0);
	im.nmaps = 0;
	if (im.fix)
		fix_rsdps(im.mem, im.size);
	walk(&im);
	for (size_t i = 0; im.copy && i < im.nmaps; i++)
		free(im.maps[i]);
	free(im.mem);
	return 0;
}

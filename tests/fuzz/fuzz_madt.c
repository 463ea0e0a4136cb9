// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: madt_parse (lib/acpi.c) on raw bytes, the MADT of ACPI
 * 6.5 5.2.12 as firmware or a hypervisor hands it over.
 *
 * Each input is parsed as it is, then again with its checksum byte (header
 * offset 9, 5.2.6) set so that the table sums to zero: a random mutation
 * almost never keeps the sum, and without the fix the entry walk would hardly
 * be reached. The fixed copy is parsed three ways (room for every CPU, room
 * for one, no array), which must agree on everything but the truncation.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/acpi.h"
#include "lib/error.h"
#include "tests/fuzz/fuzz.h"

/* A MADT of n bytes has at most (n - 44) / 8 processor entries (type 0 is the shortest). */
#define MAX_CPUS 4096

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Sets the checksum byte so that the table's own length (or what there is of it) sums to 0. */
static void fix_checksum(uint8_t *t, size_t size)
{
	size_t len;

	if (size < 10)
		return;
	len = get_le32(t + 4);
	if (len > size || len < 10)
		len = size;
	t[9] = 0;
	t[9] = (uint8_t)(0x100 - acpi_checksum(t, len));
}

static void check_info(int rc, const struct madt_info *info, const struct madt_cpu *cpus)
{
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E_INVAL || rc == -E_BADMSG);
		return;
	}
	FUZZ_ASSERT((size_t)rc == info->ncpus);
	/* The first usable listing of an APIC ID wins: no ID twice in the list */
	for (size_t i = 0; cpus && i < info->ncpus; i++)
		for (size_t j = 0; j < i; j++)
			FUZZ_ASSERT(cpus[i].apic_id != cpus[j].apic_id);
}

/* Room for one CPU or for none must change nothing but how many were listed. */
static void check_same(int rc_a, const struct madt_info *a, const struct madt_cpu *ca, int rc_b,
		       const struct madt_info *b, const struct madt_cpu *cb)
{
	FUZZ_ASSERT((rc_a < 0) == (rc_b < 0));
	if (rc_a < 0) {
		FUZZ_ASSERT(rc_a == rc_b);
		return;
	}
	FUZZ_ASSERT(a->ncpus + a->ntruncated_list == b->ncpus + b->ntruncated_list);
	FUZZ_ASSERT(a->nhotplug == b->nhotplug && a->ndisabled == b->ndisabled &&
		    a->nduplicates == b->nduplicates);
	FUZZ_ASSERT(a->lapic_phys == b->lapic_phys && a->flags == b->flags);
	FUZZ_ASSERT(cb || b->ncpus == 0); /* no array: nothing listed, all counted as truncated */
	for (size_t i = 0; cb && i < b->ncpus; i++)
		FUZZ_ASSERT(ca[i].apic_id == cb[i].apic_id && ca[i].acpi_uid == cb[i].acpi_uid &&
			    ca[i].from_x2apic_entry == cb[i].from_x2apic_entry);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct madt_cpu all[MAX_CPUS];
	struct madt_cpu one[1];
	struct madt_info info, info_one, info_none;
	uint8_t *t = fuzz_dup(data, size, 0);
	int rc, rc_one, rc_none;

	rc = madt_parse(t, size, all, MAX_CPUS, &info);
	check_info(rc, &info, all);

	fix_checksum(t, size);
	rc = madt_parse(t, size, all, MAX_CPUS, &info);
	check_info(rc, &info, all);
	FUZZ_ASSERT(rc < 0 || info.ntruncated_list == 0 || size > MADT_HEADER_LEN + 8 * MAX_CPUS);
	rc_one = madt_parse(t, size, one, 1, &info_one);
	check_info(rc_one, &info_one, one);
	check_same(rc, &info, all, rc_one, &info_one, one);
	rc_none = madt_parse(t, size, NULL, 0, &info_none);
	check_info(rc_none, &info_none, NULL);
	check_same(rc, &info, all, rc_none, &info_none, NULL);
	FUZZ_ASSERT(madt_parse(t, size, all, MAX_CPUS, NULL) == -E_INVAL);
	free(t);
	return 0;
}

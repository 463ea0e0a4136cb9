// SPDX-License-Identifier: GPL-2.0-only
/*
 * Local APIC ICR encoding (Intel SDM vol. 3A 11.6.1, 11.12.9) and logical
 * destinations (11.6.2.2 flat model, 11.12.10.2 x2APIC cluster model).
 */
#include "lib/icr.h"
#include "lib/error.h"

int icr_fields_check(const struct icr_fields *f)
{
	switch (f->delivery) {
	case ICR_DM_FIXED:
	case ICR_DM_LOWEST:
	case ICR_DM_SMI:
	case ICR_DM_NMI:
	case ICR_DM_INIT:
	case ICR_DM_STARTUP:
		break;
	default:
		return -E_INVAL; /* 3 and 7 are reserved (Table 11-6) */
	}
	if (f->shorthand > ICR_SH_OTHERS)
		return -E_INVAL;
	return 0;
}

uint32_t icr_encode_low(const struct icr_fields *f)
{
	uint32_t v = f->vector;

	v |= ((uint32_t)f->delivery << ICR_DELIVERY_SHIFT) & ICR_DELIVERY_MASK;
	if (f->logical)
		v |= ICR_DEST_LOGICAL;
	if (f->level_assert)
		v |= ICR_LEVEL_ASSERT;
	if (f->level_trigger)
		v |= ICR_TRIGGER_LEVEL;
	v |= ((uint32_t)f->shorthand << ICR_SHORTHAND_SHIFT) & ICR_SHORTHAND_MASK;
	/* Delivery status (bit 12) is read-only in xAPIC mode and absent in x2APIC mode. */
	return v;
}

uint64_t icr_encode_x2apic(const struct icr_fields *f)
{
	return (uint64_t)f->dest << ICR_X2APIC_DEST_SHIFT | icr_encode_low(f);
}

int icr_encode_xapic(const struct icr_fields *f, uint32_t *low, uint32_t *high)
{
	if (f->dest > ICR_XAPIC_DEST_MAX)
		return -E_RANGE;
	*high = f->dest << ICR_XAPIC_DEST_SHIFT;
	*low = icr_encode_low(f);
	return 0;
}

uint32_t icr_x2apic_ldr(uint32_t x2apic_id)
{
	/* SDM 11.12.10.2: LDR = (x2APIC ID[19:4] << 16) | (1 << x2APIC ID[3:0]). */
	uint32_t cluster = (x2apic_id & ICR_X2APIC_ID_MAX) >> 4;

	return cluster << ICR_X2APIC_CLUSTER_SHIFT | 1u << (x2apic_id & 15);
}

uint8_t icr_flat_ldr(unsigned int index)
{
	return index < ICR_FLAT_MAX_CPUS ? (uint8_t)(1u << index) : 0;
}

/*
 * Merge one LDR into the sorted list dests[0..*count): OR it into its
 * cluster's entry, or insert a new entry in cluster order.
 */
static int icr_cluster_merge(uint32_t ldr, uint32_t *dests, size_t *count, size_t max)
{
	uint32_t cluster = ldr >> ICR_X2APIC_CLUSTER_SHIFT;
	size_t i = 0;

	while (i < *count && dests[i] >> ICR_X2APIC_CLUSTER_SHIFT < cluster)
		i++;
	if (i < *count && dests[i] >> ICR_X2APIC_CLUSTER_SHIFT == cluster) {
		dests[i] |= ldr;
		return 0;
	}
	if (*count == max)
		return -E_NOSPC;
	for (size_t j = *count; j > i; j--)
		dests[j] = dests[j - 1];
	dests[i] = ldr;
	(*count)++;
	return 0;
}

int icr_cluster_group(const uint32_t *x2apic_ids, size_t n, uint32_t *dests, size_t max)
{
	size_t count = 0;

	for (size_t i = 0; i < n; i++) {
		if (x2apic_ids[i] > ICR_X2APIC_ID_MAX)
			return -E_RANGE;
	}
	for (size_t i = 0; i < n; i++) {
		int err = icr_cluster_merge(icr_x2apic_ldr(x2apic_ids[i]), dests, &count, max);

		if (err)
			return err;
	}
	return (int)count; /* at most 65536 clusters exist, so this fits */
}

int icr_flat_mask(const unsigned int *indices, size_t n)
{
	unsigned int mask = 0;

	for (size_t i = 0; i < n; i++) {
		if (indices[i] >= ICR_FLAT_MAX_CPUS)
			return -E_RANGE;
		mask |= icr_flat_ldr(indices[i]);
	}
	return (int)mask;
}

struct icr_fields icr_make_fixed(uint8_t vector, uint32_t dest)
{
	/*
	 * Bit 14 stays 0, as Linux sends it: Table 11-6 notes that P4 and later
	 * processors ignore it and always issue 1; it matters only for INIT.
	 */
	struct icr_fields f = {.vector = vector, .delivery = ICR_DM_FIXED, .dest = dest};

	return f;
}

struct icr_fields icr_make_init_assert(uint32_t dest)
{
	struct icr_fields f = {.delivery = ICR_DM_INIT, .dest = dest};

	f.level_assert = true;
	f.level_trigger = true;
	return f;
}

struct icr_fields icr_make_init_deassert(uint32_t dest)
{
	struct icr_fields f = {.delivery = ICR_DM_INIT, .dest = dest};

	/* Level 0 with trigger level is the de-assert message (Table 11-6). */
	f.level_trigger = true;
	return f;
}

int icr_make_startup(uint32_t dest, uint32_t entry_phys, struct icr_fields *out)
{
	struct icr_fields f = {.delivery = ICR_DM_STARTUP, .dest = dest};

	if (entry_phys & ((1u << ICR_SIPI_PAGE_SHIFT) - 1) || entry_phys >= ICR_SIPI_ADDR_LIMIT)
		return -E_RANGE;
	f.vector = (uint8_t)(entry_phys >> ICR_SIPI_PAGE_SHIFT);
	*out = f;
	return 0;
}

unsigned int icr_cluster_writes(const uint32_t *ldr, const struct cpuset *set)
{
	unsigned int pos = 0, n = 0;

	while (icr_cluster_run(ldr, set, &pos))
		n++;
	return n;
}

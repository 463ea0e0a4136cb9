// SPDX-License-Identifier: GPL-2.0-only
/*
 * KVM_HC_SEND_IPI planning (docs/hyperv-abi.md 5.3; Linux
 * Documentation/virt/kvm/x86/hypercalls.rst): APIC IDs to 128-ID windows.
 *
 * Greedy over the sorted set: each window starts at the lowest ID not yet
 * covered and takes every ID within 128 of it. That is optimal for covering
 * points with fixed-width windows, and scanning the input once per window
 * (instead of sorting it) keeps it correct for any order and for
 * duplicates without scratch memory; sets are at most a few thousand CPUs.
 * Linux's __send_ipi_mask() (arch/x86/kernel/kvm.c) grows a window in CPU
 * order instead.
 */
#include "lib/kvm_pvipi.h"
#include "lib/error.h"
#include "lib/icr.h"

#include <stdbool.h>

/* Lowest ID >= from, if any. */
static bool kvm_pvipi_lowest(const uint32_t *ids, size_t n, uint64_t from, uint32_t *lowest)
{
	bool found = false;

	for (size_t i = 0; i < n; i++) {
		if (ids[i] >= from && (!found || ids[i] < *lowest)) {
			*lowest = ids[i];
			found = true;
		}
	}
	return found;
}

/* Set the bit of every ID inside c's window [min_id, min_id + 128). */
static void kvm_pvipi_fill(const uint32_t *ids, size_t n, struct kvm_pvipi_call *c)
{
	for (size_t i = 0; i < n; i++) {
		uint64_t off = (uint64_t)ids[i] - c->min_id;

		if (ids[i] >= c->min_id && off < KVM_PVIPI_WINDOW)
			c->bitmap[off / KVM_PVIPI_WORD_BITS] |= 1ull << (off % KVM_PVIPI_WORD_BITS);
	}
}

int kvm_pvipi_plan(const uint32_t *apic_ids, size_t n, struct kvm_pvipi_call *calls,
		   size_t max_calls)
{
	uint64_t from = 0; /* 64-bit: min_id + 128 may pass 2^32 */
	size_t count = 0;
	uint32_t lowest = 0;

	if (n && !apic_ids)
		return -E_INVAL;
	while (kvm_pvipi_lowest(apic_ids, n, from, &lowest)) {
		if (count == max_calls)
			return -E_NOSPC;
		calls[count].bitmap[0] = 0;
		calls[count].bitmap[1] = 0;
		calls[count].min_id = lowest;
		kvm_pvipi_fill(apic_ids, n, &calls[count]);
		count++;
		from = (uint64_t)lowest + KVM_PVIPI_WINDOW;
	}
	return (int)count;
}

uint64_t kvm_pvipi_icr(uint8_t vector)
{
	struct icr_fields f = icr_make_fixed(vector, 0);

	/* Destination lives in a0..a2; a3 is only the ICR low dword. */
	return icr_encode_low(&f);
}

uint64_t kvm_pvipi_icr_nmi(void)
{
	struct icr_fields f = icr_make_fixed(0, 0);

	/* Linux's kvm.c __send_ipi_mask(): APIC_DM_NMI alone for NMI_VECTOR. */
	f.delivery = ICR_DM_NMI;
	return icr_encode_low(&f);
}

/* Portable popcount: __builtin_popcountll would call libgcc without -mpopcnt. */
static unsigned int kvm_pvipi_popcount(uint64_t v)
{
	v = v - ((v >> 1) & 0x5555555555555555ull);
	v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
	v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((v * 0x0101010101010101ull) >> 56);
}

size_t kvm_pvipi_count(const struct kvm_pvipi_call *c)
{
	return kvm_pvipi_popcount(c->bitmap[0]) + kvm_pvipi_popcount(c->bitmap[1]);
}

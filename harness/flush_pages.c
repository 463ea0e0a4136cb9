// SPDX-License-Identifier: GPL-2.0-only
/*
 * The flush pages (harness/flush_pages.h): FLUSH_CEILING 4 KiB pages at
 * FLUSH_VA, mapped in the tables every CPU's CR3 points at (boot_pml4), in a
 * PML4 slot that was empty. No CPU caches a translation that is not
 * present, so filling the slot needs no flush; it is written last, whole.
 */
#include "harness/flush_pages.h"
#include "include/compiler.h"
#include "include/mm.h"
#include "include/x86.h"
#include "lib/error.h"

#define PTE_P  (1ull << 0)
#define PTE_RW (1ull << 1)

#define VA_INDEX(va, level) (((va) >> (12 + 9 * (level))) & 511u)
_Static_assert(VA_INDEX(FLUSH_VA, 0) + FLUSH_CEILING <= 512, "the pages share one table");

extern uint64_t boot_pml4[];

static uint64_t *flush_pt;	/* the page table of FLUSH_VA's pages */
static uint64_t flush_spare[FLUSH_SPARES];

/* A zeroed frame as a present, writable entry. */
static uint64_t flush_frame(void)
{
	return (uint64_t)(uintptr_t)mm_alloc(FLUSH_PAGE, FLUSH_PAGE) | PTE_P | PTE_RW;
}

/* A leaf frame, its first word naming itself. */
static uint64_t flush_leaf(void)
{
	uint64_t e = flush_frame();

	*(uint64_t *)phys_to_virt(flush_pages_frame(e)) = flush_pages_frame(e);
	return e;
}

int flush_pages_map(void)
{
	uint64_t pdpt, pd, pt;

	if (flush_pt)
		return 0;
	if (boot_pml4[VA_INDEX(FLUSH_VA, 3)])
		return -E_NOSPC;
	pdpt = flush_frame();
	pd = flush_frame();
	pt = flush_frame();
	for (unsigned int i = 0; i < FLUSH_CEILING; i++)
		((uint64_t *)phys_to_virt(flush_pages_frame(pt)))[VA_INDEX(FLUSH_VA, 0) + i] =
		    flush_leaf();
	for (unsigned int i = 0; i < FLUSH_SPARES; i++)
		flush_spare[i] = flush_leaf();
	((uint64_t *)phys_to_virt(flush_pages_frame(pd)))[VA_INDEX(FLUSH_VA, 1)] = pt;
	((uint64_t *)phys_to_virt(flush_pages_frame(pdpt)))[VA_INDEX(FLUSH_VA, 2)] = pd;
	store_release(&boot_pml4[VA_INDEX(FLUSH_VA, 3)], pdpt);
	flush_pt = (uint64_t *)phys_to_virt(flush_pages_frame(pt)) + VA_INDEX(FLUSH_VA, 0);
	return 0;
}

uint64_t *flush_pages_pte(unsigned int i)
{
	return &flush_pt[i];
}

uint64_t flush_pages_spare(unsigned int i)
{
	return flush_spare[i];
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The pages every flush acts on (harness/flush_pages.c): the flush benchmark
 * touches and flushes them, the suite's flush checks swap their frames to
 * see whether a flush reached each target's TLB.
 */
#ifndef HARNESS_FLUSH_PAGES_H
#define HARNESS_FLUSH_PAGES_H

#include <stdint.h>

/* Above the 4 GiB identity map, in a PML4 slot of its own: 4 KiB pages to flush. */
#define FLUSH_VA   0x00007f0000400000ull
#define FLUSH_PAGE 4096u
/* Linux's tlb_single_page_flush_ceiling (arch/x86/mm/tlb.c), in pages. */
#define FLUSH_CEILING 33u
/* Spare frames the checks map in place of the first pages' own. */
#define FLUSH_SPARES 2u

/*
 * Maps FLUSH_CEILING pages at FLUSH_VA, once, each on a frame of its own,
 * and FLUSH_SPARES spare frames; each frame's first word holds its own
 * physical address, so a read through FLUSH_VA says which frame the
 * reading CPU's translation reached. 0, or -E_NOSPC when the PML4 slot is
 * taken.
 */
int flush_pages_map(void);
/* Page i's page-table entry (i < FLUSH_CEILING), once mapped. */
uint64_t *flush_pages_pte(unsigned int i);
/* Spare frame i's entry value (present, writable), i < FLUSH_SPARES. */
uint64_t flush_pages_spare(unsigned int i);
/* The physical address an entry maps. */
static inline uint64_t flush_pages_frame(uint64_t pte)
{
	return pte & 0x000ffffffffff000ull;
}

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/* Boot-time memory: one bump allocator over the largest free RAM region. */
#ifndef INCLUDE_MM_H
#define INCLUDE_MM_H

#include <stddef.h>
#include <stdint.h>

/* Over the RAM ranges the loader gave (include/boot.h); panics when none is usable. */
void mm_init(void);
void *mm_alloc(size_t size, size_t align);	/* zeroed; panics when exhausted */
uint64_t mm_free_bytes(void);

/*
 * Physical to virtual under the identity map. The empty asm hides the
 * constant from GCC, which otherwise treats fixed low addresses such as
 * the BIOS data area as out-of-bounds accesses of a zero-sized object.
 */
static inline void *phys_to_virt(uint64_t phys)
{
	void *p;

	asm("" : "=r"(p) : "0"(phys));
	return p;
}

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Boot-time allocator: a bump pointer over the largest available RAM region
 * of the loader's memory map (multiboot or PVH: include/boot.h) that lies
 * above the kernel image and inside the 4 GiB identity map. Nothing is ever freed: everything allocated here
 * (per-CPU areas, stacks, sample buffers) lives for the whole run.
 */
#include "include/console.h"
#include "include/mm.h"
#include "include/boot.h"

#define IDENTITY_MAP_END (4ull << 30)
#define MMIO_HOLE_START 0xfe000000ull	/* never hand out the uncached top */

extern char __kernel_end[];

static uint64_t next, limit;

static void mm_consider(uint64_t start, uint64_t end)
{
	uint64_t lo = (uint64_t)__kernel_end;

	if (end > MMIO_HOLE_START)
		end = MMIO_HOLE_START;
	if (start < lo)
		start = lo;
	start = ALIGN_UP(start, 4096);
	if (end > start && end - start > limit - next) {
		next = start;
		limit = end;
	}
}

void mm_init(void)
{
	for (unsigned int i = 0; i < boot_nram; i++) {
		if (boot_ram[i].start < IDENTITY_MAP_END)
			mm_consider(boot_ram[i].start, boot_ram[i].end);
	}
	if (limit == next)
		panic("no usable RAM above the kernel in the loader's memory map");
}

void *mm_alloc(size_t size, size_t align)
{
	uint64_t p = ALIGN_UP(next, align);

	if (p + size > limit || p + size < p)
		panic("out of memory allocating %zu bytes (%lu free)", size, limit - next);
	next = p + size;
	__builtin_memset((void *)(uintptr_t)p, 0, size);
	return (void *)(uintptr_t)p;
}

uint64_t mm_free_bytes(void)
{
	return limit - next;
}

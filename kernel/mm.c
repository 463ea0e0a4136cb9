// SPDX-License-Identifier: GPL-2.0-only
/*
 * Boot-time allocator: a bump pointer over the largest available RAM region
 * of the multiboot memory map that lies above the kernel image and inside
 * the 4 GiB identity map. Nothing is ever freed: everything allocated here
 * (per-CPU areas, stacks, sample buffers) lives for the whole run.
 */
#include "include/console.h"
#include "include/mm.h"
#include "kernel/multiboot.h"

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

void mm_init(const struct multiboot_info *mbi)
{
	if (mbi->flags & MBI_FLAG_MMAP) {
		uint64_t p = mbi->mmap_addr, end = p + mbi->mmap_length;

		while (p + sizeof(struct multiboot_mmap_entry) <= end) {
			const struct multiboot_mmap_entry *e = (const void *)(uintptr_t)p;

			if (e->type == MULTIBOOT_MEMORY_AVAILABLE && e->addr < IDENTITY_MAP_END)
				mm_consider(e->addr, e->addr + e->len);
			p += e->size + sizeof(e->size);
		}
	} else if (mbi->flags & MBI_FLAG_MEM) {
		mm_consider(1ull << 20, (1ull << 20) + (uint64_t)mbi->mem_upper * 1024);
	}
	if (limit == next)
		panic("no usable RAM above the kernel in the multiboot memory map");
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

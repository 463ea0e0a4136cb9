// SPDX-License-Identifier: GPL-2.0-only
/*
 * Takes what the multiboot loader handed over (Multiboot Specification
 * 0.6.96, 3.3): the command line and loader name are copied at once, since
 * the loader put them in memory we will reuse, and the memory map's RAM
 * (or, without one, mem_upper) is kept for kernel/mm.c (include/boot.h).
 */
#include "include/console.h"
#include "kernel/multiboot.h"
#include "lib/error.h"

static void multiboot_take_ram(const struct multiboot_info *mbi)
{
	if (mbi->flags & MBI_FLAG_MMAP) {
		uint64_t p = mbi->mmap_addr, end = p + mbi->mmap_length;

		while (p + sizeof(struct multiboot_mmap_entry) <= end) {
			const struct multiboot_mmap_entry *e = (const void *)(uintptr_t)p;

			if (e->type == MULTIBOOT_MEMORY_AVAILABLE)
				boot_add_ram(e->addr, e->addr + e->len);
			p += e->size + sizeof(e->size);
		}
	} else if (mbi->flags & MBI_FLAG_MEM) {
		boot_add_ram(1ull << 20, (1ull << 20) + (uint64_t)mbi->mem_upper * 1024);
	}
}

int multiboot_take(const struct multiboot_info *mbi)
{
	if (mbi->flags & MBI_FLAG_CMDLINE) {
		boot_copy_string(boot_cmdline, sizeof(boot_cmdline), mbi->cmdline);
		boot_cmdline_image_first = true;
	}
	if (mbi->flags & MBI_FLAG_LOADER_NAME)
		boot_copy_string(boot_loader_name, sizeof(boot_loader_name), mbi->boot_loader_name);
	multiboot_take_ram(mbi);
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/* Multiboot v1 information structure (Multiboot Specification 0.6.96, 3.3). */
#ifndef KERNEL_MULTIBOOT_H
#define KERNEL_MULTIBOOT_H

#include <stddef.h>
#include <stdint.h>
#include "include/boot.h"
#include "include/compiler.h"

#define MBI_FLAG_MEM (1u << 0)
#define MBI_FLAG_CMDLINE (1u << 2)
#define MBI_FLAG_MMAP (1u << 6)
#define MBI_FLAG_LOADER_NAME (1u << 9)

struct multiboot_info {
	uint32_t flags;
	uint32_t mem_lower, mem_upper;	/* KiB */
	uint32_t boot_device;
	uint32_t cmdline;
	uint32_t mods_count, mods_addr;
	uint32_t syms[4];
	uint32_t mmap_length, mmap_addr;
	uint32_t drives_length, drives_addr;
	uint32_t config_table;
	uint32_t boot_loader_name;
} __packed;
_Static_assert(offsetof(struct multiboot_info, mmap_length) == 44, "multiboot 3.3");
_Static_assert(offsetof(struct multiboot_info, boot_loader_name) == 64, "multiboot 3.3");

struct multiboot_mmap_entry {
	uint32_t size;	/* of the rest of the entry */
	uint64_t addr, len;
	uint32_t type;	/* 1 = available RAM */
} __packed;

#define MULTIBOOT_MEMORY_AVAILABLE 1

/* The magic in EAX is BOOT_MULTIBOOT_MAGIC, what is kept: include/boot.h. */

/* Copies mbi's command line, loader name and RAM ranges (include/boot.h); 0. */
int multiboot_take(const struct multiboot_info *mbi);

#endif

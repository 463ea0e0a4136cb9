/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The start info a PVH loader hands over in EBX (Xen public header
 * xen/include/public/arch-x86/hvm/start_info.h, layout as it documents it;
 * every address physical, 0 meaning absent, all little-endian).
 */
#ifndef KERNEL_PVH_H
#define KERNEL_PVH_H

#include <stddef.h>
#include <stdint.h>
#include "include/boot.h"

struct hvm_start_info {
	uint32_t magic;		/* BOOT_PVH_MAGIC: "xEn3" with 0x80 set in the 'E' */
	uint32_t version;	/* 0, or 1 with the memory map fields */
	uint32_t flags;		/* SIF_* (Xen's own) */
	uint32_t nr_modules;
	uint64_t modlist_paddr;
	uint64_t cmdline_paddr;	/* NUL-terminated */
	uint64_t rsdp_paddr;
	/* version 1 and later */
	uint64_t memmap_paddr;	/* struct hvm_memmap_entry[memmap_entries] */
	uint32_t memmap_entries;
	uint32_t reserved;
};
_Static_assert(offsetof(struct hvm_start_info, modlist_paddr) == 16, "start_info.h");
_Static_assert(offsetof(struct hvm_start_info, cmdline_paddr) == 24, "start_info.h");
_Static_assert(offsetof(struct hvm_start_info, rsdp_paddr) == 32, "start_info.h");
_Static_assert(offsetof(struct hvm_start_info, memmap_paddr) == 40, "start_info.h");
_Static_assert(offsetof(struct hvm_start_info, memmap_entries) == 48, "start_info.h");
_Static_assert(sizeof(struct hvm_start_info) == 56, "start_info.h, version 1");

#define HVM_START_INFO_V0_SIZE 40	/* what a version 0 loader writes */

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type;		/* the ACPI address range types: */
	uint32_t reserved;
};
_Static_assert(sizeof(struct hvm_memmap_entry) == 24, "start_info.h");
_Static_assert(offsetof(struct hvm_memmap_entry, type) == 16, "start_info.h");

#define HVM_MEMMAP_TYPE_RAM 1

/* Copies the command line, RAM ranges and RSDP address (include/boot.h); 0 or -E_INVAL. */
int pvh_take(uint32_t info_phys);

#endif

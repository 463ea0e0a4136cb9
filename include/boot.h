/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the loader handed the kernel, whichever loader it was: a multiboot v1
 * loader (kernel/multiboot.c) or a PVH one (kernel/pvh.c). Copies taken
 * before memory is reused, for the console, the allocator (kernel/mm.c),
 * the ACPI tables (kernel/topology.c) and the environment record.
 */
#ifndef INCLUDE_BOOT_H
#define INCLUDE_BOOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* EAX at kmain() from boot/multiboot.asm: which entry the CPU came through. */
#define BOOT_MULTIBOOT_MAGIC 0x2badb002	/* Multiboot 0.6.96 3.2, set by the loader */
#define BOOT_PVH_MAGIC 0x336ec578	/* hvm_start_info.magic, set by boot/pvh.asm */

#define BOOT_RAM_MAX 64	/* RAM ranges kept from the loader's memory map */

struct boot_ram {
	uint64_t start, end;	/* physical, end exclusive */
};

extern char boot_cmdline[2048];
/* Multiboot loaders put the image path first on the line; PVH passes the arguments alone. */
extern bool boot_cmdline_image_first;
extern char boot_loader_name[64];	/* multiboot: the loader's own name; PVH: "pvh" */
extern uint64_t boot_rsdp_phys;		/* 0 unless the loader said where the RSDP is */
extern struct boot_ram boot_ram[BOOT_RAM_MAX];
extern unsigned int boot_nram;

/*
 * Takes what the loader handed over: magic and info as boot/multiboot.asm
 * passes them (EAX, EBX at the entry). Prints why and returns a negative
 * code when neither loader's magic is there.
 */
int boot_take(uint32_t magic, uint32_t info_phys);

/* For the loaders' files: a string copied (truncated, with a warning) and a RAM range kept. */
void boot_copy_string(char *dst, size_t cap, uint64_t phys);
void boot_add_ram(uint64_t start, uint64_t end);

#endif

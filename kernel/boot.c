// SPDX-License-Identifier: GPL-2.0-only
/*
 * The loader's hand-over, whichever entry the CPU came through
 * (include/boot.h): kmain() passes on what boot/multiboot.asm saved, and
 * the magic in it picks the loader's reader, kernel/multiboot.c or
 * kernel/pvh.c. Both fill the same copies: command line, loader name, RAM
 * ranges and, where the loader gives it, the RSDP's address.
 */
#include <stdbool.h>
#include "include/boot.h"
#include "include/console.h"
#include "include/mm.h"
#include "kernel/multiboot.h"
#include "kernel/pvh.h"
#include "lib/error.h"

char boot_cmdline[2048];
bool boot_cmdline_image_first;
char boot_loader_name[64];
uint64_t boot_rsdp_phys;
struct boot_ram boot_ram[BOOT_RAM_MAX];
unsigned int boot_nram;

#define IDENTITY_MAP_END (4ull << 30)

void boot_copy_string(char *dst, size_t cap, uint64_t phys)
{
	const char *src;
	size_t i = 0;

	dst[0] = 0;
	if (!phys || phys >= IDENTITY_MAP_END - cap) {
		kprintf(
		    "ipibench: warning: boot string at 0x%lx is outside the identity map: ignored\n",
		    phys);
		return;
	}
	src = phys_to_virt(phys);
	for (; i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
	if (src[i])
		kprintf("ipibench: warning: boot string truncated to %zu bytes\n", cap - 1);
}

void boot_add_ram(uint64_t start, uint64_t end)
{
	static bool said;

	if (end <= start)
		return;
	if (boot_nram < BOOT_RAM_MAX) {
		boot_ram[boot_nram++] = (struct boot_ram){start, end};
		return;
	}
	if (!said)
		kprintf(
		    "ipibench: warning: more than %u RAM ranges in the memory map: 0x%lx-0x%lx and later ones ignored\n",
		    BOOT_RAM_MAX, start, end);
	said = true;
}

int boot_take(uint32_t magic, uint32_t info_phys)
{
	if (magic == BOOT_MULTIBOOT_MAGIC)
		return multiboot_take(phys_to_virt(info_phys));
	if (magic == BOOT_PVH_MAGIC)
		return pvh_take(info_phys);
	kprintf("ipibench: not started by a multiboot or PVH loader (EAX 0x%x)\n", magic);
	return -E_INVAL;
}

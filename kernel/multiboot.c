// SPDX-License-Identifier: GPL-2.0-only
/*
 * Takes what the multiboot loader handed over (Multiboot Specification
 * 0.6.96, 3.3): the command line and loader name are copied at once, since
 * the loader put them in memory we will reuse; the memory map is read by mm.c.
 */
#include "include/console.h"
#include "kernel/multiboot.h"
#include "lib/error.h"

char boot_cmdline[2048];
char boot_loader_name[64];

static void copy_string(char *dst, size_t cap, uint32_t phys)
{
	const char *src = (const char *)(uintptr_t)phys;
	size_t i = 0;

	for (; i + 1 < cap && src[i]; i++)
		dst[i] = src[i];
	dst[i] = 0;
	if (src[i])
		kprintf("ipibench: warning: boot string truncated to %zu bytes\n", cap - 1);
}

int multiboot_take(uint32_t magic, const struct multiboot_info *mbi)
{
	if (magic != MULTIBOOT_BOOTLOADER_MAGIC) {
		kprintf("ipibench: not started by a multiboot loader (EAX 0x%x)\n", magic);
		return -E_INVAL;
	}
	if (mbi->flags & MBI_FLAG_CMDLINE)
		copy_string(boot_cmdline, sizeof(boot_cmdline), mbi->cmdline);
	if (mbi->flags & MBI_FLAG_LOADER_NAME)
		copy_string(boot_loader_name, sizeof(boot_loader_name), mbi->boot_loader_name);
	return 0;
}

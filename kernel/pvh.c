// SPDX-License-Identifier: GPL-2.0-only
/*
 * Takes what a PVH loader handed over (kernel/pvh.h; the entry is
 * boot/pvh.asm): the command line, copied at once; the memory map's RAM
 * ranges (version 1 of the start info), for kernel/mm.c; the RSDP's
 * address, which kernel/topology.c then uses instead of scanning the BIOS
 * areas (a PVH VMM need not put the RSDP where a BIOS would). Modules are
 * not used. The loader name the environment record carries is "pvh": the
 * start info names no loader.
 */
#include "include/console.h"
#include "include/mm.h"
#include "kernel/pvh.h"
#include "lib/error.h"

#define IDENTITY_MAP_END (4ull << 30)

static void pvh_take_ram(const struct hvm_start_info *si)
{
	const struct hvm_memmap_entry *e;
	uint64_t bytes = (uint64_t)si->memmap_entries * sizeof(*e);

	if (si->version < 1 || !si->memmap_entries) {
		kprintf("pvh: no memory map (start info version %u, %u entries)\n", si->version,
			si->version < 1 ? 0 : si->memmap_entries);
		return;
	}
	if (si->memmap_paddr >= IDENTITY_MAP_END || bytes > IDENTITY_MAP_END - si->memmap_paddr) {
		kprintf("pvh: memory map at 0x%lx is outside the identity map: ignored\n",
			si->memmap_paddr);
		return;
	}
	e = phys_to_virt(si->memmap_paddr);
	for (uint32_t i = 0; i < si->memmap_entries; i++) {
		if (e[i].type == HVM_MEMMAP_TYPE_RAM && e[i].addr + e[i].size > e[i].addr)
			boot_add_ram(e[i].addr, e[i].addr + e[i].size);
	}
}

int pvh_take(uint32_t info_phys)
{
	const struct hvm_start_info *si = phys_to_virt(info_phys);

	if (!info_phys || si->magic != BOOT_PVH_MAGIC) {
		kprintf(
		    "ipibench: PVH entry without a start info at 0x%x (magic 0x%x, expected 0x%x)\n",
		    info_phys, info_phys ? si->magic : 0, BOOT_PVH_MAGIC);
		return -E_INVAL;
	}
	__builtin_memcpy(boot_loader_name, "pvh", 4);
	if (si->cmdline_paddr)
		boot_copy_string(boot_cmdline, sizeof(boot_cmdline), si->cmdline_paddr);
	boot_rsdp_phys = si->rsdp_paddr;
	pvh_take_ram(si);
	kprintf("pvh: start info version %u at 0x%x: %u memory map entries, ", si->version,
		info_phys, si->version >= 1 ? si->memmap_entries : 0);
	if (si->rsdp_paddr)
		kprintf("RSDP at 0x%lx", si->rsdp_paddr);
	else
		kprintf("no RSDP");
	kprintf(", %u modules (unused)\n", si->nr_modules);
	return 0;
}

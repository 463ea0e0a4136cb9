// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the CPUs: the RSDP in the first KiB of the EBDA or in
 * 0xE0000-0xFFFFF (ACPI 6.5 5.2.5.1), then the MADT through the XSDT or RSDT.
 * The parsing itself is lib/acpi.c, pure and host-tested; this file only
 * reaches physical memory, which the 4 GiB identity map makes trivial.
 */
#include "include/console.h"
#include "include/mm.h"
#include "include/percpu.h"
#include "include/topology.h"
#include "lib/acpi.h"
#include "lib/error.h"

#define EBDA_SEGMENT_PTR 0x40e
#define BIOS_AREA_START 0xe0000
#define BIOS_AREA_LEN 0x20000
#define IDENTITY_MAP_END (4ull << 30)

struct madt_cpu topo_cpus[MAX_CPUS];
struct madt_info topo_info;

static const void *phys_map(void *ctx, uint64_t phys, size_t len)
{
	(void)ctx;
	if (phys >= IDENTITY_MAP_END || len > IDENTITY_MAP_END - phys)
		return NULL;
	return phys_to_virt(phys);
}

static const void *rsdp_find(void)
{
	uint64_t ebda = (uint64_t)*(const volatile uint16_t *)phys_to_virt(EBDA_SEGMENT_PTR) << 4;
	size_t off;

	if (ebda >= 0x80000 && ebda < 0xa0000 && !acpi_find_rsdp(phys_to_virt(ebda), 1024, &off))
		return phys_to_virt(ebda + off);
	if (!acpi_find_rsdp(phys_to_virt(BIOS_AREA_START), BIOS_AREA_LEN, &off))
		return phys_to_virt(BIOS_AREA_START + off);
	return NULL;
}

int topology_discover(void)
{
	const void *rsdp = rsdp_find(), *madt;
	size_t len;
	int rc;

	if (!rsdp) {
		kprintf("acpi: no RSDP found (EBDA, 0xE0000-0xFFFFF)\n");
		return -E_NOENT;
	}
	rc = acpi_find_table(rsdp, phys_map, NULL, "APIC", &madt, &len);
	if (rc) {
		kprintf("acpi: no valid MADT: %s\n", error_name(rc));
		return rc;
	}
	rc = madt_parse(madt, len, topo_cpus, MAX_CPUS, &topo_info);
	if (rc < 0) {
		kprintf("acpi: MADT rejected: %s\n", error_name(rc));
		return rc;
	}
	kprintf("acpi: MADT lists %zu usable CPUs, %zu hot-plug slots, %zu disabled, "
		"%zu duplicates; local APIC at 0x%lx\n",
		topo_info.ncpus, topo_info.nhotplug, topo_info.ndisabled, topo_info.nduplicates,
		topo_info.lapic_phys);
	if (topo_info.ntruncated_list)
		kprintf("acpi: %zu CPUs beyond the supported %u are ignored\n",
			topo_info.ntruncated_list, MAX_CPUS);
	return 0;
}

unsigned int topology_listed(void)
{
	return (unsigned int)topo_info.ncpus;
}

int topology_pm_timer(uint16_t *port, bool *ext32)
{
	const void *rsdp = rsdp_find(), *fadt;
	size_t len;
	int rc;

	if (!rsdp)
		return -E_NOENT;
	rc = acpi_find_table(rsdp, phys_map, NULL, "FACP", &fadt, &len);
	return rc ? rc : acpi_fadt_pm_timer(fadt, len, port, ext32);
}

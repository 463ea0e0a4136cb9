// SPDX-License-Identifier: GPL-2.0-only
/*
 * Finding the CPUs: the RSDP where the loader said it is (PVH's start info),
 * else in the first KiB of the EBDA or in 0xE0000-0xFFFFF (ACPI 6.5
 * 5.2.5.1), then the MADT through the XSDT or RSDT.
 * Without a usable MADT, the Intel MP table: its floating pointer in the
 * first KiB of the EBDA, the last KiB of base memory or 0xF0000-0xFFFFF (MP
 * 1.4 section 4), then the configuration table it points at. The parsing
 * itself is lib/acpi.c and lib/mptable.c, pure and host-tested; this file
 * only reaches physical memory, which the 4 GiB identity map makes trivial.
 * Once the CPUs are up, the boot facts decode their APIC IDs into package,
 * core and thread by CPUID's topology leaves (lib/cpu_topo.c).
 */
#include "include/boot.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/topology.h"
#include "include/x86.h"
#include "lib/acpi.h"
#include "lib/cpu_topo.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/mptable.h"

#define EBDA_SEGMENT_PTR 0x40e
#define BIOS_AREA_START 0xe0000
#define BIOS_AREA_LEN 0x20000
#define IDENTITY_MAP_END (4ull << 30)
#define BASE_MEM_LAST_KIB 0x9fc00 /* 639 KiB: the spec's fallback when the BDA says nothing */
#define BIOS_ROM_START 0xf0000
#define BIOS_ROM_LEN 0x10000

struct madt_cpu topo_cpus[MAX_CPUS];
struct madt_info topo_info;

static const void *phys_map(void *ctx, uint64_t phys, size_t len)
{
	(void)ctx;
	if (phys >= IDENTITY_MAP_END || len > IDENTITY_MAP_END - phys)
		return NULL;
	return phys_to_virt(phys);
}

/* Where the loader said the RSDP is (PVH's rsdp_paddr), if a valid one is there. */
static const void *rsdp_given(void)
{
	static bool said;
	size_t off;

	bool valid;

	if (!boot_rsdp_phys)
		return NULL;
	valid = boot_rsdp_phys < IDENTITY_MAP_END - ACPI_RSDP_V2_LEN &&
		!acpi_find_rsdp(phys_to_virt(boot_rsdp_phys), ACPI_RSDP_V2_LEN, &off) && off == 0;
	if (!said && valid)
		kprintf("acpi: RSDP at 0x%lx, from the loader\n", boot_rsdp_phys);
	else if (!said)
		kprintf(
		    "acpi: no valid RSDP at 0x%lx, where the loader said it is: scanning instead\n",
		    boot_rsdp_phys);
	said = true;
	return valid ? phys_to_virt(boot_rsdp_phys) : NULL;
}

static const void *rsdp_find(void)
{
	uint64_t ebda = (uint64_t)*(const volatile uint16_t *)phys_to_virt(EBDA_SEGMENT_PTR) << 4;
	const void *given = rsdp_given();
	size_t off;

	if (given)
		return given;
	if (ebda >= 0x80000 && ebda < 0xa0000 && !acpi_find_rsdp(phys_to_virt(ebda), 1024, &off))
		return phys_to_virt(ebda + off);
	if (!acpi_find_rsdp(phys_to_virt(BIOS_AREA_START), BIOS_AREA_LEN, &off))
		return phys_to_virt(BIOS_AREA_START + off);
	return NULL;
}

/* The MADT path, as it was before the MP table fallback joined it. */
static int topology_from_acpi(void)
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
	kprintf(
	    "acpi: MADT lists %zu usable CPUs, %zu hot-plug slots, %zu disabled, %zu duplicates; local APIC at 0x%lx\n",
	    topo_info.ncpus, topo_info.nhotplug, topo_info.ndisabled, topo_info.nduplicates,
	    topo_info.lapic_phys);
	if (topo_info.ntruncated_list)
		kprintf("acpi: %zu CPUs beyond the supported %u are ignored\n",
			topo_info.ntruncated_list, MAX_CPUS);
	return 0;
}

/*
 * MP 1.4 section 4: the first KiB of the EBDA, else the last KiB of base
 * memory, else the BIOS ROM. qboot (QEMU microvm, acpi=off) leaves the BDA's
 * EBDA pointer 0 and puts the structure at 639 KiB.
 */
static const void *fps_find(void)
{
	uint64_t ebda = (uint64_t)*(const volatile uint16_t *)phys_to_virt(EBDA_SEGMENT_PTR) << 4;
	size_t off;

	if (ebda >= 0x80000 && ebda < 0xa0000 && !mptable_find_fps(phys_to_virt(ebda), 1024, &off))
		return phys_to_virt(ebda + off);
	if (!mptable_find_fps(phys_to_virt(BASE_MEM_LAST_KIB), 1024, &off))
		return phys_to_virt(BASE_MEM_LAST_KIB + off);
	if (!mptable_find_fps(phys_to_virt(BIOS_ROM_START), BIOS_ROM_LEN, &off))
		return phys_to_virt(BIOS_ROM_START + off);
	return NULL;
}

static void mptable_report(const struct mptable_info *mp)
{
	kprintf("mptable: %zu CPU%s (APIC IDs", mp->ncpus, mp->ncpus == 1 ? "" : "s");
	for (size_t i = 0; i < mp->ncpus; i++)
		kprintf(" %u", topo_cpus[i].apic_id);
	kprintf(")\n");
	if (mp->default_config)
		kprintf("mptable: default configuration %u (MP 1.4 chapter 5), no table\n",
			mp->default_config);
	else
		kprintf(
		    "mptable: MP 1.%u table at 0x%x: %zu entries, %zu disabled, %zu duplicates; local APIC at 0x%lx\n",
		    mp->spec_rev, mp->table_phys, mp->nentries, mp->ndisabled, mp->nduplicates,
		    mp->lapic_phys);
	if (mp->nbsp != 1)
		kprintf(
		    "mptable: %zu processor entries carry the BP flag, not 1: ignored, the BSP is the CPU running this\n",
		    mp->nbsp);
	if (mp->ntruncated_list)
		kprintf("mptable: %zu CPUs beyond the supported %u are ignored\n",
			mp->ntruncated_list, MAX_CPUS);
}

/* The MP table path: its CPU list in topo_cpus[], its counts in the MADT's form. */
static int topology_from_mptable(void)
{
	const void *fps = fps_find();
	struct mptable_info mp;
	int rc;

	if (!fps) {
		kprintf("mptable: no MP floating pointer (EBDA, 639K, 0xF0000-0xFFFFF)\n");
		return -E_NOENT;
	}
	rc = mptable_read(fps, phys_map, NULL, topo_cpus, MAX_CPUS, &mp);
	if (rc < 0) {
		kprintf("mptable: rejected: %s (%s, offset %zu)\n", mp.reason ? mp.reason : "?",
			error_name(rc), mp.reason_offset);
		return rc;
	}
	mptable_report(&mp);
	if (rc == 0)
		return -E_NOENT;
	topo_info = (struct madt_info){
		.lapic_phys = mp.lapic_phys,
		.ncpus = mp.ncpus,
		.ndisabled = mp.ndisabled,
		.nduplicates = mp.nduplicates,
		.ntruncated_list = mp.ntruncated_list,
	};
	return 0;
}

/* ACPI first; the MP table when it has no RSDP or no usable MADT (or debug=no-acpi). */
int topology_discover(void)
{
	if (debug_on(DEBUG_NO_ACPI))
		kprintf("debug: no-acpi: ACPI ignored, CPUs from the MP table\n");
	else if (topology_from_acpi() == 0)
		return 0;
	topo_info = (struct madt_info){0}; /* no partial MADT result stands */
	return topology_from_mptable();
}

unsigned int topology_listed(void)
{
	return (unsigned int)topo_info.ncpus;
}

int topology_pm_timer(uint16_t *port, bool *ext32)
{
	const void *rsdp = debug_on(DEBUG_NO_ACPI) ? NULL : rsdp_find(), *fadt;
	size_t len;
	int rc;

	if (!rsdp)
		return -E_NOENT;
	rc = acpi_find_table(rsdp, phys_map, NULL, "FACP", &fadt, &len);
	return rc ? rc : acpi_fadt_pm_timer(fadt, len, port, ext32);
}

/* Leaf 0xB or 0x1F, subleaf by subleaf up to the first past the last level: 0 or a code. */
static int shifts_from_levels(uint32_t leaf, struct topo_shifts *s)
{
	struct topo_subleaf lv[TOPO_SUBLEAVES_MAX];
	size_t n = 0;

	if (cpu.max_leaf < leaf)
		return -E_NOENT;
	while (n < TOPO_SUBLEAVES_MAX) {
		struct cpuid_regs r = cpuid(leaf, (uint32_t)n);

		lv[n++] = (struct topo_subleaf){ r.eax, r.ebx, r.ecx };
		if (!(r.ebx & 0xffff) || !((r.ecx >> 8) & 0xff))
			break;
	}
	return topo_from_levels(lv, n, s);
}

#define CPUID80000001_ECX_TOPOEXT (1u << 22)

/* Which CPUID leaves give the APIC ID's fields here, and those fields (lib/cpu_topo.h). */
static const char *topology_shifts(struct topo_shifts *s)
{
	struct cpuid_regs r;

	if (!shifts_from_levels(0x1f, s))
		return "CPUID 0x1f";
	if (!shifts_from_levels(0xb, s))
		return "CPUID 0xb";
	if (cpu.is_amd && cpu.max_ext_leaf >= 0x80000008u) {
		uint32_t ext1e = 0; /* no topoext: one thread a core, as far as AMD's leaves say */

		if (cpu.max_ext_leaf >= 0x8000001eu &&
		    (cpuid(0x80000001u, 0).ecx & CPUID80000001_ECX_TOPOEXT))
			ext1e = cpuid(0x8000001eu, 0).ebx;
		if (!topo_from_amd(cpuid(0x80000008u, 0).ecx, ext1e, s))
			return ext1e ? "CPUID 0x8000001e" : "CPUID 0x80000008";
	}
	r = cpuid(1, 0);
	if (!topo_from_legacy(r.ebx, r.edx, !cpu.is_amd && cpu.max_leaf >= 4 ? cpuid(4, 0).eax : 0,
			      s))
		return "CPUID 1 and 4";
	*s = (struct topo_shifts){ 0, 0 };
	return "no topology leaf";
}

/*
 * The BSP's (this CPU's) x2APIC ID, CPUID 0xB's EDX where the leaf is
 * there, against the ID the decode used (its local APIC's, in xAPIC mode
 * only 8 bits): a note when they differ, "" when they agree or there is
 * no leaf to ask.
 */
static const char *topology_x2apic_note(char *buf, size_t size)
{
	uint32_t id = percpu_of[0]->apic_id;
	struct cpuid_regs r;

	if (cpu.max_leaf < 0xb)
		return "";
	r = cpuid(0xb, 0);
	if (!(r.ebx & 0xffff) || r.edx == id) /* EBX[15:0] 0: no such leaf (SDM CPUID 0BH) */
		return "";
	fmt_snprintf(buf, size, " (x2APIC ID from 0xB differs: %u, APIC ID %u)", r.edx, id);
	return buf;
}

void topology_print_cpus(void)
{
	static uint32_t ids[MAX_CPUS];
	static char text[640], note[80];
	struct topo_shifts s;
	const char *source = topology_shifts(&s);

	for (unsigned int c = 0; c < ncpus; c++)
		ids[c] = percpu_of[c]->apic_id;
	if (topo_describe(text, sizeof(text), &s, ids, ncpus, TOPOLOGY_LISTED_MAX) < 0)
		return;
	kprintf("topology: from %s, %s%s\n", source, text, topology_x2apic_note(note, sizeof(note)));
}

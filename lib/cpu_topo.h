/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which package, core and thread an APIC ID names, from the widths CPUID
 * gives its fields (kernel/topology.c reads the leaves, on the BSP):
 * - leaf 0x1F or 0xB (SDM vol. 2A, CPUID, "V2 Extended Topology
 *   Enumeration" and "Extended Topology Enumeration"; Intel, and AMD with
 *   x2APIC topology): each subleaf is a level, EAX[4:0] the number of APIC
 *   ID bits below the next level up, ECX[15:8] its type (1 SMT, 2 core,
 *   3 module, 4 tile, 5 die), EBX[15:0] 0 past the last level. The SMT
 *   level's shift is the thread field's width, the last level's the
 *   package's offset; modules, tiles and dies fall inside "core".
 * - AMD leaves 0x80000008 ECX[15:12] (ApicIdSize: the APIC ID bits a
 *   package's cores and threads use; 0: size it from ECX[7:0], the
 *   count less one) and 0x8000001E EBX[15:8] (threads per core less one,
 *   with topoext; APM vol. 3, appendix E.4).
 * - else leaf 1 EBX[23:16] (addressable IDs a package, when EDX[28] HTT)
 *   and leaf 4 EAX[31:26] (addressable cores a package less one; Intel).
 * Pure, host-tested (tests/unit/test_cpu_topo.c).
 */
#ifndef LIB_CPU_TOPO_H
#define LIB_CPU_TOPO_H

#include <stddef.h>
#include <stdint.h>

/* One subleaf of CPUID leaf 0xB or 0x1F. */
struct topo_subleaf {
	uint32_t eax, ebx, ecx;
};

#define TOPO_TYPE_SMT 1
#define TOPO_SUBLEAVES_MAX 8 /* 0x1F defines types up to 5 (die): room beyond */

struct topo_shifts {
	unsigned int thread_bits;   /* APIC ID bits [thread_bits - 1:0]: the thread in its core */
	unsigned int package_shift; /* APIC ID >> package_shift: the package */
};

struct topo_place {
	uint32_t package, core, thread;
};

/*
 * lv: subleaves 0 .. n - 1 of leaf 0xB or 0x1F as read (those past the last
 * level are ignored). 0, or -E_NOENT when subleaf 0 names no level (the leaf
 * is not implemented), -E_INVAL when the shifts go down or a level's type
 * repeats.
 */
int topo_from_levels(const struct topo_subleaf *lv, size_t n, struct topo_shifts *out);

/* ext8_ecx: CPUID 0x80000008 ECX; ext1e_ebx: 0x8000001E EBX, 0 without topoext. */
int topo_from_amd(uint32_t ext8_ecx, uint32_t ext1e_ebx, struct topo_shifts *out);

/* l1_ebx, l1_edx: CPUID 1 EBX, EDX; l4_eax: leaf 4 subleaf 0 EAX, 0 where there is none. */
int topo_from_legacy(uint32_t l1_ebx, uint32_t l1_edx, uint32_t l4_eax, struct topo_shifts *out);

struct topo_place topo_place_of(const struct topo_shifts *s, uint32_t apic_id);

/*
 * One line of what the APIC IDs ids[0 .. n - 1] (the online CPUs) make:
 * "2 packages x 3 cores x 1 thread; APIC ID = package.core.thread: 0=0.0.0
 * 1=0.1.0 ...", each CPU listed up to list_max of them, beyond that the
 * layout alone ("APIC ID = package << 5 | core << 1 | thread"). An uneven
 * set says so: "5 CPUs in 2 packages, up to 3 cores x 1 thread". Returns
 * what fmt_snprintf() returns for the whole text.
 */
int topo_describe(char *buf, size_t size, const struct topo_shifts *s, const uint32_t *ids,
		  size_t n, size_t list_max);

#endif

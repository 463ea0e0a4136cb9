/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The AP trampoline's argument block, written by the BSP before each
 * START-UP IPI. boot/trampoline.asm reads it at the offsets that
 * kernel/asm-offsets.c exports from this struct.
 */
#ifndef INCLUDE_TRAMPOLINE_H
#define INCLUDE_TRAMPOLINE_H

#include <stddef.h>
#include <stdint.h>

#define TRAMPOLINE_PHYS 0x8000u	/* START-UP vector 0x08 */
#define TRAMP_ARGS_OFFSET 8u

struct trampoline_args {
	uint64_t cr3;		/* the BSP's page tables (below 4 GiB) */
	uint64_t stack;		/* initial RSP of this AP */
	uint64_t percpu;	/* its struct percpu, passed as ap_entry()'s argument */
	uint64_t entry;		/* ap_entry */
};

_Static_assert(sizeof(struct trampoline_args) == 32, "trampoline ABI");
_Static_assert(offsetof(struct trampoline_args, cr3) == 0, "trampoline ABI");
_Static_assert(offsetof(struct trampoline_args, stack) == 8, "trampoline ABI");
_Static_assert(offsetof(struct trampoline_args, percpu) == 16, "trampoline ABI");
_Static_assert(offsetof(struct trampoline_args, entry) == 24, "trampoline ABI");

#endif

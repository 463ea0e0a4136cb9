// SPDX-License-Identifier: GPL-2.0-only
/*
 * Constants shared with nasm. Compiled to assembly only; the Makefile turns
 * each "->NAME value" marker into "%define NAME value" in asm-offsets.inc,
 * so the asm never hard-codes a C layout.
 */
#include <stddef.h>
#include "include/boot.h"
#include "include/status.h"
#include "include/trampoline.h"
#include "include/percpu.h"

#define DEFINE(sym, val) asm volatile("\n->" #sym " %0" : : "i"(val))

void asm_offsets(void);
void asm_offsets(void)
{
	DEFINE(TRAMPOLINE_PHYS, TRAMPOLINE_PHYS);
	DEFINE(TRAMP_ARGS_OFFSET, TRAMP_ARGS_OFFSET);
	DEFINE(TRAMP_ARGS_SIZE, sizeof(struct trampoline_args));
	DEFINE(TA_CR3, offsetof(struct trampoline_args, cr3));
	DEFINE(TA_STACK, offsetof(struct trampoline_args, stack));
	DEFINE(TA_PERCPU, offsetof(struct trampoline_args, percpu));
	DEFINE(TA_ENTRY, offsetof(struct trampoline_args, entry));
	DEFINE(BOOT_STACK_SIZE, BOOT_STACK_SIZE);
	DEFINE(STATUS_BYTE_ERROR, STATUS_BYTE_BASE + STATUS_ERROR);
	DEFINE(BOOT_PVH_MAGIC, BOOT_PVH_MAGIC);
}

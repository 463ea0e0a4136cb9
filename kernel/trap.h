/* SPDX-License-Identifier: GPL-2.0-only */
/* Trap frames, the IDT and interrupt handler registration. */
#ifndef KERNEL_TRAP_H
#define KERNEL_TRAP_H

#include <stddef.h>
#include <stdint.h>
#include "include/irq.h"

/* Pushed by boot/isr.asm: general registers, then vector and error code,
 * then the CPU's own frame. */
struct trap_frame {
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};
_Static_assert(sizeof(struct trap_frame) == 22 * sizeof(uint64_t), "matches boot/isr.asm");

#define IDT_BYTES ((size_t)256 * 16)	/* 256 gates of 16 bytes */

void idt_init(void);
/* Copies the template into this CPU's own IDT (percpu->idt) and loads it. */
void idt_load(void);

#endif

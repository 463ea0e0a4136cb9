// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-CPU areas: allocation, and loading one on its CPU (own GDT with a TSS
 * for the IST stacks, GS base pointing at the area). SDM vol. 3A 8.7 (TSS in
 * 64-bit mode), 3.4.4 (segment loading in IA-32e mode).
 */
#include "include/console.h"
#include "include/mm.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "kernel/trap.h"

#define SEL_CODE 0x08
#define SEL_DATA 0x10
#define SEL_TSS 0x18

struct percpu *percpu_of[MAX_CPUS];
unsigned int ncpus;

static void gdt_set_tss(uint64_t *gdt, const struct tss64 *tss)
{
	uint64_t base = (uint64_t)tss, limit = sizeof(*tss) - 1;

	/* 64-bit available TSS descriptor (type 9), 16 bytes: SDM figure 8-4. */
	gdt[3] = (limit & 0xffff) | ((base & 0xffffff) << 16) | (0x89ull << 40) |
		 ((limit >> 16 & 0xf) << 48) | ((base >> 24 & 0xff) << 56);
	gdt[4] = base >> 32;
}

struct percpu *percpu_alloc(uint32_t cpu, uint32_t apic_id)
{
	struct percpu *p = mm_alloc(sizeof(*p), CACHELINE);
	uint8_t *stack = mm_alloc(CPU_STACK_SIZE + 3 * IST_STACK_SIZE, 4096);

	p->self = p;
	p->idt = mm_alloc(IDT_BYTES, 16);
	p->cpu = cpu;
	p->apic_id = apic_id;
	p->stack_top = (uint64_t)stack + CPU_STACK_SIZE;
	for (int i = 0; i < 3; i++)
		p->tss.ist[i] = (uint64_t)stack + CPU_STACK_SIZE + (uint64_t)(i + 1) * IST_STACK_SIZE;
	p->tss.iomap_base = sizeof(p->tss);	/* no I/O bitmap */
	p->gdt[0] = 0;
	p->gdt[1] = 0x00af9a000000ffffull;	/* 64-bit code */
	p->gdt[2] = 0x00cf92000000ffffull;	/* data */
	gdt_set_tss(p->gdt, &p->tss);
	percpu_of[cpu] = p;
	return p;
}

void percpu_load(struct percpu *p)
{
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed gdtr = { sizeof(p->gdt) - 1, (uint64_t)p->gdt };

	asm volatile("lgdt %0\n\t"
		     "pushq %1\n\t"
		     "leaq 1f(%%rip), %%rax\n\t"
		     "pushq %%rax\n\t"
		     "lretq\n"
		     "1:\n\t"
		     "movw %w2, %%ds\n\t"
		     "movw %w2, %%es\n\t"
		     "movw %w2, %%ss\n\t"
		     "ltr %w3"
		     :
		     : "m"(gdtr), "i"(SEL_CODE), "r"(SEL_DATA), "r"(SEL_TSS)
		     : "rax", "memory");
	wrmsr(MSR_GS_BASE, (uint64_t)p);
}

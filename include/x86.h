/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Thin wrappers around x86-64 instructions. Nothing here has policy; the
 * ordering variants of RDTSC are the timed regions' edges: LFENCE; RDTSC
 * before, RDTSCP; LFENCE after (MFENCE; LFENCE; RDTSC without RDTSCP).
 */
#ifndef INCLUDE_X86_H
#define INCLUDE_X86_H

#include <stdbool.h>
#include <stdint.h>

struct cpuid_regs {
	uint32_t eax, ebx, ecx, edx;
};

static inline struct cpuid_regs cpuid(uint32_t leaf, uint32_t subleaf)
{
	struct cpuid_regs r;

	asm volatile("cpuid"
		     : "=a"(r.eax), "=b"(r.ebx), "=c"(r.ecx), "=d"(r.edx)
		     : "a"(leaf), "c"(subleaf));
	return r;
}

static inline uint64_t rdmsr(uint32_t msr)
{
	uint32_t lo, hi;

	asm volatile("rdmsr" : "=a"(lo), "=d"(hi) : "c"(msr));
	return ((uint64_t)hi << 32) | lo;
}

static inline void wrmsr(uint32_t msr, uint64_t val)
{
	asm volatile("wrmsr" : : "c"(msr), "a"((uint32_t)val), "d"((uint32_t)(val >> 32))
		     : "memory");
}

/* Fault-tolerant MSR access (boot/extable.asm): 0, or -E_NODEV on #GP. */
int rdmsr_safe(uint32_t msr, uint64_t *val);
int wrmsr_safe(uint32_t msr, uint64_t val);

static inline void outb(uint16_t port, uint8_t v)
{
	asm volatile("outb %0, %1" : : "a"(v), "Nd"(port));
}

/* n bytes from buf to port, one string instruction (DF is clear, as the ABI keeps it). */
static inline void outsb(uint16_t port, const void *buf, unsigned long n)
{
	asm volatile("rep outsb" : "+S"(buf), "+c"(n) : "d"(port) : "memory");
}

static inline void outw(uint16_t port, uint16_t v)
{
	asm volatile("outw %0, %1" : : "a"(v), "Nd"(port));
}

static inline void outl(uint16_t port, uint32_t v)
{
	asm volatile("outl %0, %1" : : "a"(v), "Nd"(port));
}

static inline uint8_t inb(uint16_t port)
{
	uint8_t v;

	asm volatile("inb %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint16_t inw(uint16_t port)
{
	uint16_t v;

	asm volatile("inw %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

static inline uint32_t inl(uint16_t port)
{
	uint32_t v;

	asm volatile("inl %1, %0" : "=a"(v) : "Nd"(port));
	return v;
}

/* Plain RDTSC, unordered: only for deadlines, never for samples. */
static inline uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

/*
 * Start of a timed region: LFENCE keeps RDTSC from executing before the
 * instructions in front of it have completed (SDM vol. 2B, RDTSC).
 */
static inline uint64_t tsc_begin(void)
{
	uint32_t lo, hi;

	asm volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

/*
 * End of a timed region: RDTSCP waits for all earlier instructions; the
 * trailing LFENCE keeps later ones from starting before it reads the TSC.
 * Without RDTSCP the caller uses tsc_end_nop(): MFENCE; LFENCE; RDTSC.
 */
static inline uint64_t tsc_end(void)
{
	uint32_t lo, hi, aux;

	asm volatile("rdtscp; lfence" : "=a"(lo), "=d"(hi), "=c"(aux) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline uint64_t tsc_end_nop(void)
{
	uint32_t lo, hi;

	asm volatile("mfence; lfence; rdtsc; lfence" : "=a"(lo), "=d"(hi) : : "memory");
	return ((uint64_t)hi << 32) | lo;
}

static inline void cpu_relax(void)
{
	asm volatile("pause" ::: "memory");
}

static inline void irq_disable(void)
{
	asm volatile("cli" ::: "memory");
}

static inline void irq_enable(void)
{
	asm volatile("sti" ::: "memory");
}

static inline bool irq_enabled(void)
{
	uint64_t flags;

	asm volatile("pushfq; popq %0" : "=r"(flags));
	return flags & (1u << 9);
}

/* IF off, returning whether it was on: for irq_restore(). */
static inline bool irq_save(void)
{
	bool was_on = irq_enabled();

	irq_disable();
	return was_on;
}

static inline void irq_restore(bool was_on)
{
	if (was_on)
		irq_enable();
}

/* STI's one-instruction interrupt shadow makes "sti; hlt" race-free. */
static inline void safe_halt(void)
{
	asm volatile("sti; hlt" ::: "memory");
}

static inline void halt(void)
{
	asm volatile("hlt" ::: "memory");
}

static inline uint64_t read_cr0(void)
{
	uint64_t v;

	asm volatile("mov %%cr0, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr2(void)
{
	uint64_t v;

	asm volatile("mov %%cr2, %0" : "=r"(v));
	return v;
}

static inline uint64_t read_cr3(void)
{
	uint64_t v;

	asm volatile("mov %%cr3, %0" : "=r"(v));
	return v;
}

static inline void write_cr3(uint64_t v)
{
	asm volatile("mov %0, %%cr3" : : "r"(v) : "memory");
}

static inline uint64_t read_cr4(void)
{
	uint64_t v;

	asm volatile("mov %%cr4, %0" : "=r"(v));
	return v;
}

static inline void write_cr8(uint64_t v)
{
	asm volatile("mov %0, %%cr8" : : "r"(v) : "memory");
}

static inline void invlpg(const void *va)
{
	asm volatile("invlpg (%0)" : : "r"(va) : "memory");
}

/* Architectural MSRs and CPUID bits used across units. */
#define MSR_IA32_APIC_BASE	0x0000001b
#define  APIC_BASE_BSP		(1u << 8)
#define  APIC_BASE_EXTD		(1u << 10)
#define  APIC_BASE_EN		(1u << 11)
#define MSR_IA32_TSC_AUX	0xc0000103
#define MSR_GS_BASE		0xc0000101

#define CPUID1_ECX_X2APIC	(1u << 21)
#define CPUID1_ECX_TSC_DEADLINE	(1u << 24)
#define CPUID1_ECX_HYPERVISOR	(1u << 31)
#define CPUID1_EDX_APIC		(1u << 9)
#define CPUID80000001_EDX_RDTSCP (1u << 27)
#define CPUID80000007_EDX_INVTSC (1u << 8)

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Per-CPU data, reached through the GS base (self pointer first, as in
 * Little Kernel and Linux). CPU numbers are dense, assigned by the BSP in
 * MADT order with the BSP as 0. Every field that another CPU writes, and
 * every line this CPU writes while others poll it, sits on its own cache
 * line: false sharing would show up in the figures.
 */
#ifndef INCLUDE_PERCPU_H
#define INCLUDE_PERCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "include/compiler.h"
#include "include/watchdog.h"

#define MAX_CPUS 1024
#define BOOT_STACK_SIZE 16384
#define CPU_STACK_SIZE 16384
#define IST_STACK_SIZE 4096

/* Vectors. Benchmark and test IPIs use IPI_VEC_FIRST .. +IPI_VEC_COUNT-1. */
#define VEC_PIC_BASE 0x20	/* legacy 8259s remapped here, then masked */
#define VEC_WAKE 0x30		/* mailbox doorbell: wakes a halted idle CPU */
#define VEC_WATCHDOG 0x31	/* local APIC timer: the stall watchdog's tick, or bounding a HLT */
#define IPI_VEC_FIRST 0x40
#define IPI_VEC_COUNT 0x40
#define VEC_XEN_UPCALL 0xf3	/* Xen's event-channel upcall (xen/evtchn.c), Linux's number */
#define VEC_SPURIOUS 0xff	/* SVR vector; bits 3:0 set, as P6 required */

struct ipi_ops;

struct tss64 {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3;
	uint16_t iomap_base;
} __packed;
_Static_assert(sizeof(struct tss64) == 104, "TSS layout (SDM vol. 3A 8.7)");

/*
 * A request slot the owner CPU polls; the ack sits on its own line, with
 * what the idle loop publishes as it enters HLT (kernel/smp.c), which a
 * halted-target benchmark waits on before its gap (bench/point.c).
 */
struct mailbox {
	void (*fn)(void *arg);
	void *arg;
	uint64_t req;			/* written by the caller */
	uint64_t ack __cacheline_aligned; /* written by the owner */
	uint32_t halted_at;		/* irq.count[0] as the owner last entered HLT: stored
					 * with IF=0 just before STI;HLT */
	uint32_t ticks;			/* APIC timer interrupts the owner took (kernel/lapic.c) */
} __cacheline_aligned;

/*
 * Written by this CPU (its interrupt handlers and its spin loop), read by
 * other CPUs. The first line holds everything a benchmark's sender reads
 * for the benchmark vector (IPI_VEC_FIRST): the handler's entry TSC and
 * count, and the spin loop's second acknowledgement, so one IPI moves one
 * line, not two (asserted below).
 */
struct irq_stats {
	uint64_t entry_tsc;		/* TSC at entry of the latest IPI */
	uint32_t back;			/* the spin loop's copy of count[0]: EOI and IRET done */
	uint32_t count[IPI_VEC_COUNT];	/* per benchmark/test vector */
	uint64_t spurious;
	uint64_t unexpected;
	uint32_t nmis;			/* NMIs the IPI core took (ipi_nmi), whatever their use */
	uint32_t unexpected_vector;	/* the latest one, for the message */
} __cacheline_aligned;
_Static_assert(offsetof(struct irq_stats, count[1]) <= CACHELINE,
	       "the benchmark vector's count shares the first line with entry_tsc and back");

struct percpu {
	struct percpu *self;		/* must stay first: %gs:0 */
	uint32_t cpu;
	uint32_t apic_id;
	const struct ipi_ops *ops;	/* IPI backend in force on this CPU */
	uint32_t logical_dest;		/* LDR value in force (logical modes) */
	bool barrier_sense;
	uint64_t stack_top;
	uint64_t gdt[5];		/* null, code, data, TSS (2 slots) */
	void *idt;			/* this CPU's IDT, a copy of kernel/trap.c's template */
	struct tss64 tss;
	uint32_t online;		/* set once by the AP itself */
	struct mailbox mbox;
	struct irq_stats irq;
	struct watch watch;		/* progress word (include/watchdog.h), own line */
	struct watch_nmi watch_nmi;	/* a watcher's NMI and this CPU's answer, own line */
} __cacheline_aligned;

static inline struct percpu *this_cpu(void)
{
	struct percpu *p;

	asm volatile("mov %%gs:0, %0" : "=r"(p));
	return p;
}

extern struct percpu *percpu_of[MAX_CPUS];
extern unsigned int ncpus;

void percpu_load(struct percpu *p);	/* GDT, TSS, GS base on this CPU */
struct percpu *percpu_alloc(uint32_t cpu, uint32_t apic_id);

#endif

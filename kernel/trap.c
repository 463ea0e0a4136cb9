// SPDX-License-Identifier: GPL-2.0-only
/*
 * IDT, exception reporting and interrupt dispatch (SDM vol. 3A 6.14
 * "Exception and Interrupt Handling in 64-bit Mode").
 *
 * Every exception prints vector, error code, RIP, CR2, RSP, registers, the
 * CPU number and APIC ID, then ends the run with STATUS_CRASH, unless the
 * faulting RIP has an entry in the exception table (rdmsr_safe and friends),
 * in which case execution resumes at its fixup. #DF, NMI and #MC run on
 * their own IST stacks so that a blown stack still gets reported. An NMI is
 * one of four: status_exit() stopping this CPU, the stall watchdog asking
 * for its registers (include/watchdog.h), an IPI of an NMI backend, or a
 * stray one; the last two go to the IPI core (ipi_nmi(), include/ipi.h),
 * which counts a stray NMI as an unexpected interrupt for the suite to
 * report instead of crashing the run.
 */
#include <stdint.h>
#include "include/console.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/status.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "kernel/trap.h"

#define GATE_INTERRUPT 0x8e	/* present, DPL 0, 64-bit interrupt gate */
#define KERNEL_CS 0x08
#define IST_DF 1
#define IST_NMI 2
#define IST_MC 3

struct idt_gate {
	uint16_t off_lo;
	uint16_t selector;
	uint8_t ist;
	uint8_t type;
	uint16_t off_mid;
	uint32_t off_hi;
	uint32_t reserved;
} __packed;
_Static_assert(sizeof(struct idt_gate) == 16, "SDM vol. 3A figure 6-8");

struct extable_entry {
	uint64_t insn, fixup;
};

extern const uint64_t isr_stub_table[256];
extern const struct extable_entry __ex_table_start[], __ex_table_end[];

/* The template every CPU copies into its own IDT; never changed after boot
 * (handlers are chosen through handlers[], not by rewriting gates). */
static struct idt_gate idt[256] __aligned(16);
_Static_assert(sizeof(idt) == IDT_BYTES, "percpu IDT size");
static irq_handler_t handlers[256];

static const char *const exception_names[32] = {
	"#DE divide error", "#DB debug", "NMI", "#BP breakpoint", "#OF overflow",
	"#BR bound range", "#UD invalid opcode", "#NM device not available",
	"#DF double fault", "coprocessor segment overrun", "#TS invalid TSS",
	"#NP segment not present", "#SS stack fault", "#GP general protection",
	"#PF page fault", "reserved 15", "#MF x87 error", "#AC alignment check",
	"#MC machine check", "#XM SIMD exception", "#VE virtualization exception",
	"#CP control protection", "reserved 22", "reserved 23", "reserved 24",
	"reserved 25", "reserved 26", "reserved 27", "#HV hypervisor injection",
	"#VC VMM communication", "#SX security exception", "reserved 31",
};

static void idt_set_gate(unsigned int vec, uint64_t handler, uint8_t ist)
{
	idt[vec] = (struct idt_gate){
		.off_lo = (uint16_t)handler,
		.selector = KERNEL_CS,
		.ist = ist,
		.type = GATE_INTERRUPT,
		.off_mid = (uint16_t)(handler >> 16),
		.off_hi = (uint32_t)(handler >> 32),
	};
}

void idt_init(void)
{
	for (unsigned int v = 0; v < 256; v++)
		idt_set_gate(v, isr_stub_table[v], 0);
	idt[8].ist = IST_DF;
	idt[2].ist = IST_NMI;
	idt[18].ist = IST_MC;
}

void idt_load(void)
{
	struct percpu *p = this_cpu();
	struct {
		uint16_t limit;
		uint64_t base;
	} __packed idtr = { sizeof(idt) - 1, (uint64_t)p->idt };

	__builtin_memcpy(p->idt, idt, sizeof(idt));

	asm volatile("lidt %0" : : "m"(idtr));
}

void irq_set_handler(unsigned int vector, irq_handler_t fn)
{
	__atomic_store_n(&handlers[vector & 0xff], fn, __ATOMIC_RELEASE);
}

irq_handler_t irq_get_handler(unsigned int vector)
{
	return __atomic_load_n(&handlers[vector & 0xff], __ATOMIC_ACQUIRE);
}

void irq_unexpected(unsigned int vector, uint64_t entry_tsc)
{
	struct percpu *p = this_cpu();

	(void)entry_tsc;
	WRITE_ONCE(p->irq.unexpected, p->irq.unexpected + 1);
	WRITE_ONCE(p->irq.unexpected_vector, vector);
	lapic_eoi();
}

static bool extable_fixup(struct trap_frame *f)
{
	/* Linker symbols: compare addresses, not pointers into one object. */
	size_t n = ((uintptr_t)__ex_table_end - (uintptr_t)__ex_table_start) /
		   sizeof(struct extable_entry);

	for (size_t i = 0; i < n; i++) {
		if (__ex_table_start[i].insn == f->rip) {
			f->rip = __ex_table_start[i].fixup;
			return true;
		}
	}
	return false;
}

static void trap_dump(const struct trap_frame *f)
{
	uint64_t gs = rdmsr(MSR_GS_BASE);
	const struct percpu *p = (const struct percpu *)gs;

	if (p)
		kprintf("\nCPU %u (APIC ID %u): ", p->cpu, p->apic_id);
	else
		kprintf("\nCPU ? (before per-CPU set-up): ");
	kprintf("exception %s (vector %lu), error code 0x%lx\n", exception_names[f->vector & 31],
		f->vector, f->error);
	if (crash_context)
		kprintf("  during %s\n", crash_context);
	kprintf("  RIP %016lx  CS %04lx  RFLAGS %016lx\n", f->rip, f->cs, f->rflags);
	kprintf("  RSP %016lx  SS %04lx  CR2 %016lx  CR3 %016lx\n", f->rsp, f->ss, read_cr2(),
		read_cr3());
	kprintf("  RAX %016lx  RBX %016lx  RCX %016lx  RDX %016lx\n", f->rax, f->rbx, f->rcx,
		f->rdx);
	kprintf("  RSI %016lx  RDI %016lx  RBP %016lx  R8  %016lx\n", f->rsi, f->rdi, f->rbp,
		f->r8);
	kprintf("  R9  %016lx  R10 %016lx  R11 %016lx  R12 %016lx\n", f->r9, f->r10, f->r11,
		f->r12);
	kprintf("  R13 %016lx  R14 %016lx  R15 %016lx\n", f->r13, f->r14, f->r15);
}

static __noreturn void trap_park(void)
{
	for (;;)
		asm volatile("cli; hlt");
}

/*
 * An NMI that came in while this CPU was still in the NMI handler, before
 * its IRET: NMIs stay blocked from an NMI's delivery until the next IRET
 * (SDM vol. 3A 6.7.1), so either something inside the handler executed an
 * IRET (an exception's return does, and nothing here takes one) or the
 * hypervisor delivered an NMI it should have held. The second entry
 * reloaded RSP from the one NMI IST stack and wrote its frame over the
 * first's, so the first handler has nowhere to return to: the run ends,
 * naming it, as the system under test's failure.
 */
static __noreturn void trap_nested_nmi(const struct trap_frame *f)
{
	const struct percpu *p = this_cpu();

	status_report(STATUS_FAILURE); /* before the line: another CPU may be ending the run */
	kprintf(
	    "ipibench: FAILURE: nested NMI on CPU %u (APIC ID %u): an NMI was delivered while this CPU was still in its NMI handler, before that handler's IRET (SDM vol. 3A 6.7.1: NMIs stay blocked until then); the second overwrote the first's frame on the NMI stack, RIP %016lx\n",
	    p->cpu, p->apic_id, f->rip);
	status_exit(STATUS_FAILURE);
}

/*
 * Whether the NMI interrupted code already on the NMI's IST stack: only the
 * NMI path runs there, from the first push of its entry stub to its IRET,
 * so that is a nested NMI, caught over the whole window and with no store
 * on the path (Linux's NMI entry tells it the same way, by the interrupted
 * RSP). The #DF and #MC stacks lie beside it, outside the range.
 */
static bool trap_nmi_nested(const struct trap_frame *f)
{
	const uint64_t top = this_cpu()->tss.ist[IST_NMI - 1];

	return f->rsp < top && f->rsp >= top - IST_STACK_SIZE;
}

/*
 * debug=nested-nmi: on debug_cpu's first NMI of an NMI backend, the
 * handler sends itself another NMI (held: NMIs are blocked) and then
 * executes an IRET to its own next instruction, which unblocks NMIs as any
 * IRET does; the held NMI then comes in nested, as a hypervisor that
 * ignored the blocking would deliver it. It sends from NMI context, which
 * a handler must not do (include/bench.h): harmless only because the run
 * ends there.
 */
static void trap_plant_nested_nmi(void)
{
	static bool done;
	struct percpu *p;
	uint64_t scratch;

	if (__builtin_expect(!debug_on(DEBUG_NESTED_NMI), 1) || done)
		return;
	p = this_cpu();
	if (!ipi_is_nmi(p->ops) || p->cpu != debug_cpu_pick(ncpus))
		return;
	done = true;
	p->ops->send_self(IPI_NMI_VEC);
	/* A 64-bit IRET frame of this very point: SS, RSP, RFLAGS, CS, RIP. */
	asm volatile("mov %%ss, %k0\n\t"
		     "pushq %0\n\t"
		     "leaq 8(%%rsp), %0\n\t"
		     "pushq %0\n\t"
		     "pushfq\n\t"
		     "mov %%cs, %k0\n\t"
		     "pushq %0\n\t"
		     "leaq 1f(%%rip), %0\n\t"
		     "pushq %0\n\t"
		     "iretq\n"
		     "1:"
		     : "=&r"(scratch)
		     :
		     : "cc", "memory");
}

/* NMIs: status_exit() stopping this CPU, the stall watchdog, or an IPI of
 * an NMI backend (or a stray one). */
static void trap_nmi(struct trap_frame *f, uint64_t tsc)
{
	/* status_exit() on another CPU is stopping us: stay quiet. */
	if (__atomic_load_n(&status_stopping, __ATOMIC_ACQUIRE))
		trap_park();
	if (trap_nmi_nested(f))
		trap_nested_nmi(f);
	/*
	 * The watchdog on another CPU asked for our registers: publish them
	 * (it prints them) and stay here, NMIs blocked, until the run ends.
	 * Even mid-way through a stuck instruction sequence, an NMI is taken at
	 * an instruction boundary, so RIP is where this CPU was stuck.
	 */
	if (watchdog_nmi(f, sizeof(*f)))
		trap_park();
	trap_plant_nested_nmi();
	/*
	 * Any other NMI is an IPI of an NMI backend, or stray: the IPI core's.
	 * Under -icount this path (IST stub, the checks above, the nested-nmi
	 * key's test) costs a target 60 instructions more than a vector's
	 * dispatch, 10 of them the nested check and the key's test.
	 */
	ipi_nmi(tsc);
}

static void trap_exception(struct trap_frame *f, uint64_t tsc)
{
	if (f->vector == 2) {
		trap_nmi(f, tsc);
		return;
	}
	if (extable_fixup(f))
		return;
	trap_dump(f);
	status_exit(STATUS_CRASH);
}

void trap_dispatch(struct trap_frame *f);
void trap_dispatch(struct trap_frame *f)
{
	/* The one-way figures' handler-entry TSC: after the stub saved the GPRs. */
	uint64_t tsc = rdtsc();
	unsigned int vec = (unsigned int)f->vector;
	irq_handler_t fn;

	if (vec < 32) {
		trap_exception(f, tsc);
		return;
	}
	if (vec == VEC_SPURIOUS) {
		/* SDM vol. 3A 11.9: a spurious interrupt takes no EOI. */
		this_cpu()->irq.spurious++;
		return;
	}
	fn = __atomic_load_n(&handlers[vec], __ATOMIC_ACQUIRE);
	if (fn)
		fn(vec, tsc);
	else
		irq_unexpected(vec, tsc);
}

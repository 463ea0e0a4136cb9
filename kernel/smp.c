// SPDX-License-Identifier: GPL-2.0-only
/*
 * AP bring-up (SDM vol. 3A 9.4.4 "MP Initialization Example": INIT, 10 ms,
 * START-UP, 200 us, START-UP) and the mailbox each AP idles on.
 *
 * APs start one at a time through one trampoline page: the argument block
 * is rewritten for each. An AP that misses its deadline is sent INIT again,
 * which returns it to wait-for-SIPI, so that it cannot wake late and take
 * the next AP's stack. Hot-plug slots (online-capable, not enabled) never
 * get an INIT or SIPI.
 *
 * Idle APs halt with interrupts on; a posted request is followed by a
 * VEC_WAKE IPI. Checking the mailbox with IF=0 and halting with STI;HLT
 * closes the race with a wake-up that arrives in between.
 *
 * For the stall watchdog (include/watchdog.h) an AP running a request is
 * watched (WATCH_REQUEST; a request that spins as a benchmark target says
 * so itself), an idle one is not, and every wait and barrier here is a
 * step on both sides of it, naming the word it waits on (watch_wait).
 */
#include "include/console.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/trampoline.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "kernel/trap.h"
#include "lib/acpi.h"
#include "lib/error.h"
#include "lib/icr.h"

#define SIPI_RETRY_US 200

extern const uint8_t trampoline_blob[], trampoline_blob_end[];
extern uint64_t boot_pml4[];

static void mailbox_wake(unsigned int vector, uint64_t tsc)
{
	(void)vector;
	(void)tsc;
	lapic_eoi();
}

/*
 * A request under the watchdog's eye. Before the watchdog runs, requests
 * run bare: the boot's TSC skew probe times its ping-pong through this
 * path, and two calls more on it move the probe's interleaving under an
 * instruction-counted TCG (its bound by a cycle).
 */
static void ap_run_watched(struct percpu *p)
{
	struct watch_saved saved = watch_enter(WATCH_REQUEST, 0, NULL, (uintptr_t)p->mbox.fn);

	p->mbox.fn(p->mbox.arg);
	watch_restore(&saved);
}

/*
 * Faults planted in an idle AP's way into HLT (tests only), one armed at a
 * time: debug=late-wake (smp_delay_next_wake) and debug=no-halt-mark
 * (smp_skip_next_halt_mark). The idle loop reads only the armed CPU's
 * number, as it would with one fault: its way into HLT, which
 * single-threaded TCG runs inside single-halt's regions, stays as short.
 */
enum idle_fault { IDLE_LATE_WAKE, IDLE_NO_HALT_MARK };
static uint32_t idle_fault_cpu = UINT32_MAX, late_wake_started;
static enum idle_fault idle_fault;
static uint64_t late_wake_us;

static void idle_fault_arm(unsigned int cpu, enum idle_fault what)
{
	idle_fault = what;
	store_release(&idle_fault_cpu, cpu);
}

void smp_delay_next_wake(unsigned int cpu, uint64_t us)
{
	late_wake_us = us;
	WRITE_ONCE(late_wake_started, 0);
	idle_fault_arm(cpu, IDLE_LATE_WAKE);
}

bool smp_wake_delay_started(void)
{
	return load_acquire(&late_wake_started);
}

void smp_skip_next_halt_mark(unsigned int cpu)
{
	idle_fault_arm(cpu, IDLE_NO_HALT_MARK);
}

/*
 * With interrupts off, about to halt with no request pending, on the armed
 * CPU, once. late-wake: sit on what arrives meanwhile (a request's wake-up
 * included: it is taken at the STI before the HLT). no-halt-mark: halt
 * without publishing, as a CPU that took an NMI between that store and its
 * HLT would; true then.
 */
static __attribute__((noinline, cold)) bool ap_idle_fault(void)
{
	WRITE_ONCE(idle_fault_cpu, UINT32_MAX);
	if (idle_fault == IDLE_NO_HALT_MARK)
		return true;
	store_release(&late_wake_started, 1);
	tsc_delay_us(late_wake_us);
	return false;
}

static void __noreturn ap_idle(struct percpu *p)
{
	for (;;) {
		uint64_t req;

		irq_disable();
		req = load_acquire(&p->mbox.req);
		if (req == p->mbox.ack) {
			if (__builtin_expect(READ_ONCE(idle_fault_cpu) == p->cpu, 0) &&
			    ap_idle_fault()) {
				safe_halt();
				continue;
			}
			/* The benchmark vector's count as this HLT begins, with
			 * IF=0: a Fixed IPI that comes after this store is taken
			 * at the HLT, out of it (bench/point.c waits for it). */
			store_release(&p->mbox.halted_at, READ_ONCE(p->irq.count[0]));
			safe_halt();
			continue;
		}
		irq_enable();
		if (watchdog_on())
			ap_run_watched(p);
		else
			p->mbox.fn(p->mbox.arg);
		store_release(&p->mbox.ack, req);
	}
}

static void ap_entry(struct percpu *p) __noreturn;
static void ap_entry(struct percpu *p)
{
	percpu_load(p);
	idt_load();
	/* INIT left this APIC in xAPIC mode; follow the BSP's mode. */
	if (lapic_mode == LAPIC_X2APIC)
		wrmsr(MSR_IA32_APIC_BASE,
		      rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
	lapic_setup_local();
	if (lapic_id() != p->apic_id)
		kprintf("smp: CPU %u reports APIC ID %u, the MADT said %u\n", p->cpu, lapic_id(),
			p->apic_id);
	store_release(&p->online, 1);
	ap_idle(p);
}

static void trampoline_install(const struct percpu *p)
{
	uint8_t *page = (uint8_t *)(uintptr_t)TRAMPOLINE_PHYS;
	struct trampoline_args *args = (void *)(page + TRAMP_ARGS_OFFSET);
	size_t len = (uintptr_t)trampoline_blob_end - (uintptr_t)trampoline_blob;

	__builtin_memset(page, 0xcc, 4096);	/* a stray jump traps at once */
	__builtin_memcpy(page, trampoline_blob, len);
	args->cr3 = (uint64_t)boot_pml4;
	args->stack = p->stack_top;
	args->percpu = (uint64_t)p;
	args->entry = (uint64_t)ap_entry;
	asm volatile("mfence" ::: "memory");
}

static bool ap_wait_online(const struct percpu *p, uint64_t deadline)
{
	while (!load_acquire(&p->online)) {
		if (tsc_expired(deadline))
			return false;
		cpu_relax();
	}
	return true;
}

static void ap_send(uint32_t apic_id, struct icr_fields f)
{
	lapic_send_icr(apic_id, icr_encode_low(&f));
}

static bool ap_start_one(struct percpu *p, const struct smp_options *opt, bool skip_sipi)
{
	struct icr_fields sipi;
	uint64_t deadline;

	trampoline_install(p);
	ap_send(p->apic_id, icr_make_init_assert(p->apic_id));
	ap_send(p->apic_id, icr_make_init_deassert(p->apic_id));
	tsc_delay_us(opt->init_delay_us);
	if (icr_make_startup(p->apic_id, TRAMPOLINE_PHYS, &sipi))
		panic("trampoline at 0x%x cannot be reached by a START-UP IPI", TRAMPOLINE_PHYS);
	if (!skip_sipi) {
		ap_send(p->apic_id, sipi);
		if (!ap_wait_online(p, tsc_deadline_us(SIPI_RETRY_US)))
			ap_send(p->apic_id, sipi);
	}
	deadline = tsc_deadline_us((uint64_t)opt->ap_timeout_ms * 1000);
	if (ap_wait_online(p, deadline))
		return true;
	/* Park it in wait-for-SIPI so it cannot use the next AP's arguments. */
	ap_send(p->apic_id, icr_make_init_assert(p->apic_id));
	return false;
}

unsigned int smp_start_aps(const struct madt_cpu *list, unsigned int n,
			   const struct smp_options *opt)
{
	uint32_t bsp_id = percpu_of[0]->apic_id;
	unsigned int next = 1;
	bool skip, skipped = false;	/* fault injection hits one AP only */

	irq_set_handler(VEC_WAKE, mailbox_wake);
	for (unsigned int i = 0; i < n && next < MAX_CPUS; i++) {
		struct percpu *p;

		if (list[i].apic_id == bsp_id)
			continue;
		if (lapic_mode != LAPIC_X2APIC && list[i].apic_id >= 0xff) {
			kprintf("smp: APIC ID %u is out of xAPIC reach: left out\n", list[i].apic_id);
			continue;
		}
		p = percpu_alloc(next, list[i].apic_id);
		skip = !skipped && opt->skip_sipi_cpu == next;
		skipped |= skip;
		if (!ap_start_one(p, opt, skip)) {
			kprintf("smp: CPU %u (APIC ID %u) did not come up within %u ms: left out\n",
				next, list[i].apic_id, opt->ap_timeout_ms);
			percpu_of[next] = NULL;
			continue;
		}
		next++;
	}
	ncpus = next;
	return ncpus;
}

void smp_post(unsigned int cpu, smp_fn fn, void *arg)
{
	struct percpu *p = percpu_of[cpu];
	struct icr_fields wake = icr_make_fixed(VEC_WAKE, p->apic_id);

	p->mbox.fn = fn;
	p->mbox.arg = arg;
	store_release(&p->mbox.req, p->mbox.req + 1);
	lapic_send_icr(p->apic_id, icr_encode_low(&wake));
}

bool smp_busy(unsigned int cpu)
{
	const struct percpu *p = percpu_of[cpu];

	return load_acquire(&p->mbox.ack) != READ_ONCE(p->mbox.req);
}

int smp_wait(unsigned int cpu, uint64_t deadline)
{
	const struct percpu *p = percpu_of[cpu];
	int err = 0;

	watch_wait("mailbox ack", (int)cpu, &p->mbox.ack, sizeof(p->mbox.ack),
		   READ_ONCE(p->mbox.req));
	while (smp_busy(cpu)) {
		if (tsc_expired(deadline)) {
			err = -E_TIMEDOUT;
			break;
		}
		cpu_relax();
	}
	watch_wait_end();
	return err;
}

int smp_call(unsigned int cpu, smp_fn fn, void *arg, uint64_t timeout_us)
{
	if (cpu == this_cpu()->cpu) {
		fn(arg);
		return 0;
	}
	smp_post(cpu, fn, arg);
	return smp_wait(cpu, tsc_deadline_us(timeout_us));
}

int smp_call_all(smp_fn fn, void *arg, uint64_t timeout_us)
{
	unsigned int self = this_cpu()->cpu;
	uint64_t deadline;
	int err = 0;

	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != self)
			smp_post(c, fn, arg);
	}
	fn(arg);
	deadline = tsc_deadline_us(timeout_us);
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != self && smp_wait(c, deadline)) {
			kprintf("smp: CPU %u did not finish its request in time\n", c);
			err = -E_TIMEDOUT;
		}
	}
	return err;
}

void smp_barrier_init(struct smp_barrier *b, const char *name)
{
	b->count = ncpus;
	b->sense = 0;
	b->name = name;
	for (unsigned int c = 0; c < ncpus; c++)
		percpu_of[c]->barrier_sense = 0;
}

int smp_barrier_wait(struct smp_barrier *b, uint64_t deadline)
{
	struct percpu *p = this_cpu();
	uint32_t sense = !p->barrier_sense;
	int err = 0;

	watch_wait(b->name, -1, &b->sense, sizeof(b->sense), sense);
	p->barrier_sense = sense;
	if (__atomic_sub_fetch(&b->count, 1, __ATOMIC_ACQ_REL) == 0) {
		WRITE_ONCE(b->count, ncpus);
		store_release(&b->sense, sense);
		watch_wait_end();
		return 0;
	}
	while (load_acquire(&b->sense) != sense) {
		if (tsc_expired(deadline)) {
			err = -E_TIMEDOUT;
			break;
		}
		cpu_relax();
	}
	watch_wait_end();
	return err;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The stall watchdog (include/watchdog.h says what each CPU publishes).
 *
 * Who watches: every CPU, from its local APIC timer, periodic, two ticks per
 * bound's base (below; at most 60 s apart), vector VEC_WATCHDOG. A tick runs wherever its
 * CPU has IF=1: idle in HLT (the timer ends the HLT), spinning as a
 * benchmark target, waiting in bench_on_sender(), or driving the plan
 * between timed regions. So a BSP stuck in VMMCALL with the APs idle in
 * HLT or spinning as its targets is seen by the APs' ticks, an AP stuck as
 * sender by the BSP's, and a CPU spinning with IF=0 (whose own timer stays
 * pending) by any other. One scan at a time (a try-lock); each scan reads
 * every other CPU's progress word and remembers, per CPU, the word it saw
 * last and when (its own TSC): a word unchanged for longer than the bound
 * of the phase it names is a stall.
 *
 * The bound: the base (watch_base_us) plus the phase's own budget
 * (docs/watchdog.md, "The bound", has the table). The report asks the
 * stalled CPU for its registers with an NMI (lapic_send_nmi: this CPU's real
 * APIC mode, whatever the backend) and waits up to the deadline (at most
 * 10 s): a CPU that takes no NMI is inside an instruction that does not
 * retire, such as a hypercall that never returns. Its handler only
 * publishes the frame and its own CR2 and CR3 (trap.c); this CPU prints
 * them, since an NMI handler that printed could wait on a console lock its
 * own CPU holds, then words from the stalled stack and its RBP chain
 * (lib/backtrace.h), then the lines about each CPU (lib/watch_line.h):
 * phase, time in it, and the word it waits on (watch_wait), against the
 * value that word held while the wait was in force.
 *
 * Cost: per CPU and per tick, one timer interrupt and EOI and a scan that
 * reads one line of each other CPU, the first of its struct watch (the
 * wait, on the second, is read only by a report); where it lands in a
 * timed region (IF=1 shapes, a spinning target), one sample in thousands.
 * Without APIC virtualization the EOI exits, and a tick on a halted target
 * adds a HLT exit. A record spans tens of ms against a period of seconds;
 * one that sees a tick (50 measured iterations or more, outside TCG) gains
 * at most 0.04 register exits an iteration, under the KVM lane's 0.05.
 * The progress steps are stores to the CPU's own lines outside every timed
 * region; under -icount they move no median, p90 or p99, only some
 * minima and maxima (tools/bench_plan.py --icount --against). Not done:
 * masking the tick on the measuring sender and spinning targets, and
 * counting ticks per record. A single CPU has nobody to watch it: no tick
 * then, and run.sh's --timeout is the bound.
 */
#include "include/console.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "kernel/trap.h"
#include "lib/backtrace.h"
#include "lib/fmt.h"
#include "lib/watch_line.h"

_Static_assert(sizeof(struct trap_frame) == sizeof(((struct watch_nmi *)0)->frame),
	       "the NMI answer holds one trap frame");

/*
 * The fixed second of every bound. A healthy sampling's iteration ends
 * within its two deadline-bounded waits (2 x deadline + halt_gap); the
 * longest wait outside samplings is bench_targets_stop()'s, deadline + 1 s.
 * AP bring-up (ap_timeout=) and the TSC skew probe come before the start.
 */
#define WATCH_SLACK_US	 1000000u
/*
 * 2 x deadline, but never under watch_floor= (4 s): a loaded host (a CI
 * machine, the KVM lane's doubly emulated vCPUs) can slow any phase between
 * progress steps, and a short deadline= must not turn that into a false
 * ERROR. A test that plants a stall lowers the floor to see it sooner.
 */
static uint64_t watch_floor_us(void)
{
	return (uint64_t)options.watch_floor_ms * 1000;
}
#define TICK_CAL_US	 10000u	  /* calibrating the APIC timer against the TSC */
#define TICK_MAX_MS	 60000u
#define NMI_WAIT_MAX_US	 10000000u
#define START_TIMEOUT_US 1000000u
#define STACK_WORDS	 8	  /* printed from the stalled CPU's RSP */
#define BACKTRACE_MAX	 17	  /* return addresses along its RBP chain */
#define BACKTRACE_LINE	 9	  /* addresses a backtrace line holds */

extern const uint8_t boot_stack_top[], __text_start[], __text_end[];

bool watchdog_running;		/* after watchdog_start(), with 2 CPUs or more */
static uint64_t watch_deadline_us;
static uint32_t scan_lock, watch_fired;

/* Per watched CPU, under scan_lock: the word seen last, and when (watcher's TSC). */
static struct {
	uint32_t seq;
	uint64_t tsc;
} seen[MAX_CPUS];

static const char *const phase_names[WATCH_PHASES] = {
	[WATCH_IDLE] = "idle",
	[WATCH_TARGET] = "spinning as a target",
	[WATCH_PLAN] = "driving the plan",
	[WATCH_REQUEST] = "running a mailbox request",
	[WATCH_SWITCH] = "switching backend",
	[WATCH_SENDER] = "running the benchmark's loop on its sender",
	[WATCH_SAMPLING] = "sampling (warm-up and calibration)",
	[WATCH_MEASURING] = "measuring",
};

/* The same, one word each (docs/watchdog.md's table), for the line about each CPU. */
static const char *const phase_keys[WATCH_PHASES] = {
	[WATCH_IDLE] = "idle",		 [WATCH_TARGET] = "target",
	[WATCH_PLAN] = "plan",		 [WATCH_REQUEST] = "request",
	[WATCH_SWITCH] = "switch",	 [WATCH_SENDER] = "sender",
	[WATCH_SAMPLING] = "sampling",	 [WATCH_MEASURING] = "measuring",
};

/* A consistent copy of a CPU's word (watch_read()), with the value its wait's word held. */
struct watch_snap {
	uint32_t seq, phase;
	uint64_t budget_us, detail, since;
	const char *what;
	watch_describe_fn calls;
	const char *wait_name;
	const void *wait_word;
	uint64_t wait_want, wait_sees;
	int32_t wait_cpu;
	uint32_t wait_size;
};

/* --- the watched CPU's side: stores to its own line ------------------------------------------ */

/* A phase (begun at TSC since) in place of the one before; it ends any wait. */
static void watch_write(struct watch *w, uint32_t phase, uint64_t budget_us, const char *what,
			uint64_t detail, uint64_t since)
{
	WRITE_ONCE(w->seq, w->seq + 1);	/* odd: being written (x86 keeps stores in order) */
	barrier();
	WRITE_ONCE(w->phase, phase);
	WRITE_ONCE(w->budget_us, budget_us);
	WRITE_ONCE(w->what, what);
	WRITE_ONCE(w->detail, detail);
	WRITE_ONCE(w->since, since);
	if (w->wait_word) /* the wait's line only when a wait ends: not before every region */
		WRITE_ONCE(w->wait_word, NULL);
	barrier();
	WRITE_ONCE(w->seq, w->seq + 1);
}

struct watch_saved watch_enter(enum watch_phase ph, uint64_t budget_us, const char *what,
			       uint64_t detail)
{
	struct watch *w;
	struct watch_saved s = { WATCH_IDLE, 0, NULL, 0, 0 };

	if (!watchdog_on())
		return s;
	w = &this_cpu()->watch;
	s = (struct watch_saved){ w->phase, w->budget_us, w->what, w->detail, w->since };
	watch_write(w, ph, budget_us, what, detail, rdtsc());
	return s;
}

void watch_restore(const struct watch_saved *s)
{
	/* The phase left resumes with its own start: its time counts from there. */
	if (watchdog_on())
		watch_write(&this_cpu()->watch, s->phase, s->budget_us, s->what, s->detail,
			    s->since);
}

void watch_step(void)
{
	struct watch *w;

	if (!watchdog_on())
		return;
	w = &this_cpu()->watch;
	WRITE_ONCE(w->seq, w->seq + 2);	/* parity kept: also from an interrupt mid-write */
}

/* The wait fields, as a step (the sequence as watch_write() moves it). */
static void watch_write_wait(const char *name, int cpu, const void *word, unsigned int size,
			     uint64_t want)
{
	struct watch *w = &this_cpu()->watch;

	WRITE_ONCE(w->seq, w->seq + 1);
	barrier();
	WRITE_ONCE(w->wait_name, name);
	WRITE_ONCE(w->wait_cpu, cpu);
	WRITE_ONCE(w->wait_size, size);
	WRITE_ONCE(w->wait_want, want);
	WRITE_ONCE(w->wait_word, word);
	barrier();
	WRITE_ONCE(w->seq, w->seq + 1);
}

void watch_wait(const char *name, int cpu, const void *word, unsigned int size, uint64_t want)
{
	if (watchdog_on())
		watch_write_wait(name, cpu, word, size, want);
}

void watch_wait_end(void)
{
	if (watchdog_on())
		watch_write_wait(NULL, -1, NULL, 0, 0);
}

watch_describe_fn watch_calls(watch_describe_fn fn)
{
	struct watch *w = &this_cpu()->watch;
	watch_describe_fn old = w->calls;

	/* Read only in a report, long after: no sequence needed. */
	WRITE_ONCE(w->calls, fn);
	return old;
}

bool watchdog_nmi(const void *frame, size_t size)
{
	struct watch_nmi *n;

	if (!watchdog_on())
		return false;
	n = &this_cpu()->watch_nmi;
	if (!load_acquire(&n->asked) || n->answered)
		return false;
	__builtin_memcpy(n->frame, frame, size < sizeof(n->frame) ? size : sizeof(n->frame));
	/* Only this CPU can read its own: the watcher's CR2 and CR3 are not these. */
	n->cr2 = read_cr2();
	n->cr3 = read_cr3();
	store_release(&n->answered, 1);
	return true;
}

/* --- the watcher's side ------------------------------------------------------------------- */

/* The wait (the second line) and the word it names, as they are now. */
static void watch_read_wait(const struct watch *w, struct watch_snap *s)
{
	s->wait_word = READ_ONCE(w->wait_word);
	s->wait_name = READ_ONCE(w->wait_name);
	s->wait_want = READ_ONCE(w->wait_want);
	s->wait_cpu = READ_ONCE(w->wait_cpu);
	s->wait_size = READ_ONCE(w->wait_size);
	s->wait_sees = 0;
	if (s->wait_word)
		s->wait_sees = s->wait_size == 8 ? READ_ONCE(*(const uint64_t *)s->wait_word)
						 : READ_ONCE(*(const uint32_t *)s->wait_word);
}

/*
 * A consistent copy of w's first line (the tick's scan: one line a CPU)
 * or, with wait, of both and of the word waited on, read inside the same
 * sequence window: the value seen is one the word held while that wait
 * was in force. x86 keeps loads in order, so barrier() is enough.
 */
static bool watch_read(const struct watch *w, struct watch_snap *s, bool wait)
{
	for (int tries = 0; tries < 4; tries++) {
		uint32_t seq = READ_ONCE(w->seq);

		if (seq & 1)
			continue;
		barrier();
		s->phase = READ_ONCE(w->phase);
		s->budget_us = READ_ONCE(w->budget_us);
		s->what = READ_ONCE(w->what);
		s->detail = READ_ONCE(w->detail);
		s->calls = READ_ONCE(w->calls);
		s->since = READ_ONCE(w->since);
		s->wait_word = NULL;
		if (wait)
			watch_read_wait(w, s);
		barrier();
		if (READ_ONCE(w->seq) == seq) {
			s->seq = seq;
			return true;
		}
	}
	return false;
}

/* The part of every bound that is not the phase's own budget. */
static uint64_t watch_base_us(void)
{
	uint64_t twice = 2 * watch_deadline_us;

	return (twice > watch_floor_us() ? twice : watch_floor_us()) + WATCH_SLACK_US;
}

static uint64_t watch_bound_us(const struct watch_snap *s)
{
	return watch_base_us() + s->budget_us;
}

/* Asks CPU p for its registers; true once its NMI handler answered. */
static bool watch_ask_nmi(struct percpu *p, uint64_t wait_us, int *send_err)
{
	uint64_t deadline;

	store_release(&p->watch_nmi.asked, 1);
	*send_err = lapic_send_nmi(p->apic_id);
	if (*send_err)
		return false;
	deadline = tsc_deadline_us(wait_us);
	while (!load_acquire(&p->watch_nmi.answered)) {
		if (tsc_expired(deadline))
			return false;
		cpu_relax();	/* under TCG: lets the stalled vCPU run and take it */
	}
	return true;
}

/* "benchmark single on x2apic, phase measuring 2000 iterations (variant none)" */
static void watch_doing(char *buf, size_t size, const struct percpu *p,
			const struct watch_snap *s)
{
	const char *ctx = crash_context;
	int n = fmt_snprintf(buf, size, "backend %s, %s, phase %s",
			     p->ops ? p->ops->name : "none (before the first switch)",
			     ctx ? ctx : "no benchmark running", phase_names[s->phase]);

	if (n < 0 || (size_t)n >= size)
		return;
	if (s->phase == WATCH_MEASURING)
		n += fmt_snprintf(buf + n, size - (size_t)n, " %lu iterations", s->detail);
	if (s->phase == WATCH_REQUEST)
		fmt_snprintf(buf + n, size - (size_t)n, " (function 0x%lx)", s->detail);
	else if (s->what)
		fmt_snprintf(buf + n, size - (size_t)n, " (%s %s)",
			     s->phase == WATCH_SWITCH ? "to" : "variant", s->what);
}

static void watch_print_frame(unsigned int c, const struct trap_frame *f, const struct watch_nmi *n)
{
	kprintf("watchdog: CPU %u: RSP %016lx  SS %04lx  RFLAGS %016lx (IF=%u)\n", c, f->rsp,
		f->ss, f->rflags, (unsigned int)(f->rflags >> 9 & 1));
	kprintf("watchdog: CPU %u: RAX %016lx  RBX %016lx  RCX %016lx  RDX %016lx\n", c, f->rax,
		f->rbx, f->rcx, f->rdx);
	kprintf("watchdog: CPU %u: RSI %016lx  RDI %016lx  RBP %016lx  R8  %016lx\n", c, f->rsi,
		f->rdi, f->rbp, f->r8);
	kprintf("watchdog: CPU %u: R9  %016lx  R10 %016lx  R11 %016lx  R12 %016lx\n", c, f->r9,
		f->r10, f->r11, f->r12);
	kprintf("watchdog: CPU %u: R13 %016lx  R14 %016lx  R15 %016lx\n", c, f->r13, f->r14,
		f->r15);
	/* CR2 is the latest #PF's address, whether or not an extable fixup handled it. */
	kprintf("watchdog: CPU %u: CR2 (last #PF) %016lx  CR3 %016lx (read by its NMI handler)\n",
		c, n->cr2, n->cr3);
}

/*
 * The stack a CPU runs on outside its IST handlers: the BSP never leaves
 * the boot stack (boot/multiboot.asm), an AP runs on the one the
 * trampoline gave it (percpu_alloc()).
 */
static void watch_stack_window(const struct percpu *p, uint64_t *lo, uint64_t *hi)
{
	if (p->cpu == 0) {
		*hi = (uintptr_t)boot_stack_top;
		*lo = *hi - BOOT_STACK_SIZE;
	} else {
		*hi = p->stack_top;
		*lo = *hi - CPU_STACK_SIZE;
	}
}

/*
 * A few words from the stalled CPU's RSP and the return addresses along its
 * RBP chain (the kernel keeps frame pointers: the Makefile's KCFLAGS), both
 * read only inside that CPU's stack (lib/backtrace.h), which stays as it
 * was while the CPU is parked in its NMI handler on its IST stack.
 */
static void watch_print_stack(unsigned int c, const struct percpu *p, const struct trap_frame *f)
{
	uint64_t lo, hi, words[STACK_WORDS], ret[BACKTRACE_MAX];
	unsigned int n, i;

	watch_stack_window(p, &lo, &hi);
	n = stack_peek(f->rsp, lo, hi, words, STACK_WORDS);
	if (!n)
		kprintf("watchdog: CPU %u: RSP outside its stack %lx-%lx: no stack words read\n", c,
			lo, hi);
	for (i = 0; i < n; i += 4) {
		kprintf("watchdog: CPU %u: [RSP+%02x]", c, i * 8);
		for (unsigned int j = i; j < n && j < i + 4; j++)
			kprintf(" %016lx", words[j]);
		kprintf("\n");
	}
	n = fp_backtrace(f->rbp, lo, hi, (uintptr_t)__text_start, (uintptr_t)__text_end, ret,
			 BACKTRACE_MAX);
	/* RIP, then each caller's return address: "addr2line -fipe" names them all. */
	kprintf("watchdog: CPU %u: backtrace %lx", c, f->rip);
	if (!n)
		kprintf(" (RBP leads to no frame in its stack)");
	for (i = 0; i < n; i++) {
		if ((i + 1) % BACKTRACE_LINE == 0)
			kprintf("\nwatchdog: CPU %u: backtrace", c);
		kprintf(" %lx", ret[i]);
	}
	kprintf("\n");
}

/* What CPU c was doing (lib/watch_line.h: one line, or more with each field whole). */
static void watch_cpu_line(unsigned int c, unsigned int stalled, unsigned int me, uint64_t now)
{
	static char text[WATCH_LINE_BUF]; /* one report at a time: watch_fired */
	const struct percpu *p = percpu_of[c];
	struct watch_snap s;
	struct watch_line l;

	if (!p)
		return;
	if (!watch_read(&p->watch, &s, true) || s.phase >= WATCH_PHASES) {
		kprintf("watchdog: CPU %u (APIC ID %u): its progress word kept changing\n", c,
			p->apic_id);
		return;
	}
	l = (struct watch_line){
		.cpu = c, .apic_id = p->apic_id, .phase = phase_keys[s.phase],
		.tag = c == stalled ? "stalled" : c == me ? "reporting" : NULL,
		/* TSCs are in step across CPUs (the boot's skew probe says how far). */
		.has_ms = s.since && now > s.since, .ms = (now - s.since) / tsc_khz,
		.wait_name = s.wait_word ? s.wait_name : NULL, .wait_cpu = s.wait_cpu,
		.want = s.wait_want, .sees = s.wait_sees,
		/* req ahead of ack: a request posted that this CPU has not taken. */
		.has_mbox = !s.wait_word && s.phase == WATCH_IDLE && c,
		.req = READ_ONCE(p->mbox.req), .ack = READ_ONCE(p->mbox.ack),
	};
	if (watch_line_format(text, sizeof(text), &l, "watchdog: "))
		kprintf("%s (and more that did not fit)\n", text);
	else
		kprintf("%s\n", text);
}

static __noreturn void watch_report(unsigned int c, const struct watch_snap *s, uint64_t stale)
{
	static char doing[256], calls[192], rip[160];
	struct percpu *p = percpu_of[c];
	struct trap_frame f;
	uint64_t wait_us = watch_deadline_us < NMI_WAIT_MAX_US ? watch_deadline_us : NMI_WAIT_MAX_US;
	int send_err = 0;
	bool answered = watch_ask_nmi(p, wait_us, &send_err);
	unsigned int me = this_cpu()->cpu;
	uint64_t now;

	__builtin_memcpy(&f, p->watch_nmi.frame, sizeof(f));
	watch_doing(doing, sizeof(doing), p, s);
	calls[0] = 0;
	if (s->calls)
		s->calls(c, calls, sizeof(calls));
	if (answered)
		fmt_snprintf(rip, sizeof(rip), "RIP %016lx CS %04lx (NMI taken)", f.rip, f.cs);
	else if (send_err)
		fmt_snprintf(rip, sizeof(rip), "RIP unknown: the NMI could not be sent (%d)", send_err);
	else
		fmt_snprintf(
		    rip, sizeof(rip),
		    "RIP unknown: no NMI taken within %lu ms: stuck in an instruction that does not retire, e.g. a hypercall that never returns",
		    wait_us / 1000);
	/* The call buffers hold the latest call: it may have returned long ago. */
	/* The rule's numbers from the constants that make it (watch_bound_us), not typed again. */
	kprintf(
	    "watchdog: CPU %u (APIC ID %u) made no progress for %lu ms (bound %lu ms: 2 x deadline %lu ms, at least %lu ms, + %lu ms + phase budget %lu ms): %s%s%s, %s\n",
	    c, p->apic_id, stale / tsc_khz, watch_bound_us(s) / 1000, watch_deadline_us / 1000,
	    (unsigned long)options.watch_floor_ms, (unsigned long)(WATCH_SLACK_US / 1000),
	    s->budget_us / 1000, doing, calls[0] ? ", latest hypercall " : "", calls, rip);
	if (answered) {
		watch_print_frame(c, &f, &p->watch_nmi);
		watch_print_stack(c, p, &f);
	}
	/* What every CPU was doing meanwhile, the stalled one too: time in phase, the wait. */
	now = rdtsc();
	for (unsigned int o = 0; o < ncpus; o++)
		watch_cpu_line(o, c, me, now);
	kprintf(
	    "watchdog: ending the run (status ERROR); 'addr2line -fipe build/ipibench.elf ADDR...' names them\n");
	status_exit(STATUS_ERROR);
}

static void watch_check(unsigned int c, uint64_t now)
{
	struct watch_snap s;

	if (!watch_read(&percpu_of[c]->watch, &s, false)) {
		seen[c].tsc = now;	/* changing under our eyes: that is progress */
		return;
	}
	if (s.seq != seen[c].seq) {
		seen[c].seq = s.seq;
		seen[c].tsc = now;
		return;
	}
	if (s.phase < WATCH_PLAN || s.phase >= WATCH_PHASES)
		return;
	if (now - seen[c].tsc <= tsc_us_to_cycles(watch_bound_us(&s)))
		return;
	if (__atomic_exchange_n(&watch_fired, 1, __ATOMIC_ACQ_REL))
		return;
	watch_report(c, &s, now - seen[c].tsc);
}

void watchdog_tick(void)
{
	unsigned int me;
	uint64_t now;

	if (!watchdog_on() || READ_ONCE(watch_fired) || READ_ONCE(status_stopping))
		return;
	if (__atomic_exchange_n(&scan_lock, 1, __ATOMIC_ACQUIRE))
		return;
	now = rdtsc();
	me = this_cpu()->cpu;
	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != me)
			watch_check(c, now);
	}
	store_release(&scan_lock, 0);
}

/* --- start ---------------------------------------------------------------------------------- */

/* The local APIC timer's rate in kHz at divide-by-1, against the TSC (0: it does not count). */
static uint64_t watch_timer_khz(void)
{
	uint32_t left;

	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TIMER_DCR, LAPIC_DCR_DIV1);
	lapic_write(LAPIC_TIMER_ICR, 0xffffffffu);
	tsc_delay_us(TICK_CAL_US);
	left = lapic_read(LAPIC_TIMER_CCR);
	lapic_write(LAPIC_TIMER_ICR, 0);
	return (0xffffffffull - left) * 1000 / TICK_CAL_US;
}

/* Divide configuration (SDM 11.5.4, figure 11-10) and count for one tick per period_ms. */
static bool watch_tick_count(uint64_t khz, uint64_t period_ms, uint32_t *dcr, uint32_t *count)
{
	static const uint8_t dcrs[] = { 0xb, 0x0, 0x1, 0x2, 0x3, 0x8, 0x9, 0xa }; /* 1 .. 128 */
	uint64_t counts = khz * period_ms;

	for (unsigned int shift = 0; shift < ARRAY_SIZE(dcrs); shift++) {
		if ((counts >> shift) <= 0xffffffffull && (counts >> shift) > 0) {
			*dcr = dcrs[shift];
			*count = (uint32_t)(counts >> shift);
			return true;
		}
	}
	return false;
}

static void watch_cpu_start(void *arg)
{
	(void)arg;
	/* Every CPU's phase has a start from here on (the BSP's plan follows). */
	watch_write(&this_cpu()->watch, WATCH_IDLE, 0, NULL, 0, rdtsc());
	lapic_tick_resume();
}

void watchdog_start(uint64_t deadline_us)
{
	uint64_t period_ms, khz;
	uint32_t dcr, count;

	watch_deadline_us = deadline_us;
	/* Two ticks per bound: a stall is seen within 1.5 bounds, at the fewest ticks. */
	period_ms = watch_base_us() / 2000;
	if (ncpus < 2) {
		kprintf(
		    "watchdog: 1 CPU: no other CPU can watch it, so nothing is watched; run.sh's --timeout is the bound\n");
		return;
	}
	period_ms = period_ms < 1 ? 1 : period_ms > TICK_MAX_MS ? TICK_MAX_MS : period_ms;
	khz = watch_timer_khz();
	if (!khz || !watch_tick_count(khz, period_ms, &dcr, &count)) {
		kprintf(
		    "watchdog: the local APIC timer does not count (%lu kHz): nothing is watched; run.sh's --timeout is the bound\n",
		    khz);
		return;
	}
	lapic_tick_config(dcr, count);
	if (smp_call_all(watch_cpu_start, NULL, START_TIMEOUT_US))
		status_report(STATUS_ERROR);
	/* The BSP drives the plan from here on: watched, its steps counted. */
	watch_write(&this_cpu()->watch, WATCH_PLAN, 0, NULL, 0, rdtsc());
	store_release(&watchdog_running, true);
	/* One line: docs/watchdog.md says the rest. */
	kprintf(
	    "watchdog: %u CPUs watch each other: tick %lu ms, stall = no progress for %lu ms + phase budget\n",
	    ncpus, period_ms, watch_base_us() / 1000);
}

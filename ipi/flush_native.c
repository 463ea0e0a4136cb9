// SPDX-License-Identifier: GPL-2.0-only
/*
 * The native remote TLB shootdown as flush ops (include/flush.h): what
 * Linux does without a hypervisor's help (arch/x86/mm/tlb.c:
 * flush_tlb_mm_range() -> flush_tlb_multi() -> flush_tlb_func() on each
 * target). The sender sends FLUSH_VEC over the IPI backend in force to
 * every target; each target's handler flushes and then acknowledges by
 * counting the vector on its own cache line (ipi/irq.c: the count is
 * stored before the EOI); the sender polls every target's count, bare and
 * bounded by the deadline (poll_until, include/poll.h).
 *
 *   native-invlpg  one INVLPG per page: Linux's way up to its
 *                  tlb_single_page_flush_ceiling (33 pages)
 *   native-invlpg-after-eoi
 *                  the same in Linux's order on the target: EOI, then the
 *                  flush, then the acknowledgement. sysvec_call_function
 *                  (arch/x86/kernel/smp.c) writes apic_eoi() before
 *                  generic_smp_call_function_interrupt() runs
 *                  flush_tlb_func() and releases the sender's csd, so the
 *                  sender's wait holds the target's EOI: an exit without
 *                  APICv or AVIC (a PV EOI Linux guest skips it only while
 *                  they are off). Left out of the crossover (FLUSH_F_ASIDE),
 *                  which keeps the count-first order of the other passes.
 *   native-cr3     one CR3 reload, whatever the range: Linux's way above it
 *
 * Both are one family: begin() puts the flushing handler on FLUSH_VEC in
 * front of the counting one, end() takes it off. What the handlers flush is
 * set by prepare(), on a line of its own that the sender does not write per
 * flush; prepare() also turns the target set into a list (CPU numbers and
 * their count words, in CPU-number order) and reads the backend's send
 * functions; the count each target must reach is taken by arm(), before the
 * timed region opens. flush() holds only the send and the waits: the
 * backend's set send with the prepared set (which walks it, as Linux's
 * send_IPI_mask walks its cpumask), or for a backend without one (xapic,
 * hv-icr) one send per listed target; then one bare poll per listed target.
 * No walk of the 1024-bit set of flush()'s own.
 */
#include "include/flush.h"
#include "include/irq.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/poll.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"

#define NATIVE_PAGE 4096u

/* What a target's handler flushes: set by prepare(), read by every handler. */
static struct {
	uint64_t va;
	unsigned int pages;
	bool by_cr3;
} native_now __cacheline_aligned;

/* The flush itself, what native_now says: one INVLPG per page, or a CR3 reload. */
static inline __attribute__((always_inline)) void native_flush_here(void)
{
	if (READ_ONCE(native_now.by_cr3)) {
		write_cr3(read_cr3());
	} else {
		uint64_t va = READ_ONCE(native_now.va);
		unsigned int n = READ_ONCE(native_now.pages);

		for (unsigned int i = 0; i < n; i++)
			invlpg((const void *)(uintptr_t)(va + (uint64_t)i * NATIVE_PAGE));
	}
}

/* The sender's side of the request, all of it set by prepare() and arm(). */
static const struct ipi_ops *native_ipi; /* the backend in force when prepared */
/* The backend's send functions, read once: its set send, or NULL and the unicast send. */
static void (*native_send_set)(const struct cpuset *set, uint8_t vector);
static void (*native_send)(unsigned int cpu, uint8_t vector);
/* A copy at a fixed address, for the set send. */
static struct cpuset native_targets;
/* The same targets as a list: CPU number, count word and the count once it has flushed. */
static unsigned int native_n;
static unsigned int native_cpu[MAX_CPUS];
static const uint32_t *native_word[MAX_CPUS];
static uint32_t native_want[MAX_CPUS];
static uint64_t native_deadline;
static char *native_why;
static size_t native_why_size;
static irq_handler_t native_chained;

static const char *native_probe(void)
{
	const struct ipi_ops *ops = ipi_current();

	if (!ops)
		return "no IPI backend in force";
	return ipi_is_nmi(ops)
		   ? "the backend in force sends NMIs: a shootdown is a Fixed IPI (Linux's call-function vector)"
		   : NULL;
}

/* FLUSH_VEC while the family is on: flush, then count (the acknowledgement) and EOI. */
static void native_irq(unsigned int vector, uint64_t tsc)
{
	native_flush_here();
	native_chained(vector, tsc);
}

/* The after-EOI pass's handler: Linux's order, EOI, flush, count. */
static void native_irq_after_eoi(unsigned int vector, uint64_t tsc)
{
	this_cpu()->ops->eoi();
	native_flush_here();
	ipi_irq_count_only(vector, tsc);
}

static bool native_on(irq_handler_t h)
{
	return h == native_irq || h == native_irq_after_eoi;
}

static int native_begin(const char *who)
{
	(void)who;
	if (!native_on(irq_get_handler(FLUSH_VEC))) {
		native_chained = irq_get_handler(FLUSH_VEC);
		irq_set_handler(FLUSH_VEC, native_irq);
	}
	return 0;
}

static void native_end(const char *why)
{
	(void)why;
	if (native_on(irq_get_handler(FLUSH_VEC)))
		irq_set_handler(FLUSH_VEC, native_chained);
}

static const uint32_t *native_count_word(unsigned int cpu_nr)
{
	return &percpu_of[cpu_nr]->irq.count[FLUSH_VEC - IPI_VEC_FIRST];
}

/*
 * The targets are quiet (in their touch loop, no flush in flight): the
 * handler for this request's order is put on FLUSH_VEC here, outside any
 * timed region.
 */
static int native_prepare(const struct cpuset *targets, uint64_t va, unsigned int pages,
			  bool by_cr3, bool after_eoi, char *why, size_t size)
{
	native_ipi = ipi_current();
	native_why = why;
	native_why_size = size;
	if (!native_ipi || !pages) {
		fmt_snprintf(why, size, "%s", native_ipi ? "no pages to flush" : "no IPI backend");
		return -E_INVAL;
	}
	native_targets = *targets;
	native_send_set = native_ipi->send_set;
	native_send = native_ipi->send;
	native_n = 0;
	cpuset_for_each(c, targets)
	{
		native_cpu[native_n] = (unsigned int)c;
		native_word[native_n++] = native_count_word((unsigned int)c);
	}
	WRITE_ONCE(native_now.va, va);
	WRITE_ONCE(native_now.pages, pages);
	WRITE_ONCE(native_now.by_cr3, by_cr3);
	/* debug=stale-tlb: the handlers acknowledge without flushing (the flush checks fail). */
	if (debug_on(DEBUG_STALE_TLB)) {
		WRITE_ONCE(native_now.pages, 0);
		WRITE_ONCE(native_now.by_cr3, false);
	}
	if (native_on(irq_get_handler(FLUSH_VEC)))
		irq_set_handler(FLUSH_VEC, after_eoi ? native_irq_after_eoi : native_irq);
	return 0;
}

static int native_prepare_invlpg(const struct cpuset *targets, uint64_t va, unsigned int pages,
				 unsigned int flags, char *why, size_t size)
{
	(void)flags; /* INVLPG names each page anyway */
	return native_prepare(targets, va, pages, false, false, why, size);
}

static int native_prepare_invlpg_after_eoi(const struct cpuset *targets, uint64_t va,
					   unsigned int pages, unsigned int flags, char *why,
					   size_t size)
{
	(void)flags;
	return native_prepare(targets, va, pages, false, true, why, size);
}

static int native_prepare_cr3(const struct cpuset *targets, uint64_t va, unsigned int pages,
			      unsigned int flags, char *why, size_t size)
{
	(void)flags;
	return native_prepare(targets, va, pages, true, false, why, size);
}

static void native_arm(uint64_t deadline)
{
	native_deadline = deadline;
	for (unsigned int i = 0; i < native_n; i++)
		native_want[i] = poll_read(native_word[i]) + 1;
}

static __attribute__((noinline, cold)) int native_lost(unsigned int cpu_nr)
{
	fmt_snprintf(native_why, native_why_size, "CPU %u (APIC ID %u) did not acknowledge", cpu_nr,
		     percpu_of[cpu_nr]->apic_id);
	return -E_TIMEDOUT;
}

/*
 * Timed by the caller: the send and every target's acknowledgement. The
 * branch on the set send goes the same way all sampling long.
 */
static int native_flush(void)
{
	const uint64_t deadline = native_deadline;
	const unsigned int n = native_n;

	if (native_send_set) {
		native_send_set(&native_targets, FLUSH_VEC);
	} else {
		for (unsigned int i = 0; i < n; i++)
			native_send(native_cpu[i], FLUSH_VEC);
	}
	for (unsigned int i = 0; i < n; i++) {
		if (poll_until(native_word[i], native_want[i], deadline))
			return native_lost(native_cpu[i]);
	}
	return 0;
}

const struct flush_family flush_native = {
    .name = "native",
    .per_backend = true,
    .probe = native_probe,
    .begin = native_begin,
    .end = native_end,
};

const struct flush_ops flush_native_invlpg = {
    .name = "native-invlpg",
    .label = "native",
    .what = "IPI shootdown",
    .form = "INVLPG a page, count, EOI",
    .words = "ack=count-before-eoi",
    .family = &flush_native,
    .probe = native_probe,
    .prepare = native_prepare_invlpg,
    .arm = native_arm,
    .flush = native_flush,
};

const struct flush_ops flush_native_invlpg_after_eoi = {
    .name = "native-invlpg-after-eoi",
    .label = "native",
    .what = "IPI shootdown",
    .form = "EOI, INVLPG a page, count",
    .words = "ack=after-eoi",
    .flags = FLUSH_F_ASIDE,
    .family = &flush_native,
    .probe = native_probe,
    .prepare = native_prepare_invlpg_after_eoi,
    .arm = native_arm,
    .flush = native_flush,
};

const struct flush_ops flush_native_cr3 = {
    .name = "native-cr3",
    .label = "native",
    .what = "IPI shootdown",
    .form = "CR3 reload, count, EOI",
    .words = "ack=count-before-eoi",
    .flags = FLUSH_F_WHOLE,
    .family = &flush_native,
    .probe = native_probe,
    .prepare = native_prepare_cr3,
    .arm = native_arm,
    .flush = native_flush,
};

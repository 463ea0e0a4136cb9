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
 *   native-cr3     one CR3 reload, whatever the range: Linux's way above it
 *
 * Both are one family: begin() puts the flushing handler on FLUSH_VEC in
 * front of the counting one, end() takes it off. What the handlers flush is
 * set by prepare(), on a line of its own that the sender does not write per
 * flush; the count each target must reach is taken by arm(), before the
 * timed region opens; flush() holds only the send and the waits.
 */
#include "include/flush.h"
#include "include/irq.h"
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

/* The sender's side of the request. */
static const struct ipi_ops *native_ipi; /* the backend in force when prepared */
/* A copy at a fixed address: walking it costs what walking the caller's global did. */
static struct cpuset native_targets;
static uint32_t native_want[MAX_CPUS]; /* each target's count once it has flushed */
static uint64_t native_deadline;
static char *native_why;
static size_t native_why_size;
static irq_handler_t native_chained;

static const char *native_probe(void)
{
	return ipi_current() ? NULL : "no IPI backend in force";
}

/* FLUSH_VEC while the family is on: flush, then count (the acknowledgement) and EOI. */
static void native_irq(unsigned int vector, uint64_t tsc)
{
	if (READ_ONCE(native_now.by_cr3)) {
		write_cr3(read_cr3());
	} else {
		uint64_t va = READ_ONCE(native_now.va);
		unsigned int n = READ_ONCE(native_now.pages);

		for (unsigned int i = 0; i < n; i++)
			invlpg((const void *)(uintptr_t)(va + (uint64_t)i * NATIVE_PAGE));
	}
	native_chained(vector, tsc);
}

static int native_begin(const char *who)
{
	(void)who;
	if (irq_get_handler(FLUSH_VEC) != native_irq) {
		native_chained = irq_get_handler(FLUSH_VEC);
		irq_set_handler(FLUSH_VEC, native_irq);
	}
	return 0;
}

static void native_end(const char *why)
{
	(void)why;
	if (irq_get_handler(FLUSH_VEC) == native_irq)
		irq_set_handler(FLUSH_VEC, native_chained);
}

static int native_prepare(const struct cpuset *targets, uint64_t va, unsigned int pages,
			  bool by_cr3, char *why, size_t size)
{
	native_ipi = ipi_current();
	native_why = why;
	native_why_size = size;
	if (!native_ipi || !pages) {
		fmt_snprintf(why, size, "%s", native_ipi ? "no pages to flush" : "no IPI backend");
		return -E_INVAL;
	}
	native_targets = *targets;
	WRITE_ONCE(native_now.va, va);
	WRITE_ONCE(native_now.pages, pages);
	WRITE_ONCE(native_now.by_cr3, by_cr3);
	return 0;
}

static int native_prepare_invlpg(const struct cpuset *targets, uint64_t va, unsigned int pages,
				 unsigned int flags, char *why, size_t size)
{
	(void)flags; /* INVLPG names each page anyway */
	return native_prepare(targets, va, pages, false, why, size);
}

static int native_prepare_cr3(const struct cpuset *targets, uint64_t va, unsigned int pages,
			      unsigned int flags, char *why, size_t size)
{
	(void)flags;
	return native_prepare(targets, va, pages, true, why, size);
}

static const uint32_t *native_count_word(unsigned int cpu_nr)
{
	return &percpu_of[cpu_nr]->irq.count[FLUSH_VEC - IPI_VEC_FIRST];
}

static void native_arm(uint64_t deadline)
{
	native_deadline = deadline;
	cpuset_for_each(c, &native_targets) native_want[c] =
	    poll_read(native_count_word((unsigned int)c)) + 1;
}

static __attribute__((noinline, cold)) int native_lost(unsigned int cpu_nr)
{
	fmt_snprintf(native_why, native_why_size, "CPU %u (APIC ID %u) did not acknowledge", cpu_nr,
		     percpu_of[cpu_nr]->apic_id);
	return -E_TIMEDOUT;
}

/* Timed by the caller: the send and every target's acknowledgement. */
static int native_flush(void)
{
	const uint64_t deadline = native_deadline;

	ipi_send_set(native_ipi, &native_targets, FLUSH_VEC);
	cpuset_for_each(c, &native_targets)
	{
		if (poll_until(native_count_word((unsigned int)c), native_want[c], deadline))
			return native_lost((unsigned int)c);
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
    .words = "ack=count-before-eoi",
    .family = &flush_native,
    .probe = native_probe,
    .prepare = native_prepare_invlpg,
    .arm = native_arm,
    .flush = native_flush,
};

const struct flush_ops flush_native_cr3 = {
    .name = "native-cr3",
    .label = "native",
    .words = "ack=count-before-eoi",
    .flags = FLUSH_F_WHOLE,
    .family = &flush_native,
    .probe = native_probe,
    .prepare = native_prepare_cr3,
    .arm = native_arm,
    .flush = native_flush,
};

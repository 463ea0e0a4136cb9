// SPDX-License-Identifier: GPL-2.0-only
/*
 * Handlers for the IPI vectors (IPI_VEC_FIRST .. + IPI_VEC_COUNT - 1): count
 * per CPU and vector in this CPU's own irq_stats line, record the entry TSC,
 * EOI through the backend in force (SDM vol. 3A 11.8.5: a fixed interrupt
 * needs its EOI write before the APIC delivers another of equal or lower
 * priority). The TSC is stored before the count is released, so a CPU that
 * sees the count also sees the TSC of that interrupt.
 *
 * Fault injection for the negative tests (debug keys, options.h): with
 * swallow-ipi or double-ipi, the victim CPU counts its first IPI 0 or 2
 * times. That path is a separate handler, installed only then, so that the
 * normal handler has no extra branch.
 */
#include "include/console.h"
#include "include/ipi.h"
#include "include/irq.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/status.h"
#include "include/tsc.h"

static unsigned int inject_cpu;
static uint32_t inject_count; /* what the victim adds for its first IPI: 0 or 2 */
static int inject_armed;

static inline void ipi_irq_account(unsigned int vector, uint64_t tsc, uint32_t n)
{
	struct percpu *p = this_cpu();
	uint32_t *count = &p->irq.count[vector - IPI_VEC_FIRST];

	WRITE_ONCE(p->irq.entry_tsc, tsc);
	store_release(count, *count + n);
	p->ops->eoi();
}

static void ipi_irq_count(unsigned int vector, uint64_t tsc)
{
	ipi_irq_account(vector, tsc, 1);
}

/*
 * ack=after-eoi: EOI first, then the count, as Linux's call-function
 * vector does (its sysvec handler acknowledges the APIC before running
 * the function that signals completion). A region that closes on this
 * count holds the target's EOI write: an exit without APICv or AVIC,
 * absorbed by hardware with them.
 */
static void ipi_irq_count_after_eoi(unsigned int vector, uint64_t tsc)
{
	struct percpu *p = this_cpu();
	uint32_t *count = &p->irq.count[vector - IPI_VEC_FIRST];

	WRITE_ONCE(p->irq.entry_tsc, tsc);
	p->ops->eoi();
	store_release(count, *count + 1);
}

void ipi_irq_count_only(unsigned int vector, uint64_t tsc)
{
	struct percpu *p = this_cpu();
	uint32_t *count = &p->irq.count[vector - IPI_VEC_FIRST];

	WRITE_ONCE(p->irq.entry_tsc, tsc);
	store_release(count, *count + 1);
}

/*
 * debug=slow-eoi: 2 ms between the count and the EOI (or before the EOI,
 * then the count), so that a host trace can see on which side of the
 * sender's region end the EOI exit falls (the KVM lane's exits pass: its
 * doubly emulated sender closes a region later than the target's EOI exit
 * returns, whatever the order). In a round trip that armed it (ipi.h,
 * ipi_irq_await_close) the count-first handler waits for the sender's
 * region close instead: a fixed 2 ms is a race a loaded host loses (the
 * sender's vCPU descheduled between seeing the count and its marker). Its
 * bound, the benchmark's deadline, only keeps a close that never comes
 * (the sender gave the IPI up as lost) from holding the handler for good;
 * disarming ends the wait too.
 */
#define SLOW_EOI_US 2000

bool ipi_irq_closes_armed;
uint32_t ipi_irq_closes;
static uint64_t closes_bound_us;

void ipi_irq_await_close(bool on, uint64_t bound_us)
{
	WRITE_ONCE(closes_bound_us, bound_us);
	WRITE_ONCE(ipi_irq_closes_armed, on && debug_on(DEBUG_SLOW_EOI));
}

static void ipi_irq_count_slow(unsigned int vector, uint64_t tsc)
{
	struct percpu *p = this_cpu();
	uint32_t *count = &p->irq.count[vector - IPI_VEC_FIRST];
	/* Read before the count: the close this count causes comes after it. */
	const uint32_t closes = load_acquire(&ipi_irq_closes);

	WRITE_ONCE(p->irq.entry_tsc, tsc);
	store_release(count, *count + 1);
	if (READ_ONCE(ipi_irq_closes_armed)) {
		const uint64_t deadline = tsc_deadline_us(READ_ONCE(closes_bound_us));

		while (READ_ONCE(ipi_irq_closes_armed) && load_acquire(&ipi_irq_closes) == closes &&
		       !tsc_expired(deadline))
			cpu_relax();
	} else {
		tsc_delay_us(SLOW_EOI_US);
	}
	p->ops->eoi();
}

static void ipi_irq_count_after_slow_eoi(unsigned int vector, uint64_t tsc)
{
	tsc_delay_us(SLOW_EOI_US);
	ipi_irq_count_after_eoi(vector, tsc);
}

static void ipi_irq_inject(unsigned int vector, uint64_t tsc)
{
	if (this_cpu()->cpu == inject_cpu &&
	    __atomic_exchange_n(&inject_armed, 0, __ATOMIC_RELAXED))
		ipi_irq_account(vector, tsc, inject_count);
	else
		ipi_irq_account(vector, tsc, 1);
}

/* Arms the debug key if one is set; false if none is. */
static bool ipi_irq_arm_debug(void)
{
	const char *key = debug_on(DEBUG_SWALLOW_IPI) ? "swallow-ipi" : "double-ipi";

	if (!debug_on(DEBUG_SWALLOW_IPI) && !debug_on(DEBUG_DOUBLE_IPI))
		return false;
	inject_cpu = debug_cpu_pick(ncpus);
	if (inject_cpu >= ncpus) {
		kprintf("debug: %s: CPU %u is not online\n", key, inject_cpu);
		status_report(STATUS_ERROR);
		return false;
	}
	inject_count = debug_on(DEBUG_SWALLOW_IPI) ? 0 : 2;
	inject_armed = 1;
	kprintf("debug: CPU %u will count its first IPI %s (%s)\n", inject_cpu,
		inject_count ? "twice" : "not at all", key);
	return true;
}

void ipi_nmi(uint64_t entry_tsc)
{
	struct percpu *p = this_cpu();
	irq_handler_t fn = irq_get_handler(IPI_NMI_VEC);

	WRITE_ONCE(p->irq.nmis, p->irq.nmis + 1);
	if (!ipi_is_nmi(p->ops) || !fn) {
		/* No EOI: an NMI has no ISR bit, and an EOI here would retire the
		 * in-service interrupt this NMI may have come in on top of. */
		WRITE_ONCE(p->irq.unexpected_vector, 2);
		WRITE_ONCE(p->irq.unexpected, p->irq.unexpected + 1);
		return;
	}
	fn(IPI_NMI_VEC, entry_tsc);
}

void ipi_irq_install(void)
{
	static bool installed;
	irq_handler_t fn;

	if (installed)
		return;
	installed = true;
	fn = ipi_irq_arm_debug() ? ipi_irq_inject : ipi_irq_count;
	if (debug_on(DEBUG_SLOW_EOI)) {
		kprintf(
		    "debug: the counting handlers wait %u us before their EOI, or in a round trip's count-first pass until the sender closed its region (slow-eoi)\n",
		    SLOW_EOI_US);
		fn = ipi_irq_count_slow;
	}
	for (unsigned int v = IPI_VEC_FIRST; v < IPI_VEC_FIRST + IPI_VEC_COUNT; v++)
		irq_set_handler(v, fn);
}

void ipi_irq_ack_order(unsigned int vector, enum ipi_ack ack)
{
	static irq_handler_t count_first;
	irq_handler_t after = debug_on(DEBUG_SLOW_EOI) ? ipi_irq_count_after_slow_eoi
						       : ipi_irq_count_after_eoi;

	if (!count_first)
		count_first = irq_get_handler(vector);
	irq_set_handler(vector, ack == IPI_ACK_AFTER_EOI ? after : count_first);
}

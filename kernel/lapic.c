// SPDX-License-Identifier: GPL-2.0-only
/*
 * Generic local APIC access for everything outside the timed paths: one
 * read/write pair that follows the mode in force (xAPIC MMIO or x2APIC MSRs),
 * local set-up, EOI, and the IPIs of bring-up and shutdown. SDM vol. 3A
 * chapter 11 (APIC), 11.12 (x2APIC). The local APIC timer (11.5.4) bounds
 * a HLT that waits for an interrupt, and ticks for the stall watchdog
 * (kernel/watchdog.c) in between.
 */
#include "include/irq.h"
#include "include/lapic.h"
#include "include/percpu.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/icr.h"

enum lapic_mode lapic_mode = LAPIC_XAPIC;
volatile uint32_t *lapic_mmio = (volatile uint32_t *)(uintptr_t)LAPIC_DEFAULT_PHYS;
bool lapic_x2apic_entered;

/* Delivery-status waits happen before the TSC is calibrated too: count spins. */
#define ICR_IDLE_SPINS 1000000

/* The watchdog's periodic tick, the same on every CPU; tick_count 0: none. */
static uint32_t tick_dcr = LAPIC_DCR_DIV1, tick_count;

enum lapic_mode lapic_mode_read(void)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);

	if (!(base & APIC_BASE_EN))
		return LAPIC_DISABLED;
	return (base & APIC_BASE_EXTD) ? LAPIC_X2APIC : LAPIC_XAPIC;
}

uint32_t lapic_read(uint32_t reg)
{
	if (lapic_mode == LAPIC_X2APIC)
		return (uint32_t)rdmsr(X2APIC_MSR(reg));
	return lapic_mmio[reg / 4];
}

void lapic_write(uint32_t reg, uint32_t val)
{
	if (lapic_mode == LAPIC_X2APIC)
		wrmsr(X2APIC_MSR(reg), val);
	else
		lapic_mmio[reg / 4] = val;
}

uint32_t lapic_id(void)
{
	uint32_t id = lapic_read(LAPIC_ID);

	/* xAPIC: ID in bits 31:24; x2APIC: the full 32-bit register. */
	return lapic_mode == LAPIC_X2APIC ? id : id >> 24;
}

void lapic_setup_local(void)
{
	unsigned int maxlvt = (lapic_read(LAPIC_VERSION) >> LAPIC_VERSION_MAXLVT_SHIFT) & 0xff;

	lapic_write(LAPIC_SVR, LAPIC_SVR_ENABLE | 0xff);
	lapic_write(LAPIC_TPR, 0);
	lapic_tick_resume();	/* masked, unless the watchdog ticks */
	/* No ExtINT through LINT0: the 8259s are masked, and an ExtINT
	 * window would inhibit AVIC (hyperv-abi.md 6.2, IRQWIN). */
	lapic_write(LAPIC_LVT_LINT0, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_LVT_LINT1, LAPIC_LVT_DM_NMI);
	lapic_write(LAPIC_LVT_ERROR, LAPIC_LVT_MASKED);
	if (maxlvt >= 4)
		lapic_write(LAPIC_LVT_PERF, LAPIC_LVT_MASKED);
	if (maxlvt >= 5)
		lapic_write(LAPIC_LVT_THERMAL, LAPIC_LVT_MASKED);
	if (maxlvt >= 6)
		lapic_write(LAPIC_LVT_CMCI, LAPIC_LVT_MASKED);
	/* ESR is cleared by a write (SDM 11.5.3); x2APIC wants a zero write. */
	lapic_write(LAPIC_ESR, 0);
	lapic_write(LAPIC_ESR, 0);
}

void lapic_eoi(void)
{
	lapic_write(LAPIC_EOI, 0);
}

static int xapic_wait_idle(void)
{
	for (int i = 0; i < ICR_IDLE_SPINS; i++) {
		if (!(lapic_mmio[LAPIC_ICR_LOW / 4] & ICR_DELIVERY_BUSY))
			return 0;
		cpu_relax();
	}
	return -E_TIMEDOUT;
}

int lapic_send_icr(uint32_t dest, uint32_t low)
{
	if (lapic_mode == LAPIC_X2APIC) {
		wrmsr(ICR_X2APIC_MSR, (uint64_t)dest << ICR_X2APIC_DEST_SHIFT | low);
		return 0;
	}
	if (xapic_wait_idle())
		return -E_TIMEDOUT;
	lapic_mmio[LAPIC_ICR_HIGH / 4] = dest << ICR_XAPIC_DEST_SHIFT;
	lapic_mmio[LAPIC_ICR_LOW / 4] = low;
	return xapic_wait_idle();
}

void lapic_stop_others(void)
{
	const struct percpu *self = this_cpu();

	if (lapic_mode == LAPIC_DISABLED)
		return;
	/* Only the CPUs we started: an AP still parked in firmware code may
	 * have no NMI handler at all, and would triple-fault the machine. */
	for (unsigned int c = 0; c < ncpus; c++) {
		const struct percpu *p = percpu_of[c];

		if (p && p != self)
			(void)lapic_send_nmi(p->apic_id);
	}
}

int lapic_send_nmi(uint32_t apic_id)
{
	struct icr_fields f = icr_make_fixed(0, 0);
	uint32_t low;

	f.delivery = ICR_DM_NMI;
	low = icr_encode_low(&f);
	if (lapic_mode_read() == LAPIC_X2APIC) {
		wrmsr(ICR_X2APIC_MSR, (uint64_t)apic_id << ICR_X2APIC_DEST_SHIFT | low);
		return 0;
	}
	if (apic_id >= 0xff)
		return -E_RANGE;
	if (xapic_wait_idle())
		return -E_TIMEDOUT;
	lapic_mmio[LAPIC_ICR_HIGH / 4] = apic_id << ICR_XAPIC_DEST_SHIFT;
	lapic_mmio[LAPIC_ICR_LOW / 4] = low;
	return xapic_wait_idle();
}

static bool lapic_vector_bit(uint32_t base, unsigned int vector)
{
	return lapic_read(base + (vector / 32) * 0x10) & (1u << (vector % 32));
}

bool lapic_irr_pending(unsigned int vector)
{
	return lapic_vector_bit(LAPIC_IRR, vector);
}

bool lapic_isr_pending(unsigned int vector)
{
	return lapic_vector_bit(LAPIC_ISR, vector);
}

/* Both uses of the timer: a bounded HLT ends here, and the watchdog's tick scans. */
static void lapic_watchdog_fired(unsigned int vector, uint64_t tsc)
{
	struct percpu *p = this_cpu();

	(void)vector;
	(void)tsc;
	/* Counted for single-halt, which tells a wake a tick delayed from a late one. */
	WRITE_ONCE(p->mbox.ticks, p->mbox.ticks + 1);
	lapic_eoi();
	if (READ_ONCE(tick_count))
		watchdog_tick();
}

void lapic_watchdog_arm(void)
{
	irq_set_handler(VEC_WATCHDOG, lapic_watchdog_fired);
	lapic_write(LAPIC_TIMER_DCR, LAPIC_DCR_DIV1);
	lapic_write(LAPIC_LVT_TIMER, VEC_WATCHDOG);	/* one-shot, unmasked */
	lapic_write(LAPIC_TIMER_ICR, 0xffffffffu);
}

void lapic_watchdog_kick(void)
{
	lapic_write(LAPIC_TIMER_ICR, 0xffffffffu);
}

void lapic_watchdog_disarm(void)
{
	lapic_write(LAPIC_TIMER_ICR, 0);
	lapic_tick_resume();
}

void lapic_tick_config(uint32_t dcr, uint32_t count)
{
	irq_set_handler(VEC_WATCHDOG, lapic_watchdog_fired);
	tick_dcr = dcr;
	WRITE_ONCE(tick_count, count);
}

void lapic_tick_resume(void)
{
	uint32_t count = READ_ONCE(tick_count);

	if (!count) {
		lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
		return;
	}
	/* SDM 11.5.4: divide configuration first; writing the initial count starts it. */
	lapic_write(LAPIC_TIMER_DCR, tick_dcr);
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_TIMER_PERIODIC | VEC_WATCHDOG);
	lapic_write(LAPIC_TIMER_ICR, count);
}

void lapic_tick_pause(void)
{
	lapic_write(LAPIC_LVT_TIMER, LAPIC_LVT_MASKED);
	lapic_write(LAPIC_TIMER_ICR, 0);
}

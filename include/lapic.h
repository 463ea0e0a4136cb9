/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Local APIC registers and the generic, mode-agnostic accessors used off the
 * timed paths (bring-up, mode switches, mailboxes, the exit path). The timed
 * paths live in apic/ and touch the hardware directly.
 *
 * Register offsets: SDM vol. 3A table 11-1; in x2APIC mode register offset
 * R is MSR 0x800 + (R >> 4) (table 11-6).
 */
#ifndef INCLUDE_LAPIC_H
#define INCLUDE_LAPIC_H

#include <stdbool.h>
#include <stdint.h>

#define LAPIC_DEFAULT_PHYS 0xfee00000u

#define LAPIC_ID	0x020
#define LAPIC_VERSION	0x030
#define  LAPIC_VERSION_MAXLVT_SHIFT 16
#define LAPIC_TPR	0x080
#define LAPIC_PPR	0x0a0
#define LAPIC_EOI	0x0b0
#define LAPIC_LDR	0x0d0
#define LAPIC_DFR	0x0e0
#define LAPIC_SVR	0x0f0
#define  LAPIC_SVR_ENABLE (1u << 8)
#define LAPIC_ISR	0x100	/* 8 registers, 0x10 apart */
#define LAPIC_TMR	0x180
#define LAPIC_IRR	0x200
#define LAPIC_ESR	0x280
#define LAPIC_LVT_CMCI	0x2f0
#define LAPIC_ICR_LOW	0x300
#define LAPIC_ICR_HIGH	0x310
#define LAPIC_LVT_TIMER	0x320
#define  LAPIC_LVT_TIMER_PERIODIC (1u << 17)
#define LAPIC_LVT_THERMAL 0x330
#define LAPIC_LVT_PERF	0x340
#define LAPIC_LVT_LINT0	0x350
#define LAPIC_LVT_LINT1	0x360
#define LAPIC_LVT_ERROR	0x370
#define  LAPIC_LVT_MASKED (1u << 16)
#define  LAPIC_LVT_DM_NMI (4u << 8)
#define LAPIC_TIMER_ICR	0x380
#define LAPIC_TIMER_CCR	0x390
#define LAPIC_TIMER_DCR	0x3e0
#define  LAPIC_DCR_DIV1 0xb	/* divide by 1; 0x0, 0x1, 0x2, 0x3, 0x8, 0x9, 0xa: by 2 .. 128 */
#define LAPIC_SELF_IPI	0x3f0	/* x2APIC only */

#define X2APIC_MSR(reg) (0x800u + ((reg) >> 4))

enum lapic_mode { LAPIC_DISABLED, LAPIC_XAPIC, LAPIC_X2APIC };

/* The mode all CPUs are in; every switch happens on all CPUs at once. */
extern enum lapic_mode lapic_mode;
extern volatile uint32_t *lapic_mmio;
/*
 * Some CPU has been in x2APIC mode during this boot (set by the CPU that
 * moves, never cleared). On AMD AVIC without x2AVIC that is when KVM
 * (Linux 6.3+, commit 2008fab34530, kvm_inhibit_apic_access_page()) drops
 * the APIC-access page for the rest of the VM's life; every record says
 * whether it was measured after it.
 */
extern bool lapic_x2apic_entered;

enum lapic_mode lapic_mode_read(void);	/* from IA32_APIC_BASE of this CPU */
uint32_t lapic_read(uint32_t reg);
void lapic_write(uint32_t reg, uint32_t val);
uint32_t lapic_id(void);
void lapic_setup_local(void);		/* SVR, TPR 0, LVTs masked, ESR cleared */
void lapic_eoi(void);
/* Boot-path IPI: waits (bounded) for the xAPIC delivery-status bit. 0 or -E_TIMEDOUT. */
int lapic_send_icr(uint32_t dest, uint32_t low);
void lapic_stop_others(void);		/* NMI to all but self, for the exit path */
/*
 * An NMI to one APIC ID in the mode this CPU's APIC is really in (read
 * from IA32_APIC_BASE, not the global lapic_mode, which a switch changes
 * before the CPUs move): for the watchdog, whatever the backend. 0, or
 * -E_TIMEDOUT (xAPIC ICR busy) / -E_RANGE (an ID xAPIC cannot address).
 */
int lapic_send_nmi(uint32_t apic_id);
bool lapic_irr_pending(unsigned int vector);
/*
 * A HLT that waits for an interrupt which never comes would hang: the local
 * APIC timer, one-shot at its longest count, bounds it (seconds, at any bus
 * clock QEMU or hardware uses). Armed around such HLTs, outside timed regions:
 * lapic_watchdog_arm() sets it up and starts it; lapic_watchdog_kick()
 * restarts the count (one register write, where arming costs three) before
 * each further HLT; lapic_watchdog_disarm() stops it.
 */
void lapic_watchdog_arm(void);
void lapic_watchdog_kick(void);
void lapic_watchdog_disarm(void);
/*
 * The stall watchdog's tick (kernel/watchdog.c): the same timer, periodic,
 * count `count` at divide configuration `dcr`, vector VEC_WATCHDOG, whose
 * handler calls watchdog_tick() after its EOI. lapic_tick_config() sets it
 * for every CPU (count 0: none); lapic_tick_resume() (re)starts it on this
 * CPU, or masks the timer when there is none. lapic_setup_local() and
 * lapic_watchdog_disarm() end with it, so a mode switch or a bounded HLT
 * gives the tick back.
 */
void lapic_tick_config(uint32_t dcr, uint32_t count);
void lapic_tick_resume(void);
/* Stops this CPU's tick (timer masked, count 0) until lapic_tick_resume(). */
void lapic_tick_pause(void);
bool lapic_isr_pending(unsigned int vector);

#endif

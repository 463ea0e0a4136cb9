// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's tick, stopped. SeaBIOS leaves PIT channel 0 in mode 2 or 3
 * at 18.2 Hz; kernel/pic.c masks its line, so the guest never sees it, but
 * the host still emulates every tick: under KVM the in-kernel PIT's hrtimer
 * (arch/x86/kvm/i8254.c, pit_timer_fn) queues pit_do_work on the VM's
 * kvm-pit thread 18 times a second, inside timed regions too, and that
 * work raises GSI 0 (kvm_set_irq). A runnable kvm-pit thread on a halted
 * target's CPU also ends KVM's halt polling: kvm_vcpu_halt() polls only
 * while single_task_running() (virt/kvm/kvm_main.c).
 *
 * The stop is Linux's (drivers/clocksource/i8253.c,
 * clockevent_i8253_disable(), since "clockevents/drivers/i8253: Fix stop
 * sequence for timer 0"): mode 0, a count, mode 0 again, on every
 * hypervisor alike. KVM takes the control word alone as a mode change and
 * leaves its timer running (pit_ioport_write()); the count write is what
 * re-arms it, as a one-shot for mode 0 (pit_load_count() ->
 * create_pit_timer(..., false)); so does QEMU's own PIT (TCG,
 * kernel-irqchip=off or split). Hyper-V restarts its PIT on the count
 * write and stops it on the second control word. Linux writes a count of
 * 0, a last tick 55 ms later; here it is 1, so that the last tick comes at
 * once, and the stop waits (bounded) until the counter reports OUT high
 * (read-back status, bit 7): no tick of it is left for the plan's timed
 * regions. It lasts until the VM is paused and resumed, which reloads
 * KVM's PIT state (kvm_pit_load_count() from QEMU's kvm_pit_put()).
 * Without a PIT (microvm pit=off, Firecracker) the writes go nowhere and
 * the status reads 0xff, OUT high at once.
 */
#include "include/pit.h"
#include "include/tsc.h"
#include "include/x86.h"

#define PIT_STOP_WAIT_US 10000 /* a count of 1 runs out in 838 ns */

void pit_stop_tick(void)
{
	uint64_t deadline;

	outb(PIT_CMD, PIT_CMD_CH0_ONESHOT);
	outb(PIT_CH0, 1);
	outb(PIT_CH0, 0);
	outb(PIT_CMD, PIT_CMD_CH0_ONESHOT);
	deadline = tsc_deadline_us(PIT_STOP_WAIT_US);
	do {
		outb(PIT_CMD, PIT_CMD_READBACK_CH0_STATUS);
		if (inb(PIT_CH0) & PIT_STATUS_OUT)
			return;
		cpu_relax();
	} while (!tsc_expired(deadline));
}

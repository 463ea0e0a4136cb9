// SPDX-License-Identifier: GPL-2.0-only
/*
 * The firmware's tick, stopped. SeaBIOS leaves PIT channel 0 in mode 2 or 3
 * at 18.2 Hz; kernel/pic.c masks its line, so the guest never sees it, but
 * the host still emulates every tick: under KVM the in-kernel PIT's hrtimer
 * (arch/x86/kvm/i8254.c, pit_timer_fn) queues pit_do_work on the VM's
 * kvm-pit thread, which injects GSI 0 (kvm_set_irq) 18 times a second,
 * inside timed regions too. A runnable kvm-pit thread on a halted target's
 * CPU also ends KVM's halt polling: kvm_vcpu_halt() polls only while
 * single_task_running() (virt/kvm/kvm_main.c).
 *
 * Linux's i8253 shutdown (drivers/clocksource/i8253.c, pit_shutdown) does
 * what stops it: mode 0, then a count of 0. KVM's pit_load_count() arms a
 * one-shot timer for mode 0 (create_pit_timer(..., false)) of 0x10000
 * counts, so one last tick comes 55 ms later and none after; QEMU's own
 * PIT (TCG, or kernel-irqchip=off) stops the same way. Hyper-V restarts
 * its PIT when the counter is written (Linux sets
 * i8253_clear_counter_on_shutdown to false there, arch/x86/kernel/cpu/
 * mshyperv.c): under Hyper-V itself, rather than KVM's Hyper-V interface
 * (which keeps KVM's own leaves at 0x40000100), the mode alone is written.
 * Without a PIT (microvm pit=off, Firecracker) the writes go nowhere.
 */
#include "include/cpu.h"
#include "include/pit.h"
#include "include/x86.h"

void pit_stop_tick(void)
{
	outb(PIT_CMD, PIT_CMD_CH0_ONESHOT);
	if (cpu.hyperv && !cpu.kvm_base)
		return;
	outb(PIT_CH0, 0);
	outb(PIT_CH0, 0);
}

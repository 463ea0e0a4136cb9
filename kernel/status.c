// SPDX-License-Identifier: GPL-2.0-only
/*
 * The run status and the way out: the last console line states the worst
 * status, then isa-debug-exit (port 0xf4) ends QEMU with (byte << 1) | 1.
 * Where that device is absent the write is lost (a port with no device
 * behind it swallows writes, so nothing waits on it); we then stop every
 * other CPU with an NMI and halt, so the final line stays the last word.
 *
 * That is the fallback on purpose: QEMU has the device on every machine
 * run.sh uses (microvm too: -device isa-debug-exit), Cloud Hypervisor and
 * Firecracker have none. A reset instead (i8042 0xFE, the FADT's reset
 * register) would end Firecracker, but reboot QEMU without -no-reboot and
 * Cloud Hypervisor, running the plan again and again. So the VMM keeps a
 * halted guest until whoever started it stops it; the status is the
 * console's last line, "ipibench: status WORD" (docs/boot-paths.md, "Other VMMs").
 */
#include "include/console.h"
#include "include/lava.h"
#include "include/lapic.h"
#include "include/status.h"
#include "include/x86.h"

#define ISA_DEBUG_EXIT_PORT 0xf4

static const char *const names[STATUS_COUNT] = {
	[STATUS_SUCCESS] = "SUCCESS", [STATUS_SKIP] = "SKIP",	  [STATUS_ERROR] = "ERROR",
	[STATUS_FAILURE] = "FAILURE", [STATUS_CRASH] = "CRASH", [STATUS_BADCMD] = "BAD-CMDLINE",
};

const char *volatile crash_context;
static int worst = STATUS_SUCCESS;
static int exiting;
int status_stopping;	/* read by the NMI handler */

const char *status_name(enum status st)
{
	return (unsigned)st < STATUS_COUNT ? names[st] : "?";
}

void status_report(enum status st)
{
	int cur = __atomic_load_n(&worst, __ATOMIC_RELAXED);

	while ((int)st > cur &&
	       !__atomic_compare_exchange_n(&worst, &cur, (int)st, false, __ATOMIC_RELAXED,
					    __ATOMIC_RELAXED))
		;
}

enum status status_worst(void)
{
	return (enum status)__atomic_load_n(&worst, __ATOMIC_RELAXED);
}

void status_exit(enum status st)
{
	irq_disable();
	/* Only the first CPU to get here speaks; the others wait to be stopped. */
	if (__atomic_exchange_n(&exiting, 1, __ATOMIC_ACQ_REL)) {
		for (;;)
			halt();
	}
	status_report(st);
	st = status_worst();
	__atomic_store_n(&status_stopping, 1, __ATOMIC_RELEASE);
	lapic_stop_others();
	lava_finish(st);
	kprintf("ipibench: status %s\n", status_name(st));
	outb(ISA_DEBUG_EXIT_PORT, (uint8_t)(STATUS_BYTE_BASE + st));
	for (;;)
		halt();
}

void status_finish(void)
{
	status_exit(status_worst());
}

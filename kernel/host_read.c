// SPDX-License-Identifier: GPL-2.0-only
/*
 * Edges the host can act on (host_stats=1; docs/exits.md, "KVM's
 * statistics"). KVM counts per vCPU how each halt ended (kvm_vcpu_halt():
 * halt_successful_poll, halt_wakeup...), which says whether a halted
 * target was woken while KVM polled it or after it blocked, but only the
 * host can read them (QMP query-stats), and a read is worth something only
 * at the edges of a pass. So the measuring CPU prints
 *
 *     @@@ host-read begin|end SEQ cpu=N go
 *
 * and waits, up to a bound, for one byte on COM2. run.sh (and the KVM
 * lane's init) answer: on the line they read the statistics, then write a
 * byte into the FIFO behind COM2 (a pipe chardev). The guest
 * goes on only once the host holds its snapshot, so every halt that ends
 * between two edges is one of the pass's. COM1 cannot carry the answer:
 * run.sh's console is -serial stdio with no input, the lane's a file.
 *
 * The answer names its edge: 'A' + (2 x SEQ + 1 for an end edge) mod 26,
 * and the guest passes over any other byte. Unanswered, the pass runs all
 * the same and its records say so; a host that answers an edge after its
 * bound sends a byte no later edge waits for. The wait reads the line
 * status every HOST_READ_POLL_US: each read is an exit to QEMU, under the
 * lock its QMP thread needs to answer.
 */
#include <stdbool.h>
#include "include/console.h"
#include "include/host_read.h"
#include "include/tsc.h"
#include "include/uart.h"
#include "include/watchdog.h"
#include "include/x86.h"

#define COM2_FIFO 16
#define HOST_READ_POLL_US 100

static enum { COM2_UNPROBED, COM2_PRESENT, COM2_ABSENT } com2;
static uint32_t host_read_seq;

/* Polled, no interrupt; a missing UART floats the bus (LSR reads 0xff). */
static bool com2_present(void)
{
	if (com2 == COM2_UNPROBED) {
		outb(COM2 + UART_IER, 0);
		outb(COM2 + UART_LCR, LCR_8N1);
		outb(COM2 + UART_FCR, 0x07);	/* FIFOs on, both cleared */
		com2 = inb(COM2 + UART_LSR) == 0xff ? COM2_ABSENT : COM2_PRESENT;
	}
	return com2 == COM2_PRESENT;
}

uint32_t host_read_next(void)
{
	return ++host_read_seq;
}

/* The byte that answers this edge (host/ipibench/kvmhost/hoststats.py answer_byte). */
static uint8_t host_read_answer(const char *edge, uint32_t seq)
{
	const uint32_t end = edge[0] == 'e';

	return (uint8_t)('A' + (2 * seq + end) % 26);
}

const char *host_read_edge(const char *edge, uint32_t seq, unsigned int cpu, uint64_t bound_us)
{
	const uint8_t want = host_read_answer(edge, seq);
	uint64_t deadline;

	if (!com2_present())
		return "no-port";
	for (int i = 0; i < COM2_FIFO && (inb(COM2 + UART_LSR) & LSR_DR); i++)
		(void)inb(COM2 + UART_RBR);
	kprintf("@@@ host-read %s %u cpu=%u go\n", edge, seq, cpu);
	deadline = tsc_deadline_us(bound_us);
	for (;;) {
		if ((inb(COM2 + UART_LSR) & LSR_DR) && inb(COM2 + UART_RBR) == want)
			return "answered";
		if (tsc_expired(deadline))
			return "unanswered";
		/* Waiting on the host is progress, not a stall. */
		watch_step();
		tsc_delay_us(HOST_READ_POLL_US);
	}
}

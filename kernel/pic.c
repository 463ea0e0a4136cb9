// SPDX-License-Identifier: GPL-2.0-only
/*
 * The legacy 8259A pair. SeaBIOS leaves both unmasked at vector base 0x08
 * with the PIT running, so the timer would arrive as vector 8 and look like
 * a double fault. Remap them above the exceptions (ICW1-ICW4, 8259A data
 * sheet), then mask every line: we only ever use the local APIC.
 *
 * Some machines have no 8259 (QEMU microvm with pic=off, Firecracker, Cloud
 * Hypervisor): writes to its ports go nowhere and reads return 0xff. Only
 * writes happen here, so nothing can wait on a missing chip; the mask
 * register's read-back (OCW1 is readable on the data port) tells the
 * console whether there was a chip to mask.
 */
#include "include/console.h"
#include "include/percpu.h"
#include "include/pic.h"
#include "include/x86.h"

#define PIC1_CMD 0x20
#define PIC1_DATA 0x21
#define PIC2_CMD 0xa0
#define PIC2_DATA 0xa1
#define ICW1_INIT_ICW4 0x11	/* edge, cascade, ICW4 follows */
#define ICW4_8086 0x01
#define PIC_PROBE_MASK 0xa5	/* any mask an absent port (0xff) cannot echo */

void pic_disable(void)
{
	uint8_t echo;

	outb(PIC1_CMD, ICW1_INIT_ICW4);
	outb(PIC2_CMD, ICW1_INIT_ICW4);
	outb(PIC1_DATA, VEC_PIC_BASE);
	outb(PIC2_DATA, VEC_PIC_BASE + 8);
	outb(PIC1_DATA, 1 << 2);	/* slave on IRQ2 */
	outb(PIC2_DATA, 2);		/* cascade identity */
	outb(PIC1_DATA, ICW4_8086);
	outb(PIC2_DATA, ICW4_8086);
	/* IF is still 0 here: a line the probe mask leaves open delivers nothing. */
	outb(PIC1_DATA, PIC_PROBE_MASK);
	echo = inb(PIC1_DATA);
	outb(PIC1_DATA, 0xff);
	outb(PIC2_DATA, 0xff);
	if (echo != PIC_PROBE_MASK)
		kprintf("pic: no 8259 (its mask register reads back 0x%x): nothing to mask\n",
			echo);
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The legacy virtio console (include/virtio_console.h): virtio 1.2, 4.1.4.8
 * (the legacy PCI registers), 3.1.1 (the driver's initialisation) and 5.3
 * (the console device). Without VIRTIO_CONSOLE_F_MULTIPORT the device has
 * one port, the console, with receiveq 0 and transmitq 1; only transmitq
 * is set up, with one descriptor that each send reuses. The device raises
 * no interrupt (VRING_AVAIL_F_NO_INTERRUPT): the driver polls the used
 * ring, which QEMU updates before the notify's exit returns when the device
 * has ioeventfd=off (host/lane/lane.sh gives it so), and soon after
 * otherwise.
 */
#include "include/pci.h"
#include "include/virtio_console.h"
#include "include/compiler.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/vring.h"

#define VIRTIO_VENDOR	      0x1af4
#define VIRTIO_CONSOLE_LEGACY 0x1003 /* a transitional device's legacy ID */

/* The legacy registers, offsets in I/O BAR 0 (no MSI-X). */
#define VIO_HOST_FEATURES  0x00
#define VIO_GUEST_FEATURES 0x04
#define VIO_QUEUE_PFN	   0x08
#define VIO_QUEUE_NUM	   0x0c
#define VIO_QUEUE_SEL	   0x0e
#define VIO_QUEUE_NOTIFY   0x10
#define VIO_STATUS	   0x12
#define VIO_ACKNOWLEDGE	   0x01
#define VIO_DRIVER	   0x02
#define VIO_DRIVER_OK	   0x04
#define VIO_FAILED	   0x80

#define TRANSMITQ   1
#define QUEUE_BYTES (3 * VRING_LEGACY_ALIGN) /* up to 256 entries */
/* Spins, not time: the console starts before the TSC is calibrated. */
#define USED_SPINS 10000000

static uint8_t queue_mem[QUEUE_BYTES] __attribute__((aligned(VRING_LEGACY_ALIGN)));
static struct vring_desc *desc;
static struct vring_avail *avail;
static struct vring_used *used;
static uint16_t io, qnum, avail_idx;
static char where[96];

static int virtcon_fail(int err)
{
	outb(io + VIO_STATUS, VIO_FAILED);
	io = 0;
	return err;
}

int virtcon_init(void)
{
	struct pci_dev d;
	struct vring_layout l;
	uint32_t bar;

	if (!pci_find(VIRTIO_VENDOR, VIRTIO_CONSOLE_LEGACY, &d))
		return -E_NODEV;
	bar = pci_read32(d, PCI_BAR0);
	if (!(bar & PCI_BAR_IO) || !(bar & 0xfffc))
		return -E_NODEV; /* no legacy I/O BAR, or the firmware gave it no ports */
	io = (uint16_t)(bar & 0xfffc);
	pci_write32(d, PCI_COMMAND,
		    (pci_read32(d, PCI_COMMAND) & 0xffff) | PCI_COMMAND_IO | PCI_COMMAND_MASTER);
	outb(io + VIO_STATUS, 0); /* reset */
	outb(io + VIO_STATUS, VIO_ACKNOWLEDGE);
	outb(io + VIO_STATUS, VIO_ACKNOWLEDGE | VIO_DRIVER);
	(void)inl(io + VIO_HOST_FEATURES);
	outl(io + VIO_GUEST_FEATURES, 0); /* none: one port, no event index */
	outw(io + VIO_QUEUE_SEL, TRANSMITQ);
	qnum = inw(io + VIO_QUEUE_NUM);
	if (vring_legacy_layout(qnum, &l) || l.size > sizeof(queue_mem))
		return virtcon_fail(-E_RANGE);
	desc = (struct vring_desc *)queue_mem;
	avail = (struct vring_avail *)(queue_mem + l.avail);
	used = (struct vring_used *)(queue_mem + l.used);
	avail->flags = VRING_AVAIL_F_NO_INTERRUPT;
	barrier();	/* the port helpers clobber no memory: the flag before the ring's address */
	outl(io + VIO_QUEUE_PFN, (uint32_t)((uintptr_t)queue_mem / VRING_LEGACY_ALIGN));
	outb(io + VIO_STATUS, VIO_ACKNOWLEDGE | VIO_DRIVER | VIO_DRIVER_OK);
	fmt_snprintf(where, sizeof(where), "virtio console at PCI 00:%02x.%u, ports 0x%x, queue %u",
		     d.dev, d.fn, io, qnum);
	return 0;
}

int virtcon_send(const char *buf, size_t n)
{
	if (!io)
		return -E_NODEV;
	/* The identity map: the buffer's address is its guest-physical one. */
	desc[0] = (struct vring_desc){.addr = (uintptr_t)buf, .len = (uint32_t)n};
	avail->ring[avail_idx % qnum] = 0;
	/* The device must see the entry before the index (x86 keeps store order). */
	barrier();
	WRITE_ONCE(avail->idx, ++avail_idx);
	barrier();
	outw(io + VIO_QUEUE_NOTIFY, TRANSMITQ);
	for (long i = 0; i < USED_SPINS; i++) {
		if (READ_ONCE(used->idx) == avail_idx)
			return 0;
		cpu_relax();
	}
	/* Take the buffer back: reset, so that a late completion cannot print it twice. */
	outb(io + VIO_STATUS, 0);
	io = 0;
	return -E_TIMEDOUT;
}

const char *virtcon_where(void)
{
	return where;
}

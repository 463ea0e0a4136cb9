/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * PCI configuration space through configuration mechanism #1 (ports 0xcf8
 * and 0xcfc, PCI Local Bus 3.0, 3.2.2.3.2), on bus 0 only: where QEMU's pc
 * and q35 machines put the devices given on their command line.
 */
#ifndef INCLUDE_PCI_H
#define INCLUDE_PCI_H

#include <stdbool.h>
#include <stdint.h>

#define PCI_VENDOR_ID	   0x00 /* vendor in 15:0, device in 31:16 */
#define PCI_COMMAND	   0x04
#define PCI_COMMAND_IO	   0x1
#define PCI_COMMAND_MASTER 0x4	/* lets the device read guest memory */
#define PCI_HEADER_TYPE	   0x0c /* its dword: the header type in 23:16 */
#define PCI_BAR0	   0x10
#define PCI_BAR_IO	   0x1 /* bit 0: an I/O BAR, its ports in 31:2 */

struct pci_dev {
	uint8_t dev, fn; /* on bus 0 */
};

uint32_t pci_read32(struct pci_dev d, unsigned int reg);
void pci_write32(struct pci_dev d, unsigned int reg, uint32_t v);
/* The first function on bus 0 with these IDs; false when there is none or no PCI. */
bool pci_find(uint16_t vendor, uint16_t device, struct pci_dev *out);

#endif

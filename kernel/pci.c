// SPDX-License-Identifier: GPL-2.0-only
/*
 * PCI configuration mechanism #1 on bus 0 (include/pci.h). Without PCI
 * (QEMU microvm, a Xen PVH domain) nothing decodes the two ports, reads
 * float to all ones, and no vendor ID matches.
 */
#include "include/pci.h"
#include "include/x86.h"

#define PCI_CONFIG_ADDRESS 0xcf8
#define PCI_CONFIG_DATA	   0xcfc
#define PCI_ENABLE	   0x80000000u
#define PCI_DEVICES	   32
#define PCI_FUNCTIONS	   8
#define PCI_MULTIFUNCTION  0x80 /* in the header type */

static uint32_t pci_address(struct pci_dev d, unsigned int reg)
{
	return PCI_ENABLE | (uint32_t)d.dev << 11 | (uint32_t)d.fn << 8 | (reg & 0xfc);
}

/* Only the BSP touches configuration space, at boot: no lock. */
uint32_t pci_read32(struct pci_dev d, unsigned int reg)
{
	outl(PCI_CONFIG_ADDRESS, pci_address(d, reg));
	return inl(PCI_CONFIG_DATA);
}

void pci_write32(struct pci_dev d, unsigned int reg, uint32_t v)
{
	outl(PCI_CONFIG_ADDRESS, pci_address(d, reg));
	outl(PCI_CONFIG_DATA, v);
}

bool pci_find(uint16_t vendor, uint16_t device, struct pci_dev *out)
{
	const uint32_t want = (uint32_t)device << 16 | vendor;

	for (uint8_t dev = 0; dev < PCI_DEVICES; dev++) {
		for (uint8_t fn = 0; fn < PCI_FUNCTIONS; fn++) {
			struct pci_dev d = {dev, fn};
			uint32_t id = pci_read32(d, PCI_VENDOR_ID);

			if ((id & 0xffff) == 0xffff) {
				if (!fn)
					break; /* no device in this slot */
				continue;
			}
			if (id == want) {
				*out = d;
				return true;
			}
			if (!fn && !(pci_read32(d, PCI_HEADER_TYPE) >> 16 & PCI_MULTIFUNCTION))
				break;
		}
	}
	return false;
}

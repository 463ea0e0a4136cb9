/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * QEMU's virtio console, legacy interface (virtio-serial-pci with a
 * virtconsole on port 0): the console's transport with console=virtio.
 * A 16550 costs a VM exit for every byte, some 150 us each under KVM nested
 * inside TCG (the KVM lane, host/lane); a virtqueue takes a whole line for
 * one exit, the notify.
 */
#ifndef INCLUDE_VIRTIO_CONSOLE_H
#define INCLUDE_VIRTIO_CONSOLE_H

#include <stddef.h>

/* 0 when found and ready; -E_NODEV without one, -E_RANGE for a queue we cannot hold. */
int virtcon_init(void);
/*
 * Hands n bytes (at most VIRTCON_MAX) to the device and waits until it has
 * taken them. -E_TIMEDOUT when it did not (the caller then prints them
 * elsewhere and stops using it). The caller serialises.
 */
int virtcon_send(const char *buf, size_t n);
/* "virtio console at PCI 00:04.0, ports 0xc000, queue 128" once initialised. */
const char *virtcon_where(void);

#define VIRTCON_MAX 4096

#endif

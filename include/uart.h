/* SPDX-License-Identifier: GPL-2.0-only */
/* The 16550 UART's registers, as offsets from its base port. */
#ifndef INCLUDE_UART_H
#define INCLUDE_UART_H

#define COM1 0x3f8
#define COM2 0x2f8
/* Bochs's and QEMU's isa-debugcon port, which Xen also decodes for HVM and PVH
 * guests (XEN_HVM_DEBUGCONS_IOPORT): the console when there is no COM1. */
#define DEBUG_PORT 0xe9

#define UART_THR 0	/* transmit holding register (write) */
#define UART_RBR 0	/* receive buffer register (read) */
#define UART_IER 1
#define UART_IIR 2	/* read */
#define  IIR_FIFO_ON 0xc0	/* both bits: a 16550A with its FIFOs on */
#define UART_FCR 2	/* write */
#define UART_LCR 3
#define  LCR_DLAB 0x80
#define  LCR_8N1 0x03
#define UART_MCR 4
#define UART_LSR 5
#define  LSR_DR 0x01	/* a received byte waits in RBR */
#define  LSR_THRE 0x20	/* transmit holding register empty */

#endif

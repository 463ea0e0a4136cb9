/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The 8254 programmable interval timer (Intel 82C54 data sheet): the ports
 * and control words that kernel/tsc.c (channel 2, calibration) and
 * kernel/pit.c (channel 0, the firmware's tick) write.
 */
#ifndef INCLUDE_PIT_H
#define INCLUDE_PIT_H

#define PIT_HZ 1193182u
#define PIT_CH0 0x40
#define PIT_CH2 0x42
#define PIT_CMD 0x43	/* control word: SC1 SC0 RW1 RW0 M2 M1 M0 BCD */
/* The two words written here: the counter, low byte then high byte, mode 0
 * (interrupt on terminal count: one-shot), binary. */
#define  PIT_CMD_CH0_ONESHOT 0x30
#define  PIT_CMD_CH2_ONESHOT 0xb0
/* Read-back (11), count not latched (1), status latched (0), counter 0. */
#define  PIT_CMD_READBACK_CH0_STATUS 0xe2
#define PIT_STATUS_OUT 0x80	/* the counter's OUT pin, in a read-back status byte */

void pit_stop_tick(void);

#endif

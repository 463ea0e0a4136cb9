/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Interrupt handlers for vectors >= 32. A handler gets the vector and the
 * TSC read first thing on entry to C (a constant few dozen cycles after the
 * CPU delivered it) and is responsible for its own EOI.
 */
#ifndef INCLUDE_IRQ_H
#define INCLUDE_IRQ_H

#include <stdint.h>

typedef void (*irq_handler_t)(unsigned int vector, uint64_t entry_tsc);

void irq_set_handler(unsigned int vector, irq_handler_t fn);
irq_handler_t irq_get_handler(unsigned int vector);
/* Count and EOI a vector nobody claimed. */
void irq_unexpected(unsigned int vector, uint64_t entry_tsc);

#endif

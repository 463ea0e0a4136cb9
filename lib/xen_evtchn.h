/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Xen's 2-level event channels, the pure half: what the upcall handler does
 * with the shared_info page (xen/evtchn.c owns the page and the hypercalls).
 */
#ifndef LIB_XEN_EVTCHN_H
#define LIB_XEN_EVTCHN_H

#include <stdint.h>
#include "lib/xen_abi.h"

/* HVM_PARAM_CALLBACK_IRQ's value for an upcall delivered as vector on every vCPU. */
static inline uint64_t xen_callback_vector(uint8_t vector)
{
	return XEN_HVM_CALLBACK_TYPE_VECTOR << XEN_HVM_CALLBACK_TYPE_SHIFT | vector;
}

typedef void (*xen_port_fn)(unsigned int port, void *arg);

/*
 * One pass of the upcall over the words sel names (taken from the vCPU's
 * pending_sel by the caller, which swapped in 0): for each port pending,
 * not masked and bound to this vCPU (its bit set in mine), lowest first,
 * clears its pending bit with a locked AND, then calls fn(port, arg).
 *
 * mine matters: the pending words are the whole domain's, and a word this
 * vCPU's pending_sel names may hold another vCPU's ports too (a sender's
 * to every CPU, its own port among them); taking one of those would clear
 * it from under the vCPU it was sent to, which would never see it. Linux's
 * 2-level scan masks each word with its per-CPU cpu_evtchn_mask the same way.
 *
 * The clear comes before fn, as Linux acks before it handles: a send that
 * lands after it sets the bit again and a bit in pending_sel, so the
 * caller's next pass sees it; a second send before it is merged into this
 * one, as a second IPI of a vector already in IRR is. Returns the number
 * of ports handled.
 */
unsigned int xen_2l_scan(uint64_t sel, uint64_t pending[XEN_2L_WORDS],
			 const uint64_t mask[XEN_2L_WORDS], const uint64_t mine[XEN_2L_WORDS],
			 xen_port_fn fn, void *arg);

#endif

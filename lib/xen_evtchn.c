// SPDX-License-Identifier: GPL-2.0-only
/*
 * The 2-level event-channel scan (lib/xen_evtchn.h), as Xen's
 * evtchn_2l_set_pending() sets what it reads: the port's bit in
 * evtchn_pending (and nothing more when it was set already: a pending port
 * is not signalled again), then, if the port is not masked, the word's bit
 * in the notified vCPU's pending_sel, and the upcall only when that bit
 * went from 0 to 1. So a selector bit left set, or a port left pending
 * behind a mask, silences later sends (xen/evtchn.c clears both).
 */
#include "lib/xen_evtchn.h"

unsigned int xen_2l_scan(uint64_t sel, uint64_t pending[XEN_2L_WORDS],
			 const uint64_t mask[XEN_2L_WORDS], const uint64_t mine[XEN_2L_WORDS],
			 xen_port_fn fn, void *arg)
{
	unsigned int handled = 0;

	while (sel) {
		const unsigned int w = (unsigned int)__builtin_ctzll(sel);
		uint64_t ready = __atomic_load_n(&pending[w], __ATOMIC_ACQUIRE) & mine[w] &
				 ~__atomic_load_n(&mask[w], __ATOMIC_RELAXED);

		sel &= sel - 1;
		while (ready) {
			const unsigned int b = (unsigned int)__builtin_ctzll(ready);

			ready &= ready - 1;
			__atomic_fetch_and(&pending[w], ~(1ull << b), __ATOMIC_ACQ_REL);
			fn(w * 64 + b, arg);
			handled++;
		}
	}
	return handled;
}

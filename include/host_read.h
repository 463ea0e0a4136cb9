/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Edges at which the host reads KVM's statistics (host_stats=1): see
 * kernel/host_read.c.
 */
#ifndef INCLUDE_HOST_READ_H
#define INCLUDE_HOST_READ_H

#include <stdint.h>

/*
 * Prints the edge ("begin" or "end") of host read seq about CPU cpu and
 * waits up to bound_us for the host's answer. Returns what happened, for
 * the record: "answered", "unanswered" (the bound ran out) or "no-port"
 * (no COM2 to answer on).
 */
const char *host_read_edge(const char *edge, uint32_t seq, unsigned int cpu, uint64_t bound_us);

/* The next host read's number: 1, 2, ... in the order they are taken. */
uint32_t host_read_next(void);

#endif

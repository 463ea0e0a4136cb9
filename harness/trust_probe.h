/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The trust checks of this boot (lib/trust.h has the rules): measured once
 * on the BSP before the environment record, then read by every result.
 */
#ifndef HARNESS_TRUST_PROBE_H
#define HARNESS_TRUST_PROBE_H

#include "lib/json.h"

/* Measures RDTSC and CPUID, gathers the facts, prints a line per warning. */
void trust_check(void);

/* The ids of the warnings that touch every timed figure; NULL: none. */
const char *trust_figure_ids(void);

/* "trust": {rdtsc_cycles, cpuid_cycles, warnings: [{id, text}]} in the env record. */
void trust_env(struct json *j);

#endif

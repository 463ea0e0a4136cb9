/* SPDX-License-Identifier: GPL-2.0-only */
/* The CPUs the firmware lists (ACPI MADT), in table order. */
#ifndef INCLUDE_TOPOLOGY_H
#define INCLUDE_TOPOLOGY_H

#include <stdbool.h>
#include <stdint.h>
#include "lib/acpi.h"

extern struct madt_cpu topo_cpus[];
extern struct madt_info topo_info;

int topology_discover(void);
unsigned int topology_listed(void);
/* The ACPI PM timer's I/O port from the FADT; 0 or a negative code. */
int topology_pm_timer(uint16_t *port, bool *ext32);	/* usable CPUs the MADT lists */
/*
 * The boot fact that decodes the online CPUs' APIC IDs into package, core
 * and thread by CPUID (lib/cpu_topo.h), each CPU listed up to
 * TOPOLOGY_LISTED_MAX of them, the APIC ID's layout beyond.
 */
#define TOPOLOGY_LISTED_MAX 16
void topology_print_cpus(void);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The checks the APIC backends' per-CPU enables share (apic/apic.h): the
 * APIC ID and the logical-destination registers, which the send paths
 * trust without reading them back.
 */
#include "apic/apic.h"
#include "include/console.h"
#include "include/percpu.h"
#include "lib/error.h"

int apic_check_id(const char *backend, uint32_t id)
{
	const struct percpu *p = this_cpu();

	if (id == p->apic_id)
		return 0;
	kprintf("%s: CPU %u reports APIC ID %u, the MADT said %u\n", backend, p->cpu, id,
		p->apic_id);
	return -E_PROTO;
}

int apic_check_reg(const char *backend, const char *reg, uint32_t got, uint32_t want)
{
	if (got == want)
		return 0;
	kprintf("%s: CPU %u %s reads 0x%08x, expected 0x%08x\n", backend, this_cpu()->cpu, reg, got,
		want);
	return -E_PROTO;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * What this boot can see that makes its figures untrustworthy (lib/trust.h):
 * the cost of RDTSC and of CPUID measured on the BSP, the TSC's stability
 * bits and skew bound, and whether the hypervisor is TCG.
 */
#include "harness/trust_probe.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/poll.h"
#include "include/percpu.h"
#include "include/tsc.h"
#include "include/x86.h"
#include "lib/trust.h"

#define TRUST_TRIES 64

static struct trust_facts facts;
static unsigned int warnings;
static char figure_ids[64];

/* The cheapest of TRUST_TRIES: RDTSC alone, or CPUID leaf 0 between two. */
static uint64_t cheapest(bool with_cpuid)
{
	uint64_t best = UINT64_MAX;
	bool was_on = irq_save();

	for (unsigned int i = 0; i < TRUST_TRIES; i++) {
		uint64_t t0 = rdtsc(), t1;

		if (with_cpuid)
			(void)cpuid(0, 0);
		t1 = rdtsc();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	irq_restore(was_on);
	return best;
}

void trust_check(void)
{
	char text[256];

	facts = (struct trust_facts){
		.tcg = poll_yield, /* set by cpu_identify() for QEMU TCG's vendor string */
		.rdtsc_cycles = cheapest(false),
		.cpuid_cycles = cheapest(true),
		.invariant_tsc = cpu.invariant_tsc,
		.kvm_stable_tsc = tsc_kvm_stable(),
		.skew_bound = tsc_skew_bound,
		.skew_consistent = tsc_skew_consistent,
		.ncpus = ncpus,
		.tsc_freq_guessed = tsc_freq_guessed,
		.tsc_khz = tsc_khz,
	};
	warnings = trust_assess(&facts);
	if (trust_ids(figure_ids, sizeof(figure_ids), warnings & TRUST_PER_FIGURE) < 0)
		figure_ids[0] = 0;
	kprintf("trust: RDTSC %lu cycles, CPUID %lu cycles (cheapest of %u)%s\n",
		(unsigned long)facts.rdtsc_cycles, (unsigned long)facts.cpuid_cycles, TRUST_TRIES,
		warnings ? "" : "; no warning");
	for (unsigned int w = 0; w < TRUST_COUNT; w++) {
		if ((warnings & (1u << w)) && trust_text(text, sizeof(text), w, &facts) >= 0)
			kprintf("warning: %s: %s\n", trust_id(w), text);
	}
}

const char *trust_figure_ids(void)
{
	return figure_ids[0] ? figure_ids : NULL;
}

void trust_env(struct json *j)
{
	char text[256];

	json_obj_begin(j, "trust");
	json_u64(j, "rdtsc_cycles", facts.rdtsc_cycles);
	json_u64(j, "cpuid_cycles", facts.cpuid_cycles);
	json_arr_begin(j, "warnings");
	for (unsigned int w = 0; w < TRUST_COUNT; w++) {
		if (!(warnings & (1u << w)) || trust_text(text, sizeof(text), w, &facts) < 0)
			continue;
		json_obj_begin(j, NULL);
		json_str(j, "id", trust_id(w));
		json_str(j, "text", text);
		json_bool(j, "per_figure", TRUST_PER_FIGURE & (1u << w));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

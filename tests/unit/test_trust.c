// SPDX-License-Identifier: GPL-2.0-only
/* lib/trust.c: which warnings a boot's facts raise, checked by hand. */
#include "lib/trust.h"
#include "tests/unit/check.h"

/* Hardware KVM on a modern host: RDTSC 30 cycles, stable TSC, tight skew. */
static const struct trust_facts kvm_hw = {
	.rdtsc_cycles = 30, .cpuid_cycles = 1200, .kvm_stable_tsc = true,
	.skew_bound = 120, .skew_consistent = true, .ncpus = 4,
};

TEST(hardware_kvm_raises_nothing)
{
	CHECK(trust_assess(&kvm_hw) == 0);
}

/* A PVM host (module kvm_pvm): RDTSC traps (measured: dry-run 15,236 cycles). */
TEST(rdtsc_threshold_is_exclusive)
{
	struct trust_facts f = kvm_hw;

	f.rdtsc_cycles = TRUST_RDTSC_MAX_CYCLES;
	CHECK(trust_assess(&f) == 0);
	f.rdtsc_cycles = TRUST_RDTSC_MAX_CYCLES + 1;
	CHECK(trust_assess(&f) == 1u << TRUST_RDTSC_EXITS);
	f.rdtsc_cycles = 7600;
	CHECK(trust_assess(&f) & (1u << TRUST_RDTSC_EXITS));
}

/* Under TCG the RDTSC rule gives way to tcg, which says more. */
TEST(tcg_replaces_rdtsc)
{
	struct trust_facts f = kvm_hw;

	f.tcg = true;
	f.rdtsc_cycles = 900;
	CHECK(trust_assess(&f) == 1u << TRUST_TCG);
}

/* Either bit is evidence of a constant-rate TSC; neither is a warning. */
TEST(stable_tsc_from_either_bit)
{
	struct trust_facts f = kvm_hw;

	f.kvm_stable_tsc = false;
	CHECK(trust_assess(&f) == 1u << TRUST_TSC_UNSTABLE);
	f.invariant_tsc = true;
	CHECK(trust_assess(&f) == 0);
}

/* Skew: over 1000 cycles or inconsistent; never with one CPU. */
TEST(skew)
{
	struct trust_facts f = kvm_hw;

	f.skew_bound = TRUST_SKEW_MAX_CYCLES;
	CHECK(trust_assess(&f) == 0);
	f.skew_bound = TRUST_SKEW_MAX_CYCLES + 1;
	CHECK(trust_assess(&f) == 1u << TRUST_TSC_SKEW);
	f.skew_bound = UINT64_MAX;
	f.skew_consistent = false;
	CHECK(trust_assess(&f) == 1u << TRUST_TSC_SKEW);
	f.ncpus = 1;
	CHECK(trust_assess(&f) == 0);
}

/* A guessed TSC frequency: on its own, whatever else holds, and per figure. */
TEST(tsc_freq_guessed)
{
	char buf[256];
	struct trust_facts f = kvm_hw;

	f.tsc_freq_guessed = true;
	f.tsc_khz = 5000000;
	CHECK(trust_assess(&f) == 1u << TRUST_TSC_FREQ_GUESSED);
	CHECK(TRUST_PER_FIGURE & (1u << TRUST_TSC_FREQ_GUESSED));
	/* A doubt about the clock, said once: +invtsc on one side changes no figure. */
	CHECK(!(TRUST_PER_FIGURE & (1u << TRUST_TSC_UNSTABLE)));
	CHECK(!(TRUST_PER_FIGURE & (1u << TRUST_TSC_SKEW)));
	f.tcg = true;
	CHECK(trust_assess(&f) == ((1u << TRUST_TCG) | (1u << TRUST_TSC_FREQ_GUESSED)));
	CHECK(trust_ids(buf, sizeof(buf), trust_assess(&f)) > 0);
	CHECK(__builtin_strcmp(buf, "tcg tsc-freq-guessed") == 0);
	CHECK(trust_text(buf, sizeof(buf), TRUST_TSC_FREQ_GUESSED, &f) > 0);
	CHECK(__builtin_strstr(buf, "5000000 kHz is assumed") != NULL);
	CHECK(__builtin_strstr(buf, "every ns figure") != NULL);
	f.tsc_freq_guessed = false;
	CHECK(!(trust_assess(&f) & (1u << TRUST_TSC_FREQ_GUESSED)));
}

TEST(ids_and_texts)
{
	char buf[256];
	struct trust_facts f = kvm_hw;

	CHECK(trust_ids(buf, sizeof(buf), 0) == 0 && buf[0] == 0);
	CHECK(trust_ids(buf, sizeof(buf), (1u << TRUST_TCG) | (1u << TRUST_TSC_SKEW)) > 0);
	CHECK(__builtin_strcmp(buf, "tcg tsc-skew") == 0);
	CHECK(trust_ids(buf, 5, 1u << TRUST_RDTSC_EXITS) < 0);
	CHECK(trust_id(TRUST_COUNT) == NULL);
	f.rdtsc_cycles = 7600;
	f.cpuid_cycles = 9100;
	CHECK(trust_text(buf, sizeof(buf), TRUST_RDTSC_EXITS, &f) > 0);
	CHECK(__builtin_strstr(buf, "RDTSC costs 7600 cycles") == buf);
	CHECK(__builtin_strstr(buf, "9100 here") != NULL);
	f.skew_bound = 4316;
	CHECK(trust_text(buf, sizeof(buf), TRUST_TSC_SKEW, &f) > 0);
	CHECK(__builtin_strstr(buf, "4316 cycles (over 1000): one-way figures under 43160") != NULL);
}

TEST_MAIN(T(hardware_kvm_raises_nothing), T(rdtsc_threshold_is_exclusive), T(tcg_replaces_rdtsc),
	  T(stable_tsc_from_either_bit), T(skew), T(tsc_freq_guessed), T(ids_and_texts))

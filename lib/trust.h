/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * When a figure cannot be trusted: the conditions the guest can see for
 * itself, checked once at boot from what it measured (harness/trust_probe.c).
 * Pure, host-tested (tests/unit/test_trust.c).
 *
 * The conditions, and the evidence behind each threshold:
 * - tcg: the hypervisor is QEMU's TCG ("TCGTCGTCGTCG"): every instruction
 *   is emulated, so cycles count the emulator's work.
 * - rdtsc-exits: the cheapest of 64 back-to-back RDTSC pairs took more
 *   than TRUST_RDTSC_MAX_CYCLES. An RDTSC that runs in the guest costs
 *   about 20-45 cycles on every x86 core of the last decade (Agner Fog's
 *   instruction tables: Skylake 25, Zen 2 ~37); a VM exit round trip costs
 *   several hundred at the very least, and far more in software: this
 *   project measured 15,000+ cycles for its empty timed region under a
 *   PVM-flavoured KVM, where RDTSC traps. 200 sits 4x above the first and
 *   well below the second. Under TCG the rule is not applied: tcg says more.
 *   (Not covered: under TSC scaling to a much lower guest rate a trapped
 *   RDTSC's cost, counted in guest cycles, shrinks and could pass as 200.)
 * - tsc-unstable: neither the invariant-TSC bit (CPUID 0x80000007 EDX[8])
 *   nor kvmclock's PVCLOCK_TSC_STABLE_BIT (KVM sets it while its master
 *   clock runs: the host's TSCs synchronized and constant-rate) says the
 *   TSC is stable, so cycles may not convert to a fixed time and two CPUs'
 *   TSCs may drift apart. QEMU's -cpu host hides invtsc unless asked
 *   (+invtsc) for the sake of migration, so kvmclock's flag is the usual
 *   evidence under KVM. Said once, in the env record, not on every figure:
 *   +invtsc on one side alone changes no figure and must not make two runs
 *   incomparable.
 * - tsc-skew: the TSC skew bound between CPUs exceeds TRUST_SKEW_MAX_CYCLES
 *   or was inconsistent: one-way figures (send TSC to handler TSC on
 *   another CPU) are then skipped unless ten times the bound, so most are.
 *
 * - tsc-freq-guessed: nothing gave the TSC frequency: no declared figure
 *   (Hyper-V MSR, leaf 0x40000010, CPUID 0x15, kvmclock), no PIT or ACPI PM
 *   timer to calibrate against, no CPUID 0x16 (QEMU microvm with
 *   pic=off,pit=off under TCG is such a machine). The kernel then assumes
 *   TSC_KHZ_GUESS (include/tsc.h): cycles stand, but every ns figure is off
 *   by the unknown ratio of the real frequency to the guess.
 *
 * tcg, rdtsc-exits and tsc-freq-guessed touch every timed figure (each
 * carries ns); tsc-skew only the one-way ones, which already SKIP
 * themselves, and tsc-unstable is a doubt about the clock rather than a
 * known error: both are said once, in the env record.
 */
#ifndef LIB_TRUST_H
#define LIB_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRUST_RDTSC_MAX_CYCLES 200
#define TRUST_SKEW_MAX_CYCLES 1000

enum trust_warning {
	TRUST_TCG,
	TRUST_RDTSC_EXITS,
	TRUST_TSC_UNSTABLE,
	TRUST_TSC_SKEW,
	TRUST_TSC_FREQ_GUESSED,
	TRUST_COUNT
};

/* The warnings that make every timed figure untrustworthy. */
#define TRUST_PER_FIGURE ((1u << TRUST_TCG) | (1u << TRUST_RDTSC_EXITS) | (1u << TRUST_TSC_FREQ_GUESSED))

struct trust_facts {
	bool tcg;
	uint64_t rdtsc_cycles;	/* cheapest back-to-back RDTSC pair */
	uint64_t cpuid_cycles;	/* cheapest CPUID leaf 0: what one intercepted instruction costs */
	bool invariant_tsc;
	bool kvm_stable_tsc;
	uint64_t skew_bound;	/* cycles; UINT64_MAX when inconsistent */
	bool skew_consistent;
	unsigned int ncpus;
	bool tsc_freq_guessed;	/* no source: tsc_khz is an assumption */
	uint64_t tsc_khz;	/* what the figures' ns are computed with */
};

/* Bit w set for each warning that applies. */
unsigned int trust_assess(const struct trust_facts *f);

/* "rdtsc-exits", ...; NULL outside the enum. */
const char *trust_id(enum trust_warning w);

/* One sentence saying what was seen and what it does to the figures. */
int trust_text(char *buf, size_t cap, enum trust_warning w, const struct trust_facts *f);

/* The ids of mask's warnings, blank-separated ("" for none). */
int trust_ids(char *buf, size_t cap, unsigned int mask);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/* When a figure cannot be trusted (lib/trust.h). */
#include "lib/trust.h"
#include "lib/error.h"
#include "lib/fmt.h"

static const char *const ids[TRUST_COUNT] = {
	[TRUST_TCG] = "tcg",
	[TRUST_RDTSC_EXITS] = "rdtsc-exits",
	[TRUST_TSC_UNSTABLE] = "tsc-unstable",
	[TRUST_TSC_SKEW] = "tsc-skew",
	[TRUST_TSC_FREQ_GUESSED] = "tsc-freq-guessed",
};

unsigned int trust_assess(const struct trust_facts *f)
{
	unsigned int w = 0;

	if (f->tcg)
		w |= 1u << TRUST_TCG;
	else if (f->rdtsc_cycles > TRUST_RDTSC_MAX_CYCLES)
		w |= 1u << TRUST_RDTSC_EXITS;
	if (!f->invariant_tsc && !f->kvm_stable_tsc)
		w |= 1u << TRUST_TSC_UNSTABLE;
	if (f->ncpus > 1 && (!f->skew_consistent || f->skew_bound > TRUST_SKEW_MAX_CYCLES))
		w |= 1u << TRUST_TSC_SKEW;
	if (f->tsc_freq_guessed)
		w |= 1u << TRUST_TSC_FREQ_GUESSED;
	return w;
}

const char *trust_id(enum trust_warning w)
{
	return (unsigned int)w < TRUST_COUNT ? ids[w] : NULL;
}

int trust_text(char *buf, size_t cap, enum trust_warning w, const struct trust_facts *f)
{
	switch (w) {
	case TRUST_TCG:
		return fmt_snprintf(
		    buf, cap,
		    "QEMU TCG emulates every instruction: the cycles count the emulator's work, not a CPU's; only behaviour counts");
	case TRUST_RDTSC_EXITS:
		return fmt_snprintf(
		    buf, cap,
		    "RDTSC costs %lu cycles (one that runs in the guest costs under 50; CPUID, always intercepted, %lu here): RDTSC costs like an exit, trapped or emulated, and every timed figure carries that cost",
		    (unsigned long)f->rdtsc_cycles, (unsigned long)f->cpuid_cycles);
	case TRUST_TSC_UNSTABLE:
		return fmt_snprintf(
		    buf, cap,
		    "no invariant TSC (CPUID 0x80000007 EDX[8]) and no kvmclock TSC-stable flag: cycles may not convert to a fixed time, nor agree between CPUs");
	case TRUST_TSC_SKEW:
		if (!f->skew_consistent)
			return fmt_snprintf(
			    buf, cap,
			    "the TSC skew between CPUs could not be bounded consistently: one-way figures are skipped");
		return fmt_snprintf(
		    buf, cap,
		    "the TSC skew bound between CPUs is %lu cycles (over %u): one-way figures under %lu cycles are skipped",
		    (unsigned long)f->skew_bound, TRUST_SKEW_MAX_CYCLES,
		    (unsigned long)f->skew_bound * 10);
	case TRUST_TSC_FREQ_GUESSED:
		return fmt_snprintf(
		    buf, cap,
		    "no source gave the TSC frequency (no declared figure, no PIT, no ACPI PM timer, no CPUID 0x16): %lu kHz is assumed, so every ns figure is off by an unknown ratio; cycles stand",
		    (unsigned long)f->tsc_khz);
	default:
		return fmt_snprintf(buf, cap, "?");
	}
}

int trust_ids(char *buf, size_t cap, unsigned int mask)
{
	size_t len = 0;

	if (cap)
		buf[0] = 0;
	for (unsigned int w = 0; w < TRUST_COUNT; w++) {
		int n;

		if (!(mask & (1u << w)))
			continue;
		n = fmt_snprintf(buf + len, cap - len, "%s%s", len ? " " : "", ids[w]);
		if (n < 0 || (size_t)n >= cap - len)
			return -E_NOSPC;
		len += (size_t)n;
	}
	return (int)len;
}

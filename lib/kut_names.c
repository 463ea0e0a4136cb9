// SPDX-License-Identifier: GPL-2.0-only
/*
 * ipibench results under kvm-unit-tests' x86/vmexit.c names (lib/kut_names.h).
 */
#include <stddef.h>
#include "lib/ipi_flags.h"
#include "lib/kut_names.h"

#define SHAPES 5

const char *const kut_names[KUT_NAMES] = {
    "self_ipi_sti_nop",
    "self_ipi_sti_hlt",
    "self_ipi_tpr",
    "self_ipi_tpr_sti_nop",
    "self_ipi_tpr_sti_hlt",
    "x2apic_self_ipi_sti_nop",
    "x2apic_self_ipi_sti_hlt",
    "x2apic_self_ipi_tpr",
    "x2apic_self_ipi_tpr_sti_nop",
    "x2apic_self_ipi_tpr_sti_hlt",
    "ipi",
    "ipi_halt",
};

/*
 * bench/self.c's variants; "icr-" before one means the x2APIC ICR self
 * shorthand (one WRMSR, as vmexit.c's apic_icr_write in x2APIC mode),
 * "icr2-" the xAPIC one written as vmexit.c writes it (ICR2, then ICR).
 */
static const char *const shapes[SHAPES] = {"sti-nop", "sti-hlt", "tpr", "tpr-sti-nop",
					   "tpr-sti-hlt"};

static int str_eq(const char *a, const char *b)
{
	return a && b && __builtin_strcmp(a, b) == 0;
}

static int shape_index(const char *variant)
{
	for (int i = 0; i < SHAPES; i++) {
		if (str_eq(variant, shapes[i]))
			return i;
	}
	return -1;
}

static int has_prefix(const char *s, const char *prefix)
{
	size_t n = __builtin_strlen(prefix);

	return s && __builtin_strlen(s) >= n && __builtin_memcmp(s, prefix, n) == 0;
}

static int self_index(const char *variant, uint32_t flags)
{
	int icr = has_prefix(variant, "icr-"), icr2 = has_prefix(variant, "icr2-");
	int s = shape_index(icr ? variant + 4 : icr2 ? variant + 5 : variant);

	if (s < 0)
		return -1;
	if (icr || icr2)
		return s; /* vmexit.c's apic_self_ipi: through the ICR */
	/*
	 * send_self is the SELF IPI register when flagged: x2apic_self_ipi_*.
	 * Else it is the xAPIC shorthand with the ICR write alone, one access
	 * short of vmexit.c's ICR2 and ICR: no row (the icr2- pass has it).
	 */
	return (flags & IPI_F_SELF_MSR) ? SHAPES + s : -1;
}

int kut_index(const char *bench, const char *metric, const char *variant, uint32_t flags,
	      uint32_t halt_gap_us)
{
	if (flags & IPI_F_HYPERCALL)
		return -1;
	if (str_eq(bench, "self") && str_eq(metric, "send-to-handler"))
		return self_index(variant, flags);
	/*
	 * vmexit.c's APs idle in HLT: ipi sends again as soon as the last call
	 * returned (the target may not be back in HLT yet), ipi_halt spins 2000
	 * cycles inside each timed iteration first. single-halt with halt_gap=0
	 * is the one; its vmexit-gap pass, which spins the same 2000 cycles in
	 * its region, the other. single-halt with a gap of microseconds is
	 * neither, and single (a spinning target) has no counterpart.
	 */
	if (!str_eq(metric, "round-trip") || !str_eq(bench, "single-halt"))
		return -1;
	if (str_eq(variant, "vmexit-gap"))
		return 2 * SHAPES + 1;
	return !halt_gap_us && (!variant || str_eq(variant, "none")) ? 2 * SHAPES : -1;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/kut_names.c: each of kvm-unit-tests x86/vmexit.c's IPI
 * tests (self_ipi_*, x2apic_self_ipi_*, ipi, ipi_halt) found from the record
 * that measures the same thing, and nothing else given a name.
 */
#include "lib/ipi_flags.h"
#include "lib/kut_names.h"
#include "tests/unit/check.h"

#define XAPIC	  (IPI_F_WAIT_BEFORE)
#define X2APIC	  (IPI_F_FENCE | IPI_F_SELF_MSR)
#define HYPERCALL (IPI_F_HYPERCALL)

static const char *name(const char *bench, const char *metric, const char *variant, uint32_t flags)
{
	int i = kut_index(bench, metric, variant, flags, 50);

	return i < 0 ? "-" : kut_names[i];
}

TEST(self_on_xapic_writes_icr2_and_icr)
{
	/* vmexit.c's apic_icr_write in xAPIC mode: ICR2, then ICR (bench/self.c's icr2-*) */
	CHECK_STR(name("self", "send-to-handler", "icr2-sti-nop", XAPIC), "self_ipi_sti_nop");
	CHECK_STR(name("self", "send-to-handler", "icr2-tpr-sti-hlt", XAPIC),
		  "self_ipi_tpr_sti_hlt");
	CHECK_STR(name("self", "send-to-handler", "icr2-tpr", 0), "self_ipi_tpr");
	/* the one-write shorthand is one access short of it: no row */
	CHECK_STR(name("self", "send-to-handler", "sti-nop", XAPIC), "-");
	CHECK_STR(name("self", "send-to-handler", "tpr-sti-hlt", XAPIC), "-");
	CHECK_STR(name("self", "send-to-handler", "tpr", 0), "-");
}

TEST(self_on_x2apic_has_both)
{
	CHECK_STR(name("self", "send-to-handler", "sti-hlt", X2APIC), "x2apic_self_ipi_sti_hlt");
	CHECK_STR(name("self", "send-to-handler", "tpr-sti-nop", X2APIC),
		  "x2apic_self_ipi_tpr_sti_nop");
	CHECK_STR(name("self", "send-to-handler", "icr-sti-hlt", X2APIC), "self_ipi_sti_hlt");
	CHECK_STR(name("self", "send-to-handler", "icr-tpr", X2APIC), "self_ipi_tpr");
}

TEST(round_trips)
{
	/* vmexit.c's targets idle in HLT: a spinning target is not its ipi */
	CHECK_STR(name("single", "round-trip", "none", X2APIC), "-");
	/* ipi_halt: the pass with vmexit.c's 2000-cycle spin, whatever halt_gap is */
	CHECK_STR(name("single-halt", "round-trip", "vmexit-gap", XAPIC), "ipi_halt");
	CHECK_STR(kut_names[kut_index("single-halt", "round-trip", "vmexit-gap", X2APIC, 0)],
		  "ipi_halt");
	/* a gap of microseconds before each send is neither of vmexit.c's rows */
	CHECK_STR(name("single-halt", "round-trip", "none", XAPIC), "-");
	CHECK_STR(name("single-halt", "one-way", "none", X2APIC), "-");
	/* no settling time: sent again as soon as the last one came back */
	CHECK_STR(kut_names[kut_index("single-halt", "round-trip", "none", XAPIC, 0)], "ipi");
	CHECK_EQ(kut_index("single-halt", "round-trip", "none", HYPERCALL, 0), -1);
	CHECK_EQ(kut_index("single-halt", "round-trip", "vmexit-gap", HYPERCALL, 0), -1);
}

TEST(no_counterpart)
{
	CHECK_STR(name("self", "send-to-handler", "sti-nop", HYPERCALL), "-");
	CHECK_STR(name("single", "round-trip", "none", HYPERCALL), "-");
	CHECK_STR(name("self", "send-to-handler", "icr-", X2APIC), "-");
	CHECK_STR(name("self", "send-to-handler", "icr2-", XAPIC), "-");
	CHECK_STR(name("self", "send-to-handler", "icr2sti-nop", XAPIC), "-");
	CHECK_STR(name("self", "send-to-handler", "sti", X2APIC), "-");
	CHECK_STR(name("self", "send-to-handler", NULL, X2APIC), "-");
	CHECK_STR(name("broadcast", "send", "shorthand", X2APIC), "-");
	CHECK_STR(name("send-cost", "send", "none", XAPIC), "-");
	CHECK_STR(name(NULL, NULL, NULL, 0), "-");
}

TEST(names_are_distinct)
{
	for (int i = 0; i < KUT_NAMES; i++) {
		const char *a = kut_names[i];

		CHECK(a != NULL);
		for (int j = i + 1; a && j < KUT_NAMES; j++)
			CHECK(kut_names[j] && strcmp(a, kut_names[j]) != 0);
	}
}

TEST_MAIN(T(self_on_xapic_writes_icr2_and_icr), T(self_on_x2apic_has_both), T(round_trips),
	  T(no_counterpart), T(names_are_distinct))

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/ipi_flags.c: the "flags" text of each backend as the
 * records print it (docs/record-fields.md, "Flags"), and snprintf-like
 * truncation.
 */
#include "lib/error.h"
#include "lib/ipi_flags.h"
#include "tests/unit/check.h"

static const char *text(uint32_t flags, bool x2apic, const char *words)
{
	static char buf[160];

	CHECK(ipi_flags_text(flags, x2apic, words, buf, sizeof(buf)) == (int)strlen(buf));
	return buf;
}

TEST(xapic_backends)
{
	CHECK_STR(text(IPI_F_WAIT_BEFORE, false, NULL),
		  "dest=physical icr-wait=before set=loop self=shorthand");
	CHECK_STR(text(IPI_F_WAIT_BEFORE | IPI_F_LOGICAL | IPI_F_SET_ONE, false, NULL),
		  "dest=logical icr-wait=before set=one-write self=shorthand");
	CHECK_STR(text(IPI_F_WAIT_AFTER, false, NULL),
		  "dest=physical icr-wait=after set=loop self=shorthand");
	/* hv-icr: an xAPIC-style backend that never polls, with its own words */
	CHECK_STR(text(0, false, "icr=hv-msr eoi=hv-msr"),
		  "dest=physical icr-wait=never set=loop self=shorthand icr=hv-msr eoi=hv-msr");
}

TEST(x2apic_backends)
{
	/* Intel and unknown vendors: one fence per send call, however many writes it makes */
	CHECK_STR(text(IPI_F_FENCE | IPI_F_SELF_MSR, true, NULL),
		  "dest=physical fence=mfence+lfence fence-per=send set=loop self=self-ipi-msr "
		  "self-fence=none");
	CHECK_STR(text(IPI_F_FENCE | IPI_F_SELF_MSR | IPI_F_LOGICAL | IPI_F_SET_CLUSTER, true, ""),
		  "dest=logical fence=mfence+lfence fence-per=send set=write-per-cluster "
		  "self=self-ipi-msr self-fence=none");
	/* AMD and Hygon: the tables without IPI_F_FENCE */
	CHECK_STR(text(IPI_F_SELF_MSR, true, NULL),
		  "dest=physical fence=none set=loop self=self-ipi-msr self-fence=none");
	CHECK_STR(text(IPI_F_SELF_MSR | IPI_F_LOGICAL | IPI_F_SET_CLUSTER, true, NULL),
		  "dest=logical fence=none set=write-per-cluster self=self-ipi-msr self-fence=none");
	/* the xAPIC wait flags mean nothing in x2APIC mode */
	CHECK_STR(text(IPI_F_WAIT_BEFORE, true, NULL),
		  "dest=physical fence=none set=loop self=shorthand");
}

TEST(fence_by_vendor)
{
	/* Linux clears X86_FEATURE_APIC_MSRS_FENCE on AMD and Hygon only */
	CHECK(!ipi_x2apic_vendor_fences("AuthenticAMD"));
	CHECK(!ipi_x2apic_vendor_fences("HygonGenuine"));
	CHECK(ipi_x2apic_vendor_fences("GenuineIntel"));
	CHECK(ipi_x2apic_vendor_fences("CentaurHauls"));
	CHECK(ipi_x2apic_vendor_fences("  Shanghai  "));
	/* all 12 characters count, and nothing after them */
	CHECK(ipi_x2apic_vendor_fences("AuthenticAMX"));
	CHECK(ipi_x2apic_vendor_fences("authenticAMD"));
	CHECK(!ipi_x2apic_vendor_fences("AuthenticAMD-and-more"));
	CHECK(ipi_x2apic_vendor_fences("\0\0\0\0\0\0\0\0\0\0\0"));
}

TEST(hypercall_backends)
{
	/* the set and self words of the APIC paths never appear */
	CHECK_STR(text(IPI_F_HYPERCALL | IPI_F_SET_ONE | IPI_F_SELF_MSR, true,
		       "call=kvm-hc-send-ipi set=call-per-128-ids hv-guest-os-id=0"),
		  "dest=physical send=hypercall self=hypercall call=kvm-hc-send-ipi "
		  "set=call-per-128-ids hv-guest-os-id=0");
	CHECK_STR(text(IPI_F_HYPERCALL, false, NULL),
		  "dest=physical send=hypercall self=hypercall");
}

/* NMI backends: delivery=nmi, and the self and all words the ICR rules force. */
TEST(nmi_backends)
{
	CHECK_STR(text(IPI_F_WAIT_BEFORE | IPI_F_NMI, false, NULL),
		  "dest=physical delivery=nmi icr-wait=before set=loop self=to-own-id "
		  "all=allbutself+self");
	CHECK_STR(text(IPI_F_FENCE | IPI_F_NMI, true, NULL),
		  "dest=physical delivery=nmi fence=mfence+lfence fence-per=send set=loop "
		  "self=to-own-id all=allbutself+self");
	/* kvm-pv-ipi-nmi: the hypercall words, then the backend's */
	CHECK_STR(text(IPI_F_HYPERCALL | IPI_F_NMI, true, "call=kvm-hc-send-ipi"),
		  "dest=physical delivery=nmi send=hypercall self=hypercall call=kvm-hc-send-ipi");
	/* xen-evtchn: the upcall, then the hypercall words */
	CHECK_STR(text(IPI_F_HYPERCALL | IPI_F_UPCALL, true, "call=evtchnop-send"),
		  "dest=physical delivery=upcall send=hypercall self=hypercall call=evtchnop-send");
	/* Fixed backends say nothing of delivery, as before */
	CHECK(strstr(text(IPI_F_WAIT_BEFORE, false, NULL), "delivery") == NULL);
}

TEST(truncation)
{
	char buf[16];
	const char *full = "dest=physical icr-wait=before set=loop self=shorthand";

	memset(buf, 'x', sizeof(buf));
	CHECK_EQ(ipi_flags_text(IPI_F_WAIT_BEFORE, false, NULL, buf, sizeof(buf)), -E_NOSPC);
	CHECK_STR(buf, "dest=physical i");
	/* exactly one byte short of the NUL */
	char fit[54];

	CHECK_EQ(strlen(full), 53);
	CHECK_EQ(ipi_flags_text(IPI_F_WAIT_BEFORE, false, NULL, fit, 53), -E_NOSPC);
	CHECK_STR(fit, "dest=physical icr-wait=before set=loop self=shorthan");
	CHECK_EQ(ipi_flags_text(IPI_F_WAIT_BEFORE, false, NULL, fit, 54), 53);
	CHECK_STR(fit, full);
	/* size 0 writes nothing */
	CHECK_EQ(ipi_flags_text(0, false, NULL, NULL, 0), -E_NOSPC);
	/* a cut exactly at a separator leaves no trailing space */
	CHECK_EQ(ipi_flags_text(0, false, NULL, buf, 14), -E_NOSPC);
	CHECK_STR(buf, "dest=physical");
}

TEST_MAIN(T(xapic_backends), T(x2apic_backends), T(nmi_backends), T(fence_by_vendor), T(hypercall_backends),
	  T(truncation))

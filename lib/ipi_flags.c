// SPDX-License-Identifier: GPL-2.0-only
/*
 * The text form of the IPI delivery flags (lib/ipi_flags.h).
 */
#include "lib/error.h"
#include "lib/ipi_flags.h"

/* Appends word (and a separating space) at *len; *len also counts what did not fit. */
static void flags_put(char *buf, size_t size, size_t *len, const char *word)
{
	if (*len && *len + 1 < size)
		buf[*len] = ' ';
	if (*len)
		(*len)++;
	for (; *word; word++, (*len)++) {
		if (*len + 1 < size)
			buf[*len] = *word;
	}
	if (size)
		buf[*len < size ? *len : size - 1] = 0;
}

static const char *set_word(uint32_t flags)
{
	if (flags & IPI_F_SET_ONE)
		return "set=one-write";
	if (flags & IPI_F_SET_CLUSTER)
		return "set=write-per-cluster";
	return "set=loop";
}

static const char *order_word(uint32_t flags, bool x2apic)
{
	if (x2apic)
		return flags & IPI_F_FENCE ? "fence=mfence+lfence fence-per=send" : "fence=none";
	if (flags & IPI_F_WAIT_BEFORE)
		return "icr-wait=before";
	return flags & IPI_F_WAIT_AFTER ? "icr-wait=after" : "icr-wait=never";
}

bool ipi_x2apic_vendor_fences(const char *vendor)
{
	return __builtin_memcmp(vendor, "AuthenticAMD", 12) != 0 &&
	       __builtin_memcmp(vendor, "HygonGenuine", 12) != 0;
}

int ipi_flags_text(uint32_t flags, bool x2apic, const char *words, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = 0;
	flags_put(buf, size, &len, flags & IPI_F_LOGICAL ? "dest=logical" : "dest=physical");
	if (flags & IPI_F_NMI)
		flags_put(buf, size, &len, "delivery=nmi");
	if (flags & IPI_F_UPCALL)
		flags_put(buf, size, &len, "delivery=upcall");
	if (flags & IPI_F_HYPERCALL) {
		/* The set and the call are in the backend's own words. */
		flags_put(buf, size, &len, "send=hypercall self=hypercall");
	} else {
		flags_put(buf, size, &len, order_word(flags, x2apic));
		flags_put(buf, size, &len, set_word(flags));
		/* SDM 11.12.3's fence orders stores before an ICR write that publishes
		 * them; the SELF IPI register sends without it, as Linux does. */
		/* SDM "Valid combinations for the ICR": the self shorthand (and the
		 * x2APIC SELF IPI register) and all-including-self are Fixed only. */
		if (flags & IPI_F_NMI)
			flags_put(buf, size, &len, "self=to-own-id all=allbutself+self");
		else
			flags_put(buf, size, &len,
				  flags & IPI_F_SELF_MSR ? "self=self-ipi-msr self-fence=none"
							 : "self=shorthand");
	}
	if (words && *words)
		flags_put(buf, size, &len, words);
	return len < size ? (int)len : -E_NOSPC;
}

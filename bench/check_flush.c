// SPDX-License-Identifier: GPL-2.0-only
/*
 * The suite's flush checks (bench/check.c runs them after the backends):
 * the Hyper-V TLB-flush hypercalls, which send nothing the delivery
 * counters could see, each call in each form, from CPU 0 to every other
 * CPU, must return success. Checked when a Hyper-V hypercall backend is
 * among backends=.
 */
#include "bench/check.h"
#include "include/bench.h"
#include "include/hyperv.h"
#include "include/ipi.h"
#include "include/percpu.h"
#include "include/status.h"
#include "include/x86.h"
#include "lib/cpuset.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/pv_result.h"

#define FLUSH_CHECK_PAGES 2 /* List calls: two elements, two reps */
#define HV_CALL_BACKENDS                                                                           \
	(1ull << IPI_BACKEND_HV_IPI | 1ull << IPI_BACKEND_HV_IPI_SLOW |                            \
	 1ull << IPI_BACKEND_HV_IPI_EX | 1ull << IPI_BACKEND_HV_IPI_EX_XMM)

/* A page of the kernel image: mapped, and flushing it is harmless. */
static char check_flush_page;

static void flush_check_one(enum hv_flush_call f, enum hv_form form, const struct cpuset *set)
{
	const char *label = form == HV_FORM_XMM ? "hv-flush-xmm" : "hv-flush";
	const char *skip = hv_flush_probe(f, form);
	struct hv_call *c = hv_call_buf();
	struct verdict v = {0};
	char name[CHECK_NAME_LEN], cpus[48], why[CHECK_NAME_LEN];
	uint64_t va = (uint64_t)(uintptr_t)&check_flush_page & ~0xfffull;
	int err = skip ? 0 : hv_flush_encode(c, f, form, read_cr3(), set, va, FLUSH_CHECK_PAGES);

	cpuset_format(set, cpus, sizeof(cpus));
	fmt_snprintf(name, sizeof(name), "%s: %s (%s)%s, CPU 0 -> CPUs {%s}", label,
		     hv_call_name(hv_flush_code(f)), hv_form_name(err || skip ? form : c->form),
		     hv_flush_is_list(f) ? ", 2 pages" : "", cpus);
	if (skip) {
		tap_skip(name, skip);
		return;
	}
	if (err)
		verdict_add(&v, "encoding failed (%s)", error_name(err));
	else if (hv_call_run(c, why, sizeof(why)))
		verdict_add(&v, "%s", why);
	tap_verdict(name, &v, err ? STATUS_ERROR : STATUS_FAILURE);
}

/*
 * The hypercall interface is switched on for these checks and back off if it
 * was off (the backend in force may be kvm-pv-ipi, which needs it off). The
 * APs idle in their mailboxes meanwhile: none can be inside a hypercall.
 */
static void check_hv_flush(void)
{
	static const enum hv_form forms[] = {HV_FORM_SLOW, HV_FORM_XMM};
	const char *why = hv_probe(HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_FLUSH);
	struct verdict v = {0};
	struct cpuset set;
	bool was_on;

	if (why) {
		tap_skip("hv-flush: every flush hypercall", why);
		tap_skip("hv-flush-xmm: every flush hypercall", why);
		return;
	}
	was_on = hv_calls_enabled();
	if (hv_calls_on("the flush checks")) {
		verdict_add(&v, "the hypercall interface did not come up (above)");
		tap_verdict("hv-flush: enable the hypercall interface", &v, STATUS_FAILURE);
		return;
	}
	cpuset_fill(&set, ncpus);
	if (ncpus > 1)
		cpuset_remove(&set, 0);
	for (unsigned int i = 0; i < ARRAY_SIZE(forms); i++) {
		for (enum hv_flush_call f = HV_FLUSH_SPACE; f < HV_FLUSH_CALLS; f++)
			flush_check_one(f, forms[i], &set);
	}
	if (!was_on)
		hv_calls_off("after the flush checks, as they found it");
}

void check_flush(uint64_t backends)
{
	/* Flush calls come with the Hyper-V hypercall backends: checked when one is chosen. */
	if (backends & HV_CALL_BACKENDS)
		check_hv_flush();
}

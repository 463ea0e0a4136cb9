// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TLB-flush hypercalls (docs/hyperv-abi.md 3.5; TLFS
 * HvCallFlushVirtualAddressSpace[Ex].md, HvCallFlushVirtualAddressList[Ex].md)
 * as flush ops (include/flush.h): family hv-flush, one table per call and
 * form, what each needs, and their inputs for a set of CPUs and a run of
 * pages.
 *
 * None has a register-only fast form: the processor mask or VP set follows
 * RDX (address space) and R8 (flags) in XMM0, so "fast" means XMM-fast here
 * and needs CPUID 0x40000003 EDX[4]; an XMM request that does not fit RDX,
 * R8 and XMM0..5 is encoded slow (FLUSH_FELL_BACK, variant "-as-slow").
 * The non-Ex calls address VP indices 0-63 only. With FLUSH_EACH_PAGE a
 * List call names one element (one rep) per page, as a caller flushing
 * scattered pages would (the suite's checks: several reps); without, it
 * names a run of pages as Linux's hyperv_flush_tlb_multi() does
 * (arch/x86/hyperv/mmu.c, fill_gva_list): one element per 4096 pages (the
 * flush benchmark). The extended range format (hv-tlbflush-ext, EDX[14])
 * is not used, since KVM decodes no difference. Flags are 0 and the
 * address space is CR3: KVM ignores the address space and reads only
 * HV_FLUSH_ALL_PROCESSORS (hyperv.c kvm_hv_flush_tlb()). Linux's
 * hyperv_flush_tlb_multi() picks the non-Ex calls only when every target
 * is below VP 64, sets HV_FLUSH_ALL_PROCESSORS when it flushes every
 * present CPU, issues slow calls from a per-CPU input page, and strips
 * PCID bits from CR3.
 *
 * flush() does per call what Linux does per call: the targets' VP indices,
 * the input, the call and its status check; prepare() encodes the same
 * once first, to check the input and learn its form, and reads the address
 * space (Linux reads it from its mm, in memory, not from CR3 per call).
 * begin() turns the hypercall interface on (the guest OS ID: partition
 * wide, hyperv.h) when it is off, and end() back off then: the backend in
 * force may be kvm-pv-ipi, which needs it off.
 */
#include "include/flush.h"
#include "include/hyperv.h"
#include "include/percpu.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/pv_result.h"

enum hv_flush_call {
	HV_FLUSH_SPACE,	   /* HvCallFlushVirtualAddressSpace */
	HV_FLUSH_LIST,	   /* HvCallFlushVirtualAddressList, rep */
	HV_FLUSH_SPACE_EX, /* ...SpaceEx, VP set */
	HV_FLUSH_LIST_EX,  /* ...ListEx, rep and VP set */
	HV_FLUSH_CALLS
};

#define HV_GVA_PAGE (1ull << HV_GVA_PAGE_SHIFT)

struct hv_flush_desc {
	uint16_t code;
	bool list, ex;
};

static const struct hv_flush_desc hv_flushes[HV_FLUSH_CALLS] = {
    [HV_FLUSH_SPACE] = {HV_CALL_FLUSH_SPACE, false, false},
    [HV_FLUSH_LIST] = {HV_CALL_FLUSH_LIST, true, false},
    [HV_FLUSH_SPACE_EX] = {HV_CALL_FLUSH_SPACE_EX, false, true},
    [HV_FLUSH_LIST_EX] = {HV_CALL_FLUSH_LIST_EX, true, true},
};

/* The BSP encodes every flush (suite and benchmark): one scratch list suffices. */
static uint32_t flush_vps[MAX_CPUS];

static bool hv_flush_is_list(enum hv_flush_call f)
{
	return hv_flushes[f].list;
}

/* NULL when f can run here in form (SLOW or XMM), else why not (CPUID bit, -cpu flag). */
static const char *hv_flush_probe(enum hv_flush_call f, enum hv_form form)
{
	const struct hv_flush_desc *d = &hv_flushes[f];
	unsigned int needs = HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_FLUSH;
	const char *why;

	if (form == HV_FORM_FAST)
		return "the flush calls have no register-only form (their fast form is XMM-fast)";
	if (d->ex)
		needs |= HV_NEED_EX;
	if (form == HV_FORM_XMM)
		needs |= HV_NEED_XMM;
	why = hv_probe(needs);
	if (why)
		return why;
	return hv_vp_check(d->ex ? HV_VPSET_MAX_VP : HV_SEND_IPI_MAX_VP, hv_call_name(d->code));
}

/* Encodes f with the GVA list given (List calls) or none (Space calls). */
static int hv_flush_encode_gvas(struct hv_call *c, enum hv_flush_call f, enum hv_form form,
				uint64_t cr3, const struct cpuset *targets, const uint64_t *gvas,
				const uint32_t *extra, size_t ngva)
{
	size_t n = hv_vps_of(targets, flush_vps);

	switch (f) {
	case HV_FLUSH_SPACE:
		return hv_encode_flush_space(c, form, cr3, 0, flush_vps, n);
	case HV_FLUSH_SPACE_EX:
		return hv_encode_flush_space_ex(c, form, cr3, 0, flush_vps, n);
	case HV_FLUSH_LIST:
		return hv_encode_flush_list(c, form, cr3, 0, flush_vps, n, gvas, extra, ngva);
	case HV_FLUSH_LIST_EX:
		return hv_encode_flush_list_ex(c, form, cr3, 0, flush_vps, n, gvas, extra, ngva);
	default:
		return -E_INVAL;
	}
}

/*
 * Encode into c a flush of address space cr3 on the CPUs of targets: a List
 * call names `pages` pages from va, one element (one rep) each; a Space
 * call flushes the whole space and ignores va and pages. An XMM request that
 * does not fit RDX, R8 and XMM0..5 is encoded SLOW (c->form says so). 0, or
 * the encoder's error.
 */
static int hv_flush_encode(struct hv_call *c, enum hv_flush_call f, enum hv_form form, uint64_t cr3,
			   const struct cpuset *targets, uint64_t va, unsigned int pages)
{
	uint64_t gvas[HV_FLUSH_MAX_GVAS];

	if (hv_flush_is_list(f) && (pages == 0 || pages > HV_FLUSH_MAX_GVAS))
		return -E_RANGE;
	for (unsigned int i = 0; hv_flush_is_list(f) && i < pages; i++)
		gvas[i] = va + i * HV_GVA_PAGE;
	return hv_flush_encode_gvas(c, f, form, cr3, targets, gvas, NULL, pages);
}

/*
 * The same, but a List call names the run as Linux's fill_gva_list()
 * (arch/x86/hyperv/mmu.c) lists [start, end): one element per 4096 pages,
 * the page-aligned GVA with the number of additional pages in its low 12
 * bits.
 */
static int hv_flush_encode_run(struct hv_call *c, enum hv_flush_call f, enum hv_form form,
			       uint64_t cr3, const struct cpuset *targets, uint64_t va,
			       unsigned int pages)
{
	const unsigned int unit = HV_GVA_EXTRA_PAGES_MAX + 1;
	uint64_t gvas[HV_FLUSH_MAX_GVAS];
	uint32_t extra[HV_FLUSH_MAX_GVAS];
	size_t n = 0;

	if (hv_flush_is_list(f) && (pages == 0 || pages > HV_FLUSH_MAX_GVAS * unit))
		return -E_RANGE;
	for (unsigned int done = 0; hv_flush_is_list(f) && done < pages; done += unit, n++) {
		gvas[n] = va + (uint64_t)done * HV_GVA_PAGE;
		extra[n] = (pages - done < unit ? pages - done : unit) - 1;
	}
	return hv_flush_encode_gvas(c, f, form, cr3, targets, gvas, extra, n);
}

/* --- as flush ops -------------------------------------------------------------------------- */

typedef int (*hv_flush_encoder)(struct hv_call *c, enum hv_flush_call f, enum hv_form form,
				uint64_t cr3, const struct cpuset *targets, uint64_t va,
				unsigned int pages);

/* The request prepare() made, which flush() encodes and issues again. */
static struct {
	struct hv_call *c; /* the flushing CPU's call buffer */
	hv_flush_encoder encode;
	uint64_t cr3;
	const struct cpuset *targets;
	uint64_t va;
	unsigned int pages;
	char *why;
	size_t why_size;
} hv_req;
static bool hv_flush_was_on;
/* The stall watchdog's describer of this CPU's hypercalls before begin(), for end(). */
static watch_describe_fn hv_flush_calls_were;

static const char *hv_flush_family_probe(void)
{
	return hv_probe(HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_FLUSH);
}

/*
 * On the BSP, which makes every flush call: from here to end() the stall
 * watchdog describes its hypercalls as these (hv_describe_call reads the
 * input prepare() and each flush() encode into its call buffer), whatever
 * the IPI backend in force (kvm-pv-ipi's would misname them).
 */
static int hv_flush_begin(const char *who)
{
	int err;

	hv_flush_was_on = hv_calls_enabled();
	err = hv_calls_on(who);
	if (!err)
		hv_flush_calls_were = watch_calls(hv_describe_call);
	return err;
}

static void hv_flush_end(const char *why)
{
	(void)watch_calls(hv_flush_calls_were);
	if (!hv_flush_was_on)
		hv_calls_off(why);
}

/* An input the encoder refused (ours, never the hypervisor's doing). */
static __attribute__((noinline, cold)) int hv_flush_refused(int err, char *why, size_t size)
{
	fmt_snprintf(why, size, "%s", error_name(err));
	return -E_INVAL;
}

static int hv_flush_prepare(enum hv_flush_call f, enum hv_form form, const struct cpuset *targets,
			    uint64_t va, unsigned int pages, unsigned int flags, char *why,
			    size_t size)
{
	int err;

	hv_req.c = hv_call_buf();
	hv_req.encode = (flags & FLUSH_EACH_PAGE) ? hv_flush_encode : hv_flush_encode_run;
	hv_req.cr3 = read_cr3();
	hv_req.targets = targets;
	hv_req.va = va;
	hv_req.pages = pages;
	hv_req.why = why;
	hv_req.why_size = size;
	err = hv_req.encode(hv_req.c, f, form, hv_req.cr3, targets, va, pages);
	if (err)
		return hv_flush_refused(err, why, size);
	return hv_req.c->form != form ? FLUSH_FELL_BACK : 0;
}

/*
 * Timed by the caller: the encoding (VP indices, input) and the call with
 * its status check. 0; -E_INVAL (the encoder refused), or hv_call_run()'s
 * -E_PROTO / -E_NOSPC (the hypervisor's answer, described in why).
 */
static inline __attribute__((always_inline)) int hv_flush_issue(enum hv_flush_call f,
								enum hv_form form)
{
	struct hv_call *c = hv_req.c;
	int err = hv_req.encode(c, f, form, hv_req.cr3, hv_req.targets, hv_req.va, hv_req.pages);

	if (err)
		return hv_flush_refused(err, hv_req.why, hv_req.why_size);
	return hv_call_run(c, hv_req.why, hv_req.why_size);
}

const struct flush_family flush_hv = {
    .name = "hv-flush",
    .what = "the hypercall interface",
    .checked_with = (const char *const[]){ "hv-ipi", "hv-ipi-slow", "hv-ipi-ex", "hv-ipi-ex-xmm",
					   NULL },
    .probe = hv_flush_family_probe,
    .begin = hv_flush_begin,
    .end = hv_flush_end,
};

/*
 * One table per call and form, the call and form constants in its
 * functions. An XMM-fast table falls back to slow when the input does not
 * fit the registers.
 */
#define HV_FLUSH_OPS(id, f, frm, stem, call, range)                                                \
	static const char *hv_flush_probe_##id(void)                                               \
	{                                                                                          \
		return hv_flush_probe(f, frm);                                                     \
	}                                                                                          \
	static int hv_flush_prepare_##id(const struct cpuset *targets, uint64_t va,                \
					 unsigned int pages, unsigned int flags, char *why,        \
					 size_t size)                                              \
	{                                                                                          \
		return hv_flush_prepare(f, frm, targets, va, pages, flags, why, size);             \
	}                                                                                          \
	static int hv_flush_##id(void)                                                             \
	{                                                                                          \
		return hv_flush_issue(f, frm);                                                     \
	}                                                                                          \
	const struct flush_ops flush_hv_##id = {                                                   \
	    .name = (stem),                                                                        \
	    .label = (frm) == HV_FORM_XMM ? "hv-flush-xmm" : "hv-flush",                           \
	    .what = (call),                                                                        \
	    .form = (frm) == HV_FORM_XMM ? "XMM-fast" : "slow",                                    \
	    .fallback = (frm) == HV_FORM_XMM ? "slow" : NULL,                                      \
	    .words = "input=encoded-in-region via=hypercall-page",                                 \
	    .flags = (range) ? 0 : FLUSH_F_WHOLE,                                                  \
	    .family = &flush_hv,                                                                   \
	    .probe = hv_flush_probe_##id,                                                          \
	    .prepare = hv_flush_prepare_##id,                                                      \
	    .flush = hv_flush_##id,                                                                \
	}

#define HV_SPACE    "HvCallFlushVirtualAddressSpace"
#define HV_LIST	    "HvCallFlushVirtualAddressList"
#define HV_SPACE_EX "HvCallFlushVirtualAddressSpaceEx"
#define HV_LIST_EX  "HvCallFlushVirtualAddressListEx"

HV_FLUSH_OPS(space_slow, HV_FLUSH_SPACE, HV_FORM_SLOW, "space-slow", HV_SPACE, false);
HV_FLUSH_OPS(space_xmm, HV_FLUSH_SPACE, HV_FORM_XMM, "space-xmm", HV_SPACE, false);
HV_FLUSH_OPS(list_slow, HV_FLUSH_LIST, HV_FORM_SLOW, "list-slow", HV_LIST, true);
HV_FLUSH_OPS(list_xmm, HV_FLUSH_LIST, HV_FORM_XMM, "list-xmm", HV_LIST, true);
HV_FLUSH_OPS(space_ex_slow, HV_FLUSH_SPACE_EX, HV_FORM_SLOW, "space-ex-slow", HV_SPACE_EX, false);
HV_FLUSH_OPS(space_ex_xmm, HV_FLUSH_SPACE_EX, HV_FORM_XMM, "space-ex-xmm", HV_SPACE_EX, false);
HV_FLUSH_OPS(list_ex_slow, HV_FLUSH_LIST_EX, HV_FORM_SLOW, "list-ex-slow", HV_LIST_EX, true);
HV_FLUSH_OPS(list_ex_xmm, HV_FLUSH_LIST_EX, HV_FORM_XMM, "list-ex-xmm", HV_LIST_EX, true);

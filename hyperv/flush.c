// SPDX-License-Identifier: GPL-2.0-only
/*
 * The TLB-flush hypercalls (docs/hyperv-abi.md 3.5; TLFS
 * HvCallFlushVirtualAddressSpace[Ex].md, HvCallFlushVirtualAddressList[Ex].md):
 * what each needs, and their inputs for a set of CPUs and a run of pages.
 *
 * None has a register-only fast form: the processor mask or VP set follows
 * RDX (address space) and R8 (flags) in XMM0, so "fast" means XMM-fast here
 * and needs CPUID 0x40000003 EDX[4]. The non-Ex calls address VP indices
 * 0-63 only. hv_flush_encode() lists one element (one rep) per page, as a
 * caller flushing scattered pages would (the suite's checks: several reps);
 * hv_flush_encode_run() lists a run of pages as Linux does, one element per
 * 4096 pages (the flush benchmark). The extended range format
 * (hv-tlbflush-ext, EDX[14]) is not used, since KVM decodes no difference.
 */
#include "include/hyperv.h"
#include "include/percpu.h"
#include "lib/error.h"
#include "lib/pv_result.h"

#define HV_GVA_PAGE (1ull << HV_GVA_PAGE_SHIFT)

struct hv_flush_desc {
	uint16_t code;
	const char *word;
	bool list, ex;
};

static const struct hv_flush_desc hv_flushes[HV_FLUSH_CALLS] = {
    [HV_FLUSH_SPACE] = {HV_CALL_FLUSH_SPACE, "space", false, false},
    [HV_FLUSH_LIST] = {HV_CALL_FLUSH_LIST, "list", true, false},
    [HV_FLUSH_SPACE_EX] = {HV_CALL_FLUSH_SPACE_EX, "space-ex", false, true},
    [HV_FLUSH_LIST_EX] = {HV_CALL_FLUSH_LIST_EX, "list-ex", true, true},
};

/* The BSP encodes every flush (suite and benchmark): one scratch list suffices. */
static uint32_t flush_vps[MAX_CPUS];

uint16_t hv_flush_code(enum hv_flush_call f)
{
	return hv_flushes[f].code;
}

const char *hv_flush_word(enum hv_flush_call f)
{
	return hv_flushes[f].word;
}

bool hv_flush_is_list(enum hv_flush_call f)
{
	return hv_flushes[f].list;
}

const char *hv_flush_probe(enum hv_flush_call f, enum hv_form form)
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

int hv_flush_encode(struct hv_call *c, enum hv_flush_call f, enum hv_form form, uint64_t cr3,
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
 * As Linux's fill_gva_list() (arch/x86/hyperv/mmu.c) lists [start, end):
 * one element per 4096 pages, the page-aligned GVA with the number of
 * additional pages in its low 12 bits.
 */
int hv_flush_encode_run(struct hv_call *c, enum hv_flush_call f, enum hv_form form, uint64_t cr3,
			const struct cpuset *targets, uint64_t va, unsigned int pages)
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

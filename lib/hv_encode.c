// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hyper-V hypercall encoders: control word, HV_VP_SET, and the inputs of
 * HvCallSendSyntheticClusterIpi[Ex] and HvCallFlushVirtualAddress{Space,List}[Ex]
 * (docs/hyperv-abi.md sections 2.1, 2.2, 3; TLFS hypercall-interface.md).
 *
 * Qword positions come from the structs of lib/hv_abi.h, whose layout is
 * checked at compile time, so the buffer and the documented layout cannot
 * drift apart.
 */
#include "lib/hv_encode.h"
#include "lib/error.h"
#include "lib/pv_result.h"

#define HV_QW(type, field) (offsetof(struct type, field) / sizeof(uint64_t))
#define HV_QWORDS(type)	   (sizeof(struct type) / sizeof(uint64_t))

uint64_t hv_control(uint16_t code, bool fast, unsigned int varhead_qwords, unsigned int rep_count,
		    unsigned int rep_start)
{
	uint64_t v = code;

	if (fast)
		v |= HV_CONTROL_FAST;
	v |= (uint64_t)(varhead_qwords & HV_CONTROL_VARHEAD_MAX) << HV_CONTROL_VARHEAD_SHIFT;
	v |= (uint64_t)(rep_count & HV_CONTROL_REP_COUNT_MAX) << HV_CONTROL_REP_COUNT_SHIFT;
	v |= (uint64_t)(rep_start & HV_CONTROL_REP_START_MAX) << HV_CONTROL_REP_START_SHIFT;
	return v;
}

static int hv_check_vps(const uint32_t *vps, size_t n, uint32_t max_vp)
{
	if (n && !vps)
		return -E_INVAL;
	for (size_t i = 0; i < n; i++) {
		if (vps[i] > max_vp)
			return -E_RANGE;
	}
	return 0;
}

/* SWAR bit count: __builtin_popcountll would need libgcc without -mpopcnt. */
static unsigned int hv_popcount(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ull;
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned int)((x * 0x0101010101010101ull) >> 56);
}

/*
 * Work in proportion to the VPs and the valid banks, not to the 64 banks a
 * set may have (the encoders run inside timed regions): the mask, the valid
 * banks zeroed, then each VP's bit set in its bank's slot, the number of
 * valid banks below it (bank_contents is packed in bank order).
 */
int hv_vpset_build(uint64_t *out, size_t max_qwords, const uint32_t *vps, size_t n,
		   uint64_t *valid_bank_mask)
{
	uint64_t mask = 0;
	size_t banks;
	int err = hv_check_vps(vps, n, HV_VPSET_MAX_VP);

	if (err)
		return err;
	for (size_t i = 0; i < n; i++)
		mask |= 1ull << (vps[i] / HV_VPSET_BANK_BITS);
	banks = hv_popcount(mask);
	if (banks > max_qwords)
		return -E_NOSPC;
	for (size_t b = 0; b < banks; b++)
		out[b] = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t below = (1ull << (vps[i] / HV_VPSET_BANK_BITS)) - 1;

		out[hv_popcount(mask & below)] |= 1ull << (vps[i] % HV_VPSET_BANK_BITS);
	}
	*valid_bank_mask = mask;
	return (int)banks;
}

int hv_gva_element(uint64_t gva, uint32_t extra_pages, uint64_t *out)
{
	if (gva & HV_GVA_EXTRA_PAGES_MASK)
		return -E_INVAL;
	if (extra_pages > HV_GVA_EXTRA_PAGES_MAX)
		return -E_RANGE;
	*out = gva | extra_pages;
	return 0;
}

int hv_xmm_capacity(uint16_t code)
{
	switch (code) {
	case HV_CALL_SEND_IPI:
		return -E_NOTSUP; /* KVM never reads XMM for it: RDX and R8 hold it all */
	case HV_CALL_SEND_IPI_EX:
		return (int)(HV_XMM_MAX_QWORDS - HV_QWORDS(hv_send_ipi_ex));
	case HV_CALL_FLUSH_SPACE:
		return 0;
	case HV_CALL_FLUSH_LIST:
		return (int)(HV_XMM_MAX_QWORDS - HV_QWORDS(hv_tlb_flush));
	case HV_CALL_FLUSH_SPACE_EX:
	case HV_CALL_FLUSH_LIST_EX:
		return (int)(HV_XMM_MAX_QWORDS - HV_QWORDS(hv_tlb_flush_ex));
	default:
		return -E_INVAL;
	}
}

unsigned int hv_call_xmm_registers(const struct hv_call *c)
{
	if (c->form != HV_FORM_XMM || c->qwords <= HV_FAST_GPR_QWORDS)
		return 0;
	return (unsigned int)(c->qwords - HV_FAST_GPR_QWORDS + 1) / 2;
}

/* want must be SLOW or the one register form the call has. */
static int hv_check_form(enum hv_form want, enum hv_form reg_form)
{
	return (want == HV_FORM_SLOW || want == reg_form) ? 0 : -E_INVAL;
}

static int hv_check_vector(uint32_t vector)
{
	return (vector < HV_IPI_LOW_VECTOR || vector > HV_IPI_HIGH_VECTOR) ? -E_RANGE : 0;
}

static void hv_call_start(struct hv_call *c, enum hv_form want)
{
	c->form = want;
}

/*
 * The form is final here. XMM: the registers' part past the input is
 * zeroed, so XMM0..5 (the stub loads all six) carry nothing of an earlier,
 * longer call: 14 - qwords stores. SLOW and FAST write nothing past the
 * input, which is all the hypervisor reads (the input page's first qwords;
 * RDX and R8, q[0] and q[1], which every call's fixed part fills).
 */
static void hv_call_finish(struct hv_call *c, size_t qwords, uint16_t code, unsigned int varhead,
			   unsigned int reps)
{
	c->qwords = qwords;
	if (c->form == HV_FORM_XMM && qwords > HV_XMM_MAX_QWORDS)
		c->form = HV_FORM_SLOW; /* does not fit RDX, R8, XMM0..5 */
	if (c->form == HV_FORM_XMM) {
		for (size_t i = qwords; i < HV_XMM_MAX_QWORDS; i++)
			c->q[i] = 0;
	}
	c->control = hv_control(code, c->form != HV_FORM_SLOW, varhead, reps, 0);
}

static uint64_t hv_mask64(const uint32_t *vps, size_t n)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < n; i++)
		mask |= 1ull << vps[i];
	return mask;
}

int hv_encode_send_ipi(struct hv_call *c, enum hv_form want, uint32_t vector, const uint32_t *vps,
		       size_t n)
{
	int err = hv_check_form(want, HV_FORM_FAST);

	if (!err)
		err = hv_check_vector(vector);
	if (!err)
		err = hv_check_vps(vps, n, HV_SEND_IPI_MAX_VP);
	if (err)
		return err;
	hv_call_start(c, want);
	/* target_vtl and reserved stay 0: KVM rejects a non-zero RDX[63:32]. */
	c->q[HV_QW(hv_send_ipi, vector)] = vector;
	c->q[HV_QW(hv_send_ipi, cpu_mask)] = hv_mask64(vps, n);
	hv_call_finish(c, HV_QWORDS(hv_send_ipi), HV_CALL_SEND_IPI, 0, 0);
	return 0;
}

int hv_encode_send_ipi_ex(struct hv_call *c, enum hv_form want, uint32_t vector,
			  const uint32_t *vps, size_t n, bool all)
{
	const size_t fixed = HV_QWORDS(hv_send_ipi_ex);
	int banks = 0;
	int err = hv_check_form(want, HV_FORM_XMM);

	if (!err)
		err = hv_check_vector(vector);
	if (!err && !all)
		err = hv_check_vps(vps, n, HV_VPSET_MAX_VP);
	if (err)
		return err;
	hv_call_start(c, want);
	c->q[HV_QW(hv_send_ipi_ex, vector)] = vector;
	if (all) {
		/* KVM wants var_cnt == popcount(valid_bank_mask) even here: both 0. */
		c->q[HV_QW(hv_send_ipi_ex, vp_set.format)] = HV_GENERIC_SET_ALL;
		c->q[HV_QW(hv_send_ipi_ex, vp_set.valid_bank_mask)] = 0;
	} else {
		c->q[HV_QW(hv_send_ipi_ex, vp_set.format)] = HV_GENERIC_SET_SPARSE_4K;
		banks = hv_vpset_build(&c->q[fixed], HV_VPSET_MAX_BANKS, vps, n,
				       &c->q[HV_QW(hv_send_ipi_ex, vp_set.valid_bank_mask)]);
		if (banks < 0)
			return banks; /* unreachable: the set was checked above */
	}
	/* The banks are the variable header: var-header size = bank count. */
	hv_call_finish(c, fixed + (size_t)banks, HV_CALL_SEND_IPI_EX, (unsigned int)banks, 0);
	return 0;
}

static int hv_check_flags(uint64_t flags, bool list)
{
	uint64_t known = HV_FLUSH_ALL_PROCESSORS | HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES;

	if (flags & HV_FLUSH_USE_EXTENDED_RANGE_FORMAT)
		return list ? -E_NOTSUP : -E_INVAL;
	if (!list)
		known |= HV_FLUSH_NON_GLOBAL_MAPPINGS_ONLY;
	return (flags & ~known) ? -E_INVAL : 0;
}

/* Checks shared by the four flushes; see hv_encode.h for the rules. */
static int hv_check_flush(enum hv_form want, uint64_t flags, bool list, bool ex,
			  const uint32_t *vps, size_t n)
{
	int err = hv_check_form(want, HV_FORM_XMM);

	if (!err)
		err = hv_check_flags(flags, list);
	if (err || flags & HV_FLUSH_ALL_PROCESSORS)
		return err;
	if (!ex && n == 0)
		return -E_INVAL; /* KVM would flush every processor */
	return hv_check_vps(vps, n, ex ? HV_VPSET_MAX_VP : HV_SEND_IPI_MAX_VP);
}

static int hv_check_gvas(const uint64_t *gvas, const uint32_t *extra_pages, size_t ngva)
{
	uint64_t elem;

	if (ngva == 0 || !gvas)
		return -E_INVAL; /* KVM requires rep count >= 1 for the List calls */
	if (ngva > HV_FLUSH_MAX_GVAS)
		return -E_NOSPC;
	for (size_t i = 0; i < ngva; i++) {
		int err = hv_gva_element(gvas[i], extra_pages ? extra_pages[i] : 0, &elem);

		if (err)
			return err;
	}
	return 0;
}

/* Elements already checked by hv_check_gvas. */
static void hv_put_gvas(uint64_t *out, const uint64_t *gvas, const uint32_t *extra_pages,
			size_t ngva)
{
	for (size_t i = 0; i < ngva; i++)
		out[i] = gvas[i] | (extra_pages ? extra_pages[i] : 0);
}

static void hv_put_flush(struct hv_call *c, uint64_t address_space, uint64_t flags,
			 const uint32_t *vps, size_t n)
{
	bool all = flags & HV_FLUSH_ALL_PROCESSORS;

	c->q[HV_QW(hv_tlb_flush, address_space)] = address_space;
	c->q[HV_QW(hv_tlb_flush, flags)] = flags;
	c->q[HV_QW(hv_tlb_flush, processor_mask)] = all ? 0 : hv_mask64(vps, n);
}

/* Header and banks of an Ex flush; returns the bank count. */
static int hv_put_flush_ex(struct hv_call *c, uint64_t address_space, uint64_t flags,
			   const uint32_t *vps, size_t n)
{
	c->q[HV_QW(hv_tlb_flush_ex, address_space)] = address_space;
	c->q[HV_QW(hv_tlb_flush_ex, flags)] = flags;
	if (flags & HV_FLUSH_ALL_PROCESSORS) {
		/* KVM's Ex handler ignores the flag and reads only the set format. */
		c->q[HV_QW(hv_tlb_flush_ex, vp_set.format)] = HV_GENERIC_SET_ALL;
		c->q[HV_QW(hv_tlb_flush_ex, vp_set.valid_bank_mask)] = 0;
		return 0;
	}
	c->q[HV_QW(hv_tlb_flush_ex, vp_set.format)] = HV_GENERIC_SET_SPARSE_4K;
	return hv_vpset_build(&c->q[HV_QWORDS(hv_tlb_flush_ex)], HV_VPSET_MAX_BANKS, vps, n,
			      &c->q[HV_QW(hv_tlb_flush_ex, vp_set.valid_bank_mask)]);
}

int hv_encode_flush_space(struct hv_call *c, enum hv_form want, uint64_t address_space,
			  uint64_t flags, const uint32_t *vps, size_t n)
{
	int err = hv_check_flush(want, flags, false, false, vps, n);

	if (err)
		return err;
	hv_call_start(c, want);
	hv_put_flush(c, address_space, flags, vps, n);
	hv_call_finish(c, HV_QWORDS(hv_tlb_flush), HV_CALL_FLUSH_SPACE, 0, 0);
	return 0;
}

int hv_encode_flush_list(struct hv_call *c, enum hv_form want, uint64_t address_space,
			 uint64_t flags, const uint32_t *vps, size_t n, const uint64_t *gvas,
			 const uint32_t *extra_pages, size_t ngva)
{
	const size_t fixed = HV_QWORDS(hv_tlb_flush);
	int err = hv_check_flush(want, flags, true, false, vps, n);

	if (!err)
		err = hv_check_gvas(gvas, extra_pages, ngva);
	if (err)
		return err;
	hv_call_start(c, want);
	hv_put_flush(c, address_space, flags, vps, n);
	hv_put_gvas(&c->q[fixed], gvas, extra_pages, ngva);
	/* A rep call: one rep element per GVA range. */
	hv_call_finish(c, fixed + ngva, HV_CALL_FLUSH_LIST, 0, (unsigned int)ngva);
	return 0;
}

int hv_encode_flush_space_ex(struct hv_call *c, enum hv_form want, uint64_t address_space,
			     uint64_t flags, const uint32_t *vps, size_t n)
{
	int banks;
	int err = hv_check_flush(want, flags, false, true, vps, n);

	if (err)
		return err;
	hv_call_start(c, want);
	banks = hv_put_flush_ex(c, address_space, flags, vps, n);
	if (banks < 0)
		return banks; /* unreachable: the set was checked above */
	hv_call_finish(c, HV_QWORDS(hv_tlb_flush_ex) + (size_t)banks, HV_CALL_FLUSH_SPACE_EX,
		       (unsigned int)banks, 0);
	return 0;
}

int hv_encode_flush_list_ex(struct hv_call *c, enum hv_form want, uint64_t address_space,
			    uint64_t flags, const uint32_t *vps, size_t n, const uint64_t *gvas,
			    const uint32_t *extra_pages, size_t ngva)
{
	const size_t fixed = HV_QWORDS(hv_tlb_flush_ex);
	int banks;
	int err = hv_check_flush(want, flags, true, true, vps, n);

	if (!err)
		err = hv_check_gvas(gvas, extra_pages, ngva);
	if (err)
		return err;
	hv_call_start(c, want);
	banks = hv_put_flush_ex(c, address_space, flags, vps, n);
	if (banks < 0)
		return banks; /* unreachable: the set was checked above */
	/* The GVA list follows the last bank (the end of the variable header). */
	hv_put_gvas(&c->q[fixed + (size_t)banks], gvas, extra_pages, ngva);
	hv_call_finish(c, fixed + (size_t)banks + ngva, HV_CALL_FLUSH_LIST_EX, (unsigned int)banks,
		       (unsigned int)ngva);
	return 0;
}

const char *hv_status_name(uint16_t status)
{
	switch (status) {
	case HV_STATUS_SUCCESS:
		return "SUCCESS";
	case HV_STATUS_INVALID_HYPERCALL_CODE:
		return "INVALID_HYPERCALL_CODE";
	case HV_STATUS_INVALID_HYPERCALL_INPUT:
		return "INVALID_HYPERCALL_INPUT";
	case HV_STATUS_INVALID_ALIGNMENT:
		return "INVALID_ALIGNMENT";
	case HV_STATUS_INVALID_PARAMETER:
		return "INVALID_PARAMETER";
	case HV_STATUS_ACCESS_DENIED:
		return "ACCESS_DENIED";
	case HV_STATUS_INVALID_PARTITION_STATE:
		return "INVALID_PARTITION_STATE";
	case HV_STATUS_OPERATION_DENIED:
		return "OPERATION_DENIED";
	case HV_STATUS_INSUFFICIENT_MEMORY:
		return "INSUFFICIENT_MEMORY";
	case HV_STATUS_INVALID_VP_INDEX:
		return "INVALID_VP_INDEX";
	case HV_STATUS_INVALID_PORT_ID:
		return "INVALID_PORT_ID";
	case HV_STATUS_INSUFFICIENT_BUFFERS:
		return "INSUFFICIENT_BUFFERS";
	default:
		return "UNKNOWN";
	}
}

int hv_vpset_add_empty_bank(struct hv_call *c)
{
	uint16_t code = (uint16_t)(c->control & HV_CONTROL_CODE_MASK);
	int mq = hv_vpset_mask_qword(code);
	uint64_t mask, bit;
	unsigned int varhead, reps;
	size_t pos;

	if (mq < 0)
		return -E_INVAL;
	mask = c->q[mq];
	/* HV_GENERIC_SET_ALL names no bank; a full mask has none left to add. */
	if (c->q[mq - 1] != HV_GENERIC_SET_SPARSE_4K || mask == ~0ull)
		return -E_INVAL;
	if (c->qwords >= HV_CALL_MAX_QWORDS)
		return -E_NOSPC;
	bit = ~mask & (mask + 1); /* the lowest bank not in the set */
	pos = (size_t)mq + 1 + hv_popcount(mask & (bit - 1));
	for (size_t i = c->qwords; i > pos; i--)
		c->q[i] = c->q[i - 1];
	c->q[pos] = 0;
	c->q[mq] = mask | bit;
	varhead = (unsigned int)((c->control >> HV_CONTROL_VARHEAD_SHIFT) & HV_CONTROL_VARHEAD_MAX);
	reps = (unsigned int)((c->control >> HV_CONTROL_REP_COUNT_SHIFT) & HV_CONTROL_REP_COUNT_MAX);
	hv_call_finish(c, c->qwords + 1, code, varhead + 1, reps);
	return 0;
}

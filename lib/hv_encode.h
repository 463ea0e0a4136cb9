/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pure encoders for the Hyper-V IPI and TLB-flush hypercalls: the control
 * word (RCX) and the input block, for the slow, fast and XMM-fast forms.
 *
 * Follows docs/hyperv-abi.md sections 2 and 3 (TLFS hypercall-interface.md,
 * datatypes/hv_vp_set.md, the HvCallSendSyntheticClusterIpi[Ex] and
 * HvCallFlushVirtualAddress{Space,List}[Ex] pages).
 *
 * One flat qword buffer serves all three forms, because the TLFS lays the
 * register input out exactly as the memory input:
 *   SLOW: copy q[0..qwords) to the input page, RDX = its GPA, R8 = 0;
 *   FAST: RDX = q[0], R8 = q[1] (only HvCallSendSyntheticClusterIpi has
 *         such a register-only form);
 *   XMM:  RDX = q[0], R8 = q[1], XMM0 = q[2] (low) : q[3] (high),
 *         XMM1 = q[4..5], ... XMM5 = q[12..13]; 14 qwords = 112 bytes at most.
 * Every other code with the fast bit makes the hypervisor read XMM registers
 * (KVM's is_xmm_fast_hypercall), so the encoders reject HV_FORM_FAST for
 * them (-E_INVAL) instead of quietly treating it as XMM: the caller must
 * know it loads XMM registers and that CPUID 0x40000003 EDX[4] allows it.
 * An XMM request whose input exceeds 112 bytes is encoded as SLOW instead
 * and c->form says so.
 */
#ifndef LIB_HV_ENCODE_H
#define LIB_HV_ENCODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/hv_abi.h"

enum hv_form {
	HV_FORM_SLOW, /* input in memory */
	HV_FORM_FAST, /* input in RDX, R8 */
	HV_FORM_XMM   /* input in RDX, R8, XMM0..XMM5 */
};

/*
 * GVA elements one flush-list call may carry. KVM keeps a 16-entry flush
 * FIFO per vCPU and flushes everything past ~15 ranges, so 64 is plenty
 * for a benchmark; each element covers up to 4096 pages.
 */
#define HV_FLUSH_MAX_GVAS 64

/* Largest input: FlushVirtualAddressListEx, 4 fixed + 64 banks + the GVA list. */
#define HV_CALL_MAX_QWORDS (4 + HV_VPSET_MAX_BANKS + HV_FLUSH_MAX_GVAS) /* 132 */

struct hv_call {
	uint64_t control;  /* RCX */
	enum hv_form form; /* the form encoded, which may differ from the one asked for */
	size_t qwords;	   /* input size in qwords */
	/*
	 * The input block, 16-byte aligned so XMM registers can be loaded with
	 * movdqa. In the XMM form q[qwords..13] are zero (the registers' unused
	 * part); the SLOW and FAST forms write nothing past q[qwords - 1], so
	 * entries past the input are what the buffer held before.
	 */
	_Alignas(16) uint64_t q[HV_CALL_MAX_QWORDS];
};

_Static_assert(HV_CALL_MAX_QWORDS * sizeof(uint64_t) <= 4096, "input must fit one page");
_Static_assert(HV_CALL_MAX_QWORDS >= HV_XMM_MAX_QWORDS, "q must cover the XMM window");

/*
 * The hypercall input value (RCX). Each field is masked to its width; the
 * encoders below never pass a value that would be cut.
 */
uint64_t hv_control(uint16_t code, bool fast, unsigned int varhead_qwords, unsigned int rep_count,
		    unsigned int rep_start);

/*
 * Build HV_VP_SET bank_contents for VP indices (any order, duplicates fine)
 * into out[], one qword per non-empty bank in increasing bank order, and the
 * valid_bank_mask. Returns the number of banks (= the variable header size);
 * -E_RANGE for a VP above 4095, -E_NOSPC if max_qwords is too small,
 * -E_INVAL for vps NULL with n > 0.
 */
int hv_vpset_build(uint64_t *out, size_t max_qwords, const uint32_t *vps, size_t n,
		   uint64_t *valid_bank_mask);

/*
 * Add an empty bank to the sparse VP set of an encoded Ex call (send or
 * flush): the lowest bank not in its valid_bank_mask, with no VP, inserted
 * at its place among the banks (a List call's GVAs move up one), the
 * variable header one qword longer. The set names the same VPs; the
 * hypervisor must index its banks by the mask to see so (TLFS "Sparse
 * Virtual Processor Set"). An XMM call that no longer fits goes slow, as
 * the encoders decide. 0; -E_INVAL for a call with no sparse set (not Ex,
 * or HV_GENERIC_SET_ALL) or with all 64 banks; -E_NOSPC for a full buffer.
 */
int hv_vpset_add_empty_bank(struct hv_call *c);

/* One FlushVirtualAddressList element; -E_INVAL unless page aligned, -E_RANGE if extra > 4095. */
int hv_gva_element(uint64_t gva, uint32_t extra_pages, uint64_t *out);

/*
 * Variable qwords (banks + GVA elements) an XMM-fast call of code can carry
 * next to its fixed part: 11 for SEND_IPI_EX and FLUSH_LIST, 10 for the Ex
 * flushes, 0 for FLUSH_SPACE. -E_NOTSUP for SEND_IPI (no XMM form), -E_INVAL
 * for a code this file does not encode.
 */
int hv_xmm_capacity(uint16_t code);

/* XMM registers the caller must load for c (0 unless c->form is HV_FORM_XMM). */
unsigned int hv_call_xmm_registers(const struct hv_call *c);

/*
 * Every encoder returns 0 on success and leaves *c untouched on failure:
 * -E_INVAL for a form the call has no use for (or not an hv_form),
 * -E_RANGE for a vector outside 0x10..0xff or a VP index the call cannot
 * express (>= 64 for the non-Ex calls, >= 4096 for Ex).
 */

/* HvCallSendSyntheticClusterIpi (0x000b): SLOW or FAST; VP indices 0..63. */
int hv_encode_send_ipi(struct hv_call *c, enum hv_form want, uint32_t vector, const uint32_t *vps,
		       size_t n);

/*
 * HvCallSendSyntheticClusterIpiEx (0x0015): SLOW or XMM (FAST: -E_INVAL).
 * all: HV_GENERIC_SET_ALL with valid_bank_mask 0 and no banks; vps ignored.
 * XMM holds at most 11 banks; more fall back to SLOW.
 */
int hv_encode_send_ipi_ex(struct hv_call *c, enum hv_form want, uint32_t vector,
			  const uint32_t *vps, size_t n, bool all);

/*
 * The flushes: SLOW or XMM (FAST: -E_INVAL, the processor mask or set lives
 * in XMM0). address_space is the target CR3, ignored by the hypervisor with
 * HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES (and always by KVM).
 *
 * "Flush every processor" is flags & HV_FLUSH_ALL_PROCESSORS: vps is then
 * ignored and the encoders send an empty mask (non-Ex) or HV_GENERIC_SET_ALL
 * with no banks (Ex; KVM's Ex handler looks only at the set format).
 * Otherwise a non-Ex call needs n > 0 (-E_INVAL): KVM reads an empty
 * processor_mask as "all processors".
 *
 * flags: unknown bits and NON_GLOBAL_MAPPINGS_ONLY on a List call give
 * -E_INVAL; USE_EXTENDED_RANGE_FORMAT gives -E_NOTSUP (the elements built
 * here use the plain page-count format).
 *
 * List calls: gvas[i] page aligned, extra_pages[i] 0..4095 additional pages
 * (extra_pages may be NULL: none), 1 <= ngva <= HV_FLUSH_MAX_GVAS (0:
 * -E_INVAL, more: -E_NOSPC); the rep count is ngva.
 */
int hv_encode_flush_space(struct hv_call *c, enum hv_form want, uint64_t address_space,
			  uint64_t flags, const uint32_t *vps, size_t n);
int hv_encode_flush_list(struct hv_call *c, enum hv_form want, uint64_t address_space,
			 uint64_t flags, const uint32_t *vps, size_t n, const uint64_t *gvas,
			 const uint32_t *extra_pages, size_t ngva);
int hv_encode_flush_space_ex(struct hv_call *c, enum hv_form want, uint64_t address_space,
			     uint64_t flags, const uint32_t *vps, size_t n);
int hv_encode_flush_list_ex(struct hv_call *c, enum hv_form want, uint64_t address_space,
			    uint64_t flags, const uint32_t *vps, size_t n, const uint64_t *gvas,
			    const uint32_t *extra_pages, size_t ngva);

/* Result value (RAX) fields. */
static inline uint16_t hv_result_status(uint64_t rax)
{
	return (uint16_t)(rax & HV_RESULT_STATUS_MASK);
}

static inline unsigned int hv_result_reps(uint64_t rax)
{
	return (unsigned int)(rax >> HV_RESULT_REPS_SHIFT) & HV_RESULT_REPS_MAX;
}

/* "SUCCESS", "INVALID_HYPERCALL_INPUT", ...; "UNKNOWN" for other codes. */
const char *hv_status_name(uint16_t status);

#endif

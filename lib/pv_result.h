/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading the results of paravirtual calls: whether a Hyper-V hypercall
 * succeeded, the words that name it in a FAILURE message, the rep-start
 * continuation, where an Ex call keeps its valid bank mask, and the names
 * of KVM's PV hypercall errors.
 *
 * Follows docs/hyperv-abi.md 2.1 (control word), 2.2 (result value, rep
 * calls that return early), 2.3 (HV_STATUS_*), 3.2 (HV_VP_SET) and 5.2-5.3
 * (KVM_HC_SEND_IPI returns the vCPUs reached or -KVM_E*).
 */
#ifndef LIB_PV_RESULT_H
#define LIB_PV_RESULT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/hv_encode.h"

/* "HvCallSendSyntheticClusterIpi", ...; "unknown call" for a code not in hv_abi.h. */
const char *hv_call_name(uint16_t code);

/* "slow", "fast", "XMM-fast"; "?" for a value outside enum hv_form. */
const char *hv_form_name(enum hv_form form);

/* Rep count (control bits 43:32) of an encoded call: 0 for a simple call. */
unsigned int hv_control_reps(uint64_t control);

/* control with its rep start index (bits 59:48) replaced by start (masked to 12 bits). */
uint64_t hv_control_rep_start(uint64_t control, unsigned int start);

/*
 * 0 when rax is a complete success of the call encoded in control: status
 * SUCCESS and, for a rep call, every rep completed. -E_PROTO for any other
 * status; -E_NOSPC for SUCCESS with reps left (the caller may reissue from
 * hv_result_reps(rax), TLFS "Hypercall Restarting").
 */
int hv_result_check(uint64_t control, uint64_t rax);

/*
 * One line for a FAILURE: "HvCallFlushVirtualAddressListEx (XMM-fast) returned
 * INVALID_HYPERCALL_INPUT (status 0x3), 0 of 8 reps done"; the rep part only
 * for rep calls. Returns the length fmt_snprintf gives (the text is cut to size).
 */
int hv_result_describe(char *buf, size_t size, uint64_t control, enum hv_form form, uint64_t rax);

/*
 * Index of the qword holding HV_VP_SET.valid_bank_mask in the input of an Ex
 * call (2 for SendSyntheticClusterIpiEx, 3 for the Ex flushes); -E_INVAL for
 * any other code, which carries no VP set.
 */
int hv_vpset_mask_qword(uint16_t code);

/* "KVM_EINVAL" for -22, ... (KVM's own numbering); "unknown error" otherwise. */
const char *kvm_hc_error_name(int64_t ret);

/* "-EINVAL" for -22, ... (Xen's public/errno.h, the x86 values); "an unknown error" otherwise. */
const char *xen_errno_name(int64_t ret);

/*
 * KVM_HC_SEND_IPI returned ret for a call that addressed expected existing
 * vCPUs: 0 when it reached all of them, -E_PROTO for a negative (KVM error)
 * return, -E_RANGE when it reached another number.
 */
int kvm_hc_send_ipi_check(int64_t ret, size_t expected);

#endif

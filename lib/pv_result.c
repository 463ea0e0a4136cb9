// SPDX-License-Identifier: GPL-2.0-only
/*
 * Results of Hyper-V and KVM paravirtual calls (docs/hyperv-abi.md 2.1-2.3,
 * 3.2, 5.2-5.3): success checks, FAILURE wording, rep restart, VP-set
 * position. Pure: the hyperv/ and kvm/ send paths and the host tests share it.
 */
#include "lib/pv_result.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/kvm_pvipi.h"

#define HV_REP_START_FIELD ((uint64_t)HV_CONTROL_REP_START_MAX << HV_CONTROL_REP_START_SHIFT)

const char *hv_call_name(uint16_t code)
{
	switch (code) {
	case HV_CALL_FLUSH_SPACE:
		return "HvCallFlushVirtualAddressSpace";
	case HV_CALL_FLUSH_LIST:
		return "HvCallFlushVirtualAddressList";
	case HV_CALL_SEND_IPI:
		return "HvCallSendSyntheticClusterIpi";
	case HV_CALL_FLUSH_SPACE_EX:
		return "HvCallFlushVirtualAddressSpaceEx";
	case HV_CALL_FLUSH_LIST_EX:
		return "HvCallFlushVirtualAddressListEx";
	case HV_CALL_SEND_IPI_EX:
		return "HvCallSendSyntheticClusterIpiEx";
	default:
		return "unknown call";
	}
}

const char *hv_form_name(enum hv_form form)
{
	switch (form) {
	case HV_FORM_SLOW:
		return "slow";
	case HV_FORM_FAST:
		return "fast";
	case HV_FORM_XMM:
		return "XMM-fast";
	}
	return "?";
}

unsigned int hv_control_reps(uint64_t control)
{
	return (unsigned int)(control >> HV_CONTROL_REP_COUNT_SHIFT) & HV_CONTROL_REP_COUNT_MAX;
}

uint64_t hv_control_rep_start(uint64_t control, unsigned int start)
{
	return (control & ~HV_REP_START_FIELD) |
	       (uint64_t)(start & HV_CONTROL_REP_START_MAX) << HV_CONTROL_REP_START_SHIFT;
}

int hv_result_check(uint64_t control, uint64_t rax)
{
	if (hv_result_status(rax) != HV_STATUS_SUCCESS)
		return -E_PROTO;
	/* A simple call reports 0 reps; a rep call counts them absolutely (TLFS). */
	if (hv_result_reps(rax) < hv_control_reps(control))
		return -E_NOSPC;
	return 0;
}

int hv_result_describe(char *buf, size_t size, uint64_t control, enum hv_form form, uint64_t rax)
{
	uint16_t code = (uint16_t)(control & HV_CONTROL_CODE_MASK);
	uint16_t status = hv_result_status(rax);
	unsigned int reps = hv_control_reps(control);

	if (!reps)
		return fmt_snprintf(buf, size, "%s (%s) returned %s (status 0x%x)",
				    hv_call_name(code), hv_form_name(form), hv_status_name(status),
				    status);
	return fmt_snprintf(buf, size, "%s (%s) returned %s (status 0x%x), %u of %u reps done",
			    hv_call_name(code), hv_form_name(form), hv_status_name(status), status,
			    hv_result_reps(rax), reps);
}

int hv_vpset_mask_qword(uint16_t code)
{
	switch (code) {
	case HV_CALL_SEND_IPI_EX:
		return (int)(offsetof(struct hv_send_ipi_ex, vp_set.valid_bank_mask) /
			     sizeof(uint64_t));
	case HV_CALL_FLUSH_SPACE_EX:
	case HV_CALL_FLUSH_LIST_EX:
		return (int)(offsetof(struct hv_tlb_flush_ex, vp_set.valid_bank_mask) /
			     sizeof(uint64_t));
	default:
		return -E_INVAL;
	}
}

const char *kvm_hc_error_name(int64_t ret)
{
	switch (ret) {
	case -KVM_EPERM:
		return "KVM_EPERM";
	case -KVM_EINVAL:
		return "KVM_EINVAL";
	case -KVM_EOPNOTSUPP:
		return "KVM_EOPNOTSUPP";
	case -KVM_ENOSYS:
		return "KVM_ENOSYS";
	default:
		return "unknown error";
	}
}

const char *xen_errno_name(int64_t ret)
{
	switch (ret) {
	case -1:
		return "-EPERM";
	case -2:
		return "-ENOENT";
	case -3:
		return "-ESRCH";
	case -12:
		return "-ENOMEM";
	case -16:
		return "-EBUSY";
	case -17:
		return "-EEXIST";
	case -18:
		return "-EXDEV";
	case -13:
		return "-EACCES";
	case -14:
		return "-EFAULT";
	case -22:
		return "-EINVAL";
	case -28:
		return "-ENOSPC";
	case -38:
		return "-ENOSYS";
	case -95:
		return "-EOPNOTSUPP";
	default:
		return "an unknown error";
	}
}

int kvm_hc_send_ipi_check(int64_t ret, size_t expected)
{
	if (ret < 0)
		return -E_PROTO;
	return (uint64_t)ret == expected ? 0 : -E_RANGE;
}

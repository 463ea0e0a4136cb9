// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/pv_result.c: Hyper-V result checks and FAILURE wording
 * against the control words and results of docs/hyperv-abi.md 3.6 (worked
 * examples), the rep-start continuation (2.2), the valid-bank-mask position
 * that debug=corrupt-vpset spoils (3.2), and KVM_HC_SEND_IPI results (5.3).
 */
#include "lib/error.h"
#include "lib/hv_encode.h"
#include "lib/pv_result.h"
#include "tests/unit/check.h"

/* Fact sheet 3.6: slow FlushVirtualAddressListEx, 3 banks, 1 rep. */
#define LIST_EX_SLOW 0x0000000100060014ull
#define LIST_EX_OK   0x0000000100000000ull

TEST(call_names)
{
	CHECK_STR(hv_call_name(0x0002), "HvCallFlushVirtualAddressSpace");
	CHECK_STR(hv_call_name(0x0003), "HvCallFlushVirtualAddressList");
	CHECK_STR(hv_call_name(0x000b), "HvCallSendSyntheticClusterIpi");
	CHECK_STR(hv_call_name(0x0013), "HvCallFlushVirtualAddressSpaceEx");
	CHECK_STR(hv_call_name(0x0014), "HvCallFlushVirtualAddressListEx");
	CHECK_STR(hv_call_name(0x0015), "HvCallSendSyntheticClusterIpiEx");
	CHECK_STR(hv_call_name(0x0001), "unknown call");
	CHECK_STR(hv_call_name(0xffff), "unknown call");
}

TEST(form_names)
{
	CHECK_STR(hv_form_name(HV_FORM_SLOW), "slow");
	CHECK_STR(hv_form_name(HV_FORM_FAST), "fast");
	CHECK_STR(hv_form_name(HV_FORM_XMM), "XMM-fast");
	CHECK_STR(hv_form_name((enum hv_form)7), "?");
}

TEST(control_reps)
{
	CHECK_EQ(hv_control_reps(LIST_EX_SLOW), 1);
	CHECK_EQ(hv_control_reps(0x0000000000070015ull), 0);
	CHECK_EQ(hv_control_reps(0x00000fff00000003ull), 0xfff);
	/* bits 47:44 are reserved, not part of the count */
	CHECK_EQ(hv_control_reps(0x0000f00200000003ull), 2);
}

TEST(rep_start)
{
	CHECK_EQ(hv_control_rep_start(LIST_EX_SLOW, 0), LIST_EX_SLOW);
	CHECK_EQ(hv_control_rep_start(0x0000000800000003ull, 5), 0x0005000800000003ull);
	/* replaces, does not OR */
	CHECK_EQ(hv_control_rep_start(0x0fff000800000003ull, 1), 0x0001000800000003ull);
	/* masked to 12 bits: bits 63:60 stay clear */
	CHECK_EQ(hv_control_rep_start(0x0000000800000003ull, 0x1001), 0x0001000800000003ull);
}

TEST(result_check)
{
	CHECK_EQ(hv_result_check(LIST_EX_SLOW, LIST_EX_OK), 0);
	/* more reps reported than asked still means all were done */
	CHECK_EQ(hv_result_check(LIST_EX_SLOW, 0x0000000200000000ull), 0);
	CHECK_EQ(hv_result_check(LIST_EX_SLOW, 0), -E_NOSPC);
	CHECK_EQ(hv_result_check(LIST_EX_SLOW, 0x0000000100000003ull), -E_PROTO);
	CHECK_EQ(hv_result_check(0x1000b, 0), 0);
	CHECK_EQ(hv_result_check(0x1000b, 3), -E_PROTO);
	CHECK_EQ(hv_result_check(0x1000b, 2), -E_PROTO);
	CHECK_EQ(hv_result_check(0x70015, 0x13), -E_PROTO);
	/* reserved RAX bits do not matter, the status does */
	CHECK_EQ(hv_result_check(0x70015, 0xffff000000000000ull), 0);
}

TEST(describe)
{
	char buf[160];

	CHECK_EQ(hv_result_describe(buf, sizeof(buf), 0x70015, HV_FORM_XMM, 3), 88);
	CHECK_STR(buf,
		  "HvCallSendSyntheticClusterIpiEx (XMM-fast) returned INVALID_HYPERCALL_INPUT "
		  "(status 0x3)");
	hv_result_describe(buf, sizeof(buf), LIST_EX_SLOW, HV_FORM_SLOW, 6);
	CHECK_STR(buf,
		  "HvCallFlushVirtualAddressListEx (slow) returned ACCESS_DENIED (status 0x6), "
		  "0 of 1 reps done");
	hv_result_describe(buf, sizeof(buf), 0x1000b, HV_FORM_FAST, 0x42);
	CHECK_STR(buf, "HvCallSendSyntheticClusterIpi (fast) returned UNKNOWN (status 0x42)");
	/* cut to size, still terminated */
	CHECK_EQ(hv_result_describe(buf, 10, 0x2, HV_FORM_SLOW, 5), 77);
	CHECK_STR(buf, "HvCallFlu");
}

TEST(vpset_mask_qword)
{
	static const uint32_t vps[] = {1, 65, 130};
	static const uint64_t gva = 0x00007f0000400000ull;
	static const uint32_t extra = 3;
	struct hv_call c;

	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_SEND_IPI_EX), 2);
	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_FLUSH_SPACE_EX), 3);
	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_FLUSH_LIST_EX), 3);
	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_SEND_IPI), -E_INVAL);
	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_FLUSH_SPACE), -E_INVAL);
	CHECK_EQ(hv_vpset_mask_qword(HV_CALL_FLUSH_LIST), -E_INVAL);
	/* The fact sheet's worked examples: valid_bank_mask 0x7 sits there. */
	CHECK_EQ(hv_encode_send_ipi_ex(&c, HV_FORM_SLOW, 0xf0, vps, 3, false), 0);
	CHECK_EQ(c.q[hv_vpset_mask_qword(HV_CALL_SEND_IPI_EX)], 0x7);
	CHECK_EQ(hv_encode_flush_list_ex(&c, HV_FORM_XMM, 0, HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES,
					 vps, 3, &gva, &extra, 1),
		 0);
	CHECK_EQ(c.control, 0x0000000100070014ull);
	CHECK_EQ(c.q[hv_vpset_mask_qword(HV_CALL_FLUSH_LIST_EX)], 0x7);
}

TEST(kvm_errors)
{
	CHECK_STR(kvm_hc_error_name(-1), "KVM_EPERM");
	CHECK_STR(kvm_hc_error_name(-22), "KVM_EINVAL");
	CHECK_STR(kvm_hc_error_name(-95), "KVM_EOPNOTSUPP");
	CHECK_STR(kvm_hc_error_name(-1000), "KVM_ENOSYS");
	CHECK_STR(kvm_hc_error_name(-2), "unknown error");
	CHECK_STR(kvm_hc_error_name(22), "unknown error");
}

TEST(kvm_send_ipi_check)
{
	CHECK_EQ(kvm_hc_send_ipi_check(1, 1), 0);
	CHECK_EQ(kvm_hc_send_ipi_check(128, 128), 0);
	CHECK_EQ(kvm_hc_send_ipi_check(0, 1), -E_RANGE);
	CHECK_EQ(kvm_hc_send_ipi_check(2, 1), -E_RANGE);
	CHECK_EQ(kvm_hc_send_ipi_check(-22, 1), -E_PROTO);
	CHECK_EQ(kvm_hc_send_ipi_check(-1000, 0), -E_PROTO);
	CHECK_EQ(kvm_hc_send_ipi_check(0, 0), 0);
}

/* Xen's public/errno.h: the values of Linux's asm-generic errno on x86. */
TEST(xen_errors)
{
	CHECK_STR(xen_errno_name(-22), "-EINVAL");
	CHECK_STR(xen_errno_name(-28), "-ENOSPC");
	CHECK_STR(xen_errno_name(-38), "-ENOSYS");
	CHECK_STR(xen_errno_name(-2), "-ENOENT");
	CHECK_STR(xen_errno_name(-4096), "an unknown error");
}

TEST_MAIN(T(call_names), T(form_names), T(control_reps), T(rep_start), T(result_check), T(describe),
	  T(vpset_mask_qword), T(kvm_errors), T(kvm_send_ipi_check), T(xen_errors))

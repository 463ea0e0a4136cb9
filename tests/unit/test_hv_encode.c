// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/hv_encode.c: the worked examples of docs/hyperv-abi.md
 * 3.6 byte for byte, the TLFS HV_VP_SET example, the XMM capacity edge
 * (11 banks fit, 12 fall back to SLOW) and every error path.
 */
#include "lib/error.h"
#include "lib/hv_encode.h"
#include "tests/unit/check.h"

static struct hv_call call;

/* The encoded input, qword by qword. */
static void check_q(const struct hv_call *c, const uint64_t *want, size_t n)
{
	CHECK_EQ(c->qwords, n);
	for (size_t i = 0; i < n && i < HV_CALL_MAX_QWORDS; i++) {
		if (c->q[i] != want[i])
			printf("#   q[%zu]\n", i);
		CHECK_EQ(c->q[i], want[i]);
	}
}

/* XMM padding after the input is zero, so XMM registers load defined values. */
static void check_padding(const struct hv_call *c)
{
	for (size_t i = c->qwords; i < HV_XMM_MAX_QWORDS; i++)
		CHECK_EQ(c->q[i], 0);
}

/* A failing encoder must leave the call untouched. */
static void poison(struct hv_call *c)
{
	unsigned char *p = (unsigned char *)c;

	for (size_t i = 0; i < sizeof(*c); i++)
		p[i] = 0xa5;
}

static int is_poisoned(const struct hv_call *c)
{
	const unsigned char *p = (const unsigned char *)c;

	for (size_t i = 0; i < sizeof(*c); i++) {
		if (p[i] != 0xa5)
			return 0;
	}
	return 1;
}

TEST(control_word)
{
	CHECK_EQ(hv_control(0x0015, false, 3, 0, 0), 0x0000000000060015ull);
	CHECK_EQ(hv_control(0x0015, true, 3, 0, 0), 0x0000000000070015ull);
	CHECK_EQ(hv_control(0x000b, true, 0, 0, 0), 0x000000000001000bull);
	CHECK_EQ(hv_control(0x0014, false, 3, 1, 0), 0x0000000100060014ull);
	CHECK_EQ(hv_control(0x0014, true, 3, 1, 0), 0x0000000100070014ull);
	CHECK_EQ(hv_control(0x0003, false, 0, 5, 2), 0x0002000500000003ull);
	/* Over-wide fields are cut to width: reserved bits 31:27, 47:44, 63:60 stay 0. */
	CHECK_EQ(hv_control(0xffff, true, ~0u, ~0u, ~0u), 0x0fff0fff07ffffffull);
}

TEST(result_fields)
{
	CHECK_EQ(hv_result_status(0x0000000100000000ull), HV_STATUS_SUCCESS);
	CHECK_EQ(hv_result_reps(0x0000000100000000ull), 1);
	CHECK_EQ(hv_result_status(0xffff0fff00000003ull), HV_STATUS_INVALID_HYPERCALL_INPUT);
	CHECK_EQ(hv_result_reps(0xffff0fff00000003ull), 0xfff);
}

TEST(vpset_tlfs_example)
{
	static const uint32_t vps[] = {0, 5, 130};
	static const uint32_t shuffled[] = {130, 5, 0, 5, 130};
	uint64_t out[4] = {0}, mask = 0;

	CHECK_EQ(hv_vpset_build(out, 4, vps, 3, &mask), 2);
	CHECK_EQ(mask, 0x5);
	CHECK_EQ(out[0], 0x21);
	CHECK_EQ(out[1], 0x4);
	for (size_t i = 0; i < 4; i++)
		out[i] = ~0ull;
	CHECK_EQ(hv_vpset_build(out, 2, shuffled, 5, &mask), 2);
	CHECK_EQ(mask, 0x5);
	CHECK_EQ(out[0], 0x21);
	CHECK_EQ(out[1], 0x4);
	CHECK_EQ(out[2], 0xffffffffffffffffull); /* only the banks are written */
}

TEST(vpset_sizes)
{
	static uint32_t vps[4096];
	static uint64_t out[64];
	uint64_t mask = 1;

	for (uint32_t i = 0; i < 4096; i++)
		vps[i] = i;
	CHECK_EQ(hv_vpset_build(out, 64, vps, 0, &mask), 0);
	CHECK_EQ(mask, 0);
	CHECK_EQ(hv_vpset_build(out, 64, vps, 1, &mask), 1);
	CHECK_EQ(mask, 1);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(hv_vpset_build(out, 64, vps, 64, &mask), 1);
	CHECK_EQ(mask, 1);
	CHECK_EQ(out[0], ~0ull);
	CHECK_EQ(hv_vpset_build(out, 64, vps, 65, &mask), 2);
	CHECK_EQ(mask, 3);
	CHECK_EQ(out[0], ~0ull);
	CHECK_EQ(out[1], 1);
	CHECK_EQ(hv_vpset_build(out, 64, vps, 1024, &mask), 16);
	CHECK_EQ(mask, 0xffff);
	for (int i = 0; i < 16; i++)
		CHECK_EQ(out[i], ~0ull);
	CHECK_EQ(hv_vpset_build(out, 64, vps, 4096, &mask), 64);
	CHECK_EQ(mask, ~0ull);
	CHECK_EQ(out[63], ~0ull);
}

TEST(vpset_errors)
{
	static const uint32_t top[] = {4095};
	static const uint32_t over[] = {1, 4096};
	static const uint32_t two_banks[] = {1, 64};
	uint64_t out[2] = {7, 7}, mask = 9;

	CHECK_EQ(hv_vpset_build(out, 2, top, 1, &mask), 1);
	CHECK_EQ(mask, 1ull << 63);
	CHECK_EQ(out[0], 1ull << 63);
	out[0] = 7;
	mask = 9;
	CHECK_EQ(hv_vpset_build(out, 2, over, 2, &mask), -E_RANGE);
	CHECK_EQ(hv_vpset_build(out, 1, two_banks, 2, &mask), -E_NOSPC);
	CHECK_EQ(hv_vpset_build(out, 2, NULL, 1, &mask), -E_INVAL);
	CHECK_EQ(out[0], 7); /* nothing written on failure */
	CHECK_EQ(mask, 9);
}

/* Banks far apart and out of order: bank_contents still in bank order. */
TEST(vpset_sparse)
{
	static const uint32_t vps[] = {4095, 700, 0, 701};
	uint64_t out[4] = {~0ull, ~0ull, ~0ull, ~0ull}, mask = 0;

	CHECK_EQ(hv_vpset_build(out, 3, vps, 4, &mask), 3);
	CHECK_EQ(mask, 1ull << 63 | 1ull << 10 | 1);
	CHECK_EQ(out[0], 1);
	CHECK_EQ(out[1], 3ull << 60); /* 700 = 10 * 64 + 60 */
	CHECK_EQ(out[2], 1ull << 63);
	CHECK_EQ(out[3], ~0ull);
}

#define POISON_QWORD 0xa5a5a5a5a5a5a5a5ull

/*
 * Inside a timed region the encoders write what the call reads: the XMM
 * form zeroes the registers' part past its input (XMM0..5 are all loaded),
 * SLOW and FAST write nothing past their input.
 */
TEST(only_xmm_pads)
{
	static const uint32_t vps[] = {1};
	static const uint32_t twelve[] = {0, 64, 128, 192, 256, 320, 384, 448, 512, 576, 640, 704};

	poison(&call);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0xf0, vps, 1, false), 0);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(call.qwords, 4);
	check_padding(&call);
	CHECK_EQ(call.q[HV_XMM_MAX_QWORDS], POISON_QWORD);
	poison(&call);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0xf0, vps, 1, false), 0);
	CHECK_EQ(call.qwords, 4);
	for (size_t i = 4; i < HV_XMM_MAX_QWORDS; i++)
		CHECK_EQ(call.q[i], POISON_QWORD);
	poison(&call);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0xf0, vps, 1), 0);
	CHECK_EQ(call.qwords, 2);
	for (size_t i = 2; i < HV_XMM_MAX_QWORDS; i++)
		CHECK_EQ(call.q[i], POISON_QWORD);
	poison(&call);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 2, vps, 1), 0);
	for (size_t i = call.qwords; i < HV_XMM_MAX_QWORDS; i++)
		CHECK_EQ(call.q[i], POISON_QWORD);
	/* too long for the registers: encoded slow, nothing padded */
	poison(&call);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0x20, twelve, 12, false), 0);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	CHECK_EQ(call.qwords, 15);
	CHECK_EQ(call.q[15], POISON_QWORD);
}

/* docs/hyperv-abi.md 3.6: Ex IPI, vector 0xF0, VPs {1, 65, 130}, slow. */
TEST(ipi_ex_slow_example)
{
	static const uint32_t vps[] = {1, 65, 130};
	static const uint64_t want[] = {0xf0, 0x0, 0x7, 0x2, 0x2, 0x4};
	static const unsigned char bytes[48] = {
	    0xf0, 0, 0, 0, 0, 0, 0, 0, 0,    0, 0, 0, 0, 0, 0, 0, 0x07, 0, 0, 0, 0, 0, 0, 0,
	    0x02, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0, 0x04, 0, 0, 0, 0, 0, 0, 0,
	};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0xf0, vps, 3, false), 0);
	CHECK_EQ(call.control, 0x0000000000060015ull);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	check_q(&call, want, 6);
	CHECK(memcmp(call.q, bytes, sizeof(bytes)) == 0);
	CHECK_EQ(hv_call_xmm_registers(&call), 0);
}

/* Same call, XMM-fast: RDX, R8, XMM0 = hi 2 : lo 7, XMM1 = hi 4 : lo 2. */
TEST(ipi_ex_xmm_example)
{
	static const uint32_t vps[] = {130, 1, 65};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0xf0, vps, 3, false), 0);
	CHECK_EQ(call.control, 0x0000000000070015ull);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(call.qwords, 6);
	CHECK_EQ(call.q[0], 0xf0); /* RDX */
	CHECK_EQ(call.q[1], 0x0);  /* R8 = format SPARSE_4K */
	CHECK_EQ(call.q[2], 0x7);  /* XMM0 low: valid_bank_mask */
	CHECK_EQ(call.q[3], 0x2);  /* XMM0 high: bank 0 */
	CHECK_EQ(call.q[4], 0x2);  /* XMM1 low: bank 1 */
	CHECK_EQ(call.q[5], 0x4);  /* XMM1 high: bank 2 */
	CHECK_EQ(hv_call_xmm_registers(&call), 2);
	CHECK_EQ((uintptr_t)call.q % 16, 0);
	check_padding(&call);
}

TEST(ipi_ex_all)
{
	static const uint32_t ignored[] = {5000};
	static const uint64_t want[] = {0xf0, HV_GENERIC_SET_ALL, 0};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0xf0, ignored, 1, true), 0);
	CHECK_EQ(call.control, 0x0000000000010015ull);
	CHECK_EQ(call.form, HV_FORM_XMM);
	check_q(&call, want, 3);
	check_padding(&call);
	CHECK_EQ(hv_call_xmm_registers(&call), 1);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0xf0, NULL, 0, true), 0);
	CHECK_EQ(call.control, 0x0000000000000015ull);
	check_q(&call, want, 3);
}

/* A VP every 64 indices: one bank each. */
static size_t one_per_bank(uint32_t *vps, size_t banks)
{
	for (size_t i = 0; i < banks; i++)
		vps[i] = (uint32_t)(i * 64 + i % 64);
	return banks;
}

TEST(ipi_ex_xmm_capacity)
{
	uint32_t vps[64];
	size_t n = one_per_bank(vps, 11);

	CHECK_EQ(hv_xmm_capacity(HV_CALL_SEND_IPI_EX), 11);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0x20, vps, n, false), 0);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(call.qwords, 14); /* exactly RDX, R8, XMM0..XMM5 */
	CHECK_EQ(call.control, 0x15 | 1ull << 16 | 11ull << 17);
	CHECK_EQ(call.q[2], 0x7ff);
	CHECK_EQ(call.q[13], 1ull << 10); /* bank 10 holds VP 650 = 10 * 64 + 10 */
	CHECK_EQ(hv_call_xmm_registers(&call), 6);

	n = one_per_bank(vps, 12);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0x20, vps, n, false), 0);
	CHECK_EQ(call.form, HV_FORM_SLOW); /* 120 bytes do not fit 112 */
	CHECK_EQ(call.control, 0x15 | 12ull << 17);
	CHECK_EQ(call.qwords, 15);
	CHECK_EQ(call.q[2], 0xfff);
	CHECK_EQ(call.q[14], 1ull << 11);
	CHECK_EQ(hv_call_xmm_registers(&call), 0);

	n = one_per_bank(vps, 64);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x20, vps, n, false), 0);
	CHECK_EQ(call.control, 0x15 | 64ull << 17);
	CHECK_EQ(call.qwords, 67);
	CHECK_EQ(call.q[2], ~0ull);
	CHECK_EQ(call.q[66], 1ull << 63);
}

TEST(ipi_ex_empty)
{
	static const uint64_t want[] = {0x30, HV_GENERIC_SET_SPARSE_4K, 0};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x30, NULL, 0, false), 0);
	CHECK_EQ(call.control, 0x15);
	check_q(&call, want, 3);
}

TEST(ipi_ex_errors)
{
	static const uint32_t vps[] = {1, 4096};

	poison(&call);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_FAST, 0xf0, vps, 1, false), -E_INVAL);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, (enum hv_form)7, 0xf0, vps, 1, false), -E_INVAL);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0xf0, vps, 2, false), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x0f, vps, 1, false), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x100, vps, 1, true), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0xf0, NULL, 1, false), -E_INVAL);
	CHECK(is_poisoned(&call));
}

/* docs/hyperv-abi.md 3.6: non-Ex IPI to VPs {1, 3}: RCX 0x1000B, RDX 0xF0, R8 0xA. */
TEST(ipi_example)
{
	static const uint32_t vps[] = {3, 1};
	static const uint64_t want[] = {0xf0, 0xa};
	union {
		uint64_t q[2];
		struct hv_send_ipi s;
	} in;

	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0xf0, vps, 2), 0);
	CHECK_EQ(call.control, 0x000000000001000bull);
	CHECK_EQ(call.form, HV_FORM_FAST);
	check_q(&call, want, 2);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_SLOW, 0xf0, vps, 2), 0);
	CHECK_EQ(call.control, 0x000000000000000bull);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	check_q(&call, want, 2);
	in.q[0] = call.q[0]; /* the buffer is the documented struct */
	in.q[1] = call.q[1];
	CHECK_EQ(in.s.vector, 0xf0);
	CHECK_EQ(in.s.target_vtl, 0);
	CHECK_EQ(in.s.cpu_mask, 0xa);
}

TEST(ipi_limits)
{
	static const uint32_t edge[] = {0, 63};

	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0x10, edge, 2), 0);
	CHECK_EQ(call.q[0], 0x10);
	CHECK_EQ(call.q[1], 0x8000000000000001ull);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0xff, NULL, 0), 0);
	CHECK_EQ(call.q[0], 0xff);
	CHECK_EQ(call.q[1], 0);
	CHECK_EQ(hv_xmm_capacity(HV_CALL_SEND_IPI), -E_NOTSUP);
}

TEST(ipi_errors)
{
	static const uint32_t vps[] = {1, 64};

	poison(&call);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_XMM, 0xf0, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_send_ipi(&call, (enum hv_form)3, 0xf0, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0xf0, vps, 2), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0x0f, vps, 1), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0x100, vps, 1), -E_RANGE);
	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0xf0, NULL, 1), -E_INVAL);
	CHECK(is_poisoned(&call));
}

/* docs/hyperv-abi.md 3.6: FlushVirtualAddressSpace fast to {1, 3}, all spaces. */
TEST(flush_space_example)
{
	static const uint32_t vps[] = {1, 3};
	static const uint64_t want[] = {0, HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES, 0xa};

	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_XMM, 0, HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES,
				       vps, 2),
		 0);
	CHECK_EQ(call.control, 0x0000000000010002ull);
	CHECK_EQ(call.form, HV_FORM_XMM);
	check_q(&call, want, 3); /* RDX 0, R8 2, XMM0.lo 0xA */
	check_padding(&call);
	CHECK_EQ(hv_call_xmm_registers(&call), 1);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 2, vps, 2), 0);
	CHECK_EQ(call.control, 0x2);
	check_q(&call, want, 3);
	CHECK_EQ(hv_xmm_capacity(HV_CALL_FLUSH_SPACE), 0);
}

TEST(flush_space_all_processors)
{
	static const uint32_t ignored[] = {100}; /* out of range, but ignored */
	static const uint64_t want[] = {
	    0x1000, HV_FLUSH_ALL_PROCESSORS | HV_FLUSH_NON_GLOBAL_MAPPINGS_ONLY, 0};

	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0x1000,
				       HV_FLUSH_ALL_PROCESSORS | HV_FLUSH_NON_GLOBAL_MAPPINGS_ONLY,
				       ignored, 1),
		 0);
	CHECK_EQ(call.control, 0x2);
	check_q(&call, want, 3);
}

TEST(flush_space_errors)
{
	static const uint32_t vps[] = {1, 64};

	poison(&call);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_FAST, 0, 2, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space(&call, (enum hv_form)9, 0, 2, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 2, vps, 2), -E_RANGE);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 2, vps, 0), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 2, NULL, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, 1ull << 4, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space(&call, HV_FORM_SLOW, 0, HV_FLUSH_USE_EXTENDED_RANGE_FORMAT,
				       vps, 1),
		 -E_INVAL);
	CHECK(is_poisoned(&call));
}

TEST(flush_list)
{
	static const uint32_t vps[] = {0, 2};
	static const uint64_t gvas[] = {0x7f0000400000ull, 0xffff800000001000ull};
	static const uint32_t extra[] = {3, 4095};
	static const uint64_t want[] = {0, 2, 0x5, 0x00007f0000400003ull, 0xffff800000001fffull};

	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_XMM, 0, 2, vps, 2, gvas, extra, 2), 0);
	CHECK_EQ(call.control, 0x0000000200010003ull); /* rep count 2, fast */
	CHECK_EQ(call.form, HV_FORM_XMM);
	check_q(&call, want, 5);
	check_padding(&call);
	CHECK_EQ(hv_call_xmm_registers(&call), 2);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 2, vps, 2, gvas, NULL, 1), 0);
	CHECK_EQ(call.control, 0x0000000100000003ull);
	CHECK_EQ(call.qwords, 4);
	CHECK_EQ(call.q[3], 0x7f0000400000ull); /* no extra pages */
}

TEST(flush_list_capacity)
{
	static const uint32_t vps[] = {1};
	uint64_t gvas[HV_FLUSH_MAX_GVAS + 1];

	for (size_t i = 0; i <= HV_FLUSH_MAX_GVAS; i++)
		gvas[i] = (uint64_t)(i + 1) << 12;
	CHECK_EQ(hv_xmm_capacity(HV_CALL_FLUSH_LIST), 11);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_XMM, 0, 0, vps, 1, gvas, NULL, 11), 0);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(call.qwords, 14);
	CHECK_EQ(call.control, 0x3 | 1ull << 16 | 11ull << 32);
	CHECK_EQ(call.q[13], 11ull << 12);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_XMM, 0, 0, vps, 1, gvas, NULL, 12), 0);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	CHECK_EQ(call.qwords, 15);
	CHECK_EQ(call.control, 0x3 | 12ull << 32);
	CHECK_EQ(
	    hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, gvas, NULL, HV_FLUSH_MAX_GVAS),
	    0);
	CHECK_EQ(call.qwords, 3 + HV_FLUSH_MAX_GVAS);
	CHECK_EQ(call.q[2 + HV_FLUSH_MAX_GVAS], (uint64_t)HV_FLUSH_MAX_GVAS << 12);
	CHECK_EQ(call.control, 0x3 | (uint64_t)HV_FLUSH_MAX_GVAS << 32);
}

TEST(flush_list_errors)
{
	static const uint32_t vps[] = {1, 64};
	static const uint64_t gvas[HV_FLUSH_MAX_GVAS + 1] = {0x1000, 0x2000};
	static const uint64_t odd[] = {0x1000, 0x2800};
	static const uint32_t big[] = {0, 4096};

	poison(&call);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_FAST, 0, 0, vps, 1, gvas, NULL, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 2, gvas, NULL, 1), -E_RANGE);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 0, gvas, NULL, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, gvas, NULL, 0), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, NULL, NULL, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, gvas, NULL,
				      HV_FLUSH_MAX_GVAS + 1),
		 -E_NOSPC);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, odd, NULL, 2), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, 0, vps, 1, gvas, big, 2), -E_RANGE);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, HV_FLUSH_USE_EXTENDED_RANGE_FORMAT,
				      vps, 1, gvas, NULL, 1),
		 -E_NOTSUP);
	CHECK_EQ(hv_encode_flush_list(&call, HV_FORM_SLOW, 0, HV_FLUSH_NON_GLOBAL_MAPPINGS_ONLY,
				      vps, 1, gvas, NULL, 1),
		 -E_INVAL);
	CHECK(is_poisoned(&call));
}

TEST(gva_element)
{
	uint64_t e = 0;

	CHECK_EQ(hv_gva_element(0x7f0000400000ull, 3, &e), 0);
	CHECK_EQ(e, 0x00007f0000400003ull);
	CHECK_EQ(hv_gva_element(0x1000, 4095, &e), 0);
	CHECK_EQ(e, 0x1fff);
	e = 42;
	CHECK_EQ(hv_gva_element(0x1001, 0, &e), -E_INVAL);
	CHECK_EQ(hv_gva_element(0x1000, 4096, &e), -E_RANGE);
	CHECK_EQ(e, 42);
}

/* docs/hyperv-abi.md 3.6: FlushVirtualAddressListEx, set {1, 65, 130}, one range. */
TEST(flush_list_ex_example)
{
	static const uint32_t vps[] = {1, 65, 130};
	static const uint64_t gva[] = {0x7f0000400000ull};
	static const uint32_t extra[] = {3};
	static const uint64_t want[] = {0, 2, 0, 7, 2, 2, 4, 0x00007f0000400003ull};
	static const unsigned char bytes[64] = {
	    0,	  0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0,    0, 0, 0,	  0, 0, 0,    0, 0, 0, 0, 0, 0, 0,
	    0x07, 0, 0, 0, 0, 0, 0, 0, 0x02, 0, 0,    0, 0, 0,	  0, 0, 0x02, 0, 0, 0, 0, 0, 0, 0,
	    0x04, 0, 0, 0, 0, 0, 0, 0, 0x03, 0, 0x40, 0, 0, 0x7f, 0, 0,
	};

	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_SLOW, 0,
					 HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES, vps, 3, gva, extra,
					 1),
		 0);
	CHECK_EQ(call.control, 0x0000000100060014ull);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	check_q(&call, want, 8);
	CHECK(memcmp(call.q, bytes, sizeof(bytes)) == 0);

	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES,
					 vps, 3, gva, extra, 1),
		 0);
	CHECK_EQ(call.control, 0x0000000100070014ull);
	CHECK_EQ(call.form, HV_FORM_XMM);
	check_q(&call, want, 8); /* XMM0 = 7 : 0, XMM1 = 2 : 2, XMM2 = 0x7f0000400003 : 4 */
	CHECK(memcmp(call.q, bytes, sizeof(bytes)) == 0);
	CHECK_EQ(hv_call_xmm_registers(&call), 3);
	check_padding(&call);
}

TEST(flush_list_ex_capacity)
{
	static uint64_t gvas[HV_FLUSH_MAX_GVAS];
	uint32_t vps[64];
	size_t n = one_per_bank(vps, 6);

	for (size_t i = 0; i < HV_FLUSH_MAX_GVAS; i++)
		gvas[i] = (uint64_t)(i + 1) << 12;
	CHECK_EQ(hv_xmm_capacity(HV_CALL_FLUSH_LIST_EX), 10);
	/* 6 banks + 4 ranges = 10 variable qwords: fits. */
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, n, gvas, NULL, 4), 0);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(call.qwords, 14);
	CHECK_EQ(call.control, 0x14 | 1ull << 16 | 6ull << 17 | 4ull << 32);
	CHECK_EQ(call.q[3], 0x3f);
	CHECK_EQ(call.q[9], 1ull << 5); /* last bank */
	CHECK_EQ(call.q[10], 0x1000);	/* list right after it */
	CHECK_EQ(call.q[13], 0x4000);
	/* One more range: 120 bytes, falls back. */
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, n, gvas, NULL, 5), 0);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	CHECK_EQ(call.qwords, 15);
	CHECK_EQ(call.control, 0x14 | 6ull << 17 | 5ull << 32);
	/* The largest input: 64 banks and HV_FLUSH_MAX_GVAS ranges fill q exactly. */
	n = one_per_bank(vps, 64);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, n, gvas, NULL,
					 HV_FLUSH_MAX_GVAS),
		 0);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	CHECK_EQ(call.qwords, HV_CALL_MAX_QWORDS);
	CHECK_EQ(call.q[3], ~0ull);
	CHECK_EQ(call.q[67], 1ull << 63);
	CHECK_EQ(call.q[68], 0x1000);
	CHECK_EQ(call.q[HV_CALL_MAX_QWORDS - 1], (uint64_t)HV_FLUSH_MAX_GVAS << 12);
}

TEST(flush_space_ex)
{
	static const uint32_t vps[] = {1, 65, 130};
	static const uint64_t want[] = {0x5000, 0, 0, 7, 2, 2, 4};

	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_XMM, 0x5000, 0, vps, 3), 0);
	CHECK_EQ(call.control, 0x0000000000070013ull);
	CHECK_EQ(call.form, HV_FORM_XMM);
	check_q(&call, want, 7);
	check_padding(&call);
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_SLOW, 0x5000, 0, vps, 3), 0);
	CHECK_EQ(call.control, 0x0000000000060013ull);
	check_q(&call, want, 7);
	CHECK_EQ(hv_xmm_capacity(HV_CALL_FLUSH_SPACE_EX), 10);
}

TEST(flush_ex_all_processors)
{
	static const uint32_t ignored[] = {9999};
	static const uint64_t want[] = {0, 3, HV_GENERIC_SET_ALL, 0};
	static const uint64_t gva[] = {0x2000};

	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_XMM, 0, 3, ignored, 1), 0);
	CHECK_EQ(call.control, 0x0000000000010013ull); /* no banks, var header 0 */
	check_q(&call, want, 4);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 3, NULL, 0, gva, NULL, 1), 0);
	CHECK_EQ(call.control, 0x0000000100010014ull);
	CHECK_EQ(call.qwords, 5);
	CHECK_EQ(call.q[2], HV_GENERIC_SET_ALL);
	CHECK_EQ(call.q[4], 0x2000);
}

TEST(flush_ex_empty_set)
{
	static const uint64_t want[] = {0, 0, HV_GENERIC_SET_SPARSE_4K, 0};

	/* An empty sparse set is a valid "nobody" (unlike the non-Ex mask 0). */
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_SLOW, 0, 0, NULL, 0), 0);
	CHECK_EQ(call.control, 0x13);
	check_q(&call, want, 4);
}

TEST(flush_ex_errors)
{
	static const uint32_t vps[] = {1, 4096};
	static const uint64_t gva[] = {0x1000};

	poison(&call);
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_FAST, 0, 0, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_SLOW, 0, 0, vps, 2), -E_RANGE);
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_SLOW, 0, 0, NULL, 2), -E_INVAL);
	CHECK_EQ(hv_encode_flush_space_ex(&call, HV_FORM_SLOW, 0, 1ull << 63, vps, 1), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_FAST, 0, 0, vps, 1, gva, NULL, 1),
		 -E_INVAL);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, 2, gva, NULL, 1), -E_RANGE);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, 1, gva, NULL, 0), -E_INVAL);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, 0, vps, 1, gva, NULL,
					 HV_FLUSH_MAX_GVAS + 1),
		 -E_NOSPC);
	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_XMM, 0, HV_FLUSH_USE_EXTENDED_RANGE_FORMAT,
					 vps, 1, gva, NULL, 1),
		 -E_NOTSUP);
	CHECK(is_poisoned(&call));
}

/*
 * An empty bank added to an encoded sparse set: the lowest bank not in the
 * mask, at its place among the banks, the variable header one longer.
 * Worked by hand from docs/hyperv-abi.md 3.6's layouts.
 */
TEST(empty_bank_appended)
{
	static const uint32_t vps[] = {0, 1};
	static const uint64_t before[] = {0x40, 0x0, 0x1, 0x3};
	static const uint64_t after[] = {0x40, 0x0, 0x3, 0x3, 0x0};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x40, vps, 2, false), 0);
	CHECK_EQ(call.control, 0x0000000000020015ull);
	check_q(&call, before, 4);
	CHECK_EQ(hv_vpset_add_empty_bank(&call), 0);
	CHECK_EQ(call.control, 0x0000000000040015ull); /* var header 2 */
	CHECK_EQ(call.form, HV_FORM_SLOW);
	check_q(&call, after, 5);
}

/* VPs {1, 130}: banks 0 and 2; bank 1 goes between them. */
TEST(empty_bank_between)
{
	static const uint32_t vps[] = {130, 1};
	static const uint64_t after[] = {0xf0, 0x0, 0x7, 0x2, 0x0, 0x4};

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0xf0, vps, 2, false), 0);
	CHECK_EQ(call.control, 0x0000000000040015ull);
	CHECK_EQ(hv_vpset_add_empty_bank(&call), 0);
	CHECK_EQ(call.control, 0x0000000000060015ull);
	check_q(&call, after, 6);
}

/* A List Ex call: the GVA moves up one qword; the rep count stays. */
TEST(empty_bank_flush_list_ex)
{
	static const uint32_t vps[] = {1, 130};
	static const uint64_t gva[] = {0x7f0000400000ull};
	static const uint32_t extra[] = {3};
	static const uint64_t after[] = {0, 2, 0, 7, 2, 0, 4, 0x00007f0000400003ull};

	CHECK_EQ(hv_encode_flush_list_ex(&call, HV_FORM_SLOW, 0,
					 HV_FLUSH_ALL_VIRTUAL_ADDRESS_SPACES, vps, 2, gva, extra,
					 1),
		 0);
	CHECK_EQ(call.control, 0x0000000100040014ull);
	CHECK_EQ(hv_vpset_add_empty_bank(&call), 0);
	CHECK_EQ(call.control, 0x0000000100060014ull);
	check_q(&call, after, 8);
}

/* XMM-fast at capacity (11 banks): the twelfth does not fit, so slow. */
TEST(empty_bank_xmm_to_slow)
{
	uint32_t vps[64];
	size_t n = one_per_bank(vps, 11);

	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_XMM, 0x20, vps, n, false), 0);
	CHECK_EQ(call.form, HV_FORM_XMM);
	CHECK_EQ(hv_vpset_add_empty_bank(&call), 0);
	CHECK_EQ(call.form, HV_FORM_SLOW);
	CHECK_EQ(call.control, 0x15 | 12ull << 17);
	CHECK_EQ(call.qwords, 15);
	CHECK_EQ(call.q[2], 0xfff);
	CHECK_EQ(call.q[13], 1ull << 10);
	CHECK_EQ(call.q[14], 0);
	CHECK_EQ(hv_call_xmm_registers(&call), 0);
}

/* Whether two calls hold the same input (their members: the struct has padding). */
static int same_call(const struct hv_call *a, const struct hv_call *b)
{
	if (a->control != b->control || a->form != b->form || a->qwords != b->qwords)
		return 0;
	for (size_t i = 0; i < HV_CALL_MAX_QWORDS; i++) {
		if (a->q[i] != b->q[i])
			return 0;
	}
	return 1;
}

/* Nothing to add to: no sparse set, or all 64 banks. The call is left as it was. */
TEST(empty_bank_errors)
{
	static const uint32_t one[] = {1};
	uint32_t vps[64];
	size_t n = one_per_bank(vps, 64);
	struct hv_call copy;

	CHECK_EQ(hv_encode_send_ipi(&call, HV_FORM_FAST, 0x40, one, 1), 0);
	copy = call;
	CHECK_EQ(hv_vpset_add_empty_bank(&call), -E_INVAL);
	CHECK(same_call(&copy, &call));
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x40, NULL, 0, true), 0);
	copy = call;
	CHECK_EQ(hv_vpset_add_empty_bank(&call), -E_INVAL);
	CHECK(same_call(&copy, &call));
	CHECK_EQ(hv_encode_send_ipi_ex(&call, HV_FORM_SLOW, 0x40, vps, n, false), 0);
	copy = call;
	CHECK_EQ(hv_vpset_add_empty_bank(&call), -E_INVAL);
	CHECK(same_call(&copy, &call));
}

TEST(capacity_unknown_code)
{
	CHECK_EQ(hv_xmm_capacity(0x0001), -E_INVAL);
	CHECK_EQ(hv_xmm_capacity(0xffff), -E_INVAL);
}

TEST(status_names)
{
	CHECK_STR(hv_status_name(0), "SUCCESS");
	CHECK_STR(hv_status_name(2), "INVALID_HYPERCALL_CODE");
	CHECK_STR(hv_status_name(3), "INVALID_HYPERCALL_INPUT");
	CHECK_STR(hv_status_name(4), "INVALID_ALIGNMENT");
	CHECK_STR(hv_status_name(5), "INVALID_PARAMETER");
	CHECK_STR(hv_status_name(6), "ACCESS_DENIED");
	CHECK_STR(hv_status_name(7), "INVALID_PARTITION_STATE");
	CHECK_STR(hv_status_name(8), "OPERATION_DENIED");
	CHECK_STR(hv_status_name(0xb), "INSUFFICIENT_MEMORY");
	CHECK_STR(hv_status_name(0xe), "INVALID_VP_INDEX");
	CHECK_STR(hv_status_name(0x11), "INVALID_PORT_ID");
	CHECK_STR(hv_status_name(0x13), "INSUFFICIENT_BUFFERS");
	CHECK_STR(hv_status_name(1), "UNKNOWN");
	CHECK_STR(hv_status_name(0xffff), "UNKNOWN");
}

TEST_MAIN(T(control_word), T(result_fields), T(vpset_tlfs_example), T(vpset_sizes), T(vpset_errors),
	  T(vpset_sparse), T(only_xmm_pads), T(ipi_ex_slow_example), T(ipi_ex_xmm_example),
	  T(ipi_ex_all), T(ipi_ex_xmm_capacity), T(ipi_ex_empty), T(ipi_ex_errors), T(ipi_example),
	  T(ipi_limits), T(ipi_errors), T(flush_space_example), T(flush_space_all_processors),
	  T(flush_space_errors), T(flush_list), T(flush_list_capacity), T(flush_list_errors),
	  T(gva_element), T(flush_list_ex_example), T(flush_list_ex_capacity), T(flush_space_ex),
	  T(flush_ex_all_processors), T(flush_ex_empty_set), T(flush_ex_errors),
	  T(empty_bank_appended), T(empty_bank_between), T(empty_bank_flush_list_ex),
	  T(empty_bank_xmm_to_slow), T(empty_bank_errors), T(capacity_unknown_code), T(status_names))

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of lib/lava.c: slugs as LAVA makes them, the check line, and
 * the board's picks, which must be those of run.sh's summary table
 * (host/ipibench/boot/headline.py, headline()).
 */
#include "tests/unit/check.h"
#include "lib/error.h"
#include "lib/lava.h"

static struct stats stats_p50(uint64_t p50)
{
	struct stats st = { .n = 1, .seen = 1, .min = p50, .p50 = p50, .max = p50, .mean = p50 };

	return st;
}

static struct result rec(const char *backend, const char *bench, const char *metric,
			 const char *variant, const struct stats *st)
{
	struct result r = {
		.bench = bench, .metric = metric, .variant = variant, .backend = backend,
		.ntargets = 1, .st = st, .tsc_khz = 2000000, .status = "SUCCESS",
	};
	return r;
}

/* Every line of a board, joined by '\n'. */
static const char *lines(const struct lava_board *b)
{
	static char out[4096];
	char line[LAVA_LINE_MAX];
	size_t n = 0;

	out[0] = 0;
	for (unsigned int i = 0; lava_figure_line(line, sizeof(line), b, i) >= 0; i++)
		n += (size_t)snprintf(out + n, sizeof(out) - n, "%s%s", n ? "\n" : "", line);
	return out;
}

TEST(slug_is_lavas)
{
	char buf[LAVA_ID_MAX];

	CHECK_EQ(lava_slug(buf, sizeof(buf), "xapic: CPU 0 -> CPU 1, vector 0x43"), 29);
	CHECK_STR(buf, "xapic_cpu_0_cpu_1_vector_0x43");
	CHECK(lava_slug(buf, sizeof(buf), "x2apic (again): TPR 0x60 holds vector 0x65 on CPU 0 "
			"(self-IPI on CPU 0) until TPR drops") > 0);
	CHECK_STR(buf, "x2apic_again_tpr_0x60_holds_vector_0x65_on_cpu_0_self_ipi_on_cpu_0_until_tpr_drops");
	/* Nothing at either end, one '_' for any run, '_' itself a separator. */
	CHECK(lava_slug(buf, sizeof(buf), "  --hv_ipi-ex  {0-3}.. ") > 0);
	CHECK_STR(buf, "hv_ipi_ex_0_3");
	CHECK_EQ(lava_slug(buf, sizeof(buf), " :-) "), -E_INVAL);
	CHECK_STR(buf, "");
	CHECK_EQ(lava_slug(buf, sizeof(buf), NULL), -E_INVAL);
}

TEST(slug_overflow_is_reported)
{
	char buf[6];

	CHECK_EQ(lava_slug(buf, sizeof(buf), "ab cd"), 5);
	CHECK_STR(buf, "ab_cd");
	/* No '_' left dangling where the next word did not fit. */
	CHECK_EQ(lava_slug(buf, sizeof(buf), "abcd e"), -E_NOSPC);
	CHECK_STR(buf, "abcd");
	CHECK_EQ(lava_slug(buf, 0, "a"), -E_NOSPC);
}

TEST(case_line)
{
	char buf[LAVA_LINE_MAX];

	CHECK(lava_case_line(buf, sizeof(buf), "xapic: self on CPU 0, vector 0x41", "pass") > 0);
	CHECK_STR(buf, "ipibench-case: xapic_self_on_cpu_0_vector_0x41 pass");
	CHECK_EQ(lava_case_line(buf, 20, "xapic: self on CPU 0, vector 0x41", "pass"), -E_NOSPC);
	CHECK(lava_case_line(buf, sizeof(buf), "!!", "pass") < 0 && buf[0] == 0);
	CHECK_STR(lava_result_of("SUCCESS"), "pass");
	CHECK_STR(lava_result_of("SKIP"), "skip");
	CHECK_STR(lava_result_of("FAILURE"), "fail");
	CHECK_STR(lava_result_of("ERROR"), "fail");
	CHECK_STR(lava_result_of("CRASH"), "fail");
}

/* The five figures, cycles then ns, in the summary's column order. */
TEST(board_figures)
{
	struct lava_board b = { 0 };
	struct stats s1 = stats_p50(4000), s2 = stats_p50(2000), s3 = stats_p50(9000),
		     s4 = stats_p50(30000), s5 = stats_p50(50000), other = stats_p50(1);
	struct result r;

	r = rec("x2apic", "broadcast", "all-ack", "shorthand", &s5);
	r.ntargets = 3;
	lava_board_note(&b, &r);
	r = rec("x2apic", "single-halt", "round-trip", NULL, &s4);
	lava_board_note(&b, &r);
	r = rec("x2apic", "self", "send-to-handler", "sti-hlt", &other); /* not the headline */
	lava_board_note(&b, &r);
	r = rec("x2apic", "self", "send-to-handler", "sti-nop", &s1);
	lava_board_note(&b, &r);
	r = rec("x2apic", "send-cost", "send", NULL, &s2);
	lava_board_note(&b, &r);
	r = rec("x2apic", "single", "round-trip", NULL, &s3);
	lava_board_note(&b, &r);
	r = rec("x2apic", "single", "one-way", NULL, &other);
	lava_board_note(&b, &r);
	CHECK_STR(lines(&b), "ipibench-figure: x2apic_self_sti_nop_p50_cycles 4000 cycles\n"
			     "ipibench-figure: x2apic_self_sti_nop_p50_ns 2000 ns\n"
			     "ipibench-figure: x2apic_send_cost_p50_cycles 2000 cycles\n"
			     "ipibench-figure: x2apic_send_cost_p50_ns 1000 ns\n"
			     "ipibench-figure: x2apic_single_round_trip_p50_cycles 9000 cycles\n"
			     "ipibench-figure: x2apic_single_round_trip_p50_ns 4500 ns\n"
			     "ipibench-figure: x2apic_single_halt_round_trip_p50_cycles 30000 cycles\n"
			     "ipibench-figure: x2apic_single_halt_round_trip_p50_ns 15000 ns\n"
			     "ipibench-figure: x2apic_broadcast_all_ack_p50_cycles 50000 cycles\n"
			     "ipibench-figure: x2apic_broadcast_all_ack_p50_ns 25000 ns");
}

/* The first record of a figure stands, whatever its status; a non-SUCCESS one shows nothing. */
TEST(board_first_record_stands)
{
	struct lava_board b = { 0 };
	struct stats s = stats_p50(777), later = stats_p50(1);
	struct result r;

	r = rec("hv-ipi-ex", "single", "round-trip", NULL, NULL);
	r.status = "SKIP";
	lava_board_note(&b, &r);
	r = rec("hv-ipi-ex", "single", "round-trip", "ack-after-eoi", &later);
	lava_board_note(&b, &r);
	r = rec("xapic", "single", "round-trip", NULL, &s);
	lava_board_note(&b, &r);
	r = rec("xapic", "single", "round-trip", "ack-after-eoi", &later);
	lava_board_note(&b, &r);
	r = rec("none", "single", "round-trip", NULL, &later);
	lava_board_note(&b, &r);
	CHECK_EQ(b.n, 2);
	CHECK_STR(lines(&b), "ipibench-figure: xapic_single_round_trip_p50_cycles 777 cycles\n"
			     "ipibench-figure: xapic_single_round_trip_p50_ns 389 ns");
}

/* Broadcast: the most targets, then shorthand, set, loop, then the first other. */
TEST(board_broadcast_pick)
{
	struct lava_board b = { 0 };
	struct stats loop3 = stats_p50(300), set3 = stats_p50(200), sh1 = stats_p50(100),
		     other3 = stats_p50(400), set3b = stats_p50(201);
	struct result r;

	r = rec("x2apic", "broadcast", "all-ack", "shorthand", &sh1);
	lava_board_note(&b, &r);
	r = rec("x2apic", "broadcast", "all-ack", "other", &other3);
	r.ntargets = 3;
	lava_board_note(&b, &r);
	r = rec("x2apic", "broadcast", "all-ack", "loop", &loop3);
	r.ntargets = 3;
	lava_board_note(&b, &r);
	r = rec("x2apic", "broadcast", "all-ack", "set", &set3);
	r.ntargets = 3;
	lava_board_note(&b, &r);
	r = rec("x2apic", "broadcast", "all-ack", "set", &set3b);
	r.ntargets = 3;
	lava_board_note(&b, &r);
	r = rec("x2apic", "broadcast", "all-ack", "shorthand", &sh1);
	r.ntargets = 2;
	lava_board_note(&b, &r);
	CHECK_STR(lines(&b), "ipibench-figure: x2apic_broadcast_all_ack_p50_cycles 200 cycles\n"
			     "ipibench-figure: x2apic_broadcast_all_ack_p50_ns 100 ns");
}

/* ns only where the TSC frequency is known and not guessed. */
TEST(board_ns_trust)
{
	struct lava_board b = { 0 };
	struct stats s = stats_p50(5000);
	struct result r;

	r = rec("xapic", "send-cost", "send", NULL, &s);
	r.tsc_khz = 0;
	lava_board_note(&b, &r);
	r = rec("x2apic", "send-cost", "send", NULL, &s);
	r.untrusted = "tcg tsc-freq-guessed";
	lava_board_note(&b, &r);
	r = rec("kvm-pv-ipi", "send-cost", "send", NULL, &s);
	r.untrusted = "tcg tsc-freq-guessed-not";
	lava_board_note(&b, &r);
	CHECK_STR(lines(&b), "ipibench-figure: xapic_send_cost_p50_cycles 5000 cycles\n"
			     "ipibench-figure: x2apic_send_cost_p50_cycles 5000 cycles\n"
			     "ipibench-figure: kvm_pv_ipi_send_cost_p50_cycles 5000 cycles\n"
			     "ipibench-figure: kvm_pv_ipi_send_cost_p50_ns 2500 ns");
}

TEST(board_full_and_short_buffer)
{
	static const char *const names[LAVA_ROWS + 1] = {
		"b0", "b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8",
		"b9", "b10", "b11", "b12", "b13", "b14", "b15", "b16",
	};
	struct lava_board b = { 0 };
	struct stats s = stats_p50(1);
	char buf[LAVA_LINE_MAX];
	struct result r;

	for (unsigned int i = 0; i < LAVA_ROWS + 1; i++) {
		r = rec(names[i], "send-cost", "send", NULL, &s);
		r.tsc_khz = 0;
		lava_board_note(&b, &r);
	}
	CHECK_EQ(b.n, LAVA_ROWS);
	CHECK(lava_figure_line(buf, sizeof(buf), &b, LAVA_ROWS - 1) > 0);
	CHECK_STR(buf, "ipibench-figure: b15_send_cost_p50_cycles 1 cycles");
	CHECK_EQ(lava_figure_line(buf, sizeof(buf), &b, LAVA_ROWS), -E_NOENT);
	CHECK_EQ(lava_figure_line(buf, 10, &b, 0), -E_NOSPC);
}

TEST_MAIN(T(slug_is_lavas), T(slug_overflow_is_reported), T(case_line), T(board_figures),
	  T(board_first_record_stands), T(board_broadcast_pick), T(board_ns_trust),
	  T(board_full_and_short_buffer))

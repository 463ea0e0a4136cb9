// SPDX-License-Identifier: GPL-2.0-only
/* Host tests of lib/record.c: exact record text, SKIP records, overflow. */
#include "tests/unit/check.h"
#include "lib/error.h"
#include "lib/record.h"

static struct stats st3(void)
{
	static uint64_t v[] = { 300, 100, 200 };
	struct stats st;

	stats_compute(&st, v, 3);
	return st;
}

static struct result base(const struct stats *st, const struct histo *h)
{
	struct result r = {
		.bench = "single", .metric = "round-trip", .variant = NULL,
		.backend = "x2apic", .flags = "dest=physical", .target_state = "spin",
		.sender = 0, .targets = "1", .ntargets = 1, .iterations = 3, .st = st,
		.histo = h, .tsc_khz = 2000000, .dryrun_cycles = 40, .status = "SUCCESS",
	};
	return r;
}

TEST(result_exact)
{
	struct stats st = st3();
	struct histo h;
	char buf[RECORD_MAX];
	struct result r;

	histo_init(&h);
	histo_add(&h, 100);
	histo_add(&h, 200);
	histo_add(&h, 300);
	r = base(&st, &h);
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK_STR(buf,
		  "{\"record\":\"result\",\"schema\":1,\"bench\":\"single\",\"metric\":\"round-trip\","
		  "\"variant\":\"none\",\"backend\":\"x2apic\",\"flags\":\"dest=physical\","
		  "\"target_state\":\"spin\",\"sender\":0,\"targets\":\"1\",\"ntargets\":1,\"after_x2apic\":false,"
		  "\"status\":\"SUCCESS\",\"iterations\":3,\"samples\":3,\"invalid\":0,\"unit\":\"cycles\","
		  "\"cycles\":{\"min\":100,\"p50\":200,\"mean\":200,\"p90\":300,\"p99\":300,"
		  "\"max\":300,\"stddev\":82},"
		  "\"ns\":{\"min\":50,\"p50\":100,\"mean\":100,\"p90\":150,\"p99\":150,\"max\":150,"
		  "\"stddev\":41},\"dryrun_cycles\":40,"
		  "\"histogram\":[[96,111,1],[192,223,1],[256,319,1]]}");
}

/* Invalid samples are counted beside the kept ones: iterations = histogram + invalid. */
TEST(result_counts_invalid_samples)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);

	r.iterations = 5;
	r.invalid = 2;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"iterations\":5,\"samples\":3,\"invalid\":2,") != NULL);
}

/* A phase marker is in the record when there is one, and absent otherwise. */
TEST(result_mark)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);

	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"mark\"") == NULL);
	r.mark = 7;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"iterations\":3,\"mark\":7,") != NULL);
}

/* Whether some CPU had been in x2APIC mode: always stated, false or true. */
TEST(result_after_x2apic)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);

	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"ntargets\":1,\"after_x2apic\":false,\"status\"") != NULL);
	r.after_x2apic = true;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"after_x2apic\":true,") != NULL);
}

/*
 * A halted target's late wakes: five keys on the record (the late ones, the
 * bound, the slowest, the iterations with a target tick and the wakes over
 * the bound among those), a note on its row when any.
 */
TEST(result_late_wakes)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);

	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "late_wakes") == NULL);
	r.has_late = true;
	r.late_bound = 2000;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"dryrun_cycles\":40,\"late_wakes\":0,\"late_bound_cycles\":2000,"
			  "\"late_max_cycles\":0,\"tick_iterations\":0,\"late_tick_wakes\":0,"
			  "\"rehalt_timeouts\":0}") != NULL);
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "late-wakes") == NULL);
	r.late_count = 2;
	r.late_max = 4000000; /* 2 ms at 2 GHz */
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "  [late-wakes=2, max 2000 us]") != NULL);
	CHECK(strstr(buf, "late-by-tick") == NULL);
	/* A wake a tick delayed is said apart from the late ones. */
	r.tick_iters = 3;
	r.late_ticks = 1;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"tick_iterations\":3,\"late_tick_wakes\":1,") != NULL);
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "  [late-wakes=2, max 2000 us]  [late-by-tick=1]") != NULL);
	CHECK(strstr(buf, "rehalt-timeouts") == NULL);
	/* A re-halt wait that ran out is counted and said on the row. */
	r.rehalt_timeouts = 1;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"late_tick_wakes\":1,\"rehalt_timeouts\":1}") != NULL);
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "  [late-by-tick=1]  [rehalt-timeouts=1]") != NULL);
}

TEST(skip_has_reason_and_no_stats)
{
	char buf[RECORD_MAX];
	struct result r = base(NULL, NULL);

	r.status = "SKIP";
	r.reason = "needs 2 CPUs";
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"status\":\"SKIP\",\"reason\":\"needs 2 CPUs\"") != NULL);
	CHECK(strstr(buf, "cycles") == NULL);
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "SKIP: needs 2 CPUs") != NULL);
}

TEST(unknown_tsc_has_no_ns)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);

	r.tsc_khz = 0;
	CHECK(record_result(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "\"ns\"") == NULL);
	CHECK(strstr(buf, "histogram") == NULL);
}

TEST(overflow_leaves_no_partial_record)
{
	struct stats st = st3();
	char buf[RECORD_MAX];
	struct result r = base(&st, NULL);
	int full = record_result(buf, sizeof(buf), &r);

	for (int cap = 0; cap <= full; cap++) {
		char small[RECORD_MAX];

		memset(small, 'x', sizeof(small));
		CHECK_EQ(record_result(small, (size_t)cap, &r), (uint64_t)(int64_t)-E_NOSPC);
		if (cap > 0)
			CHECK_EQ(small[0], 0);
		CHECK_EQ(small[cap], 'x');
	}
	CHECK_EQ(record_result(buf, (size_t)full + 1, &r), full);
}

TEST(table_row_columns)
{
	struct stats st = st3();
	char buf[256];
	struct result r = base(&st, NULL);

	CHECK(record_table_header(buf, sizeof(buf)) > 0);
	CHECK(strncmp(buf, "bench", 5) == 0);
	CHECK(record_table_row(buf, sizeof(buf), &r) > 0);
	CHECK(strstr(buf, "single") == buf);
	CHECK(strstr(buf, " 0>1 ") != NULL);
	CHECK(strstr(buf, " 200 ") != NULL);	/* p50 cycles */
	CHECK(strstr(buf, " 100 ") != NULL);	/* p50 ns at 2 GHz */
}

TEST(norov_exact)
{
	char buf[RECORD_MAX];
	struct norov n = { "Normal IPI", "x2apic", 100000, 223910476, 251301666, "SUCCESS", NULL,
			   true, "after-eoi" };

	CHECK(record_norov(buf, sizeof(buf), &n) > 0);
	CHECK_STR(buf, "{\"record\":\"norov\",\"schema\":1,\"test\":\"Normal IPI\","
		       "\"backend\":\"x2apic\",\"iterations\":100000,\"delivery_ns\":223910476,"
		       "\"total_ns\":251301666,\"after_x2apic\":true,\"ack\":\"after-eoi\","
		       "\"status\":\"SUCCESS\"}");
}

/* A delivery that is not a measured figure says why, so 0 never reads as "0 ns". */
TEST(norov_delivery_note)
{
	char buf[RECORD_MAX];
	struct norov n = { "Self-IPI", "x2apic", 10, 0, 500, "SUCCESS", "no IPI", false, NULL };

	CHECK(record_norov(buf, sizeof(buf), &n) > 0);
	CHECK(strstr(buf, "\"delivery_ns\":0,\"delivery_note\":\"no IPI\",") != NULL);
}

TEST(kut_exact)
{
	char buf[RECORD_MAX];

	CHECK(record_kut(buf, sizeof(buf), "self_ipi_sti_nop", "x2apic", 1234) > 0);
	CHECK_STR(buf, "{\"record\":\"kut\",\"schema\":1,\"name\":\"self_ipi_sti_nop\","
		       "\"backend\":\"x2apic\",\"mean_cycles\":1234}");
}

TEST(phase_exact)
{
	char buf[RECORD_MAX];

	CHECK(record_phase(buf, sizeof(buf), 3, 40, "x2apic", "single") > 0);
	CHECK_STR(buf, "{\"record\":\"phase\",\"schema\":1,\"index\":3,\"of\":40,"
		       "\"backend\":\"x2apic\",\"bench\":\"single\"}");
	CHECK(record_phase(buf, 20, 3, 40, "x2apic", "single") < 0 && buf[0] == 0);
}

TEST(check_exact)
{
	char buf[RECORD_MAX];

	CHECK(record_check(buf, sizeof(buf), "all", 101, 0, 2) > 0);
	CHECK_STR(buf, "{\"record\":\"check\",\"schema\":1,\"backend\":\"all\",\"passed\":101,"
		       "\"failed\":0,\"skipped\":2}");
}

TEST_MAIN(T(norov_exact), T(norov_delivery_note), T(kut_exact), T(phase_exact), T(check_exact), T(result_exact),
	  T(result_counts_invalid_samples), T(result_mark), T(result_after_x2apic), T(result_late_wakes), T(skip_has_reason_and_no_stats), T(unknown_tsc_has_no_ns),
	  T(overflow_leaves_no_partial_record), T(table_row_columns))

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/json.c: exact output for nesting, integers, fixed point
 * and escaping (checked against snprintf), overflow at every buffer size,
 * and every misuse that json_finish() must reject.
 */
#include <stdlib.h>

#include "lib/error.h"
#include "lib/json.h"
#include "tests/unit/check.h"

static char out[4096];

/* Run fill into out (size cap) and return json_finish()'s result. */
static int build(void (*fill)(struct json *), size_t cap)
{
	struct json j;

	json_init(&j, out, cap);
	fill(&j);
	return json_finish(&j);
}

/* Expect fill to produce exactly want. */
static void check_output(void (*fill)(struct json *), const char *want)
{
	int len = build(fill, sizeof(out));

	CHECK_EQ(len, strlen(want));
	CHECK_STR(out, want);
}

static void fill_nested(struct json *j)
{
	json_obj_begin(j, NULL);
	json_u64(j, "a", 1);
	json_obj_begin(j, "o");
	json_str(j, "s", "x");
	json_arr_begin(j, "arr");
	json_u64(j, NULL, 1);
	json_i64(j, NULL, -2);
	json_obj_begin(j, NULL);
	json_obj_end(j);
	json_arr_begin(j, NULL);
	json_arr_end(j);
	json_null(j, NULL);
	json_bool(j, NULL, true);
	json_bool(j, NULL, false);
	json_arr_end(j);
	json_obj_end(j);
	json_arr_begin(j, "e");
	json_arr_end(j);
	json_obj_begin(j, "eo");
	json_obj_end(j);
	json_hex(j, "h", 0xdeadbeef);
	json_fixed(j, "f", 1234);
	json_obj_end(j);
}

static const char nested_want[] =
    "{\"a\":1,\"o\":{\"s\":\"x\",\"arr\":[1,-2,{},[],null,true,false]},"
    "\"e\":[],\"eo\":{},\"h\":\"0xdeadbeef\",\"f\":1.234}";

TEST(json_nested)
{
	check_output(fill_nested, nested_want);
}

static void fill_empty(struct json *j)
{
	json_obj_begin(j, NULL);
	json_obj_end(j);
}

TEST(json_empty_object)
{
	check_output(fill_empty, "{}");
}

static void fill_integers(struct json *j)
{
	json_obj_begin(j, NULL);
	json_i64(j, "min", INT64_MIN);
	json_i64(j, "max", INT64_MAX);
	json_i64(j, "m1", -1);
	json_i64(j, "z", 0);
	json_u64(j, "umax", UINT64_MAX);
	json_u64(j, "u0", 0);
	json_u64(j, "u10", 10);
	json_hex(j, "h0", 0);
	json_hex(j, "hmax", UINT64_MAX);
	json_hex(j, "h", 0x1000a);
	json_obj_end(j);
}

TEST(json_integers)
{
	check_output(fill_integers, "{\"min\":-9223372036854775808,\"max\":9223372036854775807,"
				    "\"m1\":-1,\"z\":0,\"umax\":18446744073709551615,\"u0\":0,"
				    "\"u10\":10,\"h0\":\"0x0\",\"hmax\":\"0xffffffffffffffff\","
				    "\"h\":\"0x1000a\"}");
}

/*
 * Random integers against snprintf. clang-tidy's insecureAPI check wants C11
 * Annex K's snprintf_s, which glibc lacks; snprintf is bounded and is the
 * reference here, hence the NOLINT.
 */
TEST(json_integers_vs_snprintf)
{
	char want[256];
	uint64_t x = 88172645463325252ULL;

	for (int i = 0; i < 20000; i++) {
		struct json j;
		uint64_t v;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		v = x >> (x % 64);
		json_init(&j, out, sizeof(out));
		json_obj_begin(&j, NULL);
		json_u64(&j, "u", v);
		json_i64(&j, "i", (int64_t)v);
		json_hex(&j, "h", v);
		json_fixed(&j, "f", v);
		json_obj_end(&j);
		CHECK(json_finish(&j) > 0);
		// NOLINTNEXTLINE(clang-analyzer-security.insecureAPI.*)
		snprintf(want, sizeof(want),
			 "{\"u\":%" PRIu64 ",\"i\":%" PRId64 ",\"h\":\"0x%" PRIx64
			 "\",\"f\":%" PRIu64 ".%03" PRIu64 "}",
			 v, (int64_t)v, v, v / 1000, v % 1000);
		CHECK_STR(out, want);
	}
}

static void fill_fixed(struct json *j)
{
	static const uint64_t v[] = {0, 1, 10, 999, 1000, 1001, 1234, 100000, UINT64_MAX};

	json_obj_begin(j, NULL);
	json_arr_begin(j, "f");
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		json_fixed(j, NULL, v[i]);
	json_arr_end(j);
	json_obj_end(j);
}

TEST(json_fixed)
{
	check_output(fill_fixed, "{\"f\":[0.000,0.001,0.010,0.999,1.000,1.001,1.234,100.000,"
				 "18446744073709551.615]}");
}

static void fill_controls(struct json *j)
{
	char all[32];

	for (int c = 0; c < 32; c++)
		all[c] = (char)c;
	json_obj_begin(j, NULL);
	json_strn(j, "c", all, sizeof(all));
	json_obj_end(j);
}

/* All 32 control characters in one string, written out by hand. */
TEST(json_escape_controls)
{
	check_output(fill_controls,
		     "{\"c\":\"\\u0000\\u0001\\u0002\\u0003\\u0004\\u0005\\u0006\\u0007"
		     "\\b\\t\\n\\u000b\\f\\r\\u000e\\u000f"
		     "\\u0010\\u0011\\u0012\\u0013\\u0014\\u0015\\u0016\\u0017"
		     "\\u0018\\u0019\\u001a\\u001b\\u001c\\u001d\\u001e\\u001f\"}");
}

/* The escape RFC 8259 section 7 allows for byte c, written independently of lib/json.c. */
static const char *expected_escape(unsigned c, char buf[8])
{
	static const char hex[] = "0123456789abcdef";

	switch (c) {
	case '"':
		return "\\\"";
	case '\\':
		return "\\\\";
	case '\b':
		return "\\b";
	case '\t':
		return "\\t";
	case '\n':
		return "\\n";
	case '\f':
		return "\\f";
	case '\r':
		return "\\r";
	default:
		break;
	}
	if (c < 0x20) {
		buf[0] = '\\';
		buf[1] = 'u';
		buf[2] = '0';
		buf[3] = '0';
		buf[4] = hex[c >> 4];
		buf[5] = hex[c & 15];
		buf[6] = 0;
	} else {
		buf[0] = (char)c;
		buf[1] = 0;
	}
	return buf;
}

/* Every byte 0x00..0xff as a one-byte string. */
TEST(json_escape_every_byte)
{
	for (unsigned c = 0; c < 256; c++) {
		struct json j;
		char s[1] = {(char)c};
		char buf[8];
		const char *esc = expected_escape(c, buf);
		size_t n = strlen(esc);

		json_init(&j, out, sizeof(out));
		json_obj_begin(&j, NULL);
		json_strn(&j, "k", s, 1);
		json_obj_end(&j);
		CHECK_EQ(json_finish(&j), 6 + n + 2);
		CHECK(strncmp(out, "{\"k\":\"", 6) == 0);
		CHECK(strncmp(out + 6, esc, n) == 0);
		CHECK_STR(out + 6 + n, "\"}");
	}
}

static void fill_strings(struct json *j)
{
	json_obj_begin(j, NULL);
	json_str(j, "plain", "hello world");
	json_str(j, "mixed", "a\"b\\c\nd\te\x01\x1f/\x7f\xc3\xa9");
	json_str(j, "k\"ey\n", "v");
	json_str(j, "empty", "");
	json_str(j, "nul", NULL);
	json_strn(j, "cut", "abcdef", 3);
	json_strn(j, "zero", "a\0b", 3);
	json_strn(j, "none", NULL, 5);
	json_obj_end(j);
}

TEST(json_strings)
{
	check_output(fill_strings,
		     "{\"plain\":\"hello world\","
		     "\"mixed\":\"a\\\"b\\\\c\\nd\\te\\u0001\\u001f/\x7f\xc3\xa9\","
		     "\"k\\\"ey\\n\":\"v\",\"empty\":\"\",\"nul\":null,\"cut\":\"abc\","
		     "\"zero\":\"a\\u0000b\",\"none\":null}");
}

static void fill_big(struct json *j)
{
	json_obj_begin(j, NULL);
	json_str(j, "esc", "q\"\\\n\x02\xff");
	json_i64(j, "min", INT64_MIN);
	json_u64(j, "max", UINT64_MAX);
	json_arr_begin(j, "a");
	json_fixed(j, NULL, 1);
	json_hex(j, NULL, 0xabc);
	json_obj_begin(j, NULL);
	json_bool(j, "t", true);
	json_null(j, "n");
	json_obj_end(j);
	json_arr_end(j);
	json_obj_end(j);
}

/* Every buffer size from 0 to one past the record: never write past cap, no partial record. */
TEST(json_overflow_every_size)
{
	static char guard[4096];
	int full = build(fill_big, sizeof(out));
	struct json j;

	CHECK(full > 0);
	for (size_t cap = 0; cap <= (size_t)full + 1; cap++) {
		int r;

		for (size_t i = 0; i < sizeof(guard); i++)
			guard[i] = (char)0xaa;
		json_init(&j, guard, cap);
		fill_big(&j);
		r = json_finish(&j);
		for (size_t i = cap; i < sizeof(guard); i++)
			CHECK((unsigned char)guard[i] == 0xaa);
		if (cap <= (size_t)full) {
			CHECK_EQ(r, -E_NOSPC);
			CHECK(cap == 0 || guard[0] == '\0');
		} else {
			CHECK_EQ(r, full);
			CHECK_STR(guard, out);
		}
	}
	json_init(&j, NULL, 100); /* no buffer at all */
	fill_big(&j);
	CHECK_EQ(json_finish(&j), -E_NOSPC);
	CHECK_EQ(j.cap, 0);
}

static void fill_unclosed(struct json *j)
{
	json_obj_begin(j, NULL);
	json_arr_begin(j, "a");
	json_arr_end(j);
}

static void fill_extra_end(struct json *j)
{
	fill_empty(j);
	json_obj_end(j);
}

static void fill_end_arr_as_obj(struct json *j)
{
	json_obj_begin(j, NULL);
	json_arr_begin(j, "a");
	json_obj_end(j);
	json_obj_end(j);
}

static void fill_end_obj_as_arr(struct json *j)
{
	json_obj_begin(j, NULL);
	json_obj_begin(j, "o");
	json_arr_end(j);
	json_obj_end(j);
}

static void fill_missing_key(struct json *j)
{
	json_obj_begin(j, NULL);
	json_u64(j, NULL, 1);
	json_obj_end(j);
}

static void fill_key_in_array(struct json *j)
{
	json_obj_begin(j, NULL);
	json_arr_begin(j, "a");
	json_u64(j, "k", 1);
	json_arr_end(j);
	json_obj_end(j);
}

static void fill_top_key(struct json *j)
{
	json_obj_begin(j, "k");
	json_obj_end(j);
}

static void fill_top_scalar(struct json *j)
{
	json_u64(j, NULL, 1);
}

static void fill_top_array(struct json *j)
{
	json_arr_begin(j, NULL);
	json_arr_end(j);
}

static void fill_two_objects(struct json *j)
{
	fill_empty(j);
	fill_empty(j);
}

static void fill_nothing(struct json *j)
{
	(void)j;
}

static void fill_too_deep(struct json *j)
{
	json_obj_begin(j, NULL);
	for (int i = 1; i < JSON_MAX_DEPTH; i++)
		json_arr_begin(j, i == 1 ? "a" : NULL);
	for (int i = 1; i < JSON_MAX_DEPTH; i++)
		json_arr_end(j);
	json_obj_end(j);
}

/* Misuse and overflow together: misuse wins. */
static void fill_long_unclosed(struct json *j)
{
	json_obj_begin(j, NULL);
	json_str(j, "s", "a string longer than the buffer");
}

TEST(json_invalid)
{
	static void (*const bad[])(struct json *) = {
	    fill_unclosed,    fill_extra_end,	 fill_end_arr_as_obj, fill_end_obj_as_arr,
	    fill_missing_key, fill_key_in_array, fill_top_key,	      fill_top_scalar,
	    fill_top_array,   fill_two_objects,	 fill_nothing,	      fill_too_deep,
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		out[0] = 'x';
		CHECK_EQ(build(bad[i], sizeof(out)), -E_INVAL);
		CHECK_EQ(out[0], '\0');
	}
	CHECK_EQ(build(fill_long_unclosed, 8), -E_INVAL);
	CHECK_EQ(out[0], '\0');
}

/* The deepest allowed nesting: JSON_MAX_DEPTH - 1 open containers. */
static void fill_deepest(struct json *j)
{
	json_obj_begin(j, NULL);
	for (int i = 2; i < JSON_MAX_DEPTH; i++)
		json_arr_begin(j, i == 2 ? "a" : NULL);
	for (int i = 2; i < JSON_MAX_DEPTH; i++)
		json_arr_end(j);
	json_obj_end(j);
}

TEST(json_depth_limit)
{
	check_output(fill_deepest, "{\"a\":[[[[[[[[[[[[[[]]]]]]]]]]]]]]}");
}

TEST(json_reuse)
{
	/* json_init() starts a fresh record in the same buffer. */
	CHECK_EQ(build(fill_two_objects, sizeof(out)), -E_INVAL);
	check_output(fill_empty, "{}");
}

TEST_MAIN(T(json_nested), T(json_empty_object), T(json_integers), T(json_integers_vs_snprintf),
	  T(json_fixed), T(json_escape_controls), T(json_escape_every_byte), T(json_strings),
	  T(json_overflow_every_size), T(json_invalid), T(json_depth_limit), T(json_reuse))

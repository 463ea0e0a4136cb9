// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests of lib/cmdline.c: every accepted form, every error path with its
 * code (and the exact message for the common ones), token placement and
 * separators, long tokens, small error buffers, 2^64 - 1 boundaries, spec
 * table checks and the help text.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/cmdline.h"
#include "lib/error.h"
#include "tests/unit/check.h"

#define N_ELEMS(a) (sizeof(a) / sizeof((a)[0]))

static const char *const plans[] = {"check", "quick", "full", NULL};
static const char *const backends[] = {"xapic", "x2apic", "hv-slow", "hv-fast", "kvm-pv", NULL};

enum { K_PLAN, K_BACKENDS, K_ITERS, K_HELP, K_TAG, K_SEED, K_NOTE, K_COUNT };

static const struct opt_spec specs[K_COUNT] = {
    [K_PLAN] = {"plan", OPT_ENUM, 0, 0, plans, "what to run"},
    [K_BACKENDS] = {"backends", OPT_LIST, 0, 0, backends, "IPI backends to measure"},
    [K_ITERS] = {"iters", OPT_UINT, 1, 1000000, NULL, "iterations per sample"},
    [K_HELP] = {"help", OPT_BOOL, 0, 0, NULL, "print this list"},
    [K_TAG] = {"tag", OPT_STRING, 2, 8, NULL, "label for the records"},
    [K_SEED] = {"seed", OPT_UINT, 0, UINT64_MAX, NULL, NULL},
    [K_NOTE] = {"note", OPT_STRING, 0, 0, NULL, "free text"},
};

static struct opt_value vals[K_COUNT];
static char err[512];

static int parse(const char *line)
{
	return cmdline_parse(line, specs, K_COUNT, vals, err, sizeof(err));
}

/* Parses one key=value token and returns the value, checking that it was accepted. */
static uint64_t parse_ok(const char *line, int key)
{
	int ret = parse(line);

	if (ret != 1 || !vals[key].set || err[0] != '\0') {
		printf("#   \"%s\": ret %d, err \"%s\"\n", line, ret, err);
		check_failed = 1;
	}
	return vals[key].u;
}

/* Parses a line that must fail with code want; the message must name the token. */
static void parse_bad(const char *line, int want, const char *token)
{
	int ret = parse(line);

	if (ret != want || !strstr(err, token) || strchr(err, '\n')) {
		printf("#   \"%s\": ret %d (want %d), err \"%s\"\n", line, ret, want, err);
		check_failed = 1;
	}
}

/* Writes prefix, n copies of c, suffix and a NUL into dst (which must be big enough). */
static char *build(char *dst, const char *prefix, char c, size_t n, const char *suffix)
{
	char *p = dst;

	while (*prefix)
		*p++ = *prefix++;
	while (n-- > 0)
		*p++ = c;
	while (*suffix)
		*p++ = *suffix++;
	*p = '\0';
	return dst;
}

TEST(full_line)
{
	const char *line = "/boot/ipibench.elf plan=check iters=10k backends=xapic,x2apic";

	CHECK_EQ(parse(line), 3);
	CHECK_STR(err, "");
	CHECK(vals[K_PLAN].set);
	CHECK_EQ(vals[K_PLAN].u, 0);
	CHECK_EQ(vals[K_ITERS].u, 10000);
	CHECK_EQ(vals[K_BACKENDS].u, 0x3);
	CHECK(vals[K_BACKENDS].s == strstr(line, "xapic,x2apic"));
	CHECK_EQ(vals[K_BACKENDS].len, 12);
	CHECK(vals[K_ITERS].s == strstr(line, "10k"));
	CHECK_EQ(vals[K_ITERS].len, 3);
	CHECK(!vals[K_HELP].set);
	CHECK(!vals[K_SEED].set);
	CHECK_EQ(vals[K_SEED].u, 0);
	CHECK(vals[K_SEED].s == NULL);
}

TEST(numbers)
{
	CHECK_EQ(parse_ok("iters=1", K_ITERS), 1);
	CHECK_EQ(parse_ok("iters=1000000", K_ITERS), 1000000);
	CHECK_EQ(parse_ok("iters=007", K_ITERS), 7); /* leading zeros are still decimal */
	CHECK_EQ(parse_ok("iters=0xf4240", K_ITERS), 1000000);
	CHECK_EQ(parse_ok("iters=0X1F", K_ITERS), 31);
	CHECK_EQ(parse_ok("iters=0xABcd", K_ITERS), 0xabcd);
	CHECK_EQ(parse_ok("iters=1M", K_ITERS), 1000000);
	CHECK_EQ(parse_ok("iters=0x10k", K_ITERS), 16000);
	CHECK_EQ(parse_ok("iters=999k", K_ITERS), 999000);
	CHECK_EQ(parse_ok("seed=0", K_SEED), 0);
	CHECK_EQ(parse_ok("seed=18446744073709551615", K_SEED), UINT64_MAX);
	CHECK_EQ(parse_ok("seed=0xffffffffffffffff", K_SEED), UINT64_MAX);
	CHECK_EQ(parse_ok("seed=0x00000000000000000000ff", K_SEED), 255);
	CHECK_EQ(parse_ok("seed=18446744073709551k", K_SEED), 18446744073709551000ULL);
	CHECK_EQ(parse_ok("seed=18446744073709M", K_SEED), 18446744073709000000ULL);
}

TEST(number_errors)
{
	CHECK_EQ(parse("iters=12x"), -E_INVAL);
	CHECK_STR(
	    err,
	    "bad number in 'iters=12x' (accepted: 1..1000000, decimal or 0x hex, suffix k or M)");
	CHECK_EQ(parse("iters=0"), -E_RANGE);
	CHECK_STR(err, "number out of range in 'iters=0' (accepted: 1..1000000, decimal or 0x hex, "
		       "suffix k or M)");
	parse_bad("iters=1000001", -E_RANGE, "'iters=1000001'");
	parse_bad("iters=2M", -E_RANGE, "'iters=2M'");
	parse_bad("seed=18446744073709551616", -E_RANGE, "number too large");
	parse_bad("seed=0x10000000000000000", -E_RANGE, "number too large");
	parse_bad("seed=18446744073709552k", -E_RANGE, "number too large");
	parse_bad("seed=18446744073709552M", -E_RANGE, "number too large");
	parse_bad("seed=99999999999999999999999999", -E_RANGE, "number too large");
	/* A malformed number is called bad even when its digits also overflow. */
	parse_bad("seed=99999999999999999999999999x", -E_INVAL, "bad number");
	static const char *const bad[] = {"iters=0x",	"iters=k",   "iters=M",	 "iters=-1",
					  "iters=+1",	"iters=1kk", "iters=1K", "iters=1.5k",
					  "iters=0xg1", "iters=1k0", "iters=1m", "iters=x10",
					  "iters=0x-1", "iters=1e3", "iters=kM"};
	for (size_t i = 0; i < N_ELEMS(bad); i++)
		parse_bad(bad[i], -E_INVAL, "bad number");
}

TEST(bools)
{
	static const char *const words[] = {"0", "1", "off", "on", "no", "yes", "false", "true"};
	char line[32];

	for (size_t i = 0; i < N_ELEMS(words); i++) {
		CHECK_EQ(parse_ok(build(line, "help=", 0, 0, words[i]), K_HELP), i % 2);
	}
	CHECK_EQ(parse("help=maybe"), -E_INVAL);
	CHECK_STR(err, "bad boolean in 'help=maybe' (accepted: 0/1, on/off, yes/no, true/false)");
	parse_bad("help=ON", -E_INVAL, "'help=ON'");
	parse_bad("help=2", -E_INVAL, "'help=2'");
	parse_bad("help=yess", -E_INVAL, "'help=yess'");
	parse_bad("help=", -E_INVAL, "empty value in 'help='");
}

TEST(enums)
{
	CHECK_EQ(parse_ok("plan=check", K_PLAN), 0);
	CHECK_EQ(parse_ok("plan=quick", K_PLAN), 1);
	CHECK_EQ(parse_ok("plan=full", K_PLAN), 2);
	CHECK_EQ(parse("plan=fast"), -E_NOENT);
	CHECK_STR(err, "'plan=fast': unknown choice 'fast' (accepted: check, quick, full)");
	parse_bad("plan=check,full", -E_NOENT, "unknown choice 'check,full'");
	parse_bad("plan=Check", -E_NOENT, "'plan=Check'");
	parse_bad("plan=checks", -E_NOENT, "'plan=checks'");
	parse_bad("plan=all", -E_NOENT, "'plan=all'");
}

TEST(lists)
{
	CHECK_EQ(parse_ok("backends=all", K_BACKENDS), 0x1f);
	CHECK_EQ(parse_ok("backends=xapic", K_BACKENDS), 0x1);
	CHECK_EQ(parse_ok("backends=kvm-pv,xapic", K_BACKENDS), 0x11);
	CHECK_EQ(parse_ok("backends=hv-fast,hv-slow,x2apic,kvm-pv,xapic", K_BACKENDS), 0x1f);
	CHECK_EQ(parse("backends=xapic,foo"), -E_NOENT);
	CHECK_STR(err,
		  "'backends=xapic,foo': unknown item 'foo' (accepted: xapic, x2apic, hv-slow, "
		  "hv-fast, kvm-pv, comma-separated, or all)");
	CHECK_EQ(parse("backends=xapic,,x2apic"), -E_INVAL);
	CHECK_STR(err, "'backends=xapic,,x2apic': empty item (accepted: xapic, x2apic, hv-slow, "
		       "hv-fast, kvm-pv, comma-separated, or all)");
	parse_bad("backends=,xapic", -E_INVAL, "empty item");
	parse_bad("backends=xapic,", -E_INVAL, "empty item");
	parse_bad("backends=,", -E_INVAL, "empty item");
	parse_bad("backends=xapic,x2apic,xapic", -E_INVAL, "duplicate item 'xapic'");
	parse_bad("backends=all,xapic", -E_INVAL, "'all' must stand alone");
	parse_bad("backends=xapic,all", -E_INVAL, "'all' must stand alone");
	parse_bad("backends=ALL", -E_NOENT, "unknown item 'ALL'");
	parse_bad("backends=", -E_INVAL, "empty value in 'backends='");
}

TEST(list_of_64)
{
	static char names[65][4];
	static const char *choices[66];
	struct opt_spec spec = {"cpus", OPT_LIST, 0, 0, choices, ""};
	struct opt_value v;

	for (int i = 0; i < 65; i++) {
		char *p = names[i];

		*p++ = 'c';
		if (i >= 10)
			*p++ = (char)('0' + i / 10);
		*p++ = (char)('0' + i % 10);
		*p = '\0';
		choices[i] = names[i];
	}
	choices[64] = NULL;
	CHECK_EQ(cmdline_parse("cpus=all", &spec, 1, &v, err, sizeof(err)), 1);
	CHECK_EQ(v.u, UINT64_MAX);
	CHECK_EQ(cmdline_parse("cpus=c63,c0", &spec, 1, &v, err, sizeof(err)), 1);
	CHECK_EQ(v.u, 0x8000000000000001ULL);
	choices[63] = NULL;
	CHECK_EQ(cmdline_parse("cpus=all", &spec, 1, &v, err, sizeof(err)), 1);
	CHECK_EQ(v.u, UINT64_MAX >> 1);
	choices[63] = names[63];
	choices[64] = names[64];
	CHECK_EQ(cmdline_parse("cpus=c0", &spec, 1, &v, err, sizeof(err)), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 'cpus'): more than 64 choices");
}

TEST(strings)
{
	const char *line = "img tag=ab note=a=b,c";

	CHECK_EQ(parse(line), 2);
	CHECK(vals[K_TAG].s == line + 8);
	CHECK_EQ(vals[K_TAG].len, 2);
	CHECK(vals[K_NOTE].s == line + 16);
	CHECK_EQ(vals[K_NOTE].len, 5); /* "a=b,c": only the first '=' splits */
	CHECK_EQ(parse_ok("tag=12345678", K_TAG), 0);
	CHECK_EQ(parse("tag=123456789"), -E_RANGE);
	CHECK_STR(err,
		  "text length out of range in 'tag=123456789' (accepted: text of 2..8 bytes)");
	parse_bad("tag=a", -E_RANGE, "'tag=a'");
	parse_bad("tag=", -E_INVAL, "empty value in 'tag='");
	parse_bad("note=", -E_INVAL, "empty value in 'note=' (accepted: any text)");
}

TEST(key_errors)
{
	CHECK_EQ(parse("itres=5"), -E_NOENT);
	CHECK_STR(err, "unknown key 'itres' in 'itres=5' (keys: plan, backends, iters, help, tag, "
		       "seed, note)");
	CHECK_EQ(parse("iters=5 plan=full iters=5"), -E_INVAL);
	CHECK_STR(err, "duplicate key 'iters' in 'iters=5'");
	CHECK_EQ(parse("img plan=full stray"), -E_INVAL);
	CHECK_STR(err,
		  "'stray' is not key=value (keys: plan, backends, iters, help, tag, seed, note)");
	parse_bad("/boot/a.elf /boot/b.elf", -E_INVAL, "'/boot/b.elf' is not key=value");
	parse_bad("=5", -E_NOENT, "unknown key '' in '=5'");
	parse_bad("ITERS=5", -E_NOENT, "unknown key 'ITERS'");
	parse_bad("iters =5", -E_NOENT, "unknown key '' in '=5'"); /* "iters" is the image path */
	parse_bad("x iters =5", -E_INVAL, "'iters' is not key=value");
	/* A PVH line holds the arguments alone: no first word is skipped. */
	CHECK_EQ(cmdline_parse_args("help plan=full", specs, K_COUNT, vals, err, sizeof(err)),
		 -E_INVAL);
	CHECK_STR(err, "'help' is not key=value (keys: plan, backends, iters, help, tag, seed, note)");
	CHECK_EQ(cmdline_parse_args("plan=full iters=5", specs, K_COUNT, vals, err, sizeof(err)), 2);
	CHECK_EQ(cmdline_parse_args("", specs, K_COUNT, vals, err, sizeof(err)), 0);
	parse_bad("iters=", -E_INVAL, "empty value in 'iters=' (accepted: 1..1000000,");
	parse_bad("iters==5", -E_INVAL, "bad number in 'iters==5'");
}

TEST(tokens_and_separators)
{
	static const char *const empty[] = {
	    "", "   ", "\t \t", "/boot/ipibench.elf", "  /boot/ipibench.elf\t ", "\n"};

	for (size_t i = 0; i < N_ELEMS(empty); i++) {
		vals[K_ITERS].set = true;
		CHECK_EQ(parse(empty[i]), 0);
		CHECK(!vals[K_ITERS].set); /* every call starts from cleared values */
	}
	CHECK_EQ(parse(NULL), 0);
	CHECK_EQ(parse("plan=full"), 1); /* a first token with '=' is an option */
	CHECK_EQ(parse("\tplan=full\titers=5\t"), 2);
	CHECK_EQ(vals[K_ITERS].len, 1);
	CHECK_EQ(parse("  img   plan=quick    iters=0x20  "), 2);
	CHECK_EQ(vals[K_PLAN].u, 1);
	CHECK_EQ(vals[K_ITERS].u, 32);
	CHECK_EQ(parse("img\tplan=full\r\n"), 1);
	CHECK_EQ(vals[K_PLAN].len, 4);
	CHECK_EQ(parse("img plan=full help=on iters=9"), 3);
	CHECK_EQ(vals[K_ITERS].u, 9);
	CHECK_EQ(parse("img plan=full help=on iters=0"), -E_RANGE); /* the last token counts too */
}

TEST(long_tokens)
{
	size_t n = 5000;
	char *line = malloc(n + 32);

	CHECK(line != NULL);
	if (!line)
		return;
	CHECK_EQ(parse(build(line, "", 'k', n, "=1")), -E_NOENT);
	/* Both quotes are cut to 40 bytes; the accepted keys still fit. */
	CHECK_STR(err,
		  "unknown key 'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...' in "
		  "'kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk...' (keys: plan, backends, iters, "
		  "help, tag, seed, note)");
	CHECK_EQ(parse(build(line, "note=", 'x', n, "")), 1);
	CHECK_EQ(vals[K_NOTE].len, n);
	CHECK_EQ(parse(build(line, "iters=", '9', n, "")), -E_RANGE);
	CHECK(strstr(err, "number too large in 'iters=9999") != NULL);
	CHECK_EQ(parse(build(line, "backends=xapic,", 'y', n, "")), -E_NOENT);
	CHECK(strstr(err, "': unknown item 'yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy...' (") !=
	      NULL);
	free(line);
}

TEST(small_err_buffers)
{
	char small[16];
	struct opt_value v[K_COUNT];

	CHECK_EQ(cmdline_parse("itres=5", specs, K_COUNT, v, NULL, 0), -E_NOENT);
	small[0] = 'z';
	CHECK_EQ(cmdline_parse("itres=5", specs, K_COUNT, v, small, 0), -E_NOENT);
	CHECK_EQ(small[0], 'z'); /* errlen 0: not even the NUL is written */
	build(small, "", 'z', sizeof(small) - 1, "");
	CHECK_EQ(cmdline_parse("itres=5", specs, K_COUNT, v, small, 1), -E_NOENT);
	CHECK_EQ(small[0], '\0');
	CHECK_EQ(small[1], 'z');
	build(small, "", 'z', sizeof(small) - 1, "");
	CHECK_EQ(cmdline_parse("itres=5", specs, K_COUNT, v, small, 10), -E_NOENT);
	CHECK_STR(small, "unknown k");
	CHECK_EQ(small[10], 'z');
	CHECK_EQ(cmdline_parse("backends=x,y", specs, K_COUNT, v, small, sizeof(small)), -E_NOENT);
	CHECK_STR(small, "'backends=x,y':");
	build(small, "", 'z', sizeof(small) - 1, "");
	CHECK_EQ(cmdline_parse("iters=5", specs, K_COUNT, v, small, sizeof(small)), 1);
	CHECK_STR(small, "");
}

static int spec_error(const struct opt_spec *table, size_t n)
{
	struct opt_value v[4];

	return cmdline_parse("", table, n, v, err, sizeof(err));
}

TEST(bad_spec_tables)
{
	static const char *const none[] = {NULL};
	static const char *const dup[] = {"a", "b", "a", NULL};
	static const char *const with_all[] = {"a", "all", NULL};
	static const char *const with_empty[] = {"a", "", NULL};
	struct opt_spec t[2] = {{"k", OPT_UINT, 5, 4, NULL, NULL},
				{"k", OPT_BOOL, 0, 0, NULL, NULL}};

	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 'k'): min above max");
	t[0].min = 0;
	CHECK_EQ(spec_error(t, 2), -E_INVAL);
	CHECK_STR(err, "bad option spec 1 (key 'k'): duplicate key");
	t[1].key = "";
	CHECK_EQ(spec_error(t, 2), -E_INVAL);
	CHECK_STR(err, "bad option spec 1 (key ''): no key");
	t[1].key = NULL;
	CHECK_EQ(spec_error(t, 2), -E_INVAL);
	t[0] = (struct opt_spec){"e", OPT_ENUM, 0, 0, NULL, NULL};
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 'e'): no choices");
	t[0].choices = none;
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	t[0].choices = dup;
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 'e'): duplicate choice");
	t[0].choices = with_empty;
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	t[0].choices = with_all;
	CHECK_EQ(spec_error(t, 1), 0); /* "all" is only reserved in a LIST */
	t[0].type = OPT_LIST;
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 'e'): choice 'all' is reserved");
	t[0] = (struct opt_spec){"s", OPT_STRING, 5, 0, NULL, NULL}; /* max 0: no limit */
	CHECK_EQ(spec_error(t, 1), 0);
	t[0].max = 4;
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	t[0] = (struct opt_spec){"t", (enum opt_type)9, 0, 0, NULL, NULL};
	CHECK_EQ(spec_error(t, 1), -E_INVAL);
	CHECK_STR(err, "bad option spec 0 (key 't'): unknown type");
}

TEST(help_text)
{
	static const struct opt_spec few[] = {
	    {"plan", OPT_ENUM, 0, 0, plans, "what to run"},
	    {"iters", OPT_UINT, 1, 1000000, NULL, "iterations per sample"},
	    {"help", OPT_BOOL, 0, 0, NULL, "print this list"},
	    {"seed", OPT_UINT, 0, 5, NULL, NULL},
	};
	const char *want = "plan   check, quick, full               what to run\n"
			   "iters  1..1000000                       iterations per sample\n"
			   "help   0/1, on/off, yes/no, true/false  print this list\n"
			   "seed   0..5\n";
	char buf[512];
	int n = (int)strlen(want);

	CHECK_EQ(cmdline_help(buf, sizeof(buf), few, N_ELEMS(few)), n);
	CHECK_STR(buf, want);
	CHECK_EQ(cmdline_help(buf, (size_t)n + 1, few, N_ELEMS(few)), n); /* exact fit */
	CHECK_STR(buf, want);
	CHECK_EQ(cmdline_help(buf, (size_t)n, few, N_ELEMS(few)), -E_NOSPC);
	CHECK_EQ(strlen(buf), n - 1);
	CHECK_EQ(cmdline_help(buf, 6, few, N_ELEMS(few)), -E_NOSPC);
	CHECK_STR(buf, "plan ");
	CHECK_EQ(cmdline_help(NULL, 0, few, N_ELEMS(few)), -E_NOSPC);
	CHECK_EQ(cmdline_help(buf, sizeof(buf), few, 0), 0);
	CHECK_STR(buf, "");
	/* The full table: one line per key, lists mention "all". */
	CHECK(cmdline_help(buf, sizeof(buf), specs, K_COUNT) > 0);
	CHECK(strstr(buf, "kvm-pv, comma-separated, or all") != NULL);
	CHECK(strstr(buf, "text of 2..8 bytes") != NULL);
	CHECK(strstr(buf, "seed      0..18446744073709551615\n") != NULL);
}

TEST_MAIN(T(full_line), T(numbers), T(number_errors), T(bools), T(enums), T(lists), T(list_of_64),
	  T(strings), T(key_errors), T(tokens_and_separators), T(long_tokens), T(small_err_buffers),
	  T(bad_spec_tables), T(help_text))

// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: lib/cmdline.c on any command line (Multiboot 0.6.96
 * section 3.3, the 'cmdline' string, which the loader's user controls).
 *
 * The input becomes an exact-size NUL-terminated heap string and is parsed
 * against a table of the same shape as kernel/options.c's (kept here, so the
 * kernel's table can change without breaking the target). Beyond the
 * sanitizers, every answer is checked against lib/cmdline.h: accepted values
 * lie within their spec and point into the line, numbers agree with strtoull,
 * an error is one non-empty line with a documented code, and a small error
 * buffer gives the same code and a NUL-terminated prefix of the same message.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lib/cmdline.h"
#include "lib/error.h"
#include "tests/fuzz/fuzz.h"
/*
 * plan_names, backend_names, bench_names and debug_names: the guest's own
 * choice lists, read from the built kernel (tools/fuzz_words.py, a make
 * step), so a new backend or benchmark is fuzzed without a list kept here.
 */
#include "build/fuzz/cmdline_words.h"

static const struct opt_spec specs[] = {
    {"plan", OPT_ENUM, 0, 0, plan_names, "what to run"},
    {"backends", OPT_LIST, 0, 0, backend_names, "IPI backends"},
    {"bench", OPT_LIST, 0, 0, bench_names, "benchmarks"},
    {"iters", OPT_UINT, 1, 10000000, NULL, "most measured iterations"},
    {"warmup", OPT_UINT, 0, 1000000, NULL, "iterations before measuring"},
    {"budget", OPT_UINT, 1, 60000, NULL, "ms of measuring per result"},
    {"target", OPT_UINT, 0, 1023, NULL, "target CPU"},
    {"matrix", OPT_BOOL, 0, 0, NULL, "every sender/target pair"},
    {"deadline", OPT_UINT, 1, 600000, NULL, "ms after which an IPI is lost"},
    {"init_delay", OPT_UINT, 0, 100000, NULL, "us between INIT and START-UP"},
    {"debug", OPT_LIST, 0, 0, debug_names, "fault injection"},
    {"help", OPT_BOOL, 0, 0, NULL, "print this list"},
    /* Not in the kernel's table: the 2^64 - 1 bound and both kinds of text */
    {"seed", OPT_UINT, 0, UINT64_MAX, NULL, NULL},
    {"tag", OPT_STRING, 2, 8, NULL, "label"},
    {"note", OPT_STRING, 0, 0, NULL, "free text"},
};

#define NSPECS (sizeof(specs) / sizeof(specs[0]))

static size_t count_choices(const char *const *choices)
{
	size_t n = 0;

	while (choices[n])
		n++;
	return n;
}

/* Re-reads a plain number (digits or 0x hex, optional k/M) with strtoull to cross-check. */
static void check_number(const struct opt_value *v)
{
	char text[64];
	size_t len = v->len, skip = 0;
	unsigned long long mul = 1, n;
	int base = 10;
	char *end;

	if (len == 0 || len >= sizeof(text))
		return;
	if (v->s[len - 1] == 'k' || v->s[len - 1] == 'M')
		mul = v->s[--len] == 'k' ? 1000 : 1000000;
	if (len > 2 && v->s[0] == '0' && (v->s[1] == 'x' || v->s[1] == 'X')) {
		base = 16;
		skip = 2;
	}
	for (size_t i = skip; i < len; i++)
		text[i - skip] = v->s[i];
	text[len - skip] = '\0';
	/* strtoull takes signs, blanks and its own 0x; the parser must have refused those */
	FUZZ_ASSERT(text[0] != '\0' && text[0] != '+' && text[0] != '-' && text[0] != ' ');
	n = strtoull(text, &end, base);
	FUZZ_ASSERT(*end == '\0');
	FUZZ_ASSERT(v->u == n * mul);
}

static void check_value(const struct opt_spec *spec, const struct opt_value *v, const char *line)
{
	size_t n, linelen = strlen(line);

	FUZZ_ASSERT(v->s > line && v->s[-1] == '=' && v->len > 0);
	FUZZ_ASSERT((size_t)(v->s - line) + v->len <= linelen);
	switch (spec->type) {
	case OPT_UINT:
		FUZZ_ASSERT(v->u >= spec->min && v->u <= spec->max);
		check_number(v);
		break;
	case OPT_BOOL:
		FUZZ_ASSERT(v->u <= 1);
		break;
	case OPT_ENUM:
		FUZZ_ASSERT(v->u < count_choices(spec->choices));
		FUZZ_ASSERT(strlen(spec->choices[v->u]) == v->len &&
			    memcmp(spec->choices[v->u], v->s, v->len) == 0);
		break;
	case OPT_LIST:
		n = count_choices(spec->choices);
		FUZZ_ASSERT(v->u != 0 && (v->u >> n) == 0);
		break;
	default:
		if (spec->max)
			FUZZ_ASSERT(v->len >= spec->min && v->len <= spec->max);
		break;
	}
}

static void check_result(int rc, const char *line, const struct opt_value *v, const char *err,
			 size_t errlen)
{
	size_t nset = 0;

	FUZZ_ASSERT(memchr(err, '\0', errlen) != NULL);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -E_INVAL || rc == -E_NOENT || rc == -E_RANGE);
		FUZZ_ASSERT(err[0] != '\0' && strchr(err, '\n') == NULL);
		return;
	}
	FUZZ_ASSERT(err[0] == '\0');
	for (size_t i = 0; i < NSPECS; i++) {
		if (!v[i].set)
			continue;
		nset++;
		check_value(&specs[i], &v[i], line);
	}
	FUZZ_ASSERT(nset == (size_t)rc);
}

/* The same parse with a tiny message buffer (or none): same code, a prefix of the message. */
static void check_small_buffer(const char *line, int rc, const char *err, size_t errlen)
{
	struct opt_value v[NSPECS];
	char small[16];

	FUZZ_ASSERT(cmdline_parse(line, specs, NSPECS, v, NULL, 0) == rc);
	if (errlen > sizeof(small))
		errlen = sizeof(small);
	FUZZ_ASSERT(cmdline_parse(line, specs, NSPECS, v, small, errlen) == rc);
	FUZZ_ASSERT(memchr(small, '\0', errlen) != NULL);
	FUZZ_ASSERT(strncmp(small, err, errlen - 1) == 0);
}

/* cmdline_help into a buffer whose size the input picks: a length, or -E_NOSPC. */
static void check_help(size_t size)
{
	char *buf = malloc(size ? size : 1);
	int rc;

	FUZZ_ASSERT(buf != NULL);
	rc = cmdline_help(buf, size, specs, NSPECS);
	FUZZ_ASSERT(rc == -E_NOSPC || (rc >= 0 && (size_t)rc < size && buf[rc] == '\0'));
	if (size)
		FUZZ_ASSERT(memchr(buf, '\0', size) != NULL);
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *line = (char *)fuzz_dup(data, size, 1);
	struct opt_value v[NSPECS];
	char err[256];
	int rc;

	line[size] = '\0';
	rc = cmdline_parse(line, specs, NSPECS, v, err, sizeof(err));
	check_result(rc, line, v, err, sizeof(err));
	check_small_buffer(line, rc, err, size % sizeof(err) + 1);
	if (size > 0)
		check_help((size_t)data[0] * 8);
	free(line);
	return 0;
}

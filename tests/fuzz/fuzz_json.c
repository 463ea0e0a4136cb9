// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer target: the JSON Lines writer lib/json.c, driven by a program of
 * writer calls and held to the contract of lib/json.h and to RFC 8259.
 *
 * Input: a capacity byte (bit 7 clear: cap = byte % 10, 9 meaning a NULL
 * buffer; set: cap = (byte & 0x7f) * 4 + (next byte & 3), up to 511), then a
 * byte per call: bits 0-3 the call (OPS below, modulo its length), bits 4-5
 * the key (0: "k" where one is due, else NULL; 1: the same from input; 2: NULL;
 * 3: from input), bits 6-7 the size of an integer operand (1, 2, 4 or 8 bytes,
 * big-endian). A text is a length byte, then its bytes; 0xff as a string's
 * length passes s == NULL.
 *
 * The calls run twice: into a buffer sure to hold the record, then into an
 * exact-size heap buffer of the chosen cap (AddressSanitizer flags a write past
 * it). A shadow model of json.h's rules (a key exactly inside objects, one
 * top-level object, at most JSON_MAX_DEPTH - 1 open containers, all closed)
 * says whether the calls were well formed; json_finish must then give -E_INVAL
 * for misuse, else the record, and in the small buffer the same record or
 * -E_NOSPC with an empty string, never a partial one. The record is read by a
 * strict recursive-descent parser that takes only what json.c may emit (no
 * whitespace or exponents, each byte in its one escaped form, no raw control
 * byte) and checks every key and value against the call that wrote it.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/error.h"
#include "lib/json.h"
#include "tests/fuzz/fuzz.h"

#define INPUT_MAX 4096 /* longer inputs are cut: no more reach new code */
#define KEY_MAX	  15
#define TEXT_MAX  63

/* The calls by op byte: {}[] begin and end, then u64 i64 str strn bool null hex fixed. */
static const char OPS[] = "{}[]uisSbnhf";

struct call {
	char op;	 /* one of OPS */
	const char *key; /* NUL-terminated, or NULL */
	const char *s;	 /* 's', 'S': n bytes, or NULL */
	size_t n;
	uint64_t v;
};

/* json.h's rules, kept apart from json.c's bookkeeping */
struct model {
	int depth;
	bool in_array[JSON_MAX_DEPTH];
	bool started, bad;
};

struct prog {
	const uint8_t *in;
	size_t size, at;
	char *arena; /* NUL-terminated copies of keys and json_str() texts */
	size_t used;
	struct call *calls;
	size_t ncalls;
	size_t cap, big_cap;
	bool null_buf;
	struct model m;
};

static bool model_wants_key(const struct model *m)
{
	return m->depth > 0 && !m->in_array[m->depth];
}

/* json.h: keys exactly inside objects, one top-level object, bounded nesting */
static void model_call(struct model *m, const struct call *c)
{
	if (c->op == '}' || c->op == ']') {
		if (m->depth == 0 || m->in_array[m->depth] != (c->op == ']'))
			m->bad = true;
		else
			m->depth--;
		return;
	}
	if ((c->key != NULL) != model_wants_key(m) ||
	    (m->depth == 0 && (c->op != '{' || m->started)))
		m->bad = true;
	m->started = true;
	if (c->op != '{' && c->op != '[')
		return;
	if (m->depth >= JSON_MAX_DEPTH - 1)
		m->bad = true;
	else
		m->in_array[++m->depth] = c->op == '[';
}

static uint8_t prog_byte(struct prog *p)
{
	return p->at < p->size ? p->in[p->at++] : 0;
}

/* A big-endian operand of 1, 2, 4 or 8 bytes, sign-extended when asked. */
static uint64_t prog_uint(struct prog *p, uint8_t width, bool sign)
{
	uint8_t b = prog_byte(p);
	uint64_t v = sign && (b & 0x80) ? UINT64_MAX << 8 | b : b;

	for (int i = 1; i < 1 << (width & 3); i++)
		v = v << 8 | prog_byte(p);
	return v;
}

/* A NUL-terminated copy of a length byte's worth of input (NULL for 0xff if nullable). */
static char *prog_text(struct prog *p, size_t max, bool nullable)
{
	uint8_t len = prog_byte(p);
	char *s = p->arena + p->used;
	size_t k = 0;

	if (nullable && len == 0xff)
		return NULL;
	while (k < len % (max + 1) && p->at < p->size)
		s[k++] = (char)p->in[p->at++];
	s[k] = '\0';
	p->used += k + 1;
	return s;
}

static const char *prog_key(struct prog *p, unsigned int mode)
{
	bool want = model_wants_key(&p->m);

	if (mode == 0)
		return want ? "k" : NULL;
	if (mode == 1)
		return want ? prog_text(p, KEY_MAX, false) : NULL;
	return mode == 2 ? NULL : prog_text(p, KEY_MAX, false);
}

/* One call from its op byte; json_strn() reads the input itself, NULs and all. */
static void prog_decode_call(struct prog *p, struct call *c)
{
	uint8_t b = prog_byte(p);
	uint8_t len;

	*c = (struct call){.op = OPS[(b & 0x0f) % (sizeof(OPS) - 1)]};
	if (c->op != '}' && c->op != ']')
		c->key = prog_key(p, (b >> 4) & 3);
	if (c->op == 's') {
		c->s = prog_text(p, TEXT_MAX, true);
		c->n = c->s ? strlen(c->s) : 0;
	} else if (c->op == 'S') {
		len = prog_byte(p);
		c->s = len == 0xff ? NULL : (const char *)p->in + p->at;
		c->n = c->s ? len % (TEXT_MAX + 1) : 0;
		c->n = c->n < p->size - p->at ? c->n : p->size - p->at;
		p->at += c->n;
	} else if (strchr("uibhf", c->op)) {
		c->v = prog_uint(p, b >> 6, c->op == 'i');
	}
	/* ',' + quoted key + ':' + the longest number, or a string of \u00XX only */
	p->big_cap += 25 + 6 * (c->key ? strlen(c->key) : 0) + 6 * c->n;
	model_call(&p->m, c);
}

static void prog_decode(struct prog *p)
{
	uint8_t sel = prog_byte(p);

	p->cap = sel & 0x80 ? (size_t)(sel & 0x7f) << 2 | (prog_byte(p) & 3) : sel % 10;
	p->null_buf = !(sel & 0x80) && p->cap == 9;
	p->big_cap = 1;
	while (p->at < p->size)
		prog_decode_call(p, &p->calls[p->ncalls++]);
}

static void prog_call(struct json *j, const struct call *c)
{
	if (c->op == '{')
		json_obj_begin(j, c->key);
	else if (c->op == '}')
		json_obj_end(j);
	else if (c->op == '[')
		json_arr_begin(j, c->key);
	else if (c->op == ']')
		json_arr_end(j);
	else if (c->op == 'u')
		json_u64(j, c->key, c->v);
	else if (c->op == 'i')
		json_i64(j, c->key, (int64_t)c->v);
	else if (c->op == 's')
		json_str(j, c->key, c->s);
	else if (c->op == 'S')
		json_strn(j, c->key, c->s, c->n);
	else if (c->op == 'b')
		json_bool(j, c->key, c->v & 1);
	else if (c->op == 'n')
		json_null(j, c->key);
	else if (c->op == 'h')
		json_hex(j, c->key, c->v);
	else
		json_fixed(j, c->key, c->v);
}

static int prog_run(const struct prog *p, char *buf, size_t cap)
{
	struct json j;

	json_init(&j, buf, cap);
	for (size_t i = 0; i < p->ncalls; i++)
		prog_call(&j, &p->calls[i]);
	return json_finish(&j);
}

/* The reader: a cursor over the record and over the calls that wrote it. */
struct rd {
	const char *p, *end;
	const struct call *calls;
	size_t ncalls, at;
	char *tmp; /* the string just decoded */
};

static bool rd_eat(struct rd *r, char c)
{
	if (r->p == r->end || *r->p != c)
		return false;
	r->p++;
	return true;
}

static const struct call *rd_next(struct rd *r)
{
	FUZZ_ASSERT(r->at < r->ncalls);
	return &r->calls[r->at++];
}

/* 0-15 for a lower-case hex digit, else a large negative number */
static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -0x1000;
}

/* After the backslash: \" \\ \b \t \n \f \r, else \u00XX (lower case) for the other controls. */
static unsigned char rd_escape(struct rd *r)
{
	static const char names[] = "\"\\btnfr", bytes[] = "\"\\\b\t\n\f\r";
	const char *name;
	int v;

	FUZZ_ASSERT(r->p < r->end);
	name = memchr(names, *r->p++, sizeof(names) - 1);
	if (name)
		return (unsigned char)bytes[name - names];
	FUZZ_ASSERT(r->p[-1] == 'u' && r->end - r->p >= 4 && r->p[0] == '0' && r->p[1] == '0');
	v = hex_value(r->p[2]) * 16 + hex_value(r->p[3]);
	r->p += 4;
	FUZZ_ASSERT(v >= 0 && v < 0x20 && !memchr(bytes, v, sizeof(bytes) - 1));
	return (unsigned char)v;
}

static size_t rd_string(struct rd *r)
{
	size_t n = 0;

	FUZZ_ASSERT(rd_eat(r, '"'));
	for (;;) {
		unsigned char c;

		FUZZ_ASSERT(r->p < r->end);
		c = (unsigned char)*r->p++;
		if (c == '"')
			return n;
		FUZZ_ASSERT(c >= 0x20); /* RFC 8259 section 7: controls must be escaped */
		r->tmp[n++] = (char)(c == '\\' ? rd_escape(r) : c);
	}
}

static bool rd_digit(const struct rd *r)
{
	return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

/* -?(0|[1-9][0-9]*)(.[0-9]{3})?, compared with the u64, i64 or fixed-point value written */
static void rd_number(struct rd *r, const struct call *c)
{
	bool neg = rd_eat(r, '-'), frac = false;
	uint64_t mag = 0, milli = 0;
	bool want_neg = c->op == 'i' && (int64_t)c->v < 0;

	FUZZ_ASSERT(rd_digit(r));
	if (rd_eat(r, '0'))
		FUZZ_ASSERT(!rd_digit(r));
	while (rd_digit(r)) {
		uint64_t d = (uint64_t)(*r->p++ - '0');

		FUZZ_ASSERT(mag <= (UINT64_MAX - d) / 10);
		mag = mag * 10 + d;
	}
	if (rd_eat(r, '.')) {
		for (int i = 0; i < 3; i++) {
			FUZZ_ASSERT(rd_digit(r));
			milli = milli * 10 + (uint64_t)(*r->p++ - '0');
		}
		FUZZ_ASSERT(!rd_digit(r));
		frac = true;
	}
	if (c->op == 'f')
		FUZZ_ASSERT(!neg && frac && mag == c->v / 1000 && milli == c->v % 1000);
	else
		FUZZ_ASSERT(!frac && neg == want_neg && mag == (want_neg ? 0 - c->v : c->v));
}

static void rd_literal(struct rd *r, const char *word)
{
	size_t n = strlen(word);

	FUZZ_ASSERT((size_t)(r->end - r->p) >= n && memcmp(r->p, word, n) == 0);
	r->p += n;
}

static void rd_value(struct rd *r, const struct call *c);

static void rd_container(struct rd *r, bool is_array)
{
	FUZZ_ASSERT(rd_eat(r, is_array ? '[' : '{'));
	if (!rd_eat(r, is_array ? ']' : '}')) {
		do {
			const struct call *c;
			size_t n = 0;

			if (!is_array) {
				n = rd_string(r);
				FUZZ_ASSERT(rd_eat(r, ':'));
			}
			c = rd_next(r);
			FUZZ_ASSERT(is_array ? !c->key
					     : c->key && strlen(c->key) == n &&
						   memcmp(c->key, r->tmp, n) == 0);
			rd_value(r, c);
		} while (rd_eat(r, ','));
		FUZZ_ASSERT(rd_eat(r, is_array ? ']' : '}'));
	}
	FUZZ_ASSERT(rd_next(r)->op == (is_array ? ']' : '}'));
}

static void rd_value(struct rd *r, const struct call *c)
{
	char hex[20];
	size_t n;

	if (c->op == '{' || c->op == '[') {
		rd_container(r, c->op == '[');
	} else if ((c->op == 's' || c->op == 'S') && c->s) {
		n = rd_string(r);
		FUZZ_ASSERT(n == c->n && memcmp(r->tmp, c->s, n) == 0);
	} else if (c->op == 'h') {
		snprintf(hex, sizeof(hex), "0x%" PRIx64, c->v);
		n = rd_string(r);
		FUZZ_ASSERT(n == strlen(hex) && memcmp(r->tmp, hex, n) == 0);
	} else if (c->op == 'b') {
		rd_literal(r, c->v & 1 ? "true" : "false");
	} else if (strchr("uif", c->op)) {
		rd_number(r, c);
	} else {
		FUZZ_ASSERT(c->op != '}' && c->op != ']'); /* a value where the calls closed */
		rd_literal(r, "null");
	}
}

/* The whole record is the one object the calls describe, and nothing more. */
static void check_record(const struct prog *p, const char *rec, size_t len)
{
	struct rd r = {.p = rec, .end = rec + len, .calls = p->calls, .ncalls = p->ncalls};
	const struct call *c;

	r.tmp = malloc(len + 1);
	FUZZ_ASSERT(r.tmp != NULL);
	c = rd_next(&r);
	FUZZ_ASSERT(c->op == '{' && !c->key);
	rd_value(&r, c);
	FUZZ_ASSERT(r.p == r.end && r.at == r.ncalls);
	free(r.tmp);
}

/* json_finish: NUL-terminated within cap; a record of strlen rc, or an empty string. */
static void check_finish(const char *buf, size_t cap, int rc)
{
	if (!buf || cap == 0)
		return;
	FUZZ_ASSERT(memchr(buf, '\0', cap) != NULL);
	FUZZ_ASSERT(rc < 0 ? buf[0] == '\0' : strlen(buf) == (size_t)rc);
	for (int i = 0; i < rc; i++)
		FUZZ_ASSERT((unsigned char)buf[i] >= 0x20);
}

/* The chosen cap in an exact-size buffer (a sentinel byte for cap 0): the record or -E_NOSPC. */
static void check_small(const struct prog *p, bool ok, const char *rec, int len)
{
	char *buf = p->null_buf ? NULL : malloc(p->cap ? p->cap : 1);
	int rc;

	FUZZ_ASSERT(buf || p->null_buf);
	if (buf && p->cap == 0)
		buf[0] = '#';
	rc = prog_run(p, buf, p->cap);
	check_finish(buf, p->cap, rc);
	if (!ok)
		FUZZ_ASSERT(rc == -E_INVAL);
	else if (buf && (size_t)len < p->cap)
		FUZZ_ASSERT(rc == len && memcmp(buf, rec, (size_t)len + 1) == 0);
	else
		FUZZ_ASSERT(rc == -E_NOSPC);
	FUZZ_ASSERT(!buf || p->cap > 0 || buf[0] == '#');
	free(buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t n = size < INPUT_MAX ? size : INPUT_MAX;
	uint8_t *in = fuzz_dup(data, n, 0);
	char *arena = malloc(3 * n + 2), *big;
	struct call *calls = malloc((n + 1) * sizeof(*calls));
	struct prog p = {.in = in, .size = n, .arena = arena, .calls = calls};
	int rc;
	bool ok;

	FUZZ_ASSERT(arena && calls);
	prog_decode(&p);
	ok = !p.m.bad && p.m.depth == 0 && p.m.started;

	big = malloc(p.big_cap);
	FUZZ_ASSERT(big != NULL);
	rc = prog_run(&p, big, p.big_cap);
	check_finish(big, p.big_cap, rc);
	FUZZ_ASSERT(ok ? rc >= 0 : rc == -E_INVAL);
	if (ok)
		check_record(&p, big, (size_t)rc);
	check_small(&p, ok, big, rc);

	free(big);
	free(calls);
	free(arena);
	free(in);
	return 0;
}

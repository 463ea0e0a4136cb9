// SPDX-License-Identifier: GPL-2.0-only
/*
 * JSON Lines writer (lib/json.h), RFC 8259 output: one object per record,
 * strings escaped as section 7 requires, integers formatted without printf.
 */
#include "lib/json.h"
#include "lib/error.h"

/* Room for UINT64_MAX in decimal (20 digits) plus a sign or ".000". */
#define JSON_NUM_MAX 24

/* Append n bytes, or latch overflow; one byte of cap is kept for the NUL. */
static void json_put(struct json *j, const char *s, size_t n)
{
	if (j->overflow || j->invalid)
		return;
	if (j->cap == 0 || n > j->cap - 1 - j->len) {
		j->overflow = true;
		return;
	}
	for (size_t i = 0; i < n; i++)
		j->buf[j->len + i] = s[i];
	j->len += n;
}

static void json_putc(struct json *j, char c)
{
	json_put(j, &c, 1);
}

/* Escape sequence for byte c, or 0 length when c passes through. */
static size_t json_escape(unsigned char c, char out[6])
{
	static const char hex[] = "0123456789abcdef";
	static const char shorts[] = "btn?fr"; /* for 0x08..0x0d; \v (0x0b) has none */

	if (c == '"' || c == '\\' || (c >= 0x08 && c <= 0x0d && c != 0x0b)) {
		out[0] = '\\';
		out[1] = (c == '"' || c == '\\') ? (char)c : shorts[c - 0x08];
		return 2;
	}
	if (c >= 0x20)
		return 0;
	out[0] = '\\';
	out[1] = 'u';
	out[2] = '0';
	out[3] = '0';
	out[4] = hex[c >> 4];
	out[5] = hex[c & 0xf];
	return 6;
}

/* A quoted, escaped string; plain runs are copied in one piece. */
static void json_put_string(struct json *j, const char *s, size_t n)
{
	size_t run = 0;
	char esc[6];

	json_putc(j, '"');
	for (size_t i = 0; i < n; i++) {
		size_t k = json_escape((unsigned char)s[i], esc);

		if (k == 0)
			continue;
		json_put(j, s + run, i - run);
		json_put(j, esc, k);
		run = i + 1;
	}
	json_put(j, s + run, n - run);
	json_putc(j, '"');
}

/*
 * Check that a value may go here (a key inside objects, none elsewhere; at
 * the top level only the one object), then write the comma and the key.
 */
static bool json_begin_value(struct json *j, const char *key, bool is_obj)
{
	int d = j->depth;
	bool bad;

	if (j->invalid)
		return false;
	if (d == 0)
		bad = !is_obj || key || j->need_comma[0];
	else
		bad = j->in_array[d] == (key != NULL);
	if (bad) {
		j->invalid = true;
		return false;
	}
	if (j->need_comma[d])
		json_putc(j, ',');
	j->need_comma[d] = true;
	if (key) {
		json_put_string(j, key, __builtin_strlen(key));
		json_putc(j, ':');
	}
	return true;
}

static void json_open(struct json *j, const char *key, bool is_array)
{
	if (!j->invalid && j->depth >= JSON_MAX_DEPTH - 1) {
		j->invalid = true;
		return;
	}
	if (!json_begin_value(j, key, !is_array))
		return;
	j->depth++;
	j->need_comma[j->depth] = false;
	j->in_array[j->depth] = is_array;
	json_putc(j, is_array ? '[' : '{');
}

static void json_close(struct json *j, bool is_array)
{
	if (j->invalid)
		return;
	if (j->depth == 0 || j->in_array[j->depth] != is_array) {
		j->invalid = true;
		return;
	}
	j->depth--;
	json_putc(j, is_array ? ']' : '}');
}

/* Decimal digits of v ending at end; returns where they start. */
static char *json_fmt_u64(char *end, uint64_t v)
{
	do {
		*--end = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	return end;
}

/* A bare (unquoted) token as the value of key. */
static void json_raw(struct json *j, const char *key, const char *s, size_t n)
{
	if (json_begin_value(j, key, false))
		json_put(j, s, n);
}

void json_init(struct json *j, char *buf, size_t cap)
{
	*j = (struct json){.buf = buf, .cap = buf ? cap : 0};
	if (j->cap > (size_t)__INT_MAX__)
		j->cap = (size_t)__INT_MAX__;
}

void json_obj_begin(struct json *j, const char *key)
{
	json_open(j, key, false);
}

void json_obj_end(struct json *j)
{
	json_close(j, false);
}

void json_arr_begin(struct json *j, const char *key)
{
	json_open(j, key, true);
}

void json_arr_end(struct json *j)
{
	json_close(j, true);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	char num[JSON_NUM_MAX];
	char *p = json_fmt_u64(num + sizeof(num), v);

	json_raw(j, key, p, (size_t)(num + sizeof(num) - p));
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	char num[JSON_NUM_MAX];
	/* Negate in unsigned arithmetic: -INT64_MIN does not fit in int64_t. */
	uint64_t mag = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
	char *p = json_fmt_u64(num + sizeof(num), mag);

	if (v < 0)
		*--p = '-';
	json_raw(j, key, p, (size_t)(num + sizeof(num) - p));
}

void json_strn(struct json *j, const char *key, const char *s, size_t n)
{
	if (!s) {
		json_null(j, key);
		return;
	}
	if (json_begin_value(j, key, false))
		json_put_string(j, s, n);
}

void json_str(struct json *j, const char *key, const char *s)
{
	json_strn(j, key, s, s ? __builtin_strlen(s) : 0);
}

void json_bool(struct json *j, const char *key, bool v)
{
	if (v)
		json_raw(j, key, "true", 4);
	else
		json_raw(j, key, "false", 5);
}

void json_null(struct json *j, const char *key)
{
	json_raw(j, key, "null", 4);
}

void json_hex(struct json *j, const char *key, uint64_t v)
{
	static const char hex[] = "0123456789abcdef";
	char num[JSON_NUM_MAX];
	char *p = num + sizeof(num);

	*--p = '"';
	do {
		*--p = hex[v & 0xf];
		v >>= 4;
	} while (v);
	*--p = 'x';
	*--p = '0';
	*--p = '"';
	json_raw(j, key, p, (size_t)(num + sizeof(num) - p));
}

void json_fixed(struct json *j, const char *key, uint64_t v_x1000)
{
	char num[JSON_NUM_MAX];
	char *end = num + sizeof(num);
	uint64_t frac = v_x1000 % 1000;
	char *p;

	end[-1] = (char)('0' + frac % 10);
	end[-2] = (char)('0' + frac / 10 % 10);
	end[-3] = (char)('0' + frac / 100);
	end[-4] = '.';
	p = json_fmt_u64(end - 4, v_x1000 / 1000);
	json_raw(j, key, p, (size_t)(end - p));
}

int json_finish(struct json *j)
{
	int err = 0;

	if (!j->invalid && (j->depth != 0 || !j->need_comma[0]))
		j->invalid = true;
	if (j->invalid)
		err = -E_INVAL;
	else if (j->overflow)
		err = -E_NOSPC;
	if (err) {
		if (j->cap > 0)
			j->buf[0] = '\0';
		return err;
	}
	j->buf[j->len] = '\0';
	return (int)j->len;
}

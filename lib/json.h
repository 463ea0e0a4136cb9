/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * JSON Lines writer into a fixed buffer: every measurement is one
 * self-describing record, formatted by one function with host tests. One
 * call sequence builds exactly one top-level object; the caller prints it
 * and ends the line.
 *
 * Calls never fail individually: errors are sticky and reported once by
 * json_finish(), which leaves either a complete record or an empty string,
 * never a partial one. No printf: integers are formatted here.
 */
#ifndef LIB_JSON_H
#define LIB_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Slot 0 is the top level, so at most JSON_MAX_DEPTH - 1 containers nest. */
#define JSON_MAX_DEPTH 16

struct json {
	char *buf;
	size_t cap; /* bytes of buf, the terminating NUL included */
	size_t len; /* bytes written, always < cap */
	bool overflow;
	bool invalid; /* misuse: unbalanced, key where none belongs (or missing), too deep */
	int depth;    /* open containers */
	bool need_comma[JSON_MAX_DEPTH];
	bool in_array[JSON_MAX_DEPTH];
};

/* cap above INT_MAX is treated as INT_MAX, so json_finish() can return the length. */
void json_init(struct json *j, char *buf, size_t cap);

/*
 * key names the member inside an object and must be NULL at the top level and
 * inside arrays. The top level holds exactly one object; nothing else.
 */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);

void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/*
 * Escapes '"', '\\' and control characters (\b \t \n \f \r, \u00XX for the
 * other bytes below 0x20); bytes >= 0x20, including >= 0x80, pass through.
 * s == NULL writes null. Keys are escaped the same way.
 */
void json_str(struct json *j, const char *key, const char *s);
/* As json_str() for exactly n bytes of s; NUL bytes become \u0000. */
void json_strn(struct json *j, const char *key, const char *s, size_t n);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* A string "0x..." in lower-case hex without leading zeros ("0x0" for 0). */
void json_hex(struct json *j, const char *key, uint64_t v);
/* A number with three decimals: 1234 -> 1.234, 5 -> 0.005, 0 -> 0.000. */
void json_fixed(struct json *j, const char *key, uint64_t v_x1000);

/*
 * NUL-terminate and return the length. On error returns -E_INVAL (misuse,
 * unclosed containers, no object) or else -E_NOSPC (the record plus NUL did
 * not fit), and sets buf[0] = 0 when cap > 0.
 */
int json_finish(struct json *j);

#endif

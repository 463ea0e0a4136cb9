// SPDX-License-Identifier: GPL-2.0-only
/*
 * Kernel command-line parser (see lib/cmdline.h for the syntax; the line is
 * the multiboot 'cmdline' string, Multiboot 0.6.96 section 3.3). Table
 * driven: the spec table is the only list of keys, and both the error
 * messages and the help text are derived from it, so they cannot go stale.
 */
#include <stdarg.h>

#include "lib/cmdline.h"
#include "lib/error.h"
#include "lib/fmt.h"

/* Longest piece of a token quoted in a message; the rest shows as "...". */
#define QUOTE_MAX 40

/* Help's value column is aligned up to this width; longer ones just push the text right. */
#define HELP_COLUMN_MAX 32

/* A piece of the line: not NUL-terminated. */
struct span {
	const char *s;
	size_t len;
};

/* Bounded text builder: keeps buf NUL-terminated, len counts what would have been written. */
struct sbuf {
	char *buf;
	size_t size;
	size_t len;
};

/* What one token's parse needs: the spec, the token and its value, the message buffer. */
struct tok_ctx {
	const struct opt_spec *spec;
	struct span tok;
	struct span val;
	struct sbuf *msg;
};

static const char *const bool_words[] = {"0", "1", "off", "on", "no", "yes", "false", "true"};

static struct sbuf sbuf_init(char *buf, size_t size)
{
	struct sbuf sb = {buf, size, 0};

	if (size > 0)
		buf[0] = '\0';
	return sb;
}

static void sbuf_printf(struct sbuf *sb, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void sbuf_printf(struct sbuf *sb, const char *fmt, ...)
{
	size_t room = sb->len < sb->size ? sb->size - sb->len : 0;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(room > 0 ? sb->buf + sb->len : NULL, room, fmt, ap);
	va_end(ap);
	if (n > 0)
		sb->len += (size_t)n;
}

/* Quotes a span, cut to QUOTE_MAX bytes so that a huge token cannot hide the message. */
static void sbuf_quote(struct sbuf *sb, struct span sp)
{
	if (sp.len <= QUOTE_MAX)
		sbuf_printf(sb, "'%.*s'", (int)sp.len, sp.s);
	else
		sbuf_printf(sb, "'%.*s...'", QUOTE_MAX, sp.s);
}

static bool span_eq(struct span sp, const char *z)
{
	size_t n = __builtin_strlen(z);

	return sp.len == n && __builtin_memcmp(sp.s, z, n) == 0;
}

/* Returns the first c in sp, or NULL. */
static const char *span_chr(struct span sp, char c)
{
	for (size_t i = 0; i < sp.len; i++)
		if (sp.s[i] == c)
			return sp.s + i;
	return NULL;
}

static struct span span_of(const char *z)
{
	struct span sp = {z, __builtin_strlen(z)};

	return sp;
}

static bool is_sep(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Returns the next token and advances *pp past it; an empty span at the end. */
static struct span next_token(const char **pp)
{
	const char *p = *pp;
	struct span tok;

	while (is_sep(*p))
		p++;
	tok.s = p;
	while (*p != '\0' && !is_sep(*p))
		p++;
	tok.len = (size_t)(p - tok.s);
	*pp = p;
	return tok;
}

static size_t choice_count(const char *const *choices)
{
	size_t n = 0;

	while (choices[n])
		n++;
	return n;
}

/* Finds sp among the NULL-terminated choices; returns its index or -1. */
static int choice_find(const char *const *choices, struct span sp)
{
	for (int i = 0; choices[i]; i++)
		if (span_eq(sp, choices[i]))
			return i;
	return -1;
}

static void describe_choices(struct sbuf *sb, const char *const *choices)
{
	for (size_t i = 0; choices[i]; i++)
		sbuf_printf(sb, "%s%s", i ? ", " : "", choices[i]);
}

/* What a spec accepts; numbers get their syntax spelled out in error messages. */
static void describe_spec(struct sbuf *sb, const struct opt_spec *spec, bool syntax)
{
	switch (spec->type) {
	case OPT_UINT:
		sbuf_printf(sb, "%llu..%llu%s", (unsigned long long)spec->min,
			    (unsigned long long)spec->max,
			    syntax ? ", decimal or 0x hex, suffix k or M" : "");
		break;
	case OPT_BOOL:
		sbuf_printf(sb, "0/1, on/off, yes/no, true/false");
		break;
	case OPT_ENUM:
		describe_choices(sb, spec->choices);
		break;
	case OPT_LIST:
		describe_choices(sb, spec->choices);
		sbuf_printf(sb, ", comma-separated, or all");
		break;
	default:
		if (spec->max != 0)
			sbuf_printf(sb, "text of %llu..%llu bytes", (unsigned long long)spec->min,
				    (unsigned long long)spec->max);
		else
			sbuf_printf(sb, "any text");
		break;
	}
}

/* Ends a message with " (accepted: ...)". */
static void msg_accepted(const struct tok_ctx *c)
{
	sbuf_printf(c->msg, " (accepted: ");
	describe_spec(c->msg, c->spec, true);
	sbuf_printf(c->msg, ")");
}

/* "what in 'token' (accepted: ...)", the shape of every value error. */
static int msg_value_error(const struct tok_ctx *c, const char *what, int err)
{
	sbuf_printf(c->msg, "%s in ", what);
	sbuf_quote(c->msg, c->tok);
	msg_accepted(c);
	return err;
}

/* "'token': what 'item' (accepted: ...)", for errors about one choice or list item. */
static int msg_item_error(const struct tok_ctx *c, const char *what, struct span item, int err)
{
	sbuf_quote(c->msg, c->tok);
	sbuf_printf(c->msg, ": %s", what);
	if (item.s) {
		sbuf_printf(c->msg, " ");
		sbuf_quote(c->msg, item);
	}
	msg_accepted(c);
	return err;
}

static void msg_keys(struct sbuf *sb, const struct opt_spec *specs, size_t nspecs)
{
	sbuf_printf(sb, " (keys:");
	for (size_t i = 0; i < nspecs; i++)
		sbuf_printf(sb, "%s %s", i ? "," : "", specs[i].key);
	sbuf_printf(sb, ")");
}

static int digit_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return 99;
}

/*
 * Scans decimal or 0x hex with an optional k or M suffix. A malformed number
 * (-E_INVAL) is reported before an overflow (-E_RANGE), so "99...9x" is called
 * bad rather than too large.
 */
static int number_scan(struct span v, uint64_t *out)
{
	uint64_t n = 0, mul = 1;
	unsigned int base = 10;
	size_t i = 0, end = v.len;
	bool overflow = false;

	if (end > 0 && (v.s[end - 1] == 'k' || v.s[end - 1] == 'M'))
		mul = v.s[--end] == 'k' ? 1000 : 1000000;
	if (end > 2 && v.s[0] == '0' && (v.s[1] == 'x' || v.s[1] == 'X')) {
		base = 16;
		i = 2;
	}
	if (i == end)
		return -E_INVAL;
	for (; i < end; i++) {
		int d = digit_value(v.s[i]);

		if (d >= (int)base)
			return -E_INVAL;
		overflow |= __builtin_mul_overflow(n, base, &n);
		overflow |= __builtin_add_overflow(n, (uint64_t)d, &n);
	}
	overflow |= __builtin_mul_overflow(n, mul, &n);
	*out = n;
	return overflow ? -E_RANGE : 0;
}

static int parse_uint(const struct tok_ctx *c, uint64_t *out)
{
	int ret = number_scan(c->val, out);

	if (ret == -E_INVAL)
		return msg_value_error(c, "bad number", ret);
	if (ret < 0)
		return msg_value_error(c, "number too large", ret);
	if (*out < c->spec->min || *out > c->spec->max)
		return msg_value_error(c, "number out of range", -E_RANGE);
	return 0;
}

static int parse_bool(const struct tok_ctx *c, uint64_t *out)
{
	for (size_t i = 0; i < sizeof(bool_words) / sizeof(bool_words[0]); i++) {
		if (span_eq(c->val, bool_words[i])) {
			*out = i % 2;
			return 0;
		}
	}
	return msg_value_error(c, "bad boolean", -E_INVAL);
}

static int parse_enum(const struct tok_ctx *c, uint64_t *out)
{
	int i = choice_find(c->spec->choices, c->val);

	if (i < 0)
		return msg_item_error(c, "unknown choice", c->val, -E_NOENT);
	*out = (uint64_t)i;
	return 0;
}

/* Adds one list item to *mask; rejects empty, unknown, repeated items and a nested "all". */
static int list_add_item(const struct tok_ctx *c, struct span item, uint64_t *mask)
{
	int i;

	if (item.len == 0)
		return msg_item_error(c, "empty item", (struct span){NULL, 0}, -E_INVAL);
	if (span_eq(item, "all"))
		return msg_item_error(c, "'all' must stand alone, not as item", item, -E_INVAL);
	i = choice_find(c->spec->choices, item);
	if (i < 0)
		return msg_item_error(c, "unknown item", item, -E_NOENT);
	if (*mask & (1ULL << i))
		return msg_item_error(c, "duplicate item", item, -E_INVAL);
	*mask |= 1ULL << i;
	return 0;
}

static int parse_list(const struct tok_ctx *c, uint64_t *out)
{
	const char *p = c->val.s, *end = c->val.s + c->val.len;

	*out = 0;
	if (span_eq(c->val, "all")) {
		size_t n = choice_count(c->spec->choices);

		*out = n >= 64 ? ~0ULL : (1ULL << n) - 1;
		return 0;
	}
	for (;;) {
		struct span item = {p, 0};
		int ret;

		while (p < end && *p != ',')
			p++;
		item.len = (size_t)(p - item.s);
		ret = list_add_item(c, item, out);
		if (ret < 0)
			return ret;
		if (p == end)
			return 0;
		p++; /* past the ',' */
	}
}

static int parse_string(const struct tok_ctx *c)
{
	const struct opt_spec *spec = c->spec;

	if (spec->max != 0 && (c->val.len < spec->min || c->val.len > spec->max))
		return msg_value_error(c, "text length out of range", -E_RANGE);
	return 0;
}

static int parse_value(const struct tok_ctx *c, uint64_t *out)
{
	*out = 0;
	if (c->val.len == 0)
		return msg_value_error(c, "empty value", -E_INVAL);
	switch (c->spec->type) {
	case OPT_UINT:
		return parse_uint(c, out);
	case OPT_BOOL:
		return parse_bool(c, out);
	case OPT_ENUM:
		return parse_enum(c, out);
	case OPT_LIST:
		return parse_list(c, out);
	default:
		return parse_string(c);
	}
}

static int spec_find(const struct opt_spec *specs, size_t nspecs, struct span key)
{
	for (size_t i = 0; i < nspecs; i++)
		if (span_eq(key, specs[i].key))
			return (int)i;
	return -1;
}

/* Parses one key=value token into its value; returns 1 when an option was set. */
static int parse_token(struct span tok, const struct opt_spec *specs, size_t nspecs,
		       struct opt_value *values, struct sbuf *msg)
{
	const char *eq = span_chr(tok, '=');
	struct tok_ctx c = {NULL, tok, {NULL, 0}, msg};
	struct span key;
	uint64_t u;
	int i, ret;

	if (!eq) {
		sbuf_quote(msg, tok);
		sbuf_printf(msg, " is not key=value");
		msg_keys(msg, specs, nspecs);
		return -E_INVAL;
	}
	key = (struct span){tok.s, (size_t)(eq - tok.s)};
	c.val = (struct span){eq + 1, tok.len - key.len - 1};
	i = spec_find(specs, nspecs, key);
	if (i < 0 || values[i].set) {
		sbuf_printf(msg, "%s key ", i < 0 ? "unknown" : "duplicate");
		sbuf_quote(msg, key);
		sbuf_printf(msg, " in ");
		sbuf_quote(msg, tok);
		if (i < 0)
			msg_keys(msg, specs, nspecs);
		return i < 0 ? -E_NOENT : -E_INVAL;
	}
	c.spec = &specs[i];
	ret = parse_value(&c, &u);
	if (ret < 0)
		return ret;
	values[i] = (struct opt_value){true, u, c.val.s, c.val.len};
	return 1;
}

/* Checks the choices of an ENUM or LIST spec; returns a reason or NULL. */
static const char *spec_choices_problem(const struct opt_spec *spec)
{
	size_t n;

	if (!spec->choices || !spec->choices[0])
		return "no choices";
	n = choice_count(spec->choices);
	if (spec->type == OPT_LIST && n > CMDLINE_MAX_CHOICES)
		return "more than 64 choices";
	for (size_t i = 0; i < n; i++) {
		if (spec->choices[i][0] == '\0')
			return "empty choice";
		if (spec->type == OPT_LIST && span_eq(span_of(spec->choices[i]), "all"))
			return "choice 'all' is reserved";
		if (choice_find(spec->choices + i + 1, span_of(spec->choices[i])) >= 0)
			return "duplicate choice";
	}
	return NULL;
}

/* A broken table is a programming error; name it rather than parse with it. */
static const char *spec_problem(const struct opt_spec *specs, size_t i)
{
	const struct opt_spec *spec = &specs[i];

	if (!spec->key || spec->key[0] == '\0')
		return "no key";
	if (spec_find(specs, i, span_of(spec->key)) >= 0)
		return "duplicate key";
	if ((unsigned int)spec->type > OPT_STRING)
		return "unknown type";
	if (spec->min > spec->max &&
	    (spec->type == OPT_UINT || (spec->type == OPT_STRING && spec->max)))
		return "min above max";
	if (spec->type == OPT_ENUM || spec->type == OPT_LIST)
		return spec_choices_problem(spec);
	return NULL;
}

static int specs_check(const struct opt_spec *specs, size_t nspecs, struct sbuf *msg)
{
	for (size_t i = 0; i < nspecs; i++) {
		const char *why = spec_problem(specs, i);

		if (why) {
			sbuf_printf(msg, "bad option spec %zu (key '%s'): %s", i,
				    specs[i].key ? specs[i].key : "", why);
			return -E_INVAL;
		}
	}
	return 0;
}

static int parse_line(const char *line, bool image_first, const struct opt_spec *specs,
		      size_t nspecs, struct opt_value *values, char *err, size_t errlen)
{
	struct sbuf msg = sbuf_init(err, errlen);
	const char *p = line ? line : "";
	int count = 0, ret;
	struct span tok;

	ret = specs_check(specs, nspecs, &msg);
	if (ret < 0)
		return ret;
	for (size_t i = 0; i < nspecs; i++)
		values[i] = (struct opt_value){false, 0, NULL, 0};
	tok = next_token(&p);
	if (image_first && tok.len > 0 && !span_chr(tok, '='))
		tok = next_token(&p); /* the image path that multiboot loaders put first */
	for (; tok.len > 0; tok = next_token(&p)) {
		ret = parse_token(tok, specs, nspecs, values, &msg);
		if (ret < 0)
			return ret;
		count += ret;
	}
	return count;
}

int cmdline_parse(const char *line, const struct opt_spec *specs, size_t nspecs,
		  struct opt_value *values, char *err, size_t errlen)
{
	return parse_line(line, true, specs, nspecs, values, err, errlen);
}

int cmdline_parse_args(const char *line, const struct opt_spec *specs, size_t nspecs,
		       struct opt_value *values, char *err, size_t errlen)
{
	return parse_line(line, false, specs, nspecs, values, err, errlen);
}

/* Width of a spec's value column in the help text. */
static size_t help_value_width(const struct opt_spec *spec)
{
	struct sbuf counter = sbuf_init(NULL, 0);

	describe_spec(&counter, spec, false);
	return counter.len;
}

int cmdline_help(char *buf, size_t size, const struct opt_spec *specs, size_t nspecs)
{
	struct sbuf sb = sbuf_init(buf, size);
	size_t key_w = 0, val_w = 0;

	for (size_t i = 0; i < nspecs; i++) {
		size_t kw = __builtin_strlen(specs[i].key), vw = help_value_width(&specs[i]);

		key_w = kw > key_w ? kw : key_w;
		val_w = vw > val_w && vw <= HELP_COLUMN_MAX ? vw : val_w;
	}
	for (size_t i = 0; i < nspecs; i++) {
		const char *help = specs[i].help ? specs[i].help : "";
		size_t start;

		sbuf_printf(&sb, "%-*s  ", (int)key_w, specs[i].key);
		start = sb.len;
		describe_spec(&sb, &specs[i], false);
		if (help[0] != '\0') {
			size_t used = sb.len - start;

			sbuf_printf(&sb, "%*s  %s", used < val_w ? (int)(val_w - used) : 0, "",
				    help);
		}
		sbuf_printf(&sb, "\n");
	}
	if (sb.len >= size)
		return -E_NOSPC;
	return (int)sb.len;
}

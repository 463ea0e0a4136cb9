// SPDX-License-Identifier: GPL-2.0-only
/*
 * Freestanding printf engine, following C11 7.21.6.1 (fprintf) for the integer,
 * character and string conversions, and glibc where C leaves a choice open
 * (%p, a NULL %s, flags on %%). One core walks the format and hands pieces to
 * a callback; the snprintf pair is that core with a truncating buffer callback,
 * so the console and the buffered paths cannot drift apart.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lib/error.h"
#include "lib/fmt.h"

enum {
	FMT_LEFT = 1 << 0,  /* '-': pad on the right */
	FMT_ZERO = 1 << 1,  /* '0': pad numbers with zeros after the sign */
	FMT_PLUS = 1 << 2,  /* '+': always print a sign */
	FMT_SPACE = 1 << 3, /* ' ': a space where '+' would be */
	FMT_ALT = 1 << 4    /* '#': 0x prefix, leading octal 0 */
};

enum fmt_len { LEN_NONE, LEN_HH, LEN_H, LEN_L, LEN_LL, LEN_Z, LEN_T, LEN_J };

/* One parsed conversion specification. */
struct fmt_spec {
	unsigned int flags;
	int width;	  /* minimum field width, 0 when absent */
	int prec;	  /* precision, -1 when absent */
	enum fmt_len len; /* length modifier */
	char conv;	  /* conversion character, '\0' if the format ended */
};

struct fmt_sink {
	fmt_out_fn out;
	void *ctx;
	size_t count; /* bytes produced so far */
};

/* State of fmt_vsnprintf's callback: keeps room for the NUL, drops the rest. */
struct fmt_buf {
	char *buf;
	size_t size;
	size_t len;
};

static void sink_put(struct fmt_sink *sk, const char *s, size_t n)
{
	if (n == 0)
		return;
	sk->out(sk->ctx, s, n);
	sk->count += n;
}

/* Emits n copies of c (a space or '0') in chunks, so any width works. */
static void sink_repeat(struct fmt_sink *sk, char c, size_t n)
{
	static const char spaces[] = "                                ";
	static const char zeros[] = "00000000000000000000000000000000";
	const char *chunk = c == '0' ? zeros : spaces;

	while (n > 0) {
		size_t k = n < sizeof(spaces) - 1 ? n : sizeof(spaces) - 1;

		sink_put(sk, chunk, k);
		n -= k;
	}
}

/* Reads a decimal width or precision; C types both as int, so saturate there. */
static int parse_decimal(const char **pp)
{
	const char *p = *pp;
	int v = 0;

	while (*p >= '0' && *p <= '9') {
		int d = *p++ - '0';

		v = v > (__INT_MAX__ - d) / 10 ? __INT_MAX__ : v * 10 + d;
	}
	*pp = p;
	return v;
}

static void parse_flags(const char **pp, struct fmt_spec *sp)
{
	for (;; (*pp)++) {
		switch (**pp) {
		case '-':
			sp->flags |= FMT_LEFT;
			break;
		case '0':
			sp->flags |= FMT_ZERO;
			break;
		case '+':
			sp->flags |= FMT_PLUS;
			break;
		case ' ':
			sp->flags |= FMT_SPACE;
			break;
		case '#':
			sp->flags |= FMT_ALT;
			break;
		default:
			return;
		}
	}
}

/* A negative '*' width means '-' and its magnitude (C11 7.21.6.1p5). */
static void parse_width(const char **pp, struct fmt_spec *sp, va_list *ap)
{
	int w;

	if (**pp != '*') {
		sp->width = parse_decimal(pp);
		return;
	}
	(*pp)++;
	w = va_arg(*ap, int);
	if (w < 0) {
		sp->flags |= FMT_LEFT;
		w = w < -__INT_MAX__ ? __INT_MAX__ : -w;
	}
	sp->width = w;
}

/* A lone '.' is precision 0; a negative '*' precision counts as omitted. */
static void parse_precision(const char **pp, struct fmt_spec *sp, va_list *ap)
{
	int p;

	sp->prec = -1;
	if (**pp != '.')
		return;
	(*pp)++;
	if (**pp != '*') {
		sp->prec = parse_decimal(pp);
		return;
	}
	(*pp)++;
	p = va_arg(*ap, int);
	sp->prec = p < 0 ? -1 : p;
}

static void parse_length(const char **pp, struct fmt_spec *sp)
{
	const char *p = *pp;

	switch (*p) {
	case 'h':
		sp->len = p[1] == 'h' ? LEN_HH : LEN_H;
		break;
	case 'l':
		sp->len = p[1] == 'l' ? LEN_LL : LEN_L;
		break;
	case 'z':
		sp->len = LEN_Z;
		break;
	case 't':
		sp->len = LEN_T;
		break;
	case 'j':
		sp->len = LEN_J;
		break;
	default:
		return;
	}
	*pp = p + (sp->len == LEN_HH || sp->len == LEN_LL ? 2 : 1);
}

/* Fetches the argument of an unsigned conversion as its promoted type. */
// NOLINTBEGIN(bugprone-branch-clone): see the comment in each switch
static uint64_t fetch_unsigned(enum fmt_len len, va_list *ap)
{
	/* long and long long (and size_t) are the same width on x86-64, so
	 * some branches compile alike; they stay apart for the types C names. */
	switch (len) {
	case LEN_HH:
		return (unsigned char)va_arg(*ap, unsigned int);
	case LEN_H:
		return (unsigned short)va_arg(*ap, unsigned int);
	case LEN_L:
		return va_arg(*ap, unsigned long);
	case LEN_LL:
		return va_arg(*ap, unsigned long long);
	case LEN_Z:
	case LEN_T: /* the unsigned type corresponding to ptrdiff_t */
		return va_arg(*ap, size_t);
	case LEN_J:
		return va_arg(*ap, uintmax_t);
	default:
		return va_arg(*ap, unsigned int);
	}
}

static int64_t fetch_signed(enum fmt_len len, va_list *ap)
{
	/* long and long long (and size_t) are the same width on x86-64, so
	 * some branches compile alike; they stay apart for the types C names. */
	switch (len) {
	case LEN_HH:
		return (signed char)va_arg(*ap, int);
	case LEN_H:
		return (short)va_arg(*ap, int);
	case LEN_L:
		return va_arg(*ap, long);
	case LEN_LL:
		return va_arg(*ap, long long);
	case LEN_Z: /* the signed type corresponding to size_t */
	case LEN_T:
		return va_arg(*ap, ptrdiff_t);
	case LEN_J:
		return va_arg(*ap, intmax_t);
	default:
		return va_arg(*ap, int);
	}
}

// NOLINTEND(bugprone-branch-clone)

/* Writes v's digits so that they end just before end; returns their count (0 for 0). */
static size_t format_digits(char *end, uint64_t v, unsigned int base, bool upper)
{
	const char *digs = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t n = 0;

	while (v != 0) {
		uint64_t q = v / base;

		*--end = digs[v - q * base];
		v = q;
		n++;
	}
	return n;
}

/* The sign character a signed conversion (or %p, as glibc does) gets, or 0. */
static char number_sign(unsigned int flags, bool neg)
{
	if (neg)
		return '-';
	if (flags & FMT_PLUS)
		return '+';
	return flags & FMT_SPACE ? ' ' : 0;
}

/*
 * Lays out one number: [spaces] sign prefix [zeros] digits [spaces]. The
 * precision is the minimum digit count (default 1, so 0 with precision 0
 * prints no digits); the '0' flag counts only without '-' and precision.
 */
static void emit_number(struct fmt_sink *sk, const struct fmt_spec *sp, uint64_t v, char sign)
{
	char digits[24]; /* 2^64 - 1 has 22 octal digits */
	unsigned int base = sp->conv == 'o' ? 8 : sp->conv == 'x' || sp->conv == 'X' ? 16 : 10;
	size_t nd = format_digits(digits + sizeof(digits), v, base, sp->conv == 'X');
	size_t prec = sp->prec < 0 ? 1 : (size_t)sp->prec;
	size_t zeros = prec > nd ? prec - nd : 0;
	const char *prefix = sp->conv == 'X' ? "0X" : "0x";
	size_t plen = base == 16 && v != 0 && (sp->flags & FMT_ALT) ? 2 : 0;
	size_t body, pad = 0;

	if (base == 8 && (sp->flags & FMT_ALT) && zeros == 0)
		zeros = 1; /* '#' forces a leading 0; non-zero octal digits never start with one */
	body = (sign != 0) + plen + zeros + nd;
	if ((size_t)sp->width > body)
		pad = (size_t)sp->width - body;
	if ((sp->flags & (FMT_ZERO | FMT_LEFT)) == FMT_ZERO && sp->prec < 0) {
		zeros += pad;
		pad = 0;
	}
	if (!(sp->flags & FMT_LEFT))
		sink_repeat(sk, ' ', pad);
	sink_put(sk, &sign, sign != 0);
	sink_put(sk, prefix, plen);
	sink_repeat(sk, '0', zeros);
	sink_put(sk, digits + sizeof(digits) - nd, nd);
	if (sp->flags & FMT_LEFT)
		sink_repeat(sk, ' ', pad);
}

/* Emits text padded with spaces to the field width (the '0' flag does not apply). */
static void emit_padded(struct fmt_sink *sk, const struct fmt_spec *sp, const char *s, size_t n)
{
	size_t pad = (size_t)sp->width > n ? (size_t)sp->width - n : 0;

	if (!(sp->flags & FMT_LEFT))
		sink_repeat(sk, ' ', pad);
	sink_put(sk, s, n);
	if (sp->flags & FMT_LEFT)
		sink_repeat(sk, ' ', pad);
}

/* Never reads past the precision: the argument need not be NUL-terminated then. */
static void conv_string(struct fmt_sink *sk, const struct fmt_spec *sp, const char *s)
{
	size_t max = sp->prec < 0 ? (size_t)-1 : (size_t)sp->prec;
	size_t n = 0;

	if (!s) /* glibc prints "(null)" only when it fits whole */
		s = max >= 6 ? "(null)" : "";
	while (n < max && s[n] != '\0')
		n++;
	emit_padded(sk, sp, s, n);
}

/* glibc: "(nil)" (width only) for NULL, else "%#lx" with every flag applied. */
static void conv_pointer(struct fmt_sink *sk, const struct fmt_spec *sp, const void *p)
{
	struct fmt_spec hex = *sp;

	if (!p) {
		emit_padded(sk, sp, "(nil)", 5);
		return;
	}
	hex.conv = 'x';
	hex.flags |= FMT_ALT;
	emit_number(sk, &hex, (uintptr_t)p, number_sign(sp->flags, false));
}

/* Performs one conversion; false when it is not one this engine supports. */
static bool fmt_convert(struct fmt_sink *sk, const struct fmt_spec *sp, va_list *ap)
{
	int64_t sv;
	char c;

	if (sp->len != LEN_NONE && (sp->conv == 'c' || sp->conv == 's' || sp->conv == 'p'))
		return false; /* wide characters and strings are not supported */
	switch (sp->conv) {
	case 'd':
	case 'i':
		sv = fetch_signed(sp->len, ap);
		emit_number(sk, sp, sv < 0 ? 0 - (uint64_t)sv : (uint64_t)sv,
			    number_sign(sp->flags, sv < 0));
		return true;
	case 'u':
	case 'o':
	case 'x':
	case 'X':
		emit_number(sk, sp, fetch_unsigned(sp->len, ap), 0);
		return true;
	case 'c':
		c = (char)va_arg(*ap, int);
		emit_padded(sk, sp, &c, 1);
		return true;
	case 's':
		conv_string(sk, sp, va_arg(*ap, const char *));
		return true;
	case 'p':
		conv_pointer(sk, sp, va_arg(*ap, const void *));
		return true;
	case '%':
		sink_put(sk, "%", 1); /* glibc ignores flags and width here */
		return true;
	default:
		return false;
	}
}

/* Handles the specification starting at pct ('%'); returns where the text resumes. */
static const char *fmt_one(struct fmt_sink *sk, const char *pct, va_list *ap)
{
	struct fmt_spec sp = {0};
	const char *p = pct + 1;

	parse_flags(&p, &sp);
	parse_width(&p, &sp, ap);
	parse_precision(&p, &sp, ap);
	parse_length(&p, &sp);
	sp.conv = *p;
	if (sp.conv != '\0')
		p++;
	if (!fmt_convert(sk, &sp, ap))
		sink_put(sk, pct, (size_t)(p - pct)); /* show the bad specification as written */
	return p;
}

int fmt_vcallback(fmt_out_fn out, void *ctx, const char *fmt, va_list ap)
{
	struct fmt_sink sk = {out, ctx, 0};
	va_list args;

	/* A va_list parameter may be an array in disguise: copy it to take its address. */
	va_copy(args, ap);
	while (*fmt != '\0') {
		const char *pct = fmt;

		while (*pct != '\0' && *pct != '%')
			pct++;
		sink_put(&sk, fmt, (size_t)(pct - fmt));
		if (*pct == '\0')
			break;
		fmt = fmt_one(&sk, pct, &args);
	}
	va_end(args);
	return sk.count > (size_t)__INT_MAX__ ? -E_2BIG : (int)sk.count;
}

static void fmt_buf_out(void *ctx, const char *s, size_t n)
{
	struct fmt_buf *b = ctx;
	size_t room;

	if (b->len + 1 >= b->size)
		return;
	room = b->size - 1 - b->len;
	if (n > room)
		n = room;
	/* A plain loop: pieces are short, and it keeps this file free of libc calls. */
	for (size_t i = 0; i < n; i++)
		b->buf[b->len++] = s[i];
}

int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct fmt_buf b = {buf, size, 0};
	int ret = fmt_vcallback(fmt_buf_out, &b, fmt, ap);

	if (size > 0)
		buf[b.len] = '\0';
	return ret;
}

int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = fmt_vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return ret;
}

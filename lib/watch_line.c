// SPDX-License-Identifier: GPL-2.0-only
/* The stall report's lines about one CPU, no field cut (lib/watch_line.h). */
#include <stdarg.h>
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/watch_line.h"

/* The text so far: the current line starts at line; nothing is on it yet while len == fresh. */
struct out {
	char *buf;
	size_t size, len, line, fresh, cont;
	const char *prefix;
	unsigned int cpu;
	bool full;
};

static size_t measure(const char *fmt, va_list ap)
{
	va_list copy;
	int n;

	va_copy(copy, ap);
	n = fmt_vsnprintf(NULL, 0, fmt, copy);
	va_end(copy);
	return n < 0 ? WATCH_LINE_BUF : (size_t)n;
}

static void put(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(struct out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = fmt_vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
	o->len += n > 0 ? (size_t)n : 0; /* the caller made room for all of it */
}

/*
 * One field, after sep on the current line or first on a continuation
 * line when it would take this one past the width together with keep
 * characters more (a field that must stay beside it, where both fit on a
 * line of their own). Whole or not at all: once one is left out, so is
 * every field after it.
 */
static void field(struct out *o, const char *sep, size_t keep, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void field(struct out *o, const char *sep, size_t keep, const char *fmt, ...)
{
	bool fresh = o->len == o->fresh, wrap;
	size_t n, need, seplen = __builtin_strlen(sep);
	va_list ap;

	va_start(ap, fmt);
	n = measure(fmt, ap);
	if (keep && o->cont + n + keep > WATCH_LINE_WIDTH)
		keep = 0;
	wrap = !fresh && o->len - o->line + seplen + n + keep > WATCH_LINE_WIDTH;
	need = (wrap ? 1 + o->cont : fresh ? 0 : seplen) + n;
	if (o->full || need >= o->size - o->len) {
		o->full = true;
		va_end(ap);
		return;
	}
	if (wrap) {
		put(o, "\n");
		o->line = o->len;
		put(o, "%sCPU %u: ", o->prefix, o->cpu);
		o->fresh = o->len;
	} else if (!fresh) {
		put(o, "%s", sep);
	}
	o->len += (size_t)fmt_vsnprintf(o->buf + o->len, o->size - o->len, fmt, ap);
	va_end(ap);
}

int watch_line_format(char *buf, size_t size, const struct watch_line *l, const char *prefix)
{
	struct out o = { buf, size, 0, 0, 0, 0, prefix, l->cpu, false };
	int cont = fmt_snprintf(NULL, 0, "%sCPU %u: ", prefix, l->cpu);

	if (!size)
		return -E_NOSPC;
	buf[0] = 0;
	o.cont = cont > 0 ? (size_t)cont : 0;
	if (__builtin_strlen(prefix) >= size)
		return -E_NOSPC;
	put(&o, "%s", prefix);
	o.fresh = o.len;
	field(&o, "", 0, "CPU %u (APIC ID %u%s%s): phase %s", l->cpu, l->apic_id,
	      l->tag ? ", " : "", l->tag ? l->tag : "", l->phase);
	if (l->has_ms)
		field(&o, " ", 0, "for %lu ms", (unsigned long)l->ms);
	if (l->wait_name) {
		/* (met): the word holds the value, but its CPU has not seen it yet. */
		const char *met = l->sees == l->want ? " (met)" : "";
		int sees = fmt_snprintf(NULL, 0, "sees %lu%s", (unsigned long)l->sees, met);

		if (l->wait_cpu >= 0)
			field(&o, ", ", 2 + (size_t)sees, "waits for CPU %d's %s == %lu", l->wait_cpu,
			      l->wait_name, (unsigned long)l->want);
		else
			field(&o, ", ", 2 + (size_t)sees, "waits for %s == %lu", l->wait_name,
			      (unsigned long)l->want);
		field(&o, ", ", 0, "sees %lu%s", (unsigned long)l->sees, met);
	} else if (l->has_mbox) {
		field(&o, ", ", 0, "mailbox req %lu ack %lu", (unsigned long)l->req,
		      (unsigned long)l->ack);
	}
	return o.full ? -E_NOSPC : 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * The lines of `lava=1`: slugs, check lines, and the board of headline
 * figures that mirrors run.sh's summary table (lib/lava.h says which).
 */
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/lava.h"

static bool same(const char *a, const char *b)
{
	return a && b && __builtin_strcmp(a, b) == 0;
}

int lava_slug(char *buf, size_t size, const char *text)
{
	size_t n = 0;
	bool gap = false, full = false;

	if (!size)
		return -E_NOSPC;
	for (const char *p = text ? text : ""; *p; p++) {
		char c = *p;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))) {
			gap = n > 0;
			continue;
		}
		if (n + (gap ? 2 : 1) >= size) {
			full = true;
			break;
		}
		if (gap)
			buf[n++] = '_';
		buf[n++] = c;
		gap = false;
	}
	buf[n] = 0;
	if (full)
		return -E_NOSPC;
	return n ? (int)n : -E_INVAL;
}

int lava_case_line(char *buf, size_t size, const char *name, const char *result)
{
	char id[LAVA_ID_MAX];
	int len = lava_slug(id, sizeof(id), name);

	if (len < 0) {
		if (size)
			buf[0] = 0;
		return len;
	}
	len = fmt_snprintf(buf, size, "ipibench-case: %s %s", id, result);
	return len >= 0 && (size_t)len < size ? len : -E_NOSPC;
}

const char *lava_result_of(const char *status)
{
	if (same(status, "SUCCESS"))
		return "pass";
	if (same(status, "SKIP"))
		return "skip";
	return "fail";
}

/* --- the board ------------------------------------------------------------------------- */

static const struct {
	const char *bench, *metric, *variant; /* variant NULL: any (the first record) */
	const char *id;			      /* the figure's part of the test case id */
} figures[LAVA_FIGURES] = {
	[LAVA_SELF] = { "self", "send-to-handler", "sti-nop", "self_sti_nop" },
	[LAVA_SEND_COST] = { "send-cost", "send", NULL, "send_cost" },
	[LAVA_SINGLE] = { "single", "round-trip", NULL, "single_round_trip" },
	[LAVA_SINGLE_HALT] = { "single-halt", "round-trip", NULL, "single_halt_round_trip" },
	[LAVA_BROADCAST] = { "broadcast", "all-ack", NULL, "broadcast_all_ack" },
};

/* Broadcast's preference among variants at one target count; others after. */
static const char *const broadcast_order[] = { "shorthand", "set", "loop" };
#define BROADCAST_OTHER (sizeof(broadcast_order) / sizeof(broadcast_order[0]))

static unsigned int broadcast_rank(const char *variant)
{
	for (unsigned int i = 0; i < BROADCAST_OTHER; i++)
		if (same(variant, broadcast_order[i]))
			return i;
	return BROADCAST_OTHER;
}

/* A word of a blank-separated list. */
static bool has_word(const char *list, const char *word)
{
	size_t n = __builtin_strlen(word);

	for (const char *p = list; p && *p;) {
		while (*p == ' ')
			p++;
		const char *e = p;

		while (*e && *e != ' ')
			e++;
		if ((size_t)(e - p) == n && __builtin_memcmp(p, word, n) == 0)
			return true;
		p = e;
	}
	return false;
}

static int figure_of(const struct result *r)
{
	for (int f = 0; f < LAVA_FIGURES; f++)
		if (same(r->bench, figures[f].bench) && same(r->metric, figures[f].metric) &&
		    (!figures[f].variant || same(r->variant, figures[f].variant)))
			return f;
	return -1;
}

void lava_board_note(struct lava_board *b, const struct result *r)
{
	int f = figure_of(r);
	unsigned int i, rank = broadcast_rank(r->variant);
	struct lava_cell *c;

	if (f < 0 || !r->backend || same(r->backend, "none"))
		return;
	for (i = 0; i < b->n && !same(b->row[i].backend, r->backend); i++)
		;
	if (i == b->n) {
		if (b->n == LAVA_ROWS)
			return;
		b->row[b->n].backend = r->backend;
		for (unsigned int k = 0; k < LAVA_FIGURES; k++)
			b->row[b->n].cell[k] = (struct lava_cell){ 0 };
		b->n++;
	}
	c = &b->row[i].cell[f];
	if (c->set && (f != LAVA_BROADCAST || r->ntargets < c->ntargets ||
		       (r->ntargets == c->ntargets && rank >= c->rank)))
		return;
	*c = (struct lava_cell){
		.set = true,
		.shown = same(r->status, "SUCCESS") && r->st,
		.ntargets = r->ntargets,
		.rank = rank,
	};
	if (!c->shown)
		return;
	c->cycles = r->st->p50;
	c->ns = r->tsc_khz && !has_word(r->untrusted, "tsc-freq-guessed");
	if (c->ns)
		c->ns_value = stats_cycles_to_ns(r->st->p50, r->tsc_khz);
}

int lava_figure_line(char *buf, size_t size, const struct lava_board *b, unsigned int i)
{
	for (unsigned int row = 0; row < b->n; row++) {
		for (unsigned int f = 0; f < LAVA_FIGURES; f++) {
			const struct lava_cell *c = &b->row[row].cell[f];
			unsigned int lines = c->shown ? 1u + c->ns : 0u;
			char backend[LAVA_ID_MAX];
			int len;

			if (i >= lines) {
				i -= lines;
				continue;
			}
			if (lava_slug(backend, sizeof(backend), b->row[row].backend) < 0)
				return -E_INVAL;
			len = fmt_snprintf(buf, size, "ipibench-figure: %s_%s_p50_%s %llu %s", backend,
					   figures[f].id, i ? "ns" : "cycles",
					   (unsigned long long)(i ? c->ns_value : c->cycles),
					   i ? "ns" : "cycles");
			return len >= 0 && (size_t)len < size ? len : -E_NOSPC;
		}
	}
	return -E_NOENT;
}

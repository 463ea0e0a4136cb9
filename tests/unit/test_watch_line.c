// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/watch_line.c, the stall report's lines about a CPU:
 * the short case on one line; the review's case (a sender waiting for
 * CPU 3's mailbox ack == 1734, which a 90-character cut printed as "ack ==
 * 173") on a continuation line, whole; "(met)" when the word holds the
 * value waited for; an idle AP's mailbox; a name longer than a line kept
 * whole. Then every combination of the longest fields there are (3-digit
 * CPUs, 10-digit APIC IDs, the tags, every wait name the kernel has,
 * 20-digit values): lines of at most WATCH_LINE_WIDTH, each number in the
 * output one of the numbers given (none cut short), and with every buffer
 * too small, whole fields only.
 */
#include <ctype.h>
#include <stdlib.h>
#include "lib/error.h"
#include "lib/watch_line.h"
#include "tests/unit/check.h"

#define PFX "watchdog: "
#define ARRAY(a) (sizeof(a) / sizeof((a)[0]))

static char out[WATCH_LINE_BUF];

static struct watch_line target(void)
{
	return (struct watch_line){ .cpu = 2, .apic_id = 2, .phase = "target", .has_ms = true,
				    .ms = 5072, .wait_name = "spin_stop", .wait_cpu = -1,
				    .want = 1, .sees = 0 };
}

TEST(short_on_one_line)
{
	struct watch_line l = target();

	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	CHECK_STR(out, PFX "CPU 2 (APIC ID 2): phase target for 5072 ms, waits for spin_stop == 1, "
		       "sees 0");
}

TEST(review_case_wraps_whole)
{
	struct watch_line l = { .cpu = 1, .apic_id = 1, .tag = "stalled", .phase = "sender",
				.has_ms = true, .ms = 5072, .wait_name = "mailbox ack",
				.wait_cpu = 3, .want = 1734, .sees = 1733 };

	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	CHECK_STR(out, PFX "CPU 1 (APIC ID 1, stalled): phase sender for 5072 ms\n"
		  PFX "CPU 1: waits for CPU 3's mailbox ack == 1734, sees 1733");
}

TEST(met_is_marked)
{
	struct watch_line l = target();

	l.sees = 1;
	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	CHECK_STR(out, PFX "CPU 2 (APIC ID 2): phase target for 5072 ms, waits for spin_stop == 1, "
		       "sees 1 (met)");
}

TEST(idle_mailbox)
{
	struct watch_line l = { .cpu = 3, .apic_id = 4, .tag = "reporting", .phase = "idle",
				.has_ms = true, .ms = 12, .wait_cpu = -1, .has_mbox = true,
				.req = 41, .ack = 40 };

	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	CHECK_STR(out, PFX "CPU 3 (APIC ID 4, reporting): phase idle for 12 ms, mailbox req 41 "
		       "ack 40");
	l.has_ms = false;
	l.has_mbox = false;
	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	CHECK_STR(out, PFX "CPU 3 (APIC ID 4, reporting): phase idle");
}

TEST(overlong_name_whole)
{
	static const char name[] = "a wait name far longer than any the kernel has, longer than a "
				   "line of the report on its own";
	struct watch_line l = target();
	char want[256];

	l.wait_name = name;
	CHECK_EQ(watch_line_format(out, sizeof(out), &l, PFX), 0);
	snprintf(want, sizeof(want), PFX "CPU 2 (APIC ID 2): phase target for 5072 ms\n" PFX
		 "CPU 2: waits for %s == 1\n" PFX "CPU 2: sees 0", name);
	CHECK_STR(out, want);
}

/* Every number in s is one of the n in vals; and, with full, each of them occurs. */
static int numbers_whole(const char *s, const uint64_t *vals, size_t n, int full)
{
	int seen[16] = { 0 };

	while (*s) {
		char *end;
		uint64_t v;
		size_t i;

		if (!isdigit((unsigned char)*s)) {
			s++;
			continue;
		}
		v = strtoull(s, &end, 10);
		for (i = 0; i < n; i++)
			seen[i] |= vals[i] == v;
		for (i = 0; i < n && vals[i] != v; i++)
			;
		if (i == n) {
			printf("#   number %" PRIu64 " is none of those given\n", v);
			return 0;
		}
		s = end;
	}
	for (size_t i = 0; full && i < n; i++) {
		if (!seen[i]) {
			printf("#   %" PRIu64 " missing\n", vals[i]);
			return 0;
		}
	}
	return 1;
}

/* Lines of at most the width, each beginning with the prefix. */
static int lines_ok(const char *s)
{
	for (const char *line = s; line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		if (len > WATCH_LINE_WIDTH || strncmp(line, PFX, strlen(PFX)) != 0) {
			printf("#   line of %zu: %.*s\n", len, (int)len, line);
			return 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return 1;
}

static void check_one(const struct watch_line *l)
{
	uint64_t vals[8] = { l->cpu, l->apic_id };
	size_t n = 2, full;
	char small[WATCH_LINE_BUF];

	if (l->has_ms)
		vals[n++] = l->ms;
	if (l->wait_name && l->wait_cpu >= 0)
		vals[n++] = (uint64_t)l->wait_cpu;
	if (l->wait_name) {
		vals[n++] = l->want;
		vals[n++] = l->sees;
	} else if (l->has_mbox) {
		vals[n++] = l->req;
		vals[n++] = l->ack;
	}
	CHECK_EQ(watch_line_format(out, sizeof(out), l, PFX), 0);
	CHECK(lines_ok(out));
	CHECK(numbers_whole(out, vals, n, 1));
	full = strlen(out);
	/* Each buffer too small: a beginning of the whole text, its numbers whole. */
	for (size_t size = 1; size <= full; size++) {
		int rc = watch_line_format(small, size, l, PFX);

		CHECK_EQ(rc, -E_NOSPC);
		CHECK(strlen(small) < size && strncmp(small, out, strlen(small)) == 0);
		CHECK(numbers_whole(small, vals, n, 0));
		if (check_failed) {
			printf("#   size %zu: '%s' of '%s'\n", size, small, out);
			return;
		}
	}
}

TEST(longest_fields_never_cut)
{
	static const char *const tags[] = { NULL, "stalled", "reporting" };
	static const char *const names[] = { NULL, "spin_stop", "mailbox ack", "spin_ready epoch",
					     "switch barrier sense" };
	static const unsigned int cpus[] = { 0, 9, 10, 99, 255 };
	static const uint64_t big[] = { 0, 1, 1733, 1734, 4294967295u, UINT64_MAX - 1,
					UINT64_MAX };

	for (size_t c = 0; c < ARRAY(cpus); c++)
		for (size_t t = 0; t < ARRAY(tags); t++)
			for (size_t w = 0; w < ARRAY(names); w++)
				for (size_t v = 0; v < ARRAY(big); v++) {
					struct watch_line l = {
						.cpu = cpus[c], .apic_id = (unsigned int)big[v],
						.tag = tags[t], .phase = "measuring",
						.has_ms = v > 0, .ms = big[v],
						.wait_name = names[w],
						.wait_cpu = w == 1 ? -1 : (int)cpus[ARRAY(cpus) - 1 - c],
						.want = big[v], .sees = big[ARRAY(big) - 1 - v],
						.has_mbox = !names[w], .req = big[v], .ack = big[v],
					};

					check_one(&l);
					if (check_failed)
						return;
				}
}

TEST_MAIN(T(short_on_one_line), T(review_case_wraps_whole), T(met_is_marked), T(idle_mailbox),
	  T(overlong_name_whole), T(longest_fields_never_cut))

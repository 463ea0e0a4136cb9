/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The stall report's lines about one CPU (kernel/watchdog.c), pure code:
 *
 *   watchdog: CPU 2 (APIC ID 2): phase target for 5072 ms, waits for spin_stop == 1, sees 0
 *
 * Built field by field, and no field is ever cut: one that would take its
 * line past the width starts a continuation line, "watchdog: CPU N: ",
 * which the wait and the value seen share when they fit together:
 *
 *   watchdog: CPU 1 (APIC ID 1, stalled): phase sender for 5072 ms
 *   watchdog: CPU 1: waits for CPU 3's mailbox ack == 1734, sees 1733
 *
 * A field longer than a line on its own (a name no kernel wait has) stays
 * whole on a line of its own. WATCH_LINE_BUF holds the longest case there
 * is with room to spare: three-digit CPU numbers, a 10-digit APIC ID, the
 * "reporting" tag, "spin_ready epoch", 20-digit values and "(met)".
 */
#ifndef LIB_WATCH_LINE_H
#define LIB_WATCH_LINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define WATCH_LINE_WIDTH 100 /* characters a line holds, its "watchdog: " included */
#define WATCH_LINE_BUF	 512

/* What one CPU was doing, as the report gathered it. */
struct watch_line {
	unsigned int cpu, apic_id;
	const char *tag;       /* "stalled", "reporting" or NULL */
	const char *phase;     /* its phase in one word: "target", "sender", ... */
	bool has_ms;	       /* the time in the phase is known */
	uint64_t ms;
	const char *wait_name; /* the wait in progress, or NULL: "mailbox ack", "spin_stop" */
	int wait_cpu;	       /* whose word it waits on, or -1 (a shared one) */
	uint64_t want, sees;   /* the value waited for, the value the word held */
	bool has_mbox;	       /* an idle AP: its mailbox's counters instead of a wait */
	uint64_t req, ack;
};

/*
 * The lines about l into buf (size bytes), each starting with prefix
 * ("watchdog: "), '\n' between them and none after the last. 0, or
 * -E_NOSPC when buf could not hold them all: then it holds the first
 * fields, each whole, and none after a field left out.
 */
int watch_line_format(char *buf, size_t size, const struct watch_line *l, const char *prefix);

#endif

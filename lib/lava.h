/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The console lines of `lava=1` (docs/lab.md, "The guest's LAVA lines"):
 * what a LAVA `monitors` test action turns into test cases, formatted here,
 * pure and host-tested (tests/unit/test_lava.c).
 *
 *   ipibench-case: ID RESULT          one per check, and the plan's status
 *   ipibench-figure: ID VALUE UNITS   one per headline figure and unit
 *
 * LAVA's monitor lowercases the test case id it captures and replaces each
 * run of non-word characters with '_' (lava_dispatcher/actions/test/
 * monitor.py), and a pattern's group ends where its character class does:
 * a check's name as the console prints it ("xapic: CPU 0 -> CPU 1, vector
 * 0x43") would be cut or changed. So the id printed is already LAVA's slug:
 * [a-z0-9] runs joined by single '_' ("xapic_cpu_0_cpu_1_vector_0x43"), a
 * token that LAVA keeps as it is and that one [a-z0-9_]+ group takes whole.
 *
 * The headline figures are the p50s of run.sh's summary table
 * (host/ipibench/boot/headline.py, headline()): per backend, self sti-nop,
 * send-cost, single (round trip to a spinning target), single-halt (to a
 * halted one) and broadcast all-ack to the most targets (shorthand, else
 * set, else loop). Each is picked from the records as that table picks it:
 * the first record of its bench, metric (and variant), whatever its status;
 * broadcast by target count, then variant. A figure appears only when its
 * record is a SUCCESS with statistics, in cycles always, and in ns when the
 * TSC frequency is known and not guessed (tsc-freq-guessed, lib/trust.h).
 */
#ifndef LIB_LAVA_H
#define LIB_LAVA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/record.h"

#define LAVA_ID_MAX 192	     /* bytes of one id, NUL included */
#define LAVA_LINE_MAX 256    /* bytes of one line, NUL included */
#define LAVA_ROWS 16	     /* backends a board holds (there are 13) */

/* The monitors' fixed lines, in the order the guest prints them. */
#define LAVA_BEGIN	    "ipibench-lava: begin"
#define LAVA_CASES_END	    "ipibench-lava: cases end"
#define LAVA_FIGURES_BEGIN  "ipibench-lava: figures begin"
#define LAVA_FIGURES_END    "ipibench-lava: figures end"
#define LAVA_STATUS_CASE    "ipibench_status"

enum lava_figure {
	LAVA_SELF,	     /* self, send-to-handler, sti-nop */
	LAVA_SEND_COST,	     /* send-cost, send */
	LAVA_SINGLE,	     /* single, round-trip */
	LAVA_SINGLE_HALT,    /* single-halt, round-trip */
	LAVA_BROADCAST,	     /* broadcast, all-ack */
	LAVA_FIGURES
};

/* One figure of one backend: the record the table would show. */
struct lava_cell {
	bool set;	/* a record was picked */
	bool shown;	/* it is a SUCCESS with statistics */
	bool ns;	/* ns is trusted */
	uint64_t cycles, ns_value;
	uint32_t ntargets;	/* broadcast: the pick's target count */
	unsigned int rank;	/* broadcast: its variant's place (shorthand, set, loop, other) */
};

struct lava_board {
	unsigned int n;
	struct {
		const char *backend;	/* the record's own string: static in the guest */
		struct lava_cell cell[LAVA_FIGURES];
	} row[LAVA_ROWS];
};

/*
 * text as LAVA's slug of it: lowercase [a-z0-9] runs joined by one '_', none
 * at either end. Returns the length, -E_INVAL when nothing is left (buf ""),
 * -E_NOSPC when it did not fit (buf holds what did, NUL-terminated).
 */
int lava_slug(char *buf, size_t size, const char *text);

/* "ipibench-case: ID RESULT"; ID is name's slug. Length or negative. */
int lava_case_line(char *buf, size_t size, const char *name, const char *result);

/* Takes one result record into the board (ignored unless it is a headline's). */
void lava_board_note(struct lava_board *b, const struct result *r);

/*
 * The i-th figure line of the board, i from 0: "ipibench-figure: ID VALUE
 * UNITS", backends in the order their first record came, figures in
 * enum lava_figure order, cycles before ns. Returns the length, or -E_NOENT
 * when there are fewer lines.
 */
int lava_figure_line(char *buf, size_t size, const struct lava_board *b, unsigned int i);

/* "pass", "skip" or "fail" for a status name ("SUCCESS", "SKIP", ...). */
const char *lava_result_of(const char *status);

#endif

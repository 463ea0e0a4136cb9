/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The lines a LAVA `monitors` test action reads (kernel/lava_board.c; the format
 * in lib/lava.h and docs/lab.md). Printed only with `lava=1` on the command
 * line: each call is a no-op otherwise, so the console of every other run
 * is unchanged. BSP only, like every other console record.
 */
#ifndef INCLUDE_LAVA_H
#define INCLUDE_LAVA_H

#include "include/status.h"
#include "lib/record.h"

/* After the command line is parsed: the line the first monitor starts at. */
void lava_begin(void);

/* A check's TAP line was printed; result is "pass", "fail" or "skip". */
void lava_check(const char *name, const char *result);

/* A result record was printed: the board keeps the headline figures. */
void lava_result(const struct result *r);

/* Before the status line: the plan's status as a case, then the figures. */
void lava_finish(enum status st);

#endif

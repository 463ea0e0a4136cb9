// SPDX-License-Identifier: GPL-2.0-only
/*
 * lava=1: the check and figure lines of lib/lava.h, printed beside the
 * console's own lines. The figures wait on a board until the end, where
 * lava_finish() prints them after the last case: a LAVA job reads the two
 * kinds with two monitors, one after the other, since a monitor's pattern
 * has either a result or a measurement for every line it takes.
 *
 * lava_finish() runs in status_exit(), the one way out, so a run that ends
 * early (a bad status, the watchdog) still closes both monitors and LAVA
 * keeps every case with the plan's status among them.
 */
#include "include/console.h"
#include "include/lava.h"
#include "include/options.h"
#include "lib/lava.h"

static struct lava_board board;

void lava_begin(void)
{
	if (options.lava)
		kprintf("%s\n", LAVA_BEGIN);
}

void lava_check(const char *name, const char *result)
{
	char line[LAVA_LINE_MAX];

	if (!options.lava)
		return;
	if (lava_case_line(line, sizeof(line), name, result) >= 0)
		kprintf("%s\n", line);
	else
		kprintf("lava: no case line for check \"%s\"\n", name);
}

void lava_result(const struct result *r)
{
	if (options.lava)
		lava_board_note(&board, r);
}

void lava_finish(enum status st)
{
	char line[LAVA_LINE_MAX];

	if (!options.lava)
		return;
	kprintf("ipibench-case: %s %s\n", LAVA_STATUS_CASE, lava_result_of(status_name(st)));
	kprintf("%s\n%s\n", LAVA_CASES_END, LAVA_FIGURES_BEGIN);
	for (unsigned int i = 0; lava_figure_line(line, sizeof(line), &board, i) >= 0; i++)
		kprintf("%s\n", line);
	kprintf("%s\n", LAVA_FIGURES_END);
}

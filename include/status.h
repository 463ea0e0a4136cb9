/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Run status, after the Xen Test Framework: the worst status seen wins and
 * the last console line states it. The guest reports it through
 * isa-debug-exit, which turns a written byte b into QEMU's exit status
 * (b << 1) | 1. QEMU's own failures exit 1 (b = 0), so no status byte is 0.
 * run.sh decodes these values in one place; docs/exit-codes.md lists both,
 * with each status's comment below as its meaning (tools/doc_reference.py).
 */
#ifndef INCLUDE_STATUS_H
#define INCLUDE_STATUS_H

enum status {
	STATUS_SUCCESS,	/* everything ran and passed */
	STATUS_SKIP,	/* nothing failed, something could not run here */
	STATUS_ERROR,	/* our code or the environment broke */
	STATUS_FAILURE,	/* the system under test misbehaved (lost IPI, bad status) */
	STATUS_CRASH,	/* an unexpected exception ended the run */
	STATUS_BADCMD,	/* the command line was rejected; nothing ran */
	STATUS_COUNT
};

#define STATUS_BYTE_BASE 0x20 /* STATUS_SUCCESS -> 0x20 -> QEMU exit 65 */

/* Set once status_exit() starts stopping the other CPUs (their NMI handler parks them). */
extern int status_stopping;

/* What was running, for the crash report ("benchmark single on x2apic"), or NULL. */
extern const char *volatile crash_context;

const char *status_name(enum status st);
void status_report(enum status st);	/* worst wins */
enum status status_worst(void);
__attribute__((noreturn)) void status_exit(enum status st);
__attribute__((noreturn)) void status_finish(void);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Error codes for the whole project: a function that can fail returns 0 (or
 * a non-negative count) on success and one of these, negated, on failure.
 * The values follow Linux's errno numbers so that messages read familiarly,
 * but the names are our own so that host builds never clash with <errno.h>.
 */
#ifndef LIB_ERROR_H
#define LIB_ERROR_H

enum {
	E_NOENT = 2,	 /* no such entry (table, key, CPU) */
	E_2BIG = 7,	 /* input larger than the format allows */
	E_NODEV = 19,	 /* hardware feature absent */
	E_INVAL = 22,	 /* malformed input */
	E_NOSPC = 28,	 /* output buffer too small */
	E_RANGE = 34,	 /* value out of the accepted range */
	E_PROTO = 71,	 /* the other side broke the protocol */
	E_BADMSG = 74,	 /* checksum or structure check failed */
	E_NOTSUP = 95,	 /* valid, but not supported here */
	E_TIMEDOUT = 110 /* a deadline expired */
};

const char *error_name(int err);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel command-line parser: the multiboot command line (Multiboot 0.6.96,
 * section 3.3, the 'cmdline' field), e.g.
 *     /boot/ipibench.elf plan=check iters=10k backends=xapic,x2apic
 * is checked against a table of option specs and parsed into one value per
 * spec. Every mistake is reported as one line that names the offending token
 * and what is accepted, since the user sees it only on a serial console.
 *
 * Syntax: tokens separated by spaces or tabs (newlines and carriage returns
 * count as spaces too). cmdline_parse() skips the first token when it has
 * no '=': multiboot loaders (QEMU, GRUB) put the image path there. A PVH
 * loader passes the arguments alone: cmdline_parse_args() skips nothing, so
 * a bare first word is an error there too. Every other token is key=value;
 * the value runs to the next separator and may itself contain '='.
 */
#ifndef LIB_CMDLINE_H
#define LIB_CMDLINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum opt_type {
	OPT_UINT,  /* decimal or 0x hex, suffix k (x1000) or M (x1000000); in [min, max] */
	OPT_BOOL,  /* 0/1, on/off, yes/no, true/false; u is 0 or 1 */
	OPT_ENUM,  /* exactly one of choices; u is its index */
	OPT_LIST,  /* comma-separated choices, each once, or "all"; u has bit i for choice i */
	OPT_STRING /* any text; when max != 0 its length must lie in [min, max] */
};

/* A LIST value is a 64-bit mask, so a LIST spec offers at most this many choices. */
#define CMDLINE_MAX_CHOICES 64

struct opt_spec {
	const char *key;
	enum opt_type type;
	uint64_t min, max;	    /* UINT: value bounds; STRING: length bounds if max != 0 */
	const char *const *choices; /* ENUM and LIST: NULL-terminated; "all" is reserved */
	const char *help;	    /* one short phrase for cmdline_help() */
};

struct opt_value {
	bool set;      /* the key appeared on the line */
	uint64_t u;    /* UINT value, BOOL 0/1, ENUM index, LIST bitmask */
	const char *s; /* raw value text, pointing into the line (not NUL-terminated) */
	size_t len;    /* its length */
};

/*
 * Parses line (NULL reads as empty) into values[i] for specs[i]; keys that do
 * not appear are left zeroed (set false), so defaults are the caller's. Returns
 * the number of options set, or a negative error code: -E_INVAL for malformed
 * input (token without '=', empty value or list item, bad number or boolean,
 * duplicate key or item) and for a bad spec table, -E_NOENT for an unknown
 * key, enum choice or list item, -E_RANGE for a number or length outside its
 * bounds (overflow past 2^64 - 1 included). On error, err receives one line
 * (no newline) naming the token and what is accepted; values are then
 * partly filled. err is always NUL-terminated when errlen > 0, truncated if
 * need be, and empty on success; it may be NULL when errlen is 0.
 */
int cmdline_parse(const char *line, const struct opt_spec *specs, size_t nspecs,
		  struct opt_value *values, char *err, size_t errlen);

/* As cmdline_parse(), for a line of arguments only: no image path first. */
int cmdline_parse_args(const char *line, const struct opt_spec *specs, size_t nspecs,
		       struct opt_value *values, char *err, size_t errlen);

/*
 * Renders one line per spec: key, accepted values, help text, in aligned
 * columns. Returns the length written, or -E_NOSPC when buf was too small
 * (the text is then truncated, still NUL-terminated when size > 0).
 */
int cmdline_help(char *buf, size_t size, const struct opt_spec *specs, size_t nspecs);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Freestanding printf engine (C11 7.21.6.1, integer conversions only).
 *
 * Conversions: %d %i %u %x %X %o %c %s %p %%; length modifiers hh h l ll z t j;
 * flags - 0 + space #; width and precision, both also as '*'. No floating point:
 * the kernel is built with -mgeneral-regs-only. Where C leaves a case open, the
 * output follows glibc so that host tests can compare against it: %p prints
 * "0x" and lower-case hex ("(nil)" for NULL), %s of NULL prints "(null)" (or
 * nothing when the precision is below 6). A malformed or unsupported
 * conversion (%n, %f, %ls, ...) is copied to the output as written, so the
 * mistake shows on the console instead of silently consuming an argument.
 */
#ifndef LIB_FMT_H
#define LIB_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* Receives each piece of output in order; the pieces are not NUL-terminated. */
typedef void (*fmt_out_fn)(void *ctx, const char *s, size_t n);

/*
 * Formats through out() without any buffer limit. Returns the number of bytes
 * produced, or -E_2BIG when that exceeds INT_MAX (all bytes are still sent).
 */
int fmt_vcallback(fmt_out_fn out, void *ctx, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/*
 * C99 vsnprintf: writes at most size - 1 bytes plus a NUL when size > 0 (buf
 * may be NULL when size is 0) and returns the length the whole output would
 * have had, or -E_2BIG when that exceeds INT_MAX.
 */
int fmt_vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
    __attribute__((format(printf, 3, 0)));

/* C99 snprintf, as fmt_vsnprintf(). */
int fmt_snprintf(char *buf, size_t size, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif

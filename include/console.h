/* SPDX-License-Identifier: GPL-2.0-only */
/* The serial console: the only output of the guest. */
#ifndef INCLUDE_CONSOLE_H
#define INCLUDE_CONSOLE_H

#include <stdarg.h>
#include "include/compiler.h"

void serial_init(void);
void console_write(const char *s, unsigned long n);
__printf(1, 2) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);
__printf(1, 2) __noreturn void panic(const char *fmt, ...);

#endif

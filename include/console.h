/* SPDX-License-Identifier: GPL-2.0-only */
/* The console (COM1, or a virtio console where there is one): the only output of the guest. */
#ifndef INCLUDE_CONSOLE_H
#define INCLUDE_CONSOLE_H

#include <stdarg.h>
#include "include/compiler.h"

void serial_init(void);
/* The "console: virtio console at ..." line, when the console is one. */
void console_print_transport(void);
void console_write(const char *s, unsigned long n);
__printf(1, 2) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);
__printf(1, 2) __noreturn void panic(const char *fmt, ...);

#endif

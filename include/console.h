/* SPDX-License-Identifier: GPL-2.0-only */
/* The console (COM1, or a virtio console where there is one): the only output of the guest. */
#ifndef INCLUDE_CONSOLE_H
#define INCLUDE_CONSOLE_H

#include <stdarg.h>
#include "include/compiler.h"

void serial_init(void);
/* console=virtio: the virtio console from here on, and a line that says so (or why not). */
void console_use_virtio(void);
void console_write(const char *s, unsigned long n);
__printf(1, 2) void kprintf(const char *fmt, ...);
void kvprintf(const char *fmt, va_list ap);
__printf(1, 2) __noreturn void panic(const char *fmt, ...);

#endif

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the loader handed the kernel, whichever loader it was (multiboot
 * today): copies taken before memory is reused, for the console and the
 * environment record.
 */
#ifndef INCLUDE_BOOT_H
#define INCLUDE_BOOT_H

extern char boot_cmdline[2048];
extern char boot_loader_name[64];

#endif

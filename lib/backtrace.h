/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Reading a stopped CPU's stack without faulting, pure code: the stall
 * watchdog (kernel/watchdog.c) prints a few words from the stalled CPU's
 * RSP and the return addresses along its RBP chain (the kernel is built
 * with -fno-omit-frame-pointer: each C function's prologue pushes the
 * caller's RBP and points RBP at it, so [RBP] is the caller's RBP and
 * [RBP + 8] the return address into the caller).
 *
 * Both take the one window [lo, hi) the caller knows to be mapped (that
 * CPU's own stack) and read nothing outside it, so a wild RSP or RBP ends
 * the read, never the run. Addresses are the identity-mapped kernel's:
 * a pointer and its address are the same number.
 */
#ifndef LIB_BACKTRACE_H
#define LIB_BACKTRACE_H

#include <stdint.h>

/* Up to n words from address at, if at is 8-aligned and inside [lo, hi),
 * those below hi only; returns how many it copied into out. */
unsigned int stack_peek(uint64_t at, uint64_t lo, uint64_t hi, uint64_t *out, unsigned int n);

/*
 * Up to max return addresses along the RBP chain from rbp, innermost
 * first. It stops at the first frame that is not 8-aligned, not inside
 * [lo, hi) or not above the one before (a stack grows down, so callers'
 * frames lie higher), or whose return address lies outside
 * [text_lo, text_hi): the end of the chain (the entry code sets no frame)
 * or a function without a frame (nasm) on the way. Returns the count.
 */
unsigned int fp_backtrace(uint64_t rbp, uint64_t lo, uint64_t hi, uint64_t text_lo,
			  uint64_t text_hi, uint64_t *out, unsigned int max);

#endif

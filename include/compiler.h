/* SPDX-License-Identifier: GPL-2.0-only */
/* Compiler attributes and small helpers shared by kernel units. */
#ifndef INCLUDE_COMPILER_H
#define INCLUDE_COMPILER_H

#include <stddef.h>

#define CACHELINE 64
#define __aligned(n) __attribute__((aligned(n)))
#define __cacheline_aligned __aligned(CACHELINE)
#define __packed __attribute__((packed))
#define __noreturn __attribute__((noreturn))
#define __printf(a, b) __attribute__((format(printf, a, b)))
#define __section(s) __attribute__((section(s)))
#define __used __attribute__((used))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define SWAP(a, b)                                                                                 \
	do {                                                                                       \
		__typeof__(a) swap_tmp_ = (a);                                                     \
		(a) = (b);                                                                         \
		(b) = swap_tmp_;                                                                   \
	} while (0)
#define ALIGN_UP(x, a) (((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))

/* Ordered accesses to memory shared between CPUs. */
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define barrier() asm volatile("" ::: "memory")

#endif

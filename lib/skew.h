/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * TSC skew between two CPUs from what the boot measured against the BSP
 * (kernel/tsc_sync.c): CPU c's TSC runs d_c ahead of the BSP's, with
 * d_c in [lo_c, hi_c] (the BSP itself: [0, 0]). Pure, host-tested.
 */
#ifndef LIB_SKEW_H
#define LIB_SKEW_H

#include <stdint.h>

/*
 * A bound on |d_b - d_a|: b runs d_b - d_a ahead of a, which lies in
 * [lo_b - hi_a, hi_b - lo_a]; the larger magnitude of the two ends, at
 * most the sum of the two CPUs' own bounds against the BSP. It can be
 * tighter than either (two APs measured alike against the BSP: [100, 110]
 * twice gives 10), but never below the width of either interval.
 */
uint64_t skew_pair_bound(int64_t lo_a, int64_t hi_a, int64_t lo_b, int64_t hi_b);

#endif

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Late wakes against wakes a timer tick delayed (lib/late_wake.h).
 */
#include "lib/late_wake.h"

/* Whether v is one of ticked[] not matched yet; if so it is matched now. */
static int take_ticked(uint64_t v, uint64_t *ticked, size_t nt)
{
	for (size_t i = 0; i < nt; i++) {
		if (ticked[i] && ticked[i] == v) {
			ticked[i] = 0;
			return 1;
		}
	}
	return 0;
}

struct late_wakes late_wakes_count(const uint64_t *samples, size_t n, uint64_t bound,
				   uint64_t *ticked, size_t nt)
{
	struct late_wakes w = {0, 0, 0};

	for (size_t i = 0; samples && i < n; i++) {
		if (samples[i] <= bound)
			continue;
		if (ticked && take_ticked(samples[i], ticked, nt)) {
			w.by_tick++;
			continue;
		}
		w.late++;
		if (samples[i] > w.late_max)
			w.late_max = samples[i];
	}
	return w;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Heapsort of uint64_t (lib/sort.h). Chosen over quicksort because its worst
 * case is O(n log n) with O(1) stack: adversarial (or merely unlucky) sample
 * orders must not blow the kernel stack or the time budget.
 */
#include "lib/sort.h"

/*
 * Move v[root] down the max-heap v[0..n) until both children are smaller.
 * A hole travels down instead of swapping at every level: one store per
 * level rather than two.
 */
static void sort_sift_down(uint64_t *v, size_t root, size_t n)
{
	uint64_t x = v[root];

	/* root < n / 2 keeps 2 * root + 1 < n without overflow. */
	while (root < n / 2) {
		size_t child = 2 * root + 1;

		if (child + 1 < n && v[child + 1] > v[child])
			child++;
		if (v[child] <= x)
			break;
		v[root] = v[child];
		root = child;
	}
	v[root] = x;
}

void sort_u64(uint64_t *v, size_t n)
{
	if (!v || n < 2)
		return;
	for (size_t i = n / 2; i-- > 0;)
		sort_sift_down(v, i, n);
	for (size_t end = n - 1; end > 0; end--) {
		uint64_t top = v[0];

		v[0] = v[end];
		v[end] = top;
		sort_sift_down(v, 0, end);
	}
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/vring.c: offsets hand-checked against virtio 1.2,
 * 2.7.2 (legacy layout: descriptors 16 bytes each, the available ring
 * 6 + 2 x num, the used ring 6 + 8 x num from the next 4096) and the
 * structure sizes of 2.7.5, 2.7.6 and 2.7.8.
 */
#include "lib/error.h"
#include "lib/vring.h"
#include "tests/unit/check.h"

TEST(struct_sizes)
{
	CHECK_EQ(sizeof(struct vring_desc), 16);
	CHECK_EQ(sizeof(struct vring_avail), 4);
	CHECK_EQ(sizeof(struct vring_used_elem), 8);
	CHECK_EQ(sizeof(struct vring_used), 4);
}

/*
 * Hand-checked: 128 (QEMU's virtio-serial queues): 2048 + 262 = 2310, used at
 * 4096; 256: 4096 + 518 spills into a second page, used at 8192; 1: 16 + 8.
 */
TEST(layouts)
{
	static const struct {
		unsigned int num;
		size_t avail, used, size;
	} want[] = {
	    {128, 2048, 4096, 4096 + 1030},
	    {256, 4096, 8192, 8192 + 2054},
	    {1, 16, 4096, 4096 + 14},
	};

	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct vring_layout l;

		CHECK_EQ(vring_legacy_layout(want[i].num, &l), 0);
		CHECK_EQ(l.avail, want[i].avail);
		CHECK_EQ(l.used, want[i].used);
		CHECK_EQ(l.size, want[i].size);
	}
}

TEST(layout_refused)
{
	struct vring_layout l;

	CHECK_EQ(vring_legacy_layout(0, &l), -E_RANGE);
	CHECK_EQ(vring_legacy_layout(96, &l), -E_RANGE);
	CHECK_EQ(vring_legacy_layout(65536, &l), -E_RANGE);
	CHECK_EQ(vring_legacy_layout(32768, &l), 0);
}

TEST_MAIN(T(struct_sizes), T(layouts), T(layout_refused))

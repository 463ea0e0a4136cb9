// SPDX-License-Identifier: GPL-2.0-only
/* The legacy split virtqueue's layout (lib/vring.h). */
#include "lib/error.h"
#include "lib/vring.h"

#define VRING_MAX 32768u

static size_t align_up(size_t v, size_t a)
{
	return (v + a - 1) & ~(a - 1);
}

int vring_legacy_layout(unsigned int num, struct vring_layout *out)
{
	/* A split virtqueue's size is a power of 2 (virtio 1.2, 2.7). */
	if (!num || num > VRING_MAX || (num & (num - 1)))
		return -E_RANGE;
	out->avail = sizeof(struct vring_desc) * num;
	/* flags, idx, ring[num], used_event */
	out->used = align_up(out->avail + sizeof(uint16_t) * (3 + num), VRING_LEGACY_ALIGN);
	/* flags, idx, ring[num], avail_event */
	out->size = out->used + sizeof(uint16_t) * 3 + sizeof(struct vring_used_elem) * num;
	return 0;
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The layout of a split virtqueue as a legacy virtio device expects it in
 * guest memory (virtio 1.2, 2.7.2 "Legacy Interfaces: A Note on Virtqueue
 * Layout"): the descriptor table, then the available ring, then, at the
 * next QueueAlign (4096) boundary, the used ring. The device takes one page
 * number for the whole of it, so the offsets are the driver's to get right.
 */
#ifndef LIB_VRING_H
#define LIB_VRING_H

#include <stddef.h>
#include <stdint.h>

#define VRING_LEGACY_ALIGN	   4096u
#define VRING_AVAIL_F_NO_INTERRUPT 1u /* the driver polls the used ring */

struct vring_desc {
	uint64_t addr; /* guest-physical */
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};

struct vring_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[]; /* then used_event, unused without VIRTIO_F_EVENT_IDX */
};

struct vring_used_elem {
	uint32_t id;
	uint32_t len;
};

struct vring_used {
	uint16_t flags;
	uint16_t idx;
	struct vring_used_elem ring[]; /* then avail_event */
};

struct vring_layout {
	size_t avail; /* offsets from the start of the queue's memory */
	size_t used;
	size_t size; /* bytes in all */
};

/* 0, or -E_RANGE for a queue size that is not a power of 2 up to 32768. */
int vring_legacy_layout(unsigned int num, struct vring_layout *out);

#endif

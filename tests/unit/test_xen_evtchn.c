// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/xen_evtchn.c against hand-checked vectors: the
 * callback value Linux's xen_set_callback_via() writes for its vector
 * (0xf3: 0x02000000000000f3, bit 57 and the vector), and the 2-level scan,
 * whose order and clears follow from the layout of public/xen.h.
 */
#include "lib/xen_evtchn.h"
#include "tests/unit/check.h"

struct seen {
	unsigned int n;
	unsigned int ports[16];
};

static void note(unsigned int port, void *arg)
{
	struct seen *s = arg;

	if (s->n < 16)
		s->ports[s->n] = port;
	s->n++;
}

TEST(callback_value)
{
	CHECK_EQ(xen_callback_vector(0xf3), 0x02000000000000f3ull);
	CHECK_EQ(xen_callback_vector(0x32), 0x0200000000000032ull);
}

TEST(layout)
{
	/* public/xen.h: 32 vcpu_info of 64 bytes, then the pending and mask words. */
	CHECK_EQ(__builtin_offsetof(struct xen_shared_info, evtchn_pending), 2048);
	CHECK_EQ(__builtin_offsetof(struct xen_shared_info, evtchn_mask), 2560);
	CHECK_EQ(__builtin_offsetof(struct xen_vcpu_info, pending_sel), 8);
	CHECK_EQ(__builtin_offsetof(struct xen_add_to_physmap, idx), 8);
	CHECK_EQ(__builtin_offsetof(struct xen_hvm_param, value), 8);
}

static uint64_t all_mine[XEN_2L_WORDS];

static void mine_all(void)
{
	for (unsigned int w = 0; w < XEN_2L_WORDS; w++)
		all_mine[w] = ~0ull;
}

/* Ports 1, 5 and 130 pending, 5 masked; sel names words 0 and 2. */
TEST(scan_clears_unmasked_lowest_first)
{
	uint64_t pending[XEN_2L_WORDS] = {0}, mask[XEN_2L_WORDS] = {0};
	struct seen s = {0};

	mine_all();
	pending[0] = 1ull << 1 | 1ull << 5;
	pending[2] = 1ull << 2; /* port 130 */
	mask[0] = 1ull << 5;
	CHECK_EQ(xen_2l_scan(1ull << 0 | 1ull << 2, pending, mask, all_mine, note, &s), 2);
	CHECK_EQ(s.n, 2);
	CHECK_EQ(s.ports[0], 1);
	CHECK_EQ(s.ports[1], 130);
	CHECK_EQ(pending[0], 1ull << 5); /* the masked port stays pending */
	CHECK_EQ(pending[2], 0);
}

/* A word sel does not name is not read, even with ports pending in it. */
TEST(scan_reads_only_selected_words)
{
	uint64_t pending[XEN_2L_WORDS] = {0}, mask[XEN_2L_WORDS] = {0};
	struct seen s = {0};

	mine_all();
	pending[1] = 1ull << 63; /* port 127 */
	pending[63] = 1ull << 0; /* port 4032 */
	CHECK_EQ(xen_2l_scan(1ull << 63, pending, mask, all_mine, note, &s), 1);
	CHECK_EQ(s.ports[0], 4032);
	CHECK_EQ(pending[1], 1ull << 63);
	CHECK_EQ(pending[63], 0);
}

TEST(scan_empty)
{
	uint64_t pending[XEN_2L_WORDS] = {0}, mask[XEN_2L_WORDS] = {0};
	struct seen s = {0};

	CHECK_EQ(xen_2l_scan(0, pending, mask, all_mine, note, &s), 0);
	CHECK_EQ(xen_2l_scan(1, pending, mask, all_mine, note, &s), 0); /* a stale sel bit */
	CHECK_EQ(s.n, 0);
}

/*
 * The lane's lost IPI: CPU 1 sends to every CPU, CPU 0's port 3 first, then
 * its own port 4, one word. CPU 1's upcall must take port 4 only and leave
 * port 3 pending for CPU 0, whose own sel bit Xen set.
 */
TEST(scan_leaves_other_vcpus_ports)
{
	uint64_t pending[XEN_2L_WORDS] = {0}, mask[XEN_2L_WORDS] = {0};
	uint64_t cpu1[XEN_2L_WORDS] = {0};
	struct seen s = {0};

	pending[0] = 1ull << 3 | 1ull << 4;
	cpu1[0] = 1ull << 2 | 1ull << 4;
	CHECK_EQ(xen_2l_scan(1, pending, mask, cpu1, note, &s), 1);
	CHECK_EQ(s.ports[0], 4);
	CHECK_EQ(pending[0], 1ull << 3);
}

TEST_MAIN(T(callback_value), T(layout), T(scan_clears_unmasked_lowest_first),
	  T(scan_reads_only_selected_words), T(scan_empty), T(scan_leaves_other_vcpus_ports))

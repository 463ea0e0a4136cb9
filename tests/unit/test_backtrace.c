// SPDX-License-Identifier: GPL-2.0-only
/*
 * Host tests for lib/backtrace.c: stack words only from inside the window
 * (the edge, a misaligned or wild RSP), and the RBP chain on a stack built
 * here by hand: followed to its end, cut at a frame outside the window, at
 * a frame below the one before, at a return address outside the text, and
 * at max.
 */
#include "lib/backtrace.h"
#include "tests/unit/check.h"

#define WORDS 64
#define TEXT_LO 0x100000u
#define TEXT_HI 0x200000u

static uint64_t stack[WORDS];

static uint64_t at(unsigned int i)
{
	return (uint64_t)(uintptr_t)&stack[i];
}

static uint64_t lo(void)
{
	return at(0);
}

static uint64_t hi(void)
{
	return at(0) + sizeof(stack);
}

/* A frame at word i: the caller's RBP (word next), then the return address. */
static void frame(unsigned int i, unsigned int next, uint64_t ret)
{
	stack[i] = next ? at(next) : 0;
	stack[i + 1] = ret;
}

TEST(peek_inside_only)
{
	uint64_t out[8];

	for (unsigned int i = 0; i < WORDS; i++)
		stack[i] = 0xa000 + i;
	CHECK_EQ(stack_peek(at(10), lo(), hi(), out, 8), 8);
	CHECK_EQ(out[0], 0xa00a);
	CHECK_EQ(out[7], 0xa011);
	/* Near the top: only the words below hi. */
	CHECK_EQ(stack_peek(at(WORDS - 3), lo(), hi(), out, 8), 3);
	CHECK_EQ(out[2], 0xa000 + WORDS - 1);
	CHECK_EQ(stack_peek(hi(), lo(), hi(), out, 8), 0);
	CHECK_EQ(stack_peek(lo() - 8, lo(), hi(), out, 8), 0);
	CHECK_EQ(stack_peek(at(4) + 4, lo(), hi(), out, 8), 0);
	CHECK_EQ(stack_peek(UINT64_MAX - 7, lo(), hi(), out, 8), 0);
	CHECK_EQ(stack_peek(0, lo(), hi(), out, 8), 0);
}

TEST(chain_to_its_end)
{
	uint64_t out[8];

	frame(4, 10, 0x101000);
	frame(10, 20, 0x102000);
	frame(20, 0, 0x103000); /* the outermost: no caller's RBP */
	CHECK_EQ(fp_backtrace(at(4), lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 3);
	CHECK_EQ(out[0], 0x101000);
	CHECK_EQ(out[1], 0x102000);
	CHECK_EQ(out[2], 0x103000);
	CHECK_EQ(fp_backtrace(at(4), lo(), hi(), TEXT_LO, TEXT_HI, out, 2), 2);
}

TEST(chain_cut_where_it_goes_wrong)
{
	uint64_t out[8];

	/* The caller's frame outside the window: its return address is not read. */
	frame(4, 10, 0x101000);
	stack[10] = 0;
	stack[4] = hi() + 64;
	CHECK_EQ(fp_backtrace(at(4), lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 1);
	/* A frame below the one before: a loop, not a chain. */
	frame(4, 10, 0x101000);
	frame(10, 4, 0x102000);
	CHECK_EQ(fp_backtrace(at(4), lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 2);
	/* A return address outside the text ends it before that frame counts. */
	frame(10, 20, 0x300000);
	CHECK_EQ(fp_backtrace(at(4), lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 1);
	/* RBP misaligned, at the window's last word, or wild: nothing read. */
	CHECK_EQ(fp_backtrace(at(4) + 1, lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 0);
	CHECK_EQ(fp_backtrace(at(WORDS - 1), lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 0);
	CHECK_EQ(fp_backtrace(UINT64_MAX - 7, lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 0);
	CHECK_EQ(fp_backtrace(0, lo(), hi(), TEXT_LO, TEXT_HI, out, 8), 0);
}

TEST_MAIN(T(peek_inside_only), T(chain_to_its_end), T(chain_cut_where_it_goes_wrong))

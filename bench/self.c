// SPDX-License-Identifier: GPL-2.0-only
/*
 * Self-IPI in the shapes KVM's event-injection work was tuned on
 * (kvm-unit-tests x86/vmexit.c: self_ipi_sti_nop, self_ipi_sti_hlt,
 * self_ipi_tpr, self_ipi_tpr_sti_nop, self_ipi_tpr_sti_hlt). One sample is
 * the send through the handler having run:
 *
 *  sti-nop      IF=0, send, STI;NOP: taken at the end of the STI shadow
 *  sti-hlt      IF=0, send, STI;HLT: the pending interrupt ends the HLT
 *  tpr          IF=1, TPR=15 (CR8), send, TPR=0: taken on the TPR drop
 *  tpr-sti-nop  IF=0, TPR=15, send, TPR=0, STI;NOP
 *  tpr-sti-hlt  IF=0, TPR=15, send, TPR=0, STI;HLT
 *
 * CR8 is the TPR's priority class in 64-bit mode (SDM vol. 3A 11.8.6), so
 * TPR=15 holds back every vector; vmexit.c sets the TPR through CR8 too.
 * The send is the backend's send_self: the x2APIC SELF IPI register or
 * the ICR's self shorthand, as its flags say;
 * where send_self is the SELF IPI register, the five shapes run again
 * through the ICR's self shorthand (variants icr-*); where the backend has
 * send_self_icr2 (xAPIC), again as kvm-unit-tests sends it, ICR2 and then
 * the ICR (variants icr2-*: vmexit.c's self_ipi_* figure).
 * HLT shapes bound the HLT with the local APIC timer as a watchdog: armed
 * once per sampling on the sender, restarted (one register write) before
 * each iteration's region opens, stopped after the sampling.
 *
 * The timed region holds the shape, one call into the backend's send, and
 * one poll of the count the handler already stored (the dry-run has the
 * same poll): the deadline, the backend's function pointer and the count's
 * address are all read before it opens. It runs on the sender (sender=),
 * the BSP by default.
 */
#include "include/bench.h"
#include "include/lapic.h"
#include "include/options.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/fmt.h"

enum self_shape { SELF_STI_NOP, SELF_STI_HLT, SELF_TPR, SELF_TPR_STI_NOP, SELF_TPR_STI_HLT };

static const char *const shape_names[] = { "sti-nop", "sti-hlt", "tpr", "tpr-sti-nop",
					   "tpr-sti-hlt" };
static const char *const icr_shape_names[] = { "icr-sti-nop", "icr-sti-hlt", "icr-tpr",
					       "icr-tpr-sti-nop", "icr-tpr-sti-hlt" };
static const char *const icr2_shape_names[] = { "icr2-sti-nop", "icr2-sti-hlt", "icr2-tpr",
						"icr2-tpr-sti-nop", "icr2-tpr-sti-hlt" };
/* Per send path of self_run: send_self, send_self_icr, send_self_icr2. */
static const char *const *const path_names[] = { shape_names, icr_shape_names, icr2_shape_names };

/* What the benchmark keeps between its calls, reached through r->priv. */
struct self_state {
	char target_text[16]; /* r->targets: the sender itself */
};

static struct self_state self_state;

/*
 * The send path of the passes running, read by every iteration before its
 * region opens: at a fixed address, as before; through r->priv the
 * iteration keeps r in a register and spills the deadline that the
 * region's bench_poll reads (docs/timed-regions.md: nothing loaded in a
 * region that was not before).
 */
static void (*self_send)(uint8_t vector);

/* The shape around the send; sh is a constant in each caller, so the switch folds away. */
static inline __attribute__((always_inline)) void self_shape(enum self_shape sh,
							     void (*send)(uint8_t vector))
{
	switch (sh) {
	case SELF_STI_NOP:
		irq_disable();
		send(BENCH_VEC);
		asm volatile("sti; nop" ::: "memory");
		break;
	case SELF_STI_HLT:
		irq_disable();
		send(BENCH_VEC);
		asm volatile("sti; hlt" ::: "memory");
		break;
	case SELF_TPR:
		irq_enable();	/* the shape is IF=1 throughout: taken on the TPR drop */
		write_cr8(15);
		send(BENCH_VEC);
		write_cr8(0);
		break;
	case SELF_TPR_STI_NOP:
		irq_disable();
		write_cr8(15);
		send(BENCH_VEC);
		write_cr8(0);
		asm volatile("sti; nop" ::: "memory");
		break;
	case SELF_TPR_STI_HLT:
		irq_disable();
		write_cr8(15);
		send(BENCH_VEC);
		write_cr8(0);
		asm volatile("sti; hlt" ::: "memory");
		break;
	}
}

static inline __attribute__((always_inline)) int self_iter(struct bench_run *r, uint64_t *out,
							   enum self_shape sh)
{
	unsigned int me = this_cpu()->cpu;
	const uint32_t *count = bench_count_word(me);
	uint32_t want = bench_read(count) + 1;
	void (*send)(uint8_t vector) = self_send;
	bool hlt = sh == SELF_STI_HLT || sh == SELF_TPR_STI_HLT;
	uint64_t deadline = tsc_deadline_us(bench_params.deadline_us), t0;
	int err;

	bench_expect(me);
	if (hlt)
		lapic_watchdog_kick();
	t0 = tsc_begin();
	self_shape(sh, send);
	/* Taken already in every shape but a slow self IPI; then this waits for it. */
	err = bench_poll(count, want, deadline);
	out[0] = bench_tsc_end() - t0;
	if (err) {
		bench_fail(r, "self IPI vector 0x%x on CPU %u (%s) not handled within %lu us",
			   BENCH_VEC, me, r->variant, bench_params.deadline_us);
		return err;
	}
	return 0;
}

#define SELF_ITER(name, sh)                                                                        \
	static int name(struct bench_run *r, uint64_t *out)                                        \
	{                                                                                          \
		return self_iter(r, out, sh);                                                      \
	}
SELF_ITER(self_sti_nop, SELF_STI_NOP)
SELF_ITER(self_sti_hlt, SELF_STI_HLT)
SELF_ITER(self_tpr, SELF_TPR)
SELF_ITER(self_tpr_sti_nop, SELF_TPR_STI_NOP)
SELF_ITER(self_tpr_sti_hlt, SELF_TPR_STI_HLT)

static const bench_iter_fn shape_iters[] = { self_sti_nop, self_sti_hlt, self_tpr,
					     self_tpr_sti_nop, self_tpr_sti_hlt };

static void self_run(struct bench_run *r)
{
	static const char *const names[] = { "send-to-handler" };
	int err;

	struct self_state *ss = &self_state;

	r->priv = ss;
	fmt_snprintf(ss->target_text, sizeof(ss->target_text), "%u", r->sender);
	r->targets = ss->target_text;
	r->ntargets = 1;
	r->target_state = "self";
	for (int path = 0; path < 3; path++) {
		self_send = path == 0	? r->ops->send_self
			    : path == 1 ? r->ops->send_self_icr
					: r->ops->send_self_icr2;
		if (!self_send)
			continue;
		for (unsigned int sh = SELF_STI_NOP; sh <= SELF_TPR_STI_HLT; sh++) {
			bool hlt = sh == SELF_STI_HLT || sh == SELF_TPR_STI_HLT;

			r->sender_begin = hlt ? lapic_watchdog_arm : NULL;
			r->sender_end = hlt ? lapic_watchdog_disarm : NULL;
			r->variant = path_names[path][sh];
			bench_metrics(r, 1, names);
			if (sh >= SELF_TPR && skip_on(SKIP_SELF_TPR)) {
				bench_emit_status(r, names[0], "SKIP", "skip=self-tpr on the command line");
				continue;
			}
			if (sh >= SELF_TPR && (r->ops->flags & IPI_F_UPCALL)) {
				bench_emit_status(
				    r, names[0], "SKIP",
				    "every IPI comes on Xen's upcall vector 0xf3, which TPR 15 holds in vcpu mode and not in callback mode: no TPR drop of this IPI's own to time");
				continue;
			}
			err = bench_sample_on_sender(r, shape_iters[sh]);
			r->sender_begin = r->sender_end = NULL;
			if (err)
				return;
			bench_emit(r);
		}
	}
}

/*
 * The shapes are about masking: a self IPI sent with IF=0 or the TPR raised
 * waits for STI (and HLT) or the TPR drop. An NMI ignores both, so in the
 * HLT shapes it would come before the HLT, which then waits for its
 * watchdog: not a figure. NMI backends have single, single-halt and
 * broadcast, and the suite checks their self NMIs.
 */
static const char *self_valid(const struct ipi_ops *ops)
{
	return ipi_is_nmi(ops)
		   ? "its shapes hold a self IPI with IF=0 or the TPR raised, which an NMI ignores"
		   : NULL;
}

static const struct bench bench_self = {
	.name = "self",
	.summary = "self IPI until its handler ran, in five STI/TPR/HLT shapes",
	.min_cpus = 1,
	.per_backend = true,
	.valid = self_valid,
	.run = self_run,
};
BENCH_REGISTER(bench_self);

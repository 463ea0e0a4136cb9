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
 * TPR=15 holds back every vector. The send is the backend's send_self: the
 * x2APIC SELF IPI register or the ICR's self shorthand, as its flags say;
 * where send_self is the SELF IPI register, the five shapes run again
 * through the ICR's self shorthand (variants icr-*).
 * HLT shapes arm the local APIC timer as a watchdog, outside the timed region.
 */
#include "include/bench.h"
#include "include/lapic.h"
#include "include/tsc.h"
#include "lib/error.h"
#include "lib/fmt.h"

enum self_shape { SELF_STI_NOP, SELF_STI_HLT, SELF_TPR, SELF_TPR_STI_NOP, SELF_TPR_STI_HLT };

static const char *const shape_names[] = { "sti-nop", "sti-hlt", "tpr", "tpr-sti-nop",
					   "tpr-sti-hlt" };
static const char *const icr_shape_names[] = { "icr-sti-nop", "icr-sti-hlt", "icr-tpr",
					       "icr-tpr-sti-nop", "icr-tpr-sti-hlt" };
static enum self_shape shape;
static void (*self_fn)(uint8_t vector);
static char self_text[16];

static void self_send(const struct ipi_ops *ops)
{
	(void)ops;
	switch (shape) {
	case SELF_STI_NOP:
		irq_disable();
		self_fn(BENCH_VEC);
		asm volatile("sti; nop" ::: "memory");
		break;
	case SELF_STI_HLT:
		irq_disable();
		self_fn(BENCH_VEC);
		asm volatile("sti; hlt" ::: "memory");
		break;
	case SELF_TPR:
		write_cr8(15);
		self_fn(BENCH_VEC);
		write_cr8(0);
		break;
	case SELF_TPR_STI_NOP:
		irq_disable();
		write_cr8(15);
		self_fn(BENCH_VEC);
		write_cr8(0);
		asm volatile("sti; nop" ::: "memory");
		break;
	case SELF_TPR_STI_HLT:
		irq_disable();
		write_cr8(15);
		self_fn(BENCH_VEC);
		write_cr8(0);
		asm volatile("sti; hlt" ::: "memory");
		break;
	}
}

static int self_iter(struct bench_run *r, uint64_t *out)
{
	unsigned int me = this_cpu()->cpu;
	uint32_t want = bench_count(me) + 1;
	bool hlt = shape == SELF_STI_HLT || shape == SELF_TPR_STI_HLT;
	uint64_t t0;
	int err;

	bench_expect(me);
	if (hlt)
		lapic_watchdog_arm();
	t0 = tsc_begin();
	self_send(r->ops);
	/* Taken already in every shape but a slow self IPI; then wait for it. */
	err = bench_wait_count(me, want, tsc_deadline_us(bench_params.deadline_us));
	out[0] = bench_tsc_end() - t0;
	if (hlt)
		lapic_watchdog_disarm();
	if (err) {
		bench_fail(r, "self IPI vector 0x%x on CPU %u (%s) not handled within %lu us",
			   BENCH_VEC, me, shape_names[shape], bench_params.deadline_us);
		return err;
	}
	return 0;
}

static void self_run(struct bench_run *r)
{
	static const char *const names[] = { "send-to-handler" };

	fmt_snprintf(self_text, sizeof(self_text), "%u", this_cpu()->cpu);
	r->targets = self_text;
	r->ntargets = 1;
	r->target_state = "self";
	for (int path = 0; path < 2; path++) {
		self_fn = path ? r->ops->send_self_icr : r->ops->send_self;
		if (!self_fn)
			continue;
		for (shape = SELF_STI_NOP; shape <= SELF_TPR_STI_HLT; shape++) {
			r->variant = path ? icr_shape_names[shape] : shape_names[shape];
			bench_metrics(r, 1, names);
			bench_expect_begin();
			if (bench_sample(r, self_iter) || bench_expect_check(r)) {
				irq_enable();
				return;
			}
			bench_emit(r);
		}
	}
	irq_enable();
}

static const struct bench bench_self = {
	.name = "self",
	.summary = "self IPI until its handler ran, in five STI/TPR/HLT shapes",
	.min_cpus = 1,
	.per_backend = true,
	.run = self_run,
};
BENCH_REGISTER(bench_self);

// SPDX-License-Identifier: GPL-2.0-only
/*
 * Switching every CPU to another IPI backend at once. SDM vol. 3A 11.12.5
 * "x2APIC State Transitions" (figure 11-26): xAPIC -> x2APIC by setting
 * IA32_APIC_BASE.EXTD with EN set; x2APIC -> xAPIC directly raises #GP, so
 * the way back goes through the disabled state (EN and EXTD cleared in one
 * write, then EN set), after which the APIC is as after reset (11.4.7.1)
 * and SVR, TPR, LVT masks and the logical set-up are written again.
 *
 * All CPUs run switch_on_cpu() through smp_call_all() and meet at three
 * barriers with interrupts off: (1) everybody is quiet; the BSP then
 * changes the global lapic_mode, which the generic accessors and mailbox
 * wake-ups follow, and runs the backend's activate hook, partition-wide
 * set-up that must not race with another CPU's hypercall (the Hyper-V
 * guest OS ID decides whether KVM takes a vmcall as a Hyper-V or a KVM
 * hypercall); (2) everybody undoes what the backend it leaves set up in the
 * hypervisor (ops->disable), moves its own APIC and enables the backend;
 * (3) nobody sends an IPI before every CPU can take it. Each wait has a
 * deadline; the CPUs that never reached a barrier are named.
 *
 * The stall watchdog (include/watchdog.h) watches each CPU through the
 * switch (phase WATCH_SWITCH, budget switch_budget_us(): the switch's own
 * timeout and the second smp_call_all adds; a step at each barrier), and
 * learns from the new backend how to describe the hypercalls its sends make
 * from then on (ops->describe_call), before any phase sends over it. Each
 * CPU's APIC moved, lapic_setup_local() has also restarted its tick.
 */
#include "include/console.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/tsc.h"
#include "include/watchdog.h"
#include "include/x86.h"
#include "lib/error.h"

#define SWITCH_MIN_US 2000000 /* whole switch, barriers included, at least */
#define SWITCH_PHASES 3

/*
 * The whole switch's bound: 2 s, or the benchmarks' deadline where that is
 * longer (ipi_switch_bound): under TCG, or KVM nested in it (the lane gives
 * its guests TCG's 10 s), a loaded host holds a vCPU back for seconds, and
 * a switch that waits at a barrier for it is late, not broken.
 */
static uint64_t switch_timeout_us = SWITCH_MIN_US;

void ipi_switch_bound(uint64_t deadline_us)
{
	switch_timeout_us = deadline_us > SWITCH_MIN_US ? deadline_us : SWITCH_MIN_US;
}

/* The watchdog's budget: all of the switch, and the second smp_call_all's second. */
static uint64_t switch_budget_us(void)
{
	return switch_timeout_us + 1000000;
}

struct switch_req {
	const struct ipi_ops *ops;
	uint64_t deadline;
	struct smp_barrier barrier;
};

/* Per CPU, written by that CPU only, read by the BSP. */
static struct switch_cpu {
	uint8_t arrived; /* barriers reached (before waiting there) */
	uint8_t passed;	 /* barriers passed */
	uint8_t mode;	 /* enum lapic_mode after the move */
	int err;	 /* move or enable */
} switch_cpu[MAX_CPUS];

/* When the BSP gives up at a barrier: which one, and how far each CPU had got. */
static unsigned int bsp_gave_up_at;
static uint8_t arrived_then[MAX_CPUS];

static struct switch_req switch_req;

/* Moves this CPU's APIC to mode; 0, or -E_PROTO if IA32_APIC_BASE refused a legal write. */
static int switch_move(enum lapic_mode to)
{
	uint64_t base = rdmsr(MSR_IA32_APIC_BASE);
	uint64_t off = base & ~(uint64_t)(APIC_BASE_EN | APIC_BASE_EXTD);
	int err;

	if (lapic_mode_read() == to)
		return 0;
	if (to == LAPIC_X2APIC) {
		/* Disabled -> x2APIC is not a legal step either: through xAPIC. */
		err = 0;
		if (!(base & APIC_BASE_EN))
			err = wrmsr_safe(MSR_IA32_APIC_BASE, off | APIC_BASE_EN);
		if (!err)
			err = wrmsr_safe(MSR_IA32_APIC_BASE, off | APIC_BASE_EN | APIC_BASE_EXTD);
		if (!err)
			WRITE_ONCE(lapic_x2apic_entered, true);
	} else {
		err = wrmsr_safe(MSR_IA32_APIC_BASE, off);
		if (!err)
			err = wrmsr_safe(MSR_IA32_APIC_BASE, off | APIC_BASE_EN);
	}
	if (err) {
		kprintf("apic: CPU %u: #GP writing IA32_APIC_BASE on the way to %s mode\n",
			this_cpu()->cpu, ipi_mode_name(to));
		return -E_PROTO;
	}
	return 0;
}

/* The BSP, timing out, notes who had not arrived: those are the CPUs to name. */
static bool switch_meet(struct switch_req *r, struct switch_cpu *me)
{
	store_release(&me->arrived, me->arrived + 1);
	if (smp_barrier_wait(&r->barrier, r->deadline)) {
		if (this_cpu()->cpu == 0) {
			bsp_gave_up_at = me->arrived;
			for (unsigned int c = 0; c < ncpus; c++)
				arrived_then[c] = load_acquire(&switch_cpu[c].arrived);
		}
		return false;
	}
	me->passed++;
	return true;
}

static void switch_on_cpu(void *arg)
{
	struct switch_req *r = arg;
	struct percpu *p = this_cpu();
	struct switch_cpu *me = &switch_cpu[p->cpu];
	bool irq_was_on = irq_enabled();
	int activate_err = 0;
	struct watch_saved saved = watch_enter(WATCH_SWITCH, switch_budget_us(), r->ops->name, 0);

	irq_disable();
	if (!switch_meet(r, me))
		goto out;
	if (p->cpu == 0) {
		lapic_mode = r->ops->mode;
		if (r->ops->activate)
			activate_err = r->ops->activate();
	}
	if (!switch_meet(r, me))
		goto out;
	if (p->ops && p->ops->disable)
		p->ops->disable();
	me->err = switch_move(r->ops->mode);
	if (!me->err) {
		lapic_setup_local();
		me->err = r->ops->enable();
	}
	if (!me->err)
		me->err = activate_err;
	me->mode = (uint8_t)lapic_mode_read();
	p->ops = r->ops;
	watch_calls(r->ops->describe_call);
	switch_meet(r, me);
out:
	watch_restore(&saved);
	if (irq_was_on)
		irq_enable();
}

/* Names the CPUs that kept the others waiting; -E_TIMEDOUT, or 0 if every CPU passed. */
static int switch_report_late(const struct ipi_ops *ops)
{
	int err = 0;

	for (unsigned int c = 0; c < ncpus; c++) {
		if (bsp_gave_up_at && arrived_then[c] < bsp_gave_up_at) {
			kprintf(
			    "apic: CPU %u did not reach barrier %u of %u within %lu ms of the switch to %s\n",
			    c, bsp_gave_up_at, SWITCH_PHASES, switch_timeout_us / 1000, ops->name);
			err = -E_TIMEDOUT;
		}
	}
	for (unsigned int c = 0; c < ncpus && !err; c++) {
		if (switch_cpu[c].passed < SWITCH_PHASES) {
			kprintf(
			    "apic: CPU %u passed %u of %u barriers of the switch to %s: timed out\n",
			    c, switch_cpu[c].passed, SWITCH_PHASES, ops->name);
			err = -E_TIMEDOUT;
		}
	}
	return err;
}

/* Names every CPU that fell short of a barrier or ended elsewhere; 0 if none. */
static int switch_report(const struct ipi_ops *ops)
{
	int err = switch_report_late(ops);

	for (unsigned int c = 0; c < ncpus && !err; c++) {
		const struct switch_cpu *s = &switch_cpu[c];

		if (s->err) {
			kprintf("apic: CPU %u could not take backend %s (%s, reported above)\n", c,
				ops->name, error_name(s->err));
			err = -E_PROTO;
		} else if (s->mode != ops->mode) {
			kprintf("apic: CPU %u is in %s mode after the switch, expected %s\n", c,
				ipi_mode_name((enum lapic_mode)s->mode), ipi_mode_name(ops->mode));
			err = -E_PROTO;
		}
	}
	return err;
}

/*
 * debug=extra-exit: every unicast send of the backend first reads the local
 * APIC ID, a register access that exits without APIC virtualization, so
 * the lane can show exit accounting catching a send path that grew an
 * exit. A copy of the table with a wrapped send, installed by the switch:
 * no branch on any send path when the key is off.
 */
static struct ipi_ops extra_exit_ops;
static const struct ipi_ops *extra_exit_of;

static void extra_exit_send(unsigned int cpu_nr, uint8_t vector)
{
	(void)lapic_read(LAPIC_ID);
	extra_exit_of->send(cpu_nr, vector);
}

/*
 * debug=nmi-as-fixed: an NMI backend's table with its Fixed twin's sends and
 * EOI (the twin shares its enable and destination tables: apic/, kvm/), so
 * that what it sends are Fixed IPIs on IPI_NMI_VEC: every NMI check must
 * then fail (held by IF=0 and the TPR, not counted as NMIs, nothing held
 * while in the handler), which the boot tests prove.
 */
static struct ipi_ops nmi_as_fixed_ops;

static const struct ipi_ops *switch_nmi_as_fixed(const struct ipi_ops *ops)
{
	char twin[32];
	const struct ipi_ops *fixed;
	size_t n = __builtin_strlen(ops->name);

	if (!ipi_is_nmi(ops) || n < 5 || n - 4 >= sizeof(twin))
		return ops;
	__builtin_memcpy(twin, ops->name, n - 4); /* "x2apic-nmi" -> "x2apic" */
	twin[n - 4] = 0;
	fixed = ipi_backend_named(twin);
	if (!fixed)
		return ops;
	if (fixed->choose)
		fixed = fixed->choose();
	nmi_as_fixed_ops = *ops;
	nmi_as_fixed_ops.send = fixed->send;
	nmi_as_fixed_ops.send_set = fixed->send_set;
	nmi_as_fixed_ops.send_self = fixed->send_self;
	nmi_as_fixed_ops.send_allbutself = fixed->send_allbutself;
	nmi_as_fixed_ops.send_all = fixed->send_all;
	nmi_as_fixed_ops.eoi = fixed->eoi;
	kprintf("debug: %s sends %s's Fixed IPIs on vector 0x%x (nmi-as-fixed)\n", ops->name,
		fixed->name, IPI_NMI_VEC);
	return &nmi_as_fixed_ops;
}

static const struct ipi_ops *switch_debug_ops(const struct ipi_ops *ops)
{
	if (debug_on(DEBUG_NMI_AS_FIXED))
		return switch_nmi_as_fixed(ops);
	if (!debug_on(DEBUG_EXTRA_EXIT))
		return ops;
	extra_exit_ops = *ops;
	extra_exit_of = ops;
	extra_exit_ops.send = extra_exit_send;
	return &extra_exit_ops;
}

int ipi_switch(const struct ipi_ops *ops)
{
	struct switch_req *r = &switch_req;
	enum lapic_mode before = lapic_mode;
	const struct ipi_ops *prev = ipi_current();
	char flags[192];
	int err, call_err;
	unsigned int failed = ipi_take_failures(flags, sizeof(flags));

	if (failed)
		kprintf("apic: %u send(s) over %s failed since the last check; the first: %s\n",
			failed, prev ? prev->name : "-", flags);
	ipi_irq_install();
	if (ops->choose)
		ops = ops->choose(); /* once, here: the send paths never ask */
	r->ops = switch_debug_ops(ops);
	smp_barrier_init(&r->barrier, "switch barrier sense");
	bsp_gave_up_at = 0;
	for (unsigned int c = 0; c < ncpus; c++)
		switch_cpu[c] = (struct switch_cpu){0};
	r->deadline = tsc_deadline_us(switch_timeout_us);
	call_err = smp_call_all(switch_on_cpu, r, switch_budget_us());
	err = switch_report(ops);
	if (!err)
		err = call_err;
	if (switch_cpu[0].passed == 1)
		lapic_mode = before; /* the BSP set it, then its own APIC never moved */
	if (err)
		return err;
	ipi_flags_format(ops, flags, sizeof(flags));
	kprintf("apic: all %u CPUs in %s mode, backend %s (%s)\n", ncpus, ipi_mode_name(ops->mode),
		ops->name, flags);
	return 0;
}

// SPDX-License-Identifier: GPL-2.0-only
/*
 * `xen-evtchn`: Xen's event channels as an IPI backend. Linux HVM and PVH
 * guests on Xen send their reschedule and call-function IPIs so
 * (xen_send_IPI_one(): one EVTCHNOP_send per target to a port bound with
 * EVTCHNOP_bind_ipi), not through the vlapic.
 *
 * The upcall, chosen once a boot by xen_upcall= and CPUID: the per-vCPU
 * vector cannot be unset (HVMOP_set_evtchn_upcall_vector refuses vectors
 * below 0x10), and with the callback set too Xen would deliver each upcall
 * twice, injecting the callback's vector and raising the vCPU's
 * (hvm_vcpu_has_pending_irq(), hvm_assert_evtchn_irq()); the callback
 * alone can go (HVM_PARAM_CALLBACK_IRQ 0, hvm_set_callback_via()):
 *  - vcpu (the default where Xen's HVM leaf sets XEN_HVM_CPUID_UPCALL_VECTOR,
 *    as Xen 4.17 always does): HVMOP_set_evtchn_upcall_vector gives each vCPU
 *    VEC_XEN_UPCALL through its vlapic (hvm_assert_evtchn_irq() ->
 *    vlapic_set_irq()), as Linux 6.0 and later take it (xen_percpu_upcall):
 *    an ISR bit, so the upcall writes its EOI first, as Linux's
 *    sysvec_xen_hvm_callback() does;
 *  - callback: HVM_PARAM_CALLBACK_IRQ of type vector, one vector for every
 *    vCPU, which Xen injects itself while the vCPU's evtchn_upcall_pending
 *    is set (hvm_vcpu_has_pending_irq(), ahead of the vlapic): no ISR bit,
 *    no EOI; IF holds it (hvm_interrupt_blocked()). Linux before 6.0 took
 *    it so, and later Linux where Xen lacks the per-vCPU vector.
 * Either way every IPI comes on VEC_XEN_UPCALL, so the TPR never sees the
 * IPI's own vector.
 *
 * Set-up, on the BSP inside the switch barriers (activate), once: the
 * shared_info page mapped at a page of ours (XENMEM_add_to_physmap; the RAM
 * page there is freed, the firmware's mapping moved), every port masked,
 * then the mode's domain-wide part, after which the page is scrubbed again
 * in the 64-bit layout that step latched (hvm_latch_shinfo_size()). On each
 * CPU (enable): its Xen vcpu_id from CPUID, one IPI port bound to it per IPI
 * vector (IPI_VEC_COUNT) the first time, the per-vCPU vector in vcpu mode,
 * then its ports unmasked. Leaving the backend masks them again, drops what
 * they hold (counted as unexpected: an IPI nobody took) and clears the
 * vCPU's selector and flag, so that no upcall reaches another backend and
 * no stale selector bit swallows a later one (evtchn_2l_set_pending() marks
 * a word only when its selector bit goes from 0 to 1).
 *
 * Sending: one EVTCHNOP_send (its input on the sender's stack, as Linux's
 * notify_remote_via_evtchn() has it: an upcall whose handler sends cannot
 * rewrite a send it interrupted) per target, self and the broadcasts
 * included: event channels have no multicast. VMMCALL on AMD, VMCALL on
 * Intel, made directly (SVM's exit handler takes VMMCALL only, VMX's
 * VMCALL only: the other raises #UD; Linux has dropped the hypercall page
 * too).
 *
 * Receiving: the upcall (EOI first in vcpu mode) clears
 * evtchn_upcall_pending, swaps pending_sel for 0 and scans the words it
 * names for this CPU's own ports (lib/xen_evtchn.c); each runs the handler
 * of the vector it stands for, as if that vector had come through the
 * APIC, with the upcall's entry TSC; its eoi hook does nothing.
 *
 * Limits: the first 32 vCPUs (their vcpu_info is in shared_info;
 * VCPUOP_register_vcpu_info would lift it); IPI_VEC_COUNT ports a CPU within
 * the domain's max_event_channels (xl's default 1023: 15 CPUs; the Xen
 * lane's xl.cfg gives 64 a vCPU and 64 more). On HVM, setting the
 * callback makes libxl take the domain for one with PV drivers
 * (libxl__domain_pvcontrol_available(), which says so of any PVH domain
 * anyway): xl shutdown then asks through xenstore, which ipibench does not
 * answer.
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/irq.h"
#include "include/lapic.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/pv_result.h"
#include "lib/xen_abi.h"
#include "lib/xen_evtchn.h"

#define PAGE_SIZE 4096

enum xen_upcall { XEN_UPCALL_AUTO, XEN_UPCALL_VCPU, XEN_UPCALL_CALLBACK };
static const char *const xen_upcall_names[] = {"auto", "vcpu", "callback", NULL};
static enum xen_upcall xen_upcall_key;
static enum xen_upcall xen_mode; /* set once the mode is configured in Xen */

static struct xen_shared_info *xen_shinfo;
static bool xen_vmmcall;
/*
 * Per CPU: its vcpu_id, its port for each IPI vector, and the port its
 * latest send named, for the stall watchdog only (xen_describe; the call's
 * input is on the stack), a cache line of its own as the input was.
 */
static uint32_t xen_vcpu[MAX_CPUS];
static uint32_t *xen_port_of[MAX_CPUS];
static uint32_t *xen_sent_port[MAX_CPUS];
/* Per CPU: a bit for each port bound to it, the scan's mask (lib/xen_evtchn.h says why). */
static uint64_t *xen_mine[MAX_CPUS];
/* Per port: the IPI vector it stands for (0: not ours) and the CPU it is bound to. */
static uint8_t xen_port_vec[XEN_2L_PORTS];
static uint16_t xen_port_cpu[XEN_2L_PORTS];

/* Two-argument hypercall; every argument register counts as clobbered (xen_abi.h). */
static inline __attribute__((always_inline)) int64_t xen_hypercall2(unsigned int nr, uint64_t a1,
								    const void *a2)
{
	uint64_t rax = nr, rdi = a1, rsi = (uint64_t)a2;

	if (xen_vmmcall)
		asm volatile("vmmcall"
			     : "+a"(rax), "+D"(rdi), "+S"(rsi)
			     :
			     : "rdx", "r8", "r10", "memory");
	else
		asm volatile("vmcall"
			     : "+a"(rax), "+D"(rdi), "+S"(rsi)
			     :
			     : "rdx", "r8", "r10", "memory");
	return (int64_t)rax;
}

/* The input on the stack (identity-mapped, as every other call's here): reentrant. */
static inline __attribute__((always_inline)) void xen_send_port(uint32_t port)
{
	struct xen_evtchn_port in = {.port = port};
	int64_t ret;

	WRITE_ONCE(*xen_sent_port[this_cpu()->cpu], port);
	ret = xen_hypercall2(XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_SEND, &in);
	if (__builtin_expect(ret != 0, 0))
		ipi_note_failure("xen-evtchn: EVTCHNOP_send (port %u) returned %ld (%s)", port, ret,
				 xen_errno_name(ret));
}

static inline uint32_t xen_port(unsigned int cpu_nr, uint8_t vector)
{
	return xen_port_of[cpu_nr][vector - IPI_VEC_FIRST];
}

static void xen_send(unsigned int target, uint8_t vector)
{
	xen_send_port(xen_port(target, vector));
}

static void xen_send_self(uint8_t vector)
{
	xen_send_port(xen_port(this_cpu()->cpu, vector));
}

static void xen_send_allbutself(uint8_t vector)
{
	const unsigned int self = this_cpu()->cpu;

	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != self)
			xen_send_port(xen_port(c, vector));
	}
}

static void xen_send_all(uint8_t vector)
{
	for (unsigned int c = 0; c < ncpus; c++)
		xen_send_port(xen_port(c, vector));
}

/* The handlers' EOI: none for a port; the upcall wrote the vlapic's, if any, first. */
static void xen_eoi(void)
{
}

static void xen_unexpected(struct percpu *p, uint32_t n)
{
	WRITE_ONCE(p->irq.unexpected_vector, VEC_XEN_UPCALL);
	WRITE_ONCE(p->irq.unexpected, p->irq.unexpected + n);
}

static void xen_port_run(unsigned int port, void *arg)
{
	struct percpu *p = this_cpu();
	const unsigned int vector = xen_port_vec[port];
	irq_handler_t fn = vector ? irq_get_handler(vector) : NULL;

	if (!fn) {
		xen_unexpected(p, 1);
		return;
	}
	fn(vector, *(const uint64_t *)arg);
}

/* This CPU's vcpu_info; its vcpu_id from CPUID, so right before its first enable too. */
static struct xen_vcpu_info *xen_own_info(void)
{
	return &xen_shinfo->vcpu_info[cpuid(cpu.xen_base + XEN_CPUID_HVM_OFFSET, 0).ebx %
				      XEN_LEGACY_MAX_VCPUS];
}

static void xen_upcall(unsigned int vector, uint64_t entry_tsc)
{
	struct percpu *p = this_cpu();
	struct xen_vcpu_info *vi;

	(void)vector;
	if (xen_mode == XEN_UPCALL_VCPU)
		lapic_eoi(); /* Linux's order: the vlapic's EOI, then the ports */
	if (!(p->ops->flags & IPI_F_UPCALL)) {
		/* Disable masked every port of ours: an upcall now is Xen's doing or a fault. */
		vi = xen_own_info();
		xen_unexpected(p, 1);
		__atomic_store_n(&vi->pending_sel, 0, __ATOMIC_RELEASE);
		WRITE_ONCE(vi->upcall_pending, 0);
		return;
	}
	vi = &xen_shinfo->vcpu_info[xen_vcpu[p->cpu]];
	do {
		WRITE_ONCE(vi->upcall_pending, 0);
		xen_2l_scan(__atomic_exchange_n(&vi->pending_sel, 0, __ATOMIC_ACQ_REL),
			    xen_shinfo->evtchn_pending, xen_shinfo->evtchn_mask, xen_mine[p->cpu],
			    xen_port_run, &entry_tsc);
	} while (READ_ONCE(vi->upcall_pending));
}

/* For the suite's hold checks: whether vector waits in this CPU's port. */
static bool xen_pending(uint8_t vector)
{
	const uint32_t port = xen_port(this_cpu()->cpu, vector);

	return __atomic_load_n(&xen_shinfo->evtchn_pending[port / 64], __ATOMIC_ACQUIRE) >>
		   (port % 64) &
	       1;
}

static int xen_describe(unsigned int cpu_nr, char *buf, size_t size)
{
	const uint32_t *sent = cpu_nr < MAX_CPUS ? xen_sent_port[cpu_nr] : NULL;
	const uint32_t port = sent ? READ_ONCE(*sent) : 0;

	if (!port || port >= XEN_2L_PORTS)
		return 0;
	return fmt_snprintf(
	    buf, size,
	    "EVTCHNOP_send (event_channel_op %u, command %u, %s): port %u (CPU %u, vector 0x%x)",
	    XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_SEND, xen_vmmcall ? "vmmcall" : "vmcall", port,
	    xen_port_cpu[port], xen_port_vec[port]);
}

static uint32_t xen_hvm_leaf(void)
{
	if (cpu.xen_max_leaf < cpu.xen_base + XEN_CPUID_HVM_OFFSET)
		return 0;
	return cpuid(cpu.xen_base + XEN_CPUID_HVM_OFFSET, 0).eax;
}

static const char *xen_probe(void)
{
	if (!cpu.xen_base)
		return "no Xen CPUID leaves (\"XenVMMXenVMM\"): xen-evtchn needs Xen (--accel xen-in-tcg, docs/xen.md)";
	if (!(xen_hvm_leaf() & XEN_HVM_CPUID_VCPU_ID_PRESENT))
		return "Xen's HVM leaf gives no vcpu_id (XEN_HVM_CPUID_VCPU_ID_PRESENT): xen-evtchn binds ports by vcpu_id";
	if (xen_upcall_key == XEN_UPCALL_VCPU && !(xen_hvm_leaf() & XEN_HVM_CPUID_UPCALL_VECTOR))
		return "xen_upcall=vcpu, but Xen's HVM leaf lacks XEN_HVM_CPUID_UPCALL_VECTOR (Xen before 4.17): xen_upcall=callback";
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: xen-evtchn runs beside the other backends in x2APIC mode";
	if (ncpus > XEN_LEGACY_MAX_VCPUS)
		return "more than 32 vCPUs: xen-evtchn reads vcpu_info from shared_info, which holds 32 (VCPUOP_register_vcpu_info is not done)";
	return NULL;
}

/* The upcall this boot takes: the one configured, else xen_upcall=, else vcpu where Xen offers it.
 */
static enum xen_upcall xen_wanted_mode(void)
{
	if (xen_mode != XEN_UPCALL_AUTO)
		return xen_mode;
	if (xen_upcall_key != XEN_UPCALL_AUTO)
		return xen_upcall_key;
	return (xen_hvm_leaf() & XEN_HVM_CPUID_UPCALL_VECTOR) ? XEN_UPCALL_VCPU
							      : XEN_UPCALL_CALLBACK;
}

/* Every port masked and idle, every vCPU's selector and flag clear: the page as the mode's set-up
 * left it, scrubbed. */
static void xen_scrub(void)
{
	for (unsigned int w = 0; w < XEN_2L_WORDS; w++) {
		__atomic_store_n(&xen_shinfo->evtchn_mask[w], ~0ull, __ATOMIC_RELEASE);
		__atomic_store_n(&xen_shinfo->evtchn_pending[w], 0, __ATOMIC_RELEASE);
	}
	for (unsigned int v = 0; v < XEN_LEGACY_MAX_VCPUS; v++) {
		__atomic_store_n(&xen_shinfo->vcpu_info[v].pending_sel, 0, __ATOMIC_RELEASE);
		WRITE_ONCE(xen_shinfo->vcpu_info[v].upcall_pending, 0);
	}
}

static int xen_failed(const char *what, uint64_t arg, int64_t ret)
{
	kprintf("xen-evtchn: %s 0x%lx returned %ld (%s)\n", what, arg, ret, xen_errno_name(ret));
	return -E_PROTO;
}

/*
 * Latches the 64-bit shared_info layout without the callback: Xen samples
 * the caller's mode when it fills a hypercall page (hvm_init_hypercall_page(),
 * the MSR that Xen's leaf base + 2 names). hvmloader filled one in 32-bit
 * mode; the page written here is not used.
 */
static int xen_latch_64(void)
{
	struct cpuid_regs r;
	void *page;

	if (cpu.xen_max_leaf < cpu.xen_base + XEN_CPUID_HYPERCALL_OFFSET ||
	    !(r = cpuid(cpu.xen_base + XEN_CPUID_HYPERCALL_OFFSET, 0)).eax) {
		kprintf(
		    "xen-evtchn: Xen's leaf base + 2 names no hypercall page MSR: the 64-bit shared_info cannot be latched\n");
		return -E_PROTO;
	}
	page = mm_alloc(PAGE_SIZE, PAGE_SIZE); /* filled by Xen, never called */
	if (wrmsr_safe(r.ebx, (uint64_t)(uintptr_t)page)) {
		kprintf("xen-evtchn: writing the hypercall page MSR 0x%x faulted\n", r.ebx);
		return -E_PROTO;
	}
	return 0;
}

/* The shared_info page and the mode's domain-wide part: 0, or -E_PROTO (printed). */
static int xen_configure(void)
{
	struct xen_add_to_physmap map = {.domid = XEN_DOMID_SELF, .space = XENMAPSPACE_SHARED_INFO};
	struct xen_hvm_param cb = {.domid = XEN_DOMID_SELF, .index = XEN_HVM_PARAM_CALLBACK_IRQ};
	struct xen_shared_info *page = mm_alloc(PAGE_SIZE, PAGE_SIZE);
	const enum xen_upcall mode = xen_wanted_mode();
	int64_t ret;

	map.gpfn = (uint64_t)(uintptr_t)page / PAGE_SIZE; /* identity map: GVA = GPA */
	ret = xen_hypercall2(XEN_HC_MEMORY_OP, XENMEM_ADD_TO_PHYSMAP, &map);
	if (ret)
		return xen_failed("XENMEM_add_to_physmap (shared_info) at GFN", map.gpfn, ret);
	/* Masked before any upcall can come: the firmware's ports (hvmloader's xenstore) stay so.
	 */
	for (unsigned int w = 0; w < XEN_2L_WORDS; w++)
		__atomic_store_n(&page->evtchn_mask[w], ~0ull, __ATOMIC_RELEASE);
	xen_shinfo = page;
	irq_set_handler(VEC_XEN_UPCALL, xen_upcall);
	if (mode == XEN_UPCALL_CALLBACK) {
		/* From 64-bit mode: Xen latches the 64-bit layout here. */
		cb.value = xen_callback_vector(VEC_XEN_UPCALL);
		ret = xen_hypercall2(XEN_HC_HVM_OP, XEN_HVMOP_SET_PARAM, &cb);
		if (ret)
			return xen_failed("HVMOP_set_param HVM_PARAM_CALLBACK_IRQ", cb.value, ret);
	} else if (xen_latch_64()) {
		return -E_PROTO;
	}
	/* The layout may have changed under the page (Xen does not convert it). */
	xen_scrub();
	xen_mode = mode;
	kprintf("xen-evtchn: shared_info at GFN 0x%lx; upcall vector 0x%x %s\n", map.gpfn,
		VEC_XEN_UPCALL,
		mode == XEN_UPCALL_VCPU
		    ? "per vCPU through its vlapic (HVMOP_set_evtchn_upcall_vector), EOI first"
		    : "on every vCPU, injected by Xen (HVM_PARAM_CALLBACK_IRQ), no EOI");
	return 0;
}

/* BSP, the other CPUs waiting at a switch barrier. */
static int xen_activate(void)
{
	xen_vmmcall = cpu.is_amd;
	if (xen_mode != XEN_UPCALL_AUTO)
		return 0;
	if (!xen_port_of[0]) {
		for (unsigned int c = 0; c < ncpus; c++) {
			xen_port_of[c] = mm_alloc(IPI_VEC_COUNT * sizeof(uint32_t), CACHELINE);
			xen_sent_port[c] = mm_alloc(CACHELINE, CACHELINE);
			xen_mine[c] = mm_alloc(XEN_2L_WORDS * sizeof(uint64_t), CACHELINE);
		}
	}
	return xen_configure();
}

/* A bind that failed part way: the n ports it had are closed, so that the next try binds in full.
 */
static void xen_unbind(struct percpu *p, unsigned int n)
{
	uint32_t *ports = xen_port_of[p->cpu];

	for (unsigned int i = 0; i < n; i++) {
		struct xen_evtchn_port close = {.port = ports[i]};

		(void)xen_hypercall2(XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_CLOSE, &close);
		xen_mine[p->cpu][ports[i] / 64] &= ~(1ull << (ports[i] % 64));
		xen_port_vec[ports[i]] = 0;
		ports[i] = 0;
	}
	ports[0] = 0;
}

/* This CPU's ports, once: one per IPI vector, bound to its vcpu_id. */
static int xen_bind(struct percpu *p)
{
	uint32_t *ports = xen_port_of[p->cpu];

	for (unsigned int i = 0; i < IPI_VEC_COUNT; i++) {
		struct xen_evtchn_bind_ipi bind = {.vcpu = xen_vcpu[p->cpu]};
		int64_t ret = xen_hypercall2(XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_BIND_IPI, &bind);

		if (ret || !bind.port || bind.port >= XEN_2L_PORTS) {
			kprintf(
			    "xen-evtchn: CPU %u: EVTCHNOP_bind_ipi (vcpu %u) returned %ld (%s), port %u, after %u ports%s\n",
			    p->cpu, bind.vcpu, ret, xen_errno_name(ret), bind.port, i,
			    ret == -28 ? ": raise xl's max_event_channels" : "");
			xen_unbind(p, i);
			return -E_PROTO;
		}
		xen_port_vec[bind.port] = (uint8_t)(IPI_VEC_FIRST + i);
		xen_port_cpu[bind.port] = (uint16_t)p->cpu;
		xen_mine[p->cpu][bind.port / 64] |= 1ull << (bind.port % 64);
		ports[i] = bind.port;
	}
	return 0;
}

static int xen_enable(void)
{
	struct percpu *p = this_cpu();
	const uint32_t vcpu = cpuid(cpu.xen_base + XEN_CPUID_HVM_OFFSET, 0).ebx;
	struct xen_evtchn_port unmask;

	if (xen_mode == XEN_UPCALL_AUTO)
		return -E_PROTO; /* activate failed and said why */
	if (vcpu >= XEN_LEGACY_MAX_VCPUS) {
		kprintf(
		    "xen-evtchn: CPU %u is Xen's vCPU %u: its vcpu_info is not in shared_info\n",
		    p->cpu, vcpu);
		return -E_PROTO;
	}
	xen_vcpu[p->cpu] = vcpu;
	p->logical_dest = lapic_read(LAPIC_LDR);
	if (!xen_port_of[p->cpu][0]) {
		const int err = xen_bind(p);

		if (err)
			return err;
	}
	if (xen_mode == XEN_UPCALL_VCPU) {
		struct xen_hvm_evtchn_upcall_vector up = {.vcpu = vcpu, .vector = VEC_XEN_UPCALL};
		const int64_t ret =
		    xen_hypercall2(XEN_HC_HVM_OP, XEN_HVMOP_SET_EVTCHN_UPCALL_VECTOR, &up);

		if (ret)
			return xen_failed("HVMOP_set_evtchn_upcall_vector for vCPU", vcpu, ret);
	}
	/*
	 * A store unmasks; a port that is pending all the same (a send that
	 * came while it was masked) would then never upcall again
	 * (evtchn_2l_set_pending() returns early on a pending port). Such a
	 * port is masked again and goes through EVTCHNOP_unmask, which raises
	 * it only when it clears the mask itself (evtchn_2l_unmask()), as
	 * Linux's evtchn_2l_unmask() does.
	 */
	for (unsigned int i = 0; i < IPI_VEC_COUNT; i++) {
		const uint32_t port = xen_port_of[p->cpu][i];
		const uint64_t bit = 1ull << (port % 64);
		int64_t ret;

		__atomic_fetch_and(&xen_shinfo->evtchn_mask[port / 64], ~bit, __ATOMIC_ACQ_REL);
		if (!(__atomic_load_n(&xen_shinfo->evtchn_pending[port / 64], __ATOMIC_ACQUIRE) &
		      bit))
			continue;
		__atomic_fetch_or(&xen_shinfo->evtchn_mask[port / 64], bit, __ATOMIC_ACQ_REL);
		unmask.port = port;
		ret = xen_hypercall2(XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_UNMASK, &unmask);
		if (ret)
			return xen_failed("EVTCHNOP_unmask of port", port, ret);
	}
	return 0;
}

/*
 * Masks this CPU's ports, drops what they hold (an IPI nobody took: counted
 * as unexpected, which the switch's check reports) and clears the vCPU's
 * selector and flag. IF=0; nothing sends to them now.
 */
static void xen_disable(void)
{
	struct percpu *p = this_cpu();
	struct xen_vcpu_info *vi;
	uint32_t dropped = 0;

	if (xen_mode == XEN_UPCALL_AUTO || !xen_port_of[p->cpu][0])
		return;
	for (unsigned int i = 0; i < IPI_VEC_COUNT; i++) {
		const uint32_t port = xen_port_of[p->cpu][i];
		const uint64_t bit = 1ull << (port % 64);

		__atomic_fetch_or(&xen_shinfo->evtchn_mask[port / 64], bit, __ATOMIC_ACQ_REL);
		dropped += !!(__atomic_fetch_and(&xen_shinfo->evtchn_pending[port / 64], ~bit,
						 __ATOMIC_ACQ_REL) &
			      bit);
	}
	vi = &xen_shinfo->vcpu_info[xen_vcpu[p->cpu]];
	__atomic_store_n(&vi->pending_sel, 0, __ATOMIC_RELEASE);
	WRITE_ONCE(vi->upcall_pending, 0);
	if (dropped)
		xen_unexpected(p, dropped);
}

static const struct ipi_ops *xen_choose(void);

static const struct ipi_ops ipi_xen_evtchn = {
    .name = "xen-evtchn",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_HYPERCALL | IPI_F_UPCALL,
    .words = "call=evtchnop-send set=call-per-target",
    .probe = xen_probe,
    .activate = xen_activate,
    .enable = xen_enable,
    .disable = xen_disable,
    .send = xen_send,
    .send_self = xen_send_self,
    .send_allbutself = xen_send_allbutself,
    .send_all = xen_send_all,
    .eoi = xen_eoi,
    .pending = xen_pending,
    .describe_call = xen_describe,
    .choose = xen_choose,
};
IPI_BACKEND_REGISTER(ipi_xen_evtchn, 500);

/* The mode in the records' words: chosen before the switch, from the key and CPUID. */
static const struct ipi_ops *xen_choose(void)
{
	static struct ipi_ops vcpu_table, callback_table;
	const bool vcpu = xen_wanted_mode() == XEN_UPCALL_VCPU;
	struct ipi_ops *t = vcpu ? &vcpu_table : &callback_table;

	*t = ipi_xen_evtchn;
	t->choose = NULL; /* chosen: what ipi_switch() installs */
	t->words = vcpu ? "call=evtchnop-send set=call-per-target upcall=vcpu-vector eoi=first"
			: "call=evtchnop-send set=call-per-target upcall=callback-vector eoi=none";
	return t;
}

static const struct opt_spec xen_spec[] = {
    {"xen_upcall", OPT_ENUM, 0, 0, xen_upcall_names,
     "xen-evtchn's upcall, once a boot: vcpu (HVMOP_set_evtchn_upcall_vector, through the vlapic, as Linux 6.0+), callback (HVM_PARAM_CALLBACK_IRQ's vector, Xen's own injection) or auto (default: vcpu where Xen offers it; docs/xen.md)"},
};

static void xen_apply(const struct opt_value *v)
{
	if (v[0].set)
		xen_upcall_key = (enum xen_upcall)v[0].u;
}

static const struct option_group xen_group = {60, xen_spec, ARRAY_SIZE(xen_spec), NULL, xen_apply};
OPTION_GROUP(xen_group);

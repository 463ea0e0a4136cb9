// SPDX-License-Identifier: GPL-2.0-only
/*
 * `xen-evtchn`: Xen's event channels as an IPI backend, the IPI that Linux
 * HVM and PVH guests send on Xen (xen_send_IPI_one(): one EVTCHNOP_send per
 * target to a port bound with EVTCHNOP_bind_ipi), not through the vlapic.
 *
 * Set-up, once, on the BSP inside the switch barriers (activate):
 *  - the shared_info page mapped at a page of ours (XENMEM_add_to_physmap,
 *    XENMAPSPACE_shared_info), every port masked;
 *  - the upcall: HVM_PARAM_CALLBACK_IRQ of type vector (2 in bits 63:56),
 *    VEC_XEN_UPCALL on every vCPU. Xen injects it itself whenever the vCPU's
 *    evtchn_upcall_pending is set (hvm_vcpu_has_pending_irq(), ahead of the
 *    vlapic), so it sets no ISR bit and takes no EOI, RFLAGS.IF holds it and
 *    the TPR does not (hvm_interrupt_blocked() compares the TPR for vlapic
 *    vectors only). Linux uses this when Xen does not offer the per-vCPU
 *    vector (XEN_HVM_CPUID_UPCALL_VECTOR), which goes through the vlapic.
 * On each CPU (enable): its Xen vcpu_id from CPUID (the leaf at Xen's base +
 * 4), one IPI port bound to it per IPI vector (IPI_VEC_COUNT), the first
 * time only, then those ports unmasked. Leaving the backend masks them
 * again and drops what they hold, so that no upcall reaches a backend that
 * did not ask for one.
 *
 * Sending: one EVTCHNOP_send (port in a per-CPU input buffer) per target,
 * self and the broadcasts included: event channels have no multicast. The
 * hypercall is VMMCALL on AMD and VMCALL on Intel, made directly, as Linux
 * does since it dropped the hypercall page (xen_hypercall_hvm()); Xen's
 * hvm_hypercall() takes either instruction the same.
 *
 * Receiving: the upcall clears evtchn_upcall_pending, swaps pending_sel
 * for 0 and scans the words it names for this CPU's own ports
 * (lib/xen_evtchn.c: the words are the domain's, shared by every vCPU);
 * each runs the handler of the vector it stands for, as if that vector had
 * come through the APIC, with the upcall's entry TSC.
 *
 * Limits: the first 32 vCPUs only (their vcpu_info is in shared_info;
 * VCPUOP_register_vcpu_info would lift it) and IPI_VEC_COUNT ports a CPU
 * within the domain's max_event_channels (xl's default 1023: 15 CPUs).
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/ipi.h"
#include "include/irq.h"
#include "include/lapic.h"
#include "include/mm.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/pv_result.h"
#include "lib/xen_abi.h"
#include "lib/xen_evtchn.h"

#define PAGE_SIZE 4096

static struct xen_shared_info *xen_shinfo;
static bool xen_vmmcall;
/* Per CPU: its vcpu_id, its port for each IPI vector, its send's input. */
static uint32_t xen_vcpu[MAX_CPUS];
static uint32_t *xen_port_of[MAX_CPUS];
static struct xen_evtchn_port *xen_send_in[MAX_CPUS];
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

static inline __attribute__((always_inline)) void xen_send_port(uint32_t port)
{
	struct xen_evtchn_port *in = xen_send_in[this_cpu()->cpu];
	int64_t ret;

	in->port = port;
	ret = xen_hypercall2(XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_SEND, in);
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

/* The upcall sets no ISR bit: nothing to end (hvm_vcpu_ack_pending_irq(), hvm_intsrc_vector). */
static void xen_eoi(void)
{
}

static void xen_unexpected(struct percpu *p)
{
	WRITE_ONCE(p->irq.unexpected_vector, VEC_XEN_UPCALL);
	WRITE_ONCE(p->irq.unexpected, p->irq.unexpected + 1);
}

static void xen_port_run(unsigned int port, void *arg)
{
	struct percpu *p = this_cpu();
	const unsigned int vector = xen_port_vec[port];
	irq_handler_t fn = vector ? irq_get_handler(vector) : NULL;

	if (!fn) {
		xen_unexpected(p);
		return;
	}
	fn(vector, *(const uint64_t *)arg);
}

static void xen_upcall(unsigned int vector, uint64_t entry_tsc)
{
	struct percpu *p = this_cpu();
	struct xen_vcpu_info *vi = &xen_shinfo->vcpu_info[xen_vcpu[p->cpu]];

	(void)vector;
	if (!(p->ops->flags & IPI_F_UPCALL)) {
		/* Disable masked every port first: an upcall now is Xen's fault or ours. */
		xen_unexpected(p);
		WRITE_ONCE(vi->upcall_pending, 0);
		return;
	}
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
	const struct xen_evtchn_port *in = cpu_nr < MAX_CPUS ? xen_send_in[cpu_nr] : NULL;
	const uint32_t port = in ? READ_ONCE(in->port) : 0;

	if (!port)
		return 0;
	return fmt_snprintf(
	    buf, size,
	    "EVTCHNOP_send (event_channel_op %u, command %u, %s): port %u (CPU %u, vector 0x%x)",
	    XEN_HC_EVENT_CHANNEL_OP, EVTCHNOP_SEND, xen_vmmcall ? "vmmcall" : "vmcall", port,
	    port < XEN_2L_PORTS ? xen_port_cpu[port] : 0,
	    port < XEN_2L_PORTS ? xen_port_vec[port] : 0);
}

static const char *xen_probe(void)
{
	if (!cpu.xen_base)
		return "no Xen CPUID leaves (\"XenVMMXenVMM\"): xen-evtchn needs Xen (--accel xen-in-tcg, docs/xen.md)";
	if (cpu.xen_max_leaf < cpu.xen_base + XEN_CPUID_HVM_OFFSET ||
	    !(cpuid(cpu.xen_base + XEN_CPUID_HVM_OFFSET, 0).eax & XEN_HVM_CPUID_VCPU_ID_PRESENT))
		return "Xen's HVM leaf gives no vcpu_id (XEN_HVM_CPUID_VCPU_ID_PRESENT): xen-evtchn binds ports by vcpu_id";
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: xen-evtchn runs beside the other backends in x2APIC mode";
	if (ncpus > XEN_LEGACY_MAX_VCPUS)
		return "more than 32 vCPUs: xen-evtchn reads vcpu_info from shared_info, which holds 32 (VCPUOP_register_vcpu_info is not done)";
	return NULL;
}

static int xen_map_shared_info(void)
{
	struct xen_add_to_physmap map = {.domid = XEN_DOMID_SELF, .space = XENMAPSPACE_SHARED_INFO};
	struct xen_hvm_param cb = {.domid = XEN_DOMID_SELF, .index = XEN_HVM_PARAM_CALLBACK_IRQ};
	void *page = mm_alloc(PAGE_SIZE, PAGE_SIZE);
	int64_t ret;

	map.gpfn = (uint64_t)(uintptr_t)page / PAGE_SIZE; /* identity map: GVA = GPA */
	ret = xen_hypercall2(XEN_HC_MEMORY_OP, XENMEM_ADD_TO_PHYSMAP, &map);
	if (ret) {
		kprintf(
		    "xen-evtchn: XENMEM_add_to_physmap (shared_info at GFN 0x%lx) returned %ld (%s)\n",
		    map.gpfn, ret, xen_errno_name(ret));
		return -E_PROTO;
	}
	xen_shinfo = page;
	/* Ports of the firmware (hvmloader's xenstore) stay masked: only ours upcall. */
	for (unsigned int w = 0; w < XEN_2L_WORDS; w++)
		__atomic_store_n(&xen_shinfo->evtchn_mask[w], ~0ull, __ATOMIC_RELEASE);
	irq_set_handler(VEC_XEN_UPCALL, xen_upcall);
	/* From 64-bit mode, so that Xen latches the 64-bit shared_info layout. */
	cb.value = xen_callback_vector(VEC_XEN_UPCALL);
	ret = xen_hypercall2(XEN_HC_HVM_OP, XEN_HVMOP_SET_PARAM, &cb);
	if (ret) {
		kprintf(
		    "xen-evtchn: HVMOP_set_param HVM_PARAM_CALLBACK_IRQ 0x%lx returned %ld (%s)\n",
		    cb.value, ret, xen_errno_name(ret));
		return -E_PROTO;
	}
	kprintf(
	    "xen-evtchn: shared_info at GFN 0x%lx, upcall vector 0x%x on every vCPU (HVM_PARAM_CALLBACK_IRQ 0x%lx), every port masked\n",
	    map.gpfn, VEC_XEN_UPCALL, cb.value);
	return 0;
}

/* BSP, the other CPUs waiting at a switch barrier. */
static int xen_activate(void)
{
	xen_vmmcall = cpu.is_amd;
	if (xen_shinfo)
		return 0;
	for (unsigned int c = 0; c < ncpus; c++) {
		xen_port_of[c] = mm_alloc(IPI_VEC_COUNT * sizeof(uint32_t), CACHELINE);
		xen_send_in[c] = mm_alloc(CACHELINE, CACHELINE);
		xen_mine[c] = mm_alloc(XEN_2L_WORDS * sizeof(uint64_t), CACHELINE);
	}
	return xen_map_shared_info();
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
	/* Nothing is pending on a masked port of ours (disable dropped it): a store unmasks. */
	for (unsigned int i = 0; i < IPI_VEC_COUNT; i++) {
		const uint32_t port = xen_port_of[p->cpu][i];

		__atomic_fetch_and(&xen_shinfo->evtchn_mask[port / 64], ~(1ull << (port % 64)),
				   __ATOMIC_ACQ_REL);
	}
	return 0;
}

/* Masks this CPU's ports and drops what they hold; IF=0, nothing sends to them now. */
static void xen_disable(void)
{
	struct percpu *p = this_cpu();

	for (unsigned int i = 0; i < IPI_VEC_COUNT; i++) {
		const uint32_t port = xen_port_of[p->cpu][i];
		const uint64_t bit = 1ull << (port % 64);

		__atomic_fetch_or(&xen_shinfo->evtchn_mask[port / 64], bit, __ATOMIC_ACQ_REL);
		__atomic_fetch_and(&xen_shinfo->evtchn_pending[port / 64], ~bit, __ATOMIC_ACQ_REL);
	}
	WRITE_ONCE(xen_shinfo->vcpu_info[xen_vcpu[p->cpu]].upcall_pending, 0);
}

static const struct ipi_ops ipi_xen_evtchn = {
    .name = "xen-evtchn",
    .mode = LAPIC_X2APIC,
    .flags = IPI_F_HYPERCALL | IPI_F_UPCALL,
    .words = "call=evtchnop-send set=call-per-target upcall=callback-vector",
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
};
IPI_BACKEND_REGISTER(ipi_xen_evtchn, 500);

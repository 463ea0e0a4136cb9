// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hyper-V IPI hypercalls as backends (docs/hyperv-abi.md 3.3, 3.4; TLFS
 * HvCallSendSyntheticClusterIpi.md, HvCallSendSyntheticClusterIpiEx.md),
 * one ops table per form so every result names the form:
 *
 *   hv-ipi         HvCallSendSyntheticClusterIpi, fast: RDX = vector, R8 = mask
 *   hv-ipi-slow    the same input from the CPU's input page
 *   hv-ipi-ex      HvCallSendSyntheticClusterIpiEx, slow, sparse VP set
 *   hv-ipi-ex-xmm  the same XMM-fast: RDX, R8, then XMM0..XMM5; a set of
 *                  more than 11 banks (VP indices spread over more than
 *                  704) does not fit and goes slow, as the encoder decides
 *   hv-ipi-ex-pad  hv-ipi-ex with an empty bank added to every sparse set
 *                  (the lowest bank it lacks: bank 1 below 64 vCPUs), so
 *                  that the hypervisor reads two banks and counts them
 *                  against the variable header: at 2 vCPUs every set is
 *                  otherwise bank 0 alone
 *
 * The non-Ex call's 64-bit mask reaches VP indices 0-63 only; its probe says
 * so when a CPU has a larger one. Destinations are VP indices, each read from
 * its CPU's VP_INDEX MSR. Every send is one call: self is the CPU's own VP
 * (there is no self-exclusion logic to lean on), all-but-self the others,
 * and all is HV_GENERIC_SET_ALL in the Ex calls. A call that does not
 * return SUCCESS is noted (ipi_note_failure) with its form and status.
 *
 * APIC mode: x2APIC. The calls work in either mode, but only the EOI then
 * goes to the APIC, and the x2APIC EOI MSR is one WRMSR (Linux drives these
 * calls from x2APIC mode too).
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/hyperv.h"
#include "include/ipi.h"
#include "include/lapic.h"
#include "include/mm.h"
#include "include/percpu.h"
#include "include/x86.h"
#include "lib/error.h"

struct hv_ipi_form {
	const char *name;
	bool ex;
	enum hv_form form;
	bool empty_bank; /* Ex: an empty bank added to every sparse set */
};

static const struct hv_ipi_form hv_ipi_fast = {"hv-ipi", false, HV_FORM_FAST, false};
static const struct hv_ipi_form hv_ipi_memory = {"hv-ipi-slow", false, HV_FORM_SLOW, false};
static const struct hv_ipi_form hv_ipi_ex_memory = {"hv-ipi-ex", true, HV_FORM_SLOW, false};
static const struct hv_ipi_form hv_ipi_ex_xmm = {"hv-ipi-ex-xmm", true, HV_FORM_XMM, false};
static const struct hv_ipi_form hv_ipi_ex_pad = {"hv-ipi-ex-pad", true, HV_FORM_SLOW, true};

/* The form in force: set by activate before any CPU enables it, read by every send. */
static const struct hv_ipi_form *hv_ipi_now;
/* Per CPU: VP indices of the set being sent. */
static uint32_t *hv_ipi_vps[MAX_CPUS];

static void hv_ipi_call(const uint32_t *vps, size_t n, bool all, uint8_t vector)
{
	const struct hv_ipi_form *f = hv_ipi_now;
	struct hv_call *c = hv_call_buf();
	char why[160];
	int err;

	if (f->ex) {
		err = hv_encode_send_ipi_ex(c, f->form, vector, vps, n, all);
		if (!err && f->empty_bank && !all)
			err = hv_vpset_add_empty_bank(c);
	} else
		err = hv_encode_send_ipi(c, f->form, vector, vps, n);
	if (err) {
		ipi_note_failure("%s: encoding a send to %zu VPs failed (%s)", f->name, n,
				 error_name(err));
		return;
	}
	if (hv_call_run(c, why, sizeof(why)))
		ipi_note_failure("%s: %s", f->name, why);
}

static void hv_ipi_send(unsigned int target, uint8_t vector)
{
	uint32_t vp = hv_vp_index(target);

	hv_ipi_call(&vp, 1, false, vector);
}

static void hv_ipi_send_set(const struct cpuset *set, uint8_t vector)
{
	uint32_t *vps = hv_ipi_vps[this_cpu()->cpu];

	hv_ipi_call(vps, hv_vps_of(set, vps), false, vector);
}

static void hv_ipi_send_self(uint8_t vector)
{
	hv_ipi_send(this_cpu()->cpu, vector);
}

static void hv_ipi_send_allbutself(uint8_t vector)
{
	unsigned int self = this_cpu()->cpu;
	uint32_t *vps = hv_ipi_vps[self];
	size_t n = 0;

	for (unsigned int c = 0; c < ncpus; c++) {
		if (c != self)
			vps[n++] = hv_vp_index(c);
	}
	hv_ipi_call(vps, n, false, vector);
}

static void hv_ipi_send_all(uint8_t vector)
{
	uint32_t *vps = hv_ipi_vps[this_cpu()->cpu];
	size_t n = 0;

	/* The Ex calls say "all" in the set's format; the mask lists everyone. */
	if (!hv_ipi_now->ex) {
		for (unsigned int c = 0; c < ncpus; c++)
			vps[n++] = hv_vp_index(c);
	}
	hv_ipi_call(vps, n, hv_ipi_now->ex, vector);
}

static void hv_ipi_eoi(void)
{
	wrmsr(X2APIC_MSR(LAPIC_EOI), 0);
}

static const char *hv_ipi_probe_form(const struct hv_ipi_form *f)
{
	unsigned int needs = HV_NEED_HYPERCALL | HV_NEED_VP_INDEX | HV_NEED_IPI;
	const char *why;

	if (f->ex)
		needs |= HV_NEED_EX;
	if (f->form == HV_FORM_XMM)
		needs |= HV_NEED_XMM;
	why = hv_probe(needs);
	if (why)
		return why;
	if (!cpu.x2apic)
		return "CPUID.1:ECX.x2APIC[bit 21] is 0: the Hyper-V IPI backends run in x2APIC mode; add +x2apic to -cpu";
	/* Reads VP_INDEX on every CPU (once): a read, no state changes. */
	if (f->ex)
		return hv_vp_check(HV_VPSET_MAX_VP, "HvCallSendSyntheticClusterIpiEx");
	return hv_vp_check(HV_SEND_IPI_MAX_VP,
			   "HvCallSendSyntheticClusterIpi's 64-bit mask (use hv-ipi-ex)");
}

/* BSP, the other CPUs waiting at a switch barrier: hypercalls on, scratch, the form. */
static int hv_ipi_activate_form(const struct hv_ipi_form *f)
{
	int err = hv_calls_on(f->name);

	if (!hv_ipi_vps[0]) {
		for (unsigned int c = 0; c < ncpus; c++)
			hv_ipi_vps[c] = mm_alloc(ncpus * sizeof(uint32_t), CACHELINE);
	}
	hv_ipi_now = f;
	return err;
}

/* Every CPU, in x2APIC mode: its APIC ID (sends of the wake-up IPIs) and its VP index. */
static int hv_ipi_enable(void)
{
	struct percpu *p = this_cpu();
	uint32_t id = lapic_id();

	p->logical_dest = lapic_read(LAPIC_LDR);
	if (id != p->apic_id) {
		kprintf("%s: CPU %u reports x2APIC ID %u, the MADT said %u\n", hv_ipi_now->name,
			p->cpu, id, p->apic_id);
		return -E_PROTO;
	}
	return hv_vp_verify(hv_ipi_now->name);
}

static const char *hv_ipi_probe(void)
{
	return hv_ipi_probe_form(&hv_ipi_fast);
}

static const char *hv_ipi_slow_probe(void)
{
	return hv_ipi_probe_form(&hv_ipi_memory);
}

static const char *hv_ipi_ex_probe(void)
{
	return hv_ipi_probe_form(&hv_ipi_ex_memory);
}

static const char *hv_ipi_ex_xmm_probe(void)
{
	return hv_ipi_probe_form(&hv_ipi_ex_xmm);
}

static const char *hv_ipi_ex_pad_probe(void)
{
	return hv_ipi_probe_form(&hv_ipi_ex_pad);
}

static int hv_ipi_activate(void)
{
	return hv_ipi_activate_form(&hv_ipi_fast);
}

static int hv_ipi_slow_activate(void)
{
	return hv_ipi_activate_form(&hv_ipi_memory);
}

static int hv_ipi_ex_activate(void)
{
	return hv_ipi_activate_form(&hv_ipi_ex_memory);
}

static int hv_ipi_ex_xmm_activate(void)
{
	return hv_ipi_activate_form(&hv_ipi_ex_xmm);
}

static int hv_ipi_ex_pad_activate(void)
{
	return hv_ipi_activate_form(&hv_ipi_ex_pad);
}

/*
 * The five forms share every operation; what differs is the call and form
 * the activate hook installs, their probe, and the words records carry.
 */
#define HV_IPI_OPS(ops_name, text, words_text, probe_fn, activate_fn)                              \
	static const struct ipi_ops ops_name = {                                                   \
		.name = (text),                                                                    \
		.mode = LAPIC_X2APIC,                                                              \
		.flags = IPI_F_HYPERCALL,                                                          \
		.words = (words_text),                                                             \
		.probe = (probe_fn),                                                               \
		.activate = (activate_fn),                                                         \
		.enable = hv_ipi_enable,                                                           \
		.send = hv_ipi_send,                                                               \
		.send_set = hv_ipi_send_set,                                                       \
		.send_self = hv_ipi_send_self,                                                     \
		.send_allbutself = hv_ipi_send_allbutself,                                         \
		.send_all = hv_ipi_send_all,                                                       \
		.eoi = hv_ipi_eoi,                                                                 \
		.describe_call = hv_describe_call,                                                 \
	}

/*
 * via=hypercall-page: every call goes through the page the hypervisor filled
 * (hv.c), as Windows and Linux call it, not a VMCALL of the guest's own.
 */
HV_IPI_OPS(ipi_hv_ipi, "hv-ipi", "call=send-ipi form=fast via=hypercall-page set=one-call vp<64",
	   hv_ipi_probe, hv_ipi_activate);
HV_IPI_OPS(ipi_hv_ipi_slow, "hv-ipi-slow",
	   "call=send-ipi form=slow via=hypercall-page set=one-call vp<64", hv_ipi_slow_probe,
	   hv_ipi_slow_activate);
HV_IPI_OPS(ipi_hv_ipi_ex, "hv-ipi-ex",
	   "call=send-ipi-ex form=slow via=hypercall-page set=one-call all=set-all",
	   hv_ipi_ex_probe, hv_ipi_ex_activate);
HV_IPI_OPS(ipi_hv_ipi_ex_xmm, "hv-ipi-ex-xmm",
	   "call=send-ipi-ex form=xmm-fast via=hypercall-page set=one-call all=set-all "
	   "over-11-banks=slow",
	   hv_ipi_ex_xmm_probe, hv_ipi_ex_xmm_activate);
HV_IPI_OPS(ipi_hv_ipi_ex_pad, "hv-ipi-ex-pad",
	   "call=send-ipi-ex form=slow via=hypercall-page set=one-call all=set-all "
	   "empty-bank=lowest-absent",
	   hv_ipi_ex_pad_probe, hv_ipi_ex_pad_activate);
IPI_BACKEND_REGISTER(ipi_hv_ipi, 300);
IPI_BACKEND_REGISTER(ipi_hv_ipi_slow, 310);
IPI_BACKEND_REGISTER(ipi_hv_ipi_ex, 320);
IPI_BACKEND_REGISTER(ipi_hv_ipi_ex_pad, 325);
IPI_BACKEND_REGISTER(ipi_hv_ipi_ex_xmm, 330);

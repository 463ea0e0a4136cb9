// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hyper-V's hypercall interface as KVM implements it (docs/hyperv-abi.md 1
 * and 2; TLFS feature-discovery.md, hypercall-interface.md): probing by
 * CPUID, the guest OS ID and the hypercall page, VP indices, one input page
 * per CPU, and a call issued in its form with its result checked.
 *
 * TLFS 3.13 "Establishing the Hypercall Interface": write a non-zero guest
 * OS ID, then the hypercall page's GPA with the enable bit, and read the
 * enable bit back (KVM accepts the write but leaves enable 0 while the OS
 * ID is 0). The hypervisor then writes its calling sequence into the page
 * (KVM: vmcall or vmmcall, ret; Xen's viridian: or eax, 0x80000000 first);
 * every call jumps into it (hyperv/hypercall.asm), and the page's first
 * bytes are printed so a reader sees what the hypervisor chose.
 *
 * The recommendations (CPUID 0x40000004) the probes test are those the
 * hypervisor gives an identified guest: Xen's viridian leaves the leaf
 * empty until the guest OS ID's OS field (bits 47:40 in Microsoft's format,
 * 4 = Windows NT) is 4 or more (xen/arch/x86/hvm/viridian/viridian.c,
 * cpuid_viridian_leaves(), leaf 4; the vendor field is not looked at),
 * while KVM fills it from -cpu whatever the ID. When the boot-time leaf
 * lacks a bit a probe needs, the leaf is read again with the OS ID written
 * (hv_os_id=, default the open-source format) and the ID put back.
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/hyperv.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/smp.h"
#include "include/x86.h"
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/pv_result.h"

#define HV_PAGE		   4096
#define HV_VP_READ_TIMEOUT 1000000 /* us for every CPU to read its VP index */
#define HV_VP_UNKNOWN	   UINT32_MAX

_Static_assert(sizeof(struct hv_call) <= HV_PAGE, "a CPU's call must fit its input page");

struct hv_req {
	unsigned int need;
	const uint32_t *reg; /* a CPUID word recorded in struct cpu_features */
	uint32_t bit;
	const char *why;
	const char *xen_why; /* under Xen's viridian, where it differs */
};

static uint32_t hv_rec_identified; /* 0x40000004 EAX as an identified guest reads it */

#define HV_XEN_REC_WHY(what, group)                                                                  \
	"CPUID 0x40000004 EAX[" what "] is 0 with the guest OS ID written: Xen's viridian "          \
	"recommends hypercalls only to a Windows guest OS ID (hv_os_id=windows) and with the " group \
	" group in xl's viridian = [...] (docs/xen.md)"

static const struct hv_req hv_reqs[] = {
    {HV_NEED_HYPERCALL, &cpu.hv_features_eax, HV_FEAT_HYPERCALL_MSRS,
     "CPUID 0x40000003 EAX[5] (hypercall MSRs) is 0: QEMU sets it with any hv-* flag", NULL},
    {HV_NEED_VP_INDEX, &cpu.hv_features_eax, HV_FEAT_VP_INDEX,
     "CPUID 0x40000003 EAX[6] (VP index MSR) is 0: add hv-vpindex to -cpu", NULL},
    {HV_NEED_APIC_MSRS, &cpu.hv_features_eax, HV_FEAT_APIC_MSRS,
     "CPUID 0x40000003 EAX[4] (APIC access MSRs) is 0: add hv-vapic to -cpu", NULL},
    {HV_NEED_IPI, &hv_rec_identified, HV_REC_CLUSTER_IPI,
     "CPUID 0x40000004 EAX[10] (cluster-IPI hypercalls) is 0: add hv-ipi to -cpu",
     HV_XEN_REC_WHY("10", "hcall_ipi")},
    {HV_NEED_FLUSH, &hv_rec_identified, HV_REC_REMOTE_FLUSH,
     "CPUID 0x40000004 EAX[2] (remote TLB-flush hypercalls) is 0: add hv-tlbflush to -cpu",
     HV_XEN_REC_WHY("2", "hcall_remote_tlb_flush")},
    {HV_NEED_EX, &hv_rec_identified, HV_REC_EX_PROCESSOR_MASKS,
     "CPUID 0x40000004 EAX[11] (Ex processor masks) is 0: add hv-ipi or hv-tlbflush to -cpu",
     HV_XEN_REC_WHY("11", "ex_processor_masks")},
    {HV_NEED_XMM, &cpu.hv_features_edx, HV_FEAT_EDX_XMM_INPUT,
     "CPUID 0x40000003 EDX[4] (XMM fast-hypercall input) is 0: add hv-xmm-input to -cpu",
     "CPUID 0x40000003 EDX[4] (XMM fast-hypercall input) is 0: Xen's viridian offers no XMM input"},
};

static uint32_t hv_vp[MAX_CPUS];
static int hv_vp_state = 1; /* 1: not read yet, 0: read, < 0: a read failed (not retried) */
static struct hv_call *hv_bufs[MAX_CPUS];
static uint8_t *hv_page;

static const char *hv_probe_interface(void)
{
	if (cpu.hyperv)
		return NULL;
	if (!__builtin_memcmp(cpu.hv_vendor, "TCGTCGTCGTCG", 12))
		return "no Hyper-V interface: QEMU TCG (CPUID 0x40000000 \"TCGTCGTCGTCG\") emulates none; boot with -accel kvm and hv-* flags in -cpu";
	if (!cpu.hypervisor)
		return "no hypervisor (CPUID.1:ECX[31] is 0): Hyper-V hypercalls need one (QEMU: -accel kvm with hv-* flags in -cpu)";
	/* Xen offers the Hyper-V interface to HVM guests only, through viridian. */
	if (cpu.xen_base)
		return "no Hyper-V interface (CPUID 0x40000001 EAX is not \"Hv#1\"): under Xen, an HVM guest with viridian enabled (xl: viridian = [\"base\", \"hcall_ipi\", \"hcall_remote_tlb_flush\", \"ex_processor_masks\"]); a PVH guest has none";
	return "no Hyper-V interface (CPUID 0x40000001 EAX is not \"Hv#1\"): add hv-* flags to -cpu under -accel kvm";
}

static uint64_t hv_guest_os_id(void)
{
	return options.hv_os_id == HV_OS_ID_WINDOWS ? HV_GUEST_OS_ID_WINDOWS
						    : HV_GUEST_OS_ID_IPIBENCH;
}

/*
 * 0x40000004 EAX for a guest that wrote its OS ID, for the bits in want:
 * the boot-time value when it has them all (KVM: no MSR touched), else the
 * leaf read with the OS ID written, once, the ID left as it was found.
 */
static void hv_rec_identify(uint32_t want)
{
	static bool read_identified;
	uint64_t id = 0;
	uint32_t rec;

	if (!hv_rec_identified)
		hv_rec_identified = cpu.hv_recommendations;
	if ((hv_rec_identified & want) == want || read_identified ||
	    !(cpu.hv_features_eax & HV_FEAT_HYPERCALL_MSRS) ||
	    cpu.hv_max_leaf < HV_CPUID_RECOMMENDATIONS)
		return;
	read_identified = true;
	if (rdmsr_safe(HV_MSR_GUEST_OS_ID, &id))
		return;
	if (!id && wrmsr_safe(HV_MSR_GUEST_OS_ID, hv_guest_os_id()))
		return;
	rec = cpuid(HV_CPUID_RECOMMENDATIONS, 0).eax;
	if (!id && wrmsr_safe(HV_MSR_GUEST_OS_ID, 0))
		kprintf(
		    "hyperv: could not put the guest OS ID back to 0 after reading CPUID 0x40000004\n");
	if (rec != cpu.hv_recommendations)
		kprintf(
		    "hyperv: CPUID 0x40000004 EAX 0x%x before the guest OS ID, 0x%x with 0x%lx written: the recommendations follow the OS ID\n",
		    cpu.hv_recommendations, rec, id ? id : hv_guest_os_id());
	hv_rec_identified = rec;
}

const char *hv_probe(unsigned int needs)
{
	const char *why = hv_probe_interface();
	uint32_t want = 0;

	if (why)
		return why;
	for (unsigned int i = 0; i < ARRAY_SIZE(hv_reqs); i++) {
		if ((needs & hv_reqs[i].need) && hv_reqs[i].reg == &hv_rec_identified)
			want |= hv_reqs[i].bit;
	}
	if (want)
		hv_rec_identify(want);
	for (unsigned int i = 0; i < ARRAY_SIZE(hv_reqs); i++) {
		if ((needs & hv_reqs[i].need) && !(*hv_reqs[i].reg & hv_reqs[i].bit))
			return cpu.xen_base && hv_reqs[i].xen_why ? hv_reqs[i].xen_why
								  : hv_reqs[i].why;
	}
	return NULL;
}

/* --- VP indices ------------------------------------------------------------------------ */

static void hv_vp_read_one(void *arg)
{
	uint64_t v;

	(void)arg;
	hv_vp[this_cpu()->cpu] = rdmsr_safe(HV_MSR_VP_INDEX, &v) ? HV_VP_UNKNOWN : (uint32_t)v;
}

int hv_vp_read_all(void)
{
	if (hv_vp_state <= 0)
		return hv_vp_state;
	hv_vp_state = 0;
	if (smp_call_all(hv_vp_read_one, NULL, HV_VP_READ_TIMEOUT)) {
		kprintf("hyperv: a CPU did not read its VP index in time\n");
		return hv_vp_state = -E_TIMEDOUT;
	}
	for (unsigned int c = 0; c < ncpus; c++) {
		if (hv_vp[c] == HV_VP_UNKNOWN) {
			kprintf("hyperv: CPU %u: reading HV_MSR_VP_INDEX (0x%x) faulted\n", c,
				HV_MSR_VP_INDEX);
			hv_vp_state = -E_NODEV;
		}
	}
	if (hv_vp_state)
		return hv_vp_state;
	kprintf("hyperv: VP index by CPU:");
	for (unsigned int c = 0; c < ncpus; c++)
		kprintf(" %u", hv_vp[c]);
	kprintf("\n");
	return 0;
}

uint32_t hv_vp_index(unsigned int cpu_nr)
{
	return hv_vp[cpu_nr];
}

const char *hv_vp_check(uint32_t max_vp, const char *call)
{
	static char why[160];

	if (hv_vp_read_all())
		return "a CPU could not read its VP index (HV_MSR_VP_INDEX, see above)";
	for (unsigned int c = 0; c < ncpus; c++) {
		if (hv_vp[c] > max_vp) {
			fmt_snprintf(why, sizeof(why),
				     "CPU %u has VP index %u: %s reaches VP indices 0-%u only", c,
				     hv_vp[c], call, max_vp);
			return why;
		}
	}
	return NULL;
}

int hv_vp_verify(const char *backend)
{
	struct percpu *p = this_cpu();
	uint64_t v = HV_VP_UNKNOWN;

	if (!rdmsr_safe(HV_MSR_VP_INDEX, &v) && v == hv_vp[p->cpu])
		return 0;
	kprintf("%s: CPU %u reads VP index 0x%lx, the table says %u\n", backend, p->cpu, v,
		hv_vp[p->cpu]);
	return -E_PROTO;
}

size_t hv_vps_of(const struct cpuset *set, uint32_t *vps)
{
	size_t n = 0;

	cpuset_for_each(c, set) vps[n++] = hv_vp[c];
	return n;
}

/* --- the guest OS ID and the hypercall page ------------------------------------------------ */

bool hv_calls_enabled(void)
{
	uint64_t id = 0, hc = 0;

	if (hv_probe(HV_NEED_HYPERCALL))
		return false;
	return !rdmsr_safe(HV_MSR_GUEST_OS_ID, &id) && id &&
	       !rdmsr_safe(HV_MSR_HYPERCALL, &hc) && (hc & HV_HYPERCALL_ENABLE);
}

/*
 * The hypercall page is ordinary RAM of its own. The TLFS describes an
 * overlay that #GPs on writes; KVM writes its sequence into the guest's
 * page instead (kvm_hv_set_msr_pw()), which is only read here to print it.
 */
static void hv_alloc(void)
{
	if (hv_page)
		return;
	hv_page = mm_alloc(HV_PAGE, HV_PAGE);
	for (unsigned int c = 0; c < ncpus; c++)
		hv_bufs[c] = mm_alloc(sizeof(struct hv_call), HV_PAGE);
}

#define HV_PAGE_SHOWN 12 /* bytes of the page printed: Xen's sequence is 9 */

/* The instruction the hypervisor's calling sequence traps with (TLFS: the page is its own). */
static const char *hv_page_insn(void)
{
	static const uint8_t vmcall[] = {0x0f, 0x01, 0xc1}, vmmcall[] = {0x0f, 0x01, 0xd9};

	for (unsigned int i = 0; i + sizeof(vmcall) <= HV_PAGE_SHOWN; i++) {
		if (!__builtin_memcmp(hv_page + i, vmcall, sizeof(vmcall)))
			return "vmcall";
		if (!__builtin_memcmp(hv_page + i, vmmcall, sizeof(vmmcall)))
			return "vmmcall";
	}
	return "neither vmcall nor vmmcall";
}

int hv_calls_on(const char *who)
{
	uint64_t gpa, hc = 0;

	hv_alloc();
	if (hv_calls_enabled()) {
		/* Enabled before (a reused VM's state): call the page it names. */
		if (!rdmsr_safe(HV_MSR_HYPERCALL, &hc))
			hv_page_entry = hc & ~(uint64_t)(HV_PAGE - 1);
		return 0;
	}
	gpa = (uint64_t)(uintptr_t)hv_page; /* identity map: the GPA is the address */
	if (wrmsr_safe(HV_MSR_GUEST_OS_ID, hv_guest_os_id()) ||
	    wrmsr_safe(HV_MSR_HYPERCALL, gpa | HV_HYPERCALL_ENABLE) ||
	    rdmsr_safe(HV_MSR_HYPERCALL, &hc)) {
		kprintf("hyperv: #GP writing the guest OS ID or hypercall MSR (for %s)\n", who);
		return -E_NODEV;
	}
	if (!(hc & HV_HYPERCALL_ENABLE)) {
		kprintf(
		    "hyperv: the hypercall page did not enable: MSR 0x%x reads 0x%lx (for %s)\n",
		    HV_MSR_HYPERCALL, hc, who);
		return -E_PROTO;
	}
	hv_page_entry = gpa;
	kprintf(
	    "hyperv: guest OS ID 0x%lx set for %s (partition-wide: under KVM every vmcall is now a Hyper-V hypercall); hypercall page at 0x%lx holds %s; calls go through it:",
	    hv_guest_os_id(), who, gpa, hv_page_insn());
	for (unsigned int i = 0; i < HV_PAGE_SHOWN; i++)
		kprintf(" %02x", hv_page[i]);
	kprintf("\n");
	return 0;
}

int hv_calls_off(const char *why)
{
	uint64_t id = 0;

	if (!hv_calls_enabled())
		return 0;
	/* KVM also clears the page's enable bit when the OS ID goes to 0. */
	if (wrmsr_safe(HV_MSR_HYPERCALL, 0) || wrmsr_safe(HV_MSR_GUEST_OS_ID, 0) ||
	    rdmsr_safe(HV_MSR_GUEST_OS_ID, &id) || id) {
		kprintf("hyperv: could not clear the guest OS ID (reads 0x%lx) %s\n", id, why);
		return -E_PROTO;
	}
	kprintf("hyperv: guest OS ID back to 0 %s (under KVM, vmcall reaches KVM's own hypercalls)\n",
		why);
	return 0;
}

struct hv_call *hv_call_buf(void)
{
	return hv_bufs[this_cpu()->cpu];
}

int hv_describe_call(unsigned int cpu_nr, char *buf, size_t size)
{
	const struct hv_call *c = cpu_nr < MAX_CPUS ? hv_bufs[cpu_nr] : NULL;
	uint16_t code;
	int n;

	if (!c || !c->control)
		return 0;
	code = (uint16_t)(c->control & HV_CONTROL_CODE_MASK);
	n = fmt_snprintf(buf, size, "%s (code 0x%04x, %s, through the hypercall page): RCX 0x%lx",
			 hv_call_name(code), code, hv_form_name(c->form), c->control);
	if (n < 0 || (size_t)n >= size)
		return n;
	if (c->form == HV_FORM_SLOW)
		n += fmt_snprintf(buf + n, size - (size_t)n, ", RDX 0x%lx (input GPA) holding",
				  (uint64_t)(uintptr_t)c->q);
	else
		n += fmt_snprintf(buf + n, size - (size_t)n, ", RDX, R8%s:",
				  c->form == HV_FORM_XMM ? ", XMM0-5" : "");
	for (size_t i = 0; i < c->qwords && i < 4 && (size_t)n < size; i++)
		n += fmt_snprintf(buf + n, size - (size_t)n, " 0x%lx", c->q[i]);
	if (c->qwords > 4 && (size_t)n < size)
		n += fmt_snprintf(buf + n, size - (size_t)n, " ... (%zu qwords)", c->qwords);
	return n;
}

/* --- one call ------------------------------------------------------------------------------ */

static uint64_t hv_issue(const struct hv_call *c, uint64_t control)
{
	switch (c->form) {
	case HV_FORM_FAST:
		return hv_hypercall(control, c->q[0], c->q[1]);
	case HV_FORM_XMM:
		return hv_hypercall_xmm(control, c->q);
	case HV_FORM_SLOW:
		break;
	}
	return hv_hypercall(control, (uint64_t)(uintptr_t)c->q, 0);
}

/* Issue c until it is done or fails: 0 or hv_result_check()'s error; *rax the last result. */
static inline int hv_issue_reps(const struct hv_call *c, uint64_t *rax)
{
	uint64_t control = c->control;
	unsigned int done = 0;

	for (;;) {
		*rax = hv_issue(c, control);
		int err = hv_result_check(c->control, *rax);


		/* SUCCESS with reps left: the hypervisor stopped early; go on from there. */
		if (err != -E_NOSPC || hv_result_reps(*rax) <= done)
			return err;
		done = hv_result_reps(*rax);
		control = hv_control_rep_start(c->control, done);
	}
}

/*
 * debug=corrupt-vpset: bank 63 marked valid but not sent, so popcount(valid
 * bank mask) no longer equals the variable-header size; the hypervisor must
 * answer HV_STATUS_INVALID_HYPERCALL_INPUT (KVM does since Linux 6.1 at the
 * latest; 5.10 did not check). Setting (not flipping) keeps a buffer
 * reissued every iteration corrupt the same way. The qword after the input
 * is zeroed: a hypervisor that reads popcount(mask) banks and not the
 * variable header (Xen 4.17) then reads an empty bank 63 there, not what
 * an earlier call left. A sparse set's malformed call that succeeds is a
 * finding about the hypervisor, said in its own words rather than passed
 * as a working call; with HV_GENERIC_SET_ALL the TLFS leaves banks
 * unspecified, so a success there is none. Out of line, so that the send
 * path of every other run is the same code as without the fault.
 */
static __attribute__((noinline, cold)) int hv_call_run_corrupt(struct hv_call *c, int q,
								char *why, size_t size)
{
	uint16_t code = (uint16_t)(c->control & HV_CONTROL_CODE_MASK);
	uint64_t rax;

	c->q[q] |= 1ull << 63;
	if (c->qwords < HV_CALL_MAX_QWORDS)
		c->q[c->qwords] = 0;
	int err = hv_issue_reps(c, &rax);

	if (err) {
		if (why)
			hv_result_describe(why, size, c->control, c->form, rax);
		return err;
	}
	if (c->q[q - 1] != HV_GENERIC_SET_SPARSE_4K)
		return 0;
	if (why)
		fmt_snprintf(why, size,
			     "the hypervisor accepted a malformed call: %s (%s) returned SUCCESS "
			     "with VP set bank 63 valid but not sent",
			     hv_call_name(code), hv_form_name(c->form));
	return -E_PROTO;
}

int hv_call_run(struct hv_call *c, char *why, size_t size)
{
	uint64_t rax;
	int err, q;

	if (debug_on(DEBUG_CORRUPT_VPSET) &&
	    (q = hv_vpset_mask_qword((uint16_t)(c->control & HV_CONTROL_CODE_MASK))) >= 0)
		return hv_call_run_corrupt(c, q, why, size);
	err = hv_issue_reps(c, &rax);
	if (err && why)
		hv_result_describe(why, size, c->control, c->form, rax);
	return err;
}

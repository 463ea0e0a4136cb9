// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC frequency. A figure the platform declares is preferred, in this order:
 * the Hyper-V TSC frequency MSR (TLFS, HV_X64_MSR_TSC_FREQUENCY, when
 * CPUID 0x40000003 EAX[11] grants it), the hypervisor timing leaf 0x40000010
 * (EAX = TSC kHz; QEMU/KVM and VMware), Xen's time leaf (its base + 3,
 * subleaf 0, ECX = the guest's TSC kHz), CPUID 0x15 (SDM vol. 2A: crystal
 * clock x EBX/EAX), then KVM's pvclock (kvmclock: the tsc_to_system_mul and
 * tsc_shift KVM converts TSC cycles to ns with; Linux's pvclock_tsc_khz()).
 * The PIT is always used to calibrate as well (channel 2 gated through port
 * 0x61, 5 ms in mode 0, median of three), printed beside the declared
 * figure, and used alone when nothing is declared. Without a PIT (OUT2 high
 * before the count can have run out: port 0x61 reads 0xff on a machine
 * without it; or no OUT2 edge within the bound, e.g. -machine pit=off) the
 * ACPI PM timer from the FADT calibrates instead (ACPI 6.5 4.8.3.3,
 * 3.579545 MHz); hardware-reduced ACPI (QEMU microvm) has none. Then CPUID
 * 0x16's nominal base frequency (SDM vol. 2A: MHz, "not guaranteed" to be
 * the TSC's). With none of these (QEMU microvm pic=off,pit=off under TCG:
 * no hypervisor leaves, no PIT, no PM timer) the frequency is a guess, said
 * as such on the console and as the trust warning tsc-freq-guessed.
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/pit.h"
#include "include/topology.h"
#include "include/tsc.h"
#include "lib/hv_abi.h"
#include "lib/xen_abi.h"

#define PIT_CAL_MS 5u	/* x3 runs; a 1 us read jitter is 0.02% */
#define PORT_61 0x61
#define  PORT_61_GATE2 0x01
#define  PORT_61_SPEAKER 0x02
#define  PORT_61_OUT2 0x20
#define PIT_POLL_CYCLES_MAX 500000000ull /* no PIT at all: give up */
#define HV_TIMING_LEAF 0x40000010u
#define CPUID_FREQ_LEAF 0x16u	/* EAX[15:0]: processor base frequency, MHz */

/* KVM's pvclock (Linux Documentation/virt/kvm/x86/msr.rst, cpuid.rst) */
#define KVM_FEATURE_CLOCKSOURCE (1u << 0)	/* MSR_KVM_SYSTEM_TIME */
#define KVM_FEATURE_CLOCKSOURCE2 (1u << 3)	/* MSR_KVM_SYSTEM_TIME_NEW */
#define MSR_KVM_SYSTEM_TIME 0x12
#define MSR_KVM_SYSTEM_TIME_NEW 0x4b564d01
#define  KVM_SYSTEM_TIME_ENABLE 1ull
#define PVCLOCK_TSC_STABLE_BIT (1u << 0) /* pvclock_vcpu_time_info.flags */

struct pvclock_vcpu_time_info {
	uint32_t version;	/* odd while KVM writes */
	uint32_t pad0;
	uint64_t tsc_timestamp;
	uint64_t system_time;
	uint32_t tsc_to_system_mul;	/* ns = ((cycles << shift) * mul) >> 32 */
	int8_t tsc_shift;
	uint8_t flags;
	uint8_t pad[2];
};
_Static_assert(sizeof(struct pvclock_vcpu_time_info) == 32, "msr.rst: 32 bytes");
_Static_assert(__builtin_offsetof(struct pvclock_vcpu_time_info, tsc_to_system_mul) == 24,
	       "msr.rst");

uint64_t tsc_khz = TSC_KHZ_GUESS;
const char *tsc_source = "a guess";
uint64_t tsc_pit_khz;
bool tsc_freq_guessed;

static uint64_t tsc_pit_calibrate_once(const void *unused)
{
	(void)unused;
	uint32_t latch = PIT_HZ / (1000 / PIT_CAL_MS);
	uint64_t t0, t1;

	outb(PORT_61, (inb(PORT_61) & ~PORT_61_SPEAKER) | PORT_61_GATE2);
	outb(PIT_CMD, PIT_CMD_CH2_ONESHOT);
	outb(PIT_CH2, latch & 0xff);
	outb(PIT_CH2, latch >> 8);
	/* Mode 0 drives OUT low from the command until the count runs out: high
	 * now is no PIT (an absent port reads 0xff), not a 5 ms that took none. */
	if (inb(PORT_61) & PORT_61_OUT2)
		return 0;
	t0 = t1 = rdtsc();
	while (!(inb(PORT_61) & PORT_61_OUT2)) {
		t1 = rdtsc();
		if (t1 - t0 > PIT_POLL_CYCLES_MAX)
			return 0;
	}
	return (t1 - t0) / PIT_CAL_MS;
}

/* The middle of three figures, or 0 if a run failed (returned 0). */
static uint64_t median3(uint64_t a, uint64_t b, uint64_t c)
{
	if (!a || !b || !c)
		return 0;
	if (a > b)
		SWAP(a, b);
	if (b > c)
		SWAP(b, c);
	return a > b ? a : b;
}

/*
 * The middle of three calibration runs of once(arg), or 0. A vCPU
 * descheduled inside a run skews it either way, which the median discards
 * (one outlier of either kind), or holds it past its bound (0). A first
 * run that fails means no such timer: one bounded wait, not three. A later
 * failure is such a disturbance, and the run is made again, CAL_RETRIES
 * times at most: a loaded CI host once lost the PIT to one, and the TSC's
 * frequency came from the ACPI PM timer instead.
 */
#define CAL_RETRIES 3
static uint64_t calibrate_median3(uint64_t (*once)(const void *arg), const void *arg)
{
	uint64_t got[3];
	unsigned int n = 0, retries = 0;

	while (n < 3) {
		uint64_t khz = once(arg);

		if (khz)
			got[n++] = khz;
		else if (!n || ++retries > CAL_RETRIES)
			return 0;
	}
	return median3(got[0], got[1], got[2]);
}

static uint64_t tsc_pit_calibrate(void)
{
	return calibrate_median3(tsc_pit_calibrate_once, NULL);
}

/* The ACPI PM timer: its port, and its 24- or 32-bit counter's mask. */
struct pm_timer {
	uint16_t port;
	uint32_t mask;
};

static uint64_t tsc_pm_calibrate_once(const void *arg)
{
	const struct pm_timer *pm = arg;
	const uint16_t port = pm->port;
	const uint32_t mask = pm->mask;
	const uint32_t ticks = ACPI_PM_TIMER_HZ / (1000 / PIT_CAL_MS);
	uint32_t p0 = inl(port) & mask, delta = 0;
	uint64_t t0 = rdtsc(), t1 = t0;

	while (delta < ticks) {
		delta = (inl(port) - p0) & mask;
		t1 = rdtsc();
		if (t1 - t0 > PIT_POLL_CYCLES_MAX)
			return 0;
	}
	return (t1 - t0) * ACPI_PM_TIMER_HZ / delta / 1000;
}

static uint64_t tsc_pm_calibrate(void)
{
	struct pm_timer pm;
	bool ext32;

	if (topology_pm_timer(&pm.port, &ext32))
		return 0;
	pm.mask = ext32 ? 0xffffffffu : 0xffffffu;
	return calibrate_median3(tsc_pm_calibrate_once, &pm);
}

/*
 * kvmclock: have KVM fill a pvclock area, read its scale, stop it again
 * (nothing else here uses the clock, and KVM must not write the area later).
 * TSC kHz = 10^6 * 2^32 / mul, shifted the other way by tsc_shift.
 */
static bool kvmclock_read(uint32_t *mul, int8_t *shift, uint8_t *flags)
{
	static struct pvclock_vcpu_time_info pv __attribute__((aligned(64)));
	uint32_t msr, version;

	if (cpu.kvm_features & KVM_FEATURE_CLOCKSOURCE2)
		msr = MSR_KVM_SYSTEM_TIME_NEW;
	else if (cpu.kvm_features & KVM_FEATURE_CLOCKSOURCE)
		msr = MSR_KVM_SYSTEM_TIME;
	else
		return false;
	if (wrmsr_safe(msr, (uint64_t)(uintptr_t)&pv | KVM_SYSTEM_TIME_ENABLE))
		return false;
	do {
		version = __atomic_load_n(&pv.version, __ATOMIC_ACQUIRE);
		*mul = pv.tsc_to_system_mul;
		*shift = pv.tsc_shift;
		*flags = pv.flags;
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while ((version & 1) || version != __atomic_load_n(&pv.version, __ATOMIC_RELAXED));
	(void)wrmsr_safe(msr, 0);
	return version && *mul;
}

static uint64_t tsc_kvmclock_khz(void)
{
	uint32_t mul;
	int8_t shift;
	uint8_t flags;
	uint64_t khz;

	if (!kvmclock_read(&mul, &shift, &flags))
		return 0;
	khz = (1000000ull << 32) / mul;
	return shift < 0 ? khz << -shift : khz >> shift;
}

/*
 * PVCLOCK_TSC_STABLE_BIT in kvmclock's flags: KVM sets it only while its
 * master clock is in use, i.e. while the host's TSCs are synchronized and
 * constant-rate (Linux arch/x86/kvm/x86.c, kvm_guest_time_update()). The
 * CPUID bit KVM_FEATURE_CLOCKSOURCE_STABLE_BIT says less: only that the
 * guest may believe this flag.
 */
bool tsc_kvm_stable(void)
{
	uint32_t mul;
	int8_t shift;
	uint8_t flags = 0;

	return cpu.kvm_base && kvmclock_read(&mul, &shift, &flags) &&
	       (flags & PVCLOCK_TSC_STABLE_BIT);
}

static uint64_t tsc_declared_khz(const char **source)
{
	struct cpuid_regs r;
	uint64_t hz;

	/* KVM answers virtual_tsc_khz * 1000 (hyperv.c kvm_hv_get_msr()). */
	if (cpu.hyperv && (cpu.hv_features_eax & HV_FEAT_FREQUENCY_MSRS) &&
	    !rdmsr_safe(HV_MSR_TSC_FREQUENCY, &hz) && hz) {
		*source = "Hyper-V TSC frequency MSR";
		return hz / 1000;
	}
	/*
	 * QEMU adds this leaf (vmware-cpuid-freq, kvm_arch_init_vcpu()) only
	 * when KVM's leaves sit at 0x40000000, so never beside Hyper-V's,
	 * and the TSC is stable and its frequency known.
	 */
	if (cpu.hypervisor && cpu.hv_max_leaf >= HV_TIMING_LEAF && !cpu.hyperv) {
		r = cpuid(HV_TIMING_LEAF, 0);
		if (r.eax) {
			*source = "hypervisor leaf 0x40000010";
			return r.eax;
		}
	}
	if (cpu.xen_base && cpu.xen_max_leaf >= cpu.xen_base + XEN_CPUID_TIME_OFFSET) {
		r = cpuid(cpu.xen_base + XEN_CPUID_TIME_OFFSET, 0);
		if (r.ecx) {
			*source = "Xen time leaf";
			return r.ecx;
		}
	}
	if (cpu.max_leaf >= 0x15) {
		r = cpuid(0x15, 0);
		if (r.eax && r.ebx && r.ecx) {
			*source = "CPUID 0x15";
			return (uint64_t)r.ecx * r.ebx / r.eax / 1000;
		}
	}
	if (cpu.kvm_base && (hz = tsc_kvmclock_khz())) {
		*source = "kvmclock";
		return hz;
	}
	return 0;
}

/* CPUID 0x16's base frequency: nominal, in MHz; the TSC's only on some CPUs. */
static uint64_t tsc_nominal_khz(void)
{
	return cpu.max_leaf >= CPUID_FREQ_LEAF ? (cpuid(CPUID_FREQ_LEAF, 0).eax & 0xffff) * 1000ull
					       : 0;
}

/* Nothing declared, nothing to calibrate against: say so, and how far to trust it. */
static void tsc_guess(void)
{
	tsc_freq_guessed = true;
	kprintf(
	    "tsc: nothing declares the frequency (Hyper-V MSR, leaf 0x40000010, Xen time leaf, CPUID 0x15, kvmclock, CPUID 0x16) and nothing calibrates it (no PIT channel 2 at port 0x61, no ACPI PM timer): assuming %u MHz, so every ns figure is unreliable and waits last longer than asked; cycles stand\n",
	    TSC_KHZ_GUESS / 1000);
}

void tsc_init(void)
{
	const char *src = NULL, *pit_source = "PIT calibration";
	uint64_t declared = tsc_declared_khz(&src), nominal;

	tsc_pit_khz = tsc_pit_calibrate();
	if (!tsc_pit_khz && (tsc_pit_khz = tsc_pm_calibrate()))
		pit_source = "ACPI PM timer calibration";
	if (declared) {
		tsc_khz = declared;
		tsc_source = src;
	} else if (tsc_pit_khz) {
		tsc_khz = tsc_pit_khz;
		tsc_source = pit_source;
	} else if ((nominal = tsc_nominal_khz())) {
		tsc_khz = nominal;
		tsc_source = "CPUID 0x16 (nominal base frequency; nothing to calibrate against)";
	} else {
		tsc_guess();
	}
	kprintf("tsc: %lu kHz from %s", tsc_khz, tsc_source);
	if (declared && tsc_pit_khz)
		kprintf(" (%s: %lu kHz)", pit_source, tsc_pit_khz);
	/* Not invariant: the trust warning tsc-unstable says what follows, once. */
	kprintf(", %s, %s\n", cpu.invariant_tsc ? "invariant" : "not invariant",
		cpu.rdtscp ? "RDTSCP" : "no RDTSCP (MFENCE;LFENCE;RDTSC ends timed regions)");
}

void tsc_delay_us(uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	while (!tsc_expired(end))
		cpu_relax();
}

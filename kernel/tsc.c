// SPDX-License-Identifier: GPL-2.0-only
/*
 * TSC frequency. A figure the platform declares is preferred, in this order:
 * the Hyper-V TSC frequency MSR (TLFS, HV_X64_MSR_TSC_FREQUENCY, when
 * CPUID 0x40000003 EAX[11] grants it), the hypervisor timing leaf 0x40000010
 * (EAX = TSC kHz; QEMU/KVM and VMware), CPUID 0x15 (SDM vol. 2A: crystal
 * clock x EBX/EAX). The PIT is always used to calibrate as well (channel 2
 * gated through port 0x61, 5 ms in mode 0, median of three), printed beside the declared
 * figure, and used alone when nothing is declared. Without a PIT (no
 * OUT2 edge within the bound, e.g. -machine pit=off) the ACPI PM timer from
 * the FADT calibrates instead (ACPI 6.5 4.8.3.3, 3.579545 MHz).
 */
#include "include/console.h"
#include "include/cpu.h"
#include "include/topology.h"
#include "include/tsc.h"
#include "lib/hv_abi.h"

#define PIT_HZ 1193182u
#define PIT_CAL_MS 5u	/* x3 runs; a 1 us read jitter is 0.02% */
#define PIT_CH2 0x42
#define PIT_CMD 0x43
#define PORT_61 0x61
#define  PORT_61_GATE2 0x01
#define  PORT_61_SPEAKER 0x02
#define  PORT_61_OUT2 0x20
#define PIT_POLL_CYCLES_MAX 500000000ull /* no PIT at all: give up */
#define HV_TIMING_LEAF 0x40000010u

uint64_t tsc_khz = TSC_KHZ_GUESS;
const char *tsc_source = "guess";
uint64_t tsc_pit_khz;

static uint64_t tsc_pit_calibrate_once(void)
{
	uint32_t latch = PIT_HZ / (1000 / PIT_CAL_MS);
	uint64_t t0, t1;

	outb(PORT_61, (inb(PORT_61) & ~PORT_61_SPEAKER) | PORT_61_GATE2);
	outb(PIT_CMD, 0xb0);	/* channel 2, lobyte/hibyte, mode 0, binary */
	outb(PIT_CH2, latch & 0xff);
	outb(PIT_CH2, latch >> 8);
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

static uint64_t tsc_pit_calibrate(void)
{
	/* A vCPU descheduled inside a run skews it either way (before t0:
	 * too low; in the poll loop: too high): the median of three runs
	 * discards one outlier of either kind. Stop at the first failure:
	 * a missing PIT costs one bounded wait, not three. */
	uint64_t a = tsc_pit_calibrate_once(), b = a ? tsc_pit_calibrate_once() : 0;
	uint64_t c = b ? tsc_pit_calibrate_once() : 0;

	return median3(a, b, c);
}

static uint64_t tsc_pm_calibrate_once(uint16_t port, uint32_t mask)
{
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
	uint32_t mask;
	uint16_t port;
	bool ext32;

	if (topology_pm_timer(&port, &ext32))
		return 0;
	mask = ext32 ? 0xffffffffu : 0xffffffu;
	return median3(tsc_pm_calibrate_once(port, mask), tsc_pm_calibrate_once(port, mask),
		       tsc_pm_calibrate_once(port, mask));
}

static uint64_t tsc_declared_khz(const char **source)
{
	struct cpuid_regs r;
	uint64_t hz;

	if (cpu.hyperv && (cpu.hv_features_eax & HV_FEAT_FREQUENCY_MSRS) &&
	    !rdmsr_safe(HV_MSR_TSC_FREQUENCY, &hz) && hz) {
		*source = "Hyper-V TSC frequency MSR";
		return hz / 1000;
	}
	if (cpu.hypervisor && cpu.hv_max_leaf >= HV_TIMING_LEAF && !cpu.hyperv) {
		r = cpuid(HV_TIMING_LEAF, 0);
		if (r.eax) {
			*source = "hypervisor leaf 0x40000010";
			return r.eax;
		}
	}
	if (cpu.max_leaf >= 0x15) {
		r = cpuid(0x15, 0);
		if (r.eax && r.ebx && r.ecx) {
			*source = "CPUID 0x15";
			return (uint64_t)r.ecx * r.ebx / r.eax / 1000;
		}
	}
	return 0;
}

void tsc_init(void)
{
	const char *src = NULL, *pit_source = "PIT calibration";
	uint64_t declared = tsc_declared_khz(&src);

	tsc_pit_khz = tsc_pit_calibrate();
	if (!tsc_pit_khz && (tsc_pit_khz = tsc_pm_calibrate()))
		pit_source = "ACPI PM timer calibration";
	if (declared) {
		tsc_khz = declared;
		tsc_source = src;
	} else if (tsc_pit_khz) {
		tsc_khz = tsc_pit_khz;
		tsc_source = pit_source;
	} else {
		kprintf("ipibench: warning: no TSC frequency source (no PIT, no ACPI PM timer); assuming %u kHz\n",
			TSC_KHZ_GUESS);
	}
	kprintf("tsc: %lu kHz from %s", tsc_khz, tsc_source);
	if (declared && tsc_pit_khz)
		kprintf(" (%s: %lu kHz)", pit_source, tsc_pit_khz);
	kprintf(", %s, %s\n", cpu.invariant_tsc ? "invariant" : "NOT invariant (figures may drift)",
		cpu.rdtscp ? "RDTSCP" : "no RDTSCP (MFENCE;LFENCE;RDTSC ends timed regions)");
}

void tsc_delay_us(uint64_t us)
{
	uint64_t end = tsc_deadline_us(us);

	while (!tsc_expired(end))
		cpu_relax();
}

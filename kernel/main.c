// SPDX-License-Identifier: GPL-2.0-only
/*
 * The BSP's path from the multiboot or PVH entry to the final status line:
 * console, per-CPU data and IDT, command line, CPU identification, local
 * APIC, TSC, CPU discovery and AP bring-up, then the plan.
 */
#include "include/boot.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/lava.h"
#include "include/lapic.h"
#include "include/mm.h"
#include "include/options.h"
#include "include/percpu.h"
#include "include/pic.h"
#include "include/pit.h"
#include "include/smp.h"
#include "include/status.h"
#include "include/topology.h"
#include "include/tsc.h"
#include "include/x86.h"
#include "kernel/plan.h"
#include "kernel/trap.h"

#ifndef IPIBENCH_VERSION
#define IPIBENCH_VERSION "unknown"
#endif

const char ipibench_version[] = IPIBENCH_VERSION;

static void boot_print_cpu(void)
{
	kprintf("cpu: %s family 0x%x model 0x%x stepping %u \"%s\"\n", cpu.vendor, cpu.family,
		cpu.model, cpu.stepping, cpu.brand);
	kprintf("cpu: x2apic %s, tsc-deadline %s, hypervisor %s%s%s\n", cpu.x2apic ? "yes" : "no",
		cpu.tsc_deadline ? "yes" : "no", cpu.hypervisor ? "\"" : "none",
		cpu.hypervisor ? cpu.hv_vendor : "", cpu.hypervisor ? "\"" : "");
	/* Under viridian Xen's own leaves move past Hyper-V's: say where. */
	if (cpu.xen_base)
		kprintf("cpu: Xen %u.%u, its leaves at 0x%x\n", cpu.xen_version >> 16,
			cpu.xen_version & 0xffff, cpu.xen_base);
}

static void boot_bsp_lapic(struct percpu *bsp)
{
	if (!cpu.apic) {
		kprintf("ipibench: CPUID.1:EDX.APIC[bit 9] is 0: no local APIC, nothing to do\n");
		status_exit(STATUS_ERROR);
	}
	lapic_mode = lapic_mode_read();
	if (lapic_mode == LAPIC_DISABLED) {
		wrmsr(MSR_IA32_APIC_BASE, rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EN);
		lapic_mode = LAPIC_XAPIC;
	}
	lapic_x2apic_entered = lapic_mode == LAPIC_X2APIC; /* the firmware's doing */
	lapic_mmio = (volatile uint32_t *)(uintptr_t)(rdmsr(MSR_IA32_APIC_BASE) & ~0xfffull);
	lapic_setup_local();
	bsp->apic_id = lapic_id();
}

/*
 * xAPIC destinations are 8 bits and 0xff is broadcast (SDM 11.6.2.1): an AP
 * with a larger APIC ID can only be started from x2APIC mode (SDM 11.12.10).
 * The APs then follow the BSP's mode (kernel/smp.c).
 */
static void boot_x2apic_if_needed(unsigned int listed)
{
	uint32_t max_id = 0;

	for (unsigned int i = 0; i < listed; i++)
		max_id = topo_cpus[i].apic_id > max_id ? topo_cpus[i].apic_id : max_id;
	if (max_id < 0xff || lapic_mode == LAPIC_X2APIC)
		return;
	if (!cpu.x2apic) {
		kprintf("smp: APIC ID %u needs x2APIC, which this CPU lacks: such CPUs stay down\n",
			max_id);
		return;
	}
	wrmsr(MSR_IA32_APIC_BASE, rdmsr(MSR_IA32_APIC_BASE) | APIC_BASE_EN | APIC_BASE_EXTD);
	lapic_mode = LAPIC_X2APIC;
	lapic_x2apic_entered = true;
	lapic_setup_local();
	kprintf("smp: APIC IDs up to %u: bringing CPUs up in x2APIC mode\n", max_id);
}

/* Returns how many CPUs the firmware listed (1 without a list). */
static unsigned int boot_smp(void)
{
	struct smp_options o = {
		.ap_timeout_ms = options.ap_timeout_ms,
		.init_delay_us = options.init_delay_us,
	};
	unsigned int listed;

	/* SDM 9.4.4.1 waits 10 ms after INIT. A hypervisor handles INIT
	 * synchronously, so Linux (smp_quirk_init_udelay) skips the wait on
	 * modern CPUs; we skip it only when CPUID says a hypervisor is there. */
	if (o.init_delay_us == INIT_DELAY_AUTO)
		o.init_delay_us = cpu.hypervisor ? 0 : 10000;

	if (topology_discover()) {
		kprintf("smp: no CPU list from ACPI: running on the BSP alone\n");
		ncpus = 1;
		return 1;
	}
	listed = (unsigned int)topo_info.ncpus;
	boot_x2apic_if_needed(listed);
	if (debug_on(DEBUG_SKIP_SIPI))
		o.skip_sipi_cpu = debug_cpu_pick(listed);
	if (debug_on(DEBUG_SKIP_SIPI) && !o.skip_sipi_cpu)
		kprintf("debug: skip-sipi needs an AP (CPU 0 is the BSP): nothing skipped\n");
	smp_start_aps(topo_cpus, listed, &o);
	for (unsigned int c = 0; c < ncpus; c++)
		kprintf("smp: CPU %u APIC ID %u online%s\n", c, percpu_of[c]->apic_id,
			c == 0 ? " (BSP)" : "");
	kprintf("smp: %u of %u CPUs online\n", ncpus, listed);
	if (ncpus < listed)
		status_report(STATUS_ERROR);
	return listed;
}

/* magic, info: EAX and EBX at the multiboot or PVH entry (include/boot.h). */
void kmain(uint32_t magic, uint32_t info_phys);
void kmain(uint32_t magic, uint32_t info_phys)
{
	struct percpu *bsp;

	serial_init();
	kprintf("\nipibench %s\n", ipibench_version);
	if (boot_take(magic, info_phys))
		status_exit(STATUS_ERROR);
	mm_init();
	idt_init();
	bsp = percpu_alloc(0, 0);
	percpu_load(bsp);
	idt_load();
	pic_disable();
	kprintf("loader: %s\n", boot_loader_name[0] ? boot_loader_name : "(unnamed)");
	kprintf("cmdline: %s\n", boot_cmdline);
	if (options_parse(boot_cmdline))
		status_exit(STATUS_BADCMD);
	console_use_virtio();
	lava_begin();
	if (options.help) {
		options_print_help();
		status_exit(STATUS_SUCCESS);
	}
	cpu_identify();
	boot_print_cpu();
	boot_bsp_lapic(bsp);
	irq_enable();
	tsc_init();
	pit_stop_tick();	/* after calibration: nothing here uses the PIT again */
	plan_check_cpu_keys(boot_smp());
	topology_print_cpus();
	tsc_measure_skew();
	plan_run();
	status_finish();
}

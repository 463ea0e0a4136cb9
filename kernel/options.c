// SPDX-License-Identifier: GPL-2.0-only
/*
 * The command line: every unit's option group (include/options.h) parsed
 * at once by lib/cmdline, which also writes the error messages, so a key is
 * unknown, duplicate or malformed in one place whoever owns it. This file
 * owns only the kernel's own keys.
 */
#include "include/boot.h"
#include "include/compiler.h"
#include "include/console.h"
#include "include/options.h"
#include "include/status.h"
#include "lib/cmdline.h"
#include "lib/error.h"

extern const struct option_group *const __option_groups_start[], *const __option_groups_end[];

struct options options = {
	.plan = PLAN_DEFAULT,
	.ap_timeout_ms = 2000,
	.watch_floor_ms = 4000,
	.init_delay_us = INIT_DELAY_AUTO,
	.backends = ~0ull,
	.debug_cpu = DEBUG_CPU_LAST,
};

static const char *const plan_names[] = { "default", "boot", "check", "bench", NULL };
static const char *const debug_names[] = { "fault-bsp", "fault-ap", "skip-sipi", "swallow-ipi",
					    "double-ipi", "corrupt-vpset", "fault-ap-bench",
					    "expire-deadline", "triple-fault", "extra-exit", "no-acpi",
					    "stall", "late-wake", "slow-eoi", "nmi-as-fixed",
					    "withhold-one-way", "nested-nmi", "no-halt-mark", "stale-tlb", NULL };
_Static_assert(ARRAY_SIZE(debug_names) == DEBUG_COUNT + 1, "one name per debug key");
static const char *const skip_names[] = { "tpr-hold", "self-tpr", "none", NULL };
static const char *const hv_os_id_names[] = { "open-source", "windows", NULL };
static const char *const console_names[] = { "serial", "virtio", NULL };
_Static_assert(ARRAY_SIZE(skip_names) == SKIP_COUNT + 1, "one name per skip key");

/* --- the kernel's keys: plan first, the rest after every other group ------------------------ */

static const struct opt_spec plan_spec[] = {
	{ "plan", OPT_ENUM, 0, 0, plan_names,
	  "what to run: boot only, the correctness suite, benchmarks, or both (default: each group of backends checked, then measured, xAPIC-mode ones first)" },
};

static void plan_apply(const struct opt_value *v)
{
	if (v[0].set)
		options.plan = (enum plan)v[0].u;
}

static const struct option_group plan_group = { 0, plan_spec, ARRAY_SIZE(plan_spec), NULL,
						plan_apply };
OPTION_GROUP(plan_group);

enum { K_AP_TIMEOUT, K_INIT_DELAY, K_WATCH_FLOOR, K_DEBUG, K_DEBUG_CPU, K_SKIP, K_HV_OS_ID, K_CONSOLE, K_LAVA, K_HELP,
       K_COUNT };

static const struct opt_spec kernel_specs[K_COUNT] = {
	[K_AP_TIMEOUT] = { "ap_timeout", OPT_UINT, 1, 60000, NULL,
			   "ms an AP may take to come up before it is left out (default 2000)" },
	[K_INIT_DELAY] = { "init_delay", OPT_UINT, 0, 100000, NULL,
			   "us between INIT and START-UP (default: 10000, the SDM's 10 ms, on bare metal; 0 under a hypervisor, as Linux does)" },
	[K_WATCH_FLOOR] = { "watch_floor", OPT_UINT, 100, 60000, NULL,
			    "ms under which no stall bound of the watchdog goes (default 4000: a loaded host must not turn a short deadline= into a false ERROR; a test that plants a stall lowers it)" },
	[K_DEBUG] = { "debug", OPT_LIST, 0, 0, debug_names, "fault injection (tests only)" },
	[K_DEBUG_CPU] = { "debug_cpu", OPT_UINT, 0, 1023, NULL,
			  "CPU number that fault injection targets, 0 the BSP (default: the last)" },
	[K_SKIP] = { "skip", OPT_LIST, 0, 0, skip_names,
		     "checks to SKIP where the platform under test fails them for a reason outside the hypervisor (default: none; skip=none replaces a preset's; docs/xen.md)" },
	[K_HV_OS_ID] = { "hv_os_id", OPT_ENUM, 0, 0, hv_os_id_names,
			 "the Hyper-V guest OS ID's format: open-source (the TLFS's for a non-Microsoft guest, the default) or windows (Xen's viridian recommends hypercalls to Windows IDs only: docs/xen.md)" },
	[K_CONSOLE] = { "console", OPT_ENUM, 0, 0, console_names,
			"serial (COM1, the default) or virtio: each print after the command line whole to a virtio console, one exit a print (the KVM lane gives it)" },
	[K_LAVA] = { "lava", OPT_BOOL, 0, 0, NULL,
		     "also print a LAVA monitor line per check and headline figure (docs/lab.md)" },
	[K_HELP] = { "help", OPT_BOOL, 0, 0, NULL, "print this list and stop" },
};

static void kernel_apply(const struct opt_value *v)
{
	if (v[K_AP_TIMEOUT].set)
		options.ap_timeout_ms = (uint32_t)v[K_AP_TIMEOUT].u;
	if (v[K_INIT_DELAY].set)
		options.init_delay_us = (uint32_t)v[K_INIT_DELAY].u;
	if (v[K_WATCH_FLOOR].set)
		options.watch_floor_ms = (uint32_t)v[K_WATCH_FLOOR].u;
	if (v[K_DEBUG].set)
		options.debug = v[K_DEBUG].u;
	if (v[K_DEBUG_CPU].set)
		options.debug_cpu = (uint32_t)v[K_DEBUG_CPU].u;
	if (v[K_SKIP].set)
		options.skip = v[K_SKIP].u;
	if (v[K_HV_OS_ID].set)
		options.hv_os_id = (enum hv_os_id)v[K_HV_OS_ID].u;
	if (v[K_CONSOLE].set)
		options.console = (enum console_kind)v[K_CONSOLE].u;
	options.lava = v[K_LAVA].set && v[K_LAVA].u;
	options.help = v[K_HELP].set && v[K_HELP].u;
}

static const struct option_group kernel_group = { 90, kernel_specs, K_COUNT, NULL, kernel_apply };
OPTION_GROUP(kernel_group);

/* --- every group's keys in one table ---------------------------------------------------------- */

static struct opt_spec all_specs[OPTIONS_MAX];
static const struct option_group *groups[16];
static unsigned int ngroups, nspecs;

/* The groups in `order`, their specs concatenated; once. */
static void options_collect(void)
{
	/* Linker symbols: as addresses, not as pointers into one C object. */
	unsigned int n = (unsigned int)(((uintptr_t)__option_groups_end -
					 (uintptr_t)__option_groups_start) /
					sizeof(const struct option_group *));

	if (ngroups)
		return;
	if (n > ARRAY_SIZE(groups))
		panic("%u option groups, room for %zu", n, ARRAY_SIZE(groups));
	for (unsigned int i = 0; i < n; i++) {
		const struct option_group *g = __option_groups_start[i];
		unsigned int j = ngroups++;

		while (j > 0 && groups[j - 1]->order > g->order) {
			groups[j] = groups[j - 1];
			j--;
		}
		groups[j] = g;
	}
	for (unsigned int i = 0; i < ngroups; i++) {
		if (groups[i]->prepare)
			groups[i]->prepare();
		if (nspecs + groups[i]->n > OPTIONS_MAX)
			panic("more than %u command-line keys", OPTIONS_MAX);
		for (unsigned int k = 0; k < groups[i]->n; k++)
			all_specs[nspecs++] = groups[i]->specs[k];
	}
}

int options_parse(const char *line)
{
	struct opt_value v[OPTIONS_MAX] = { 0 };
	char err[256];
	unsigned int at = 0;

	options_collect();
	if ((boot_cmdline_image_first ? cmdline_parse : cmdline_parse_args)(line, all_specs, nspecs,
									   v, err, sizeof(err)) < 0) {
		kprintf("ipibench: bad command line: %s\n", err);
		return -E_INVAL;
	}
	for (unsigned int i = 0; i < ngroups; i++) {
		groups[i]->apply(&v[at]);
		at += groups[i]->n;
	}
	/* Both arm the idle loop's one fault slot (kernel/smp.c): the second would undo the first. */
	if (debug_on(DEBUG_LATE_WAKE) && debug_on(DEBUG_NO_HALT_MARK)) {
		kprintf(
		    "ipibench: bad command line: debug=late-wake and debug=no-halt-mark plant their faults in the same place: give one\n");
		return -E_INVAL;
	}
	return 0;
}

void options_print_help(void)
{
	static char buf[16384];

	options_collect();
	/* A list cut short would read as whole: its end is checked, not assumed. */
	if (cmdline_help(buf, sizeof(buf), all_specs, nspecs) < 0) {
		kprintf("ipibench: help: the key list outgrew its %lu-byte buffer (kernel/options.c)\n",
			(unsigned long)sizeof(buf));
		status_exit(STATUS_ERROR);
	}
	kprintf("ipibench: command-line keys (key=value, separated by spaces):\n%s", buf);
}

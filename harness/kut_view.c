// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kvm-unit-tests view: after the benchmarks, one table of the figures
 * that x86/vmexit.c also reports (lib/kut_names.h), under its names, one
 * column per backend, in cycles per iteration. vmexit.c divides a whole
 * loop's cycles by its iterations, so the mean of our samples is the
 * comparable figure (the records hold the median and the rest).
 * vmexit.c's ipi times on_cpu(1, nop, 0) (lib/x86/smp.c): a Fixed,
 * physical ICR write to CPU 1, idle in HLT, which takes the interrupt,
 * runs the function, sets a done flag and EOIs while the sender spins on
 * the flag. That is a round trip to a halted vCPU, its wake included
 * unless halt polling catches it. Published ipi figures, in cycles: the
 * single-target IPI fastpath, which handles x2APIC ICR-write exits before
 * interrupts are re-enabled, saved ">200 cycles" on Skylake server
 * (1e9e2622a149); on SKX 4238 -> 3543 (-16.4%), the whole series 3293
 * (-22.3%) (a9ab13ff6e84, April 2020), then ~0.67% more (d5361678e63c).
 * IPI virtualization (d588bb9be1da), 2 vCPUs: xAPIC 6059 -> 4713.1
 * (-22.2%), x2APIC 4337.85 -> 3644.8 (-16.0%).
 *
 * A table on the console, and one "kut" record per cell for the host
 * tools: nothing is measured for the view alone, each cell is the mean of
 * a result record; ipi_halt's is single-halt's vmexit-gap pass, which
 * times vmexit.c's loop (round trip, then a 2000-cycle spin, inside the
 * timing). The first result per name and backend counts (matrix=1 adds
 * other pairs; vmexit.c's ipi is CPU 0 to CPU 1, our default pair). ipi
 * needs halt_gap=0. On xAPIC the self_ipi_* cells are bench/self.c's icr2-*
 * passes, which write ICR2 and ICR as vmexit.c does; the notes under the
 * table say what else differs, the RDTSC accumulators vmexit.c keeps inside
 * its loops among it (kvm-unit-tests x86/vmexit.c: tsc_ipi, tsc_eoi).
 */
#include "harness/kut_view.h"
#include "include/console.h"
#include "include/cpu.h"
#include "lib/kut_names.h"
#include "lib/record.h"

#define VIEW_BACKENDS 8

static const char *backend[VIEW_BACKENDS];
static uint64_t mean[KUT_NAMES][VIEW_BACKENDS];
static bool measured[KUT_NAMES][VIEW_BACKENDS];
static unsigned int nbackends;
/* The pair behind the ipi / ipi_halt row (vmexit.c always uses CPU 0 -> CPU 1). */
static unsigned int pair_sender, pair_target;
static bool pair_known, pair_timer_paused;
static bool fenced_seen;	/* a column of an x2APIC backend whose ICR writes are fenced */
static bool unfenced_seen;	/* one whose are not (AMD, Hygon: Linux's rule) */
static bool self_seen;		/* a self_ipi_* or x2apic_self_ipi_* cell */
static bool icr2_seen;		/* a self_ipi_* cell of an xAPIC backend: ICR2 and ICR */

static int backend_column(const char *name)
{
	for (unsigned int c = 0; c < nbackends; c++) {
		if (__builtin_strcmp(backend[c], name) == 0)
			return (int)c;
	}
	if (nbackends == VIEW_BACKENDS)
		return -1;
	backend[nbackends] = name;
	return (int)nbackends++;
}

void kut_view_note(const struct bench_run *r, const char *metric, uint64_t mean_cycles)
{
	int row, col;

	if (!r->ops || ipi_is_nmi(r->ops))	/* vmexit.c's IPIs are all Fixed */
		return;
	row = kut_index(r->b->name, metric, r->variant, r->ops->flags, bench_params.halt_gap_us);
	if (row < 0)
		return;
	col = backend_column(r->ops->name);
	if (row < KUT_NAMES - 2)
		self_seen = true;
	if (row < KUT_NAMES - 2 && r->ops->mode == LAPIC_XAPIC)
		icr2_seen = true;
	if (r->ops->flags & IPI_F_FENCE)
		fenced_seen = true;
	else if (r->ops->mode == LAPIC_X2APIC)
		unfenced_seen = true;
	if (row >= KUT_NAMES - 2 && !pair_known) {	/* ipi, ipi_halt: the last two names */
		pair_sender = r->sender;
		pair_target = r->target;
		pair_known = true;
		pair_timer_paused = r->target_timer && r->target_timer[0] == 'p';
	}
	if (col >= 0 && !measured[row][col]) {
		mean[row][col] = mean_cycles;
		measured[row][col] = true;
	}
}

static bool row_measured(int row)
{
	for (unsigned int c = 0; c < nbackends; c++) {
		if (measured[row][c])
			return true;
	}
	return false;
}

/* Where a row is not quite vmexit.c's figure, say how under the table. */
static void kut_view_notes(void)
{
	bool halted = row_measured(KUT_NAMES - 1);

	if (self_seen)
		kprintf(
		    "note: the self rows here end when the handler has run (one poll of its count); vmexit.c's self_ipi_* rows only test x != 1 afterwards, and its x2apic_self_ipi_* rows test nothing, so a delivery that lags the shape is in our figure and not in theirs\n");
	if (icr2_seen)
		kprintf(
		    "note: the xAPIC self_ipi_* cells are the icr2-* passes, which poll delivery status and write ICR2, then ICR, as vmexit.c's apic_icr_write() does; the backend's own self send (variants sti-nop ...) writes the ICR alone and has no row\n");
	if (fenced_seen)
		kprintf(
		    "note: on x2APIC every ICR write here, the self_ipi_* shorthand rows' included, follows MFENCE;LFENCE (SDM 11.12.3; Linux's rule for vendor %.12s), where vmexit.c's apic_icr_write() has an MFENCE alone; the x2apic_self_ipi_* rows are unfenced, as there\n",
		    cpu.vendor);
	if (unfenced_seen)
		kprintf(
		    "note: on x2APIC the ICR writes here are unfenced, as Linux sends them on AMD and Hygon (vendor %.12s), where vmexit.c's apic_icr_write() puts an MFENCE before each: its self_ipi_* rows hold one MFENCE more than ours\n",
		    cpu.vendor);
	if (self_seen || row_measured(KUT_NAMES - 2))
		kprintf(
		    "note: vmexit.c times its loops with RDTSC accumulators inside them, which its figures hold and ours do not: tsc_ipi, an RDTSC pair and an add to a volatile around each self IPI send (apic_self_ipi, x2apic_self_ipi) and each on_cpu() of ipi; tsc_eoi, an RDTSC pair and an add around the EOI in its self IPI handler (every self row); ipi_halt has neither\n");
	if (!pair_known || !(halted || row_measured(KUT_NAMES - 2)))
		return;
	kprintf(
	    "note: %s here is CPU %u -> CPU %u (vmexit.c: CPU 0 -> CPU 1)%s\n",
	    halted ? "ipi_halt" : "ipi", pair_sender, pair_target,
	    halted
		? "; as in vmexit.c, each iteration is the round trip and a 2000-cycle spin inside the timing (single-halt's vmexit-gap pass)"
		: "");
	if (pair_timer_paused)
		kprintf(
		    "note: its target's watchdog tick was paused while it was measured, as vmexit.c's idle APs have no timer armed\n");
	else
		kprintf(
		    "note: its target's watchdog tick stayed armed (with two CPUs nobody else would watch the sender), where vmexit.c's idle APs have no timer: on Intel with the VMX preemption timer each wake from HLT then switches the APIC timer between its hardware and software forms twice\n");
}

/* The same cells as records, so that results.json, compare and report have them. */
static void kut_view_records(void)
{
	static char line[RECORD_MAX];

	for (int row = 0; row < KUT_NAMES; row++) {
		for (unsigned int c = 0; c < nbackends; c++) {
			if (measured[row][c] &&
			    record_kut(line, sizeof(line), kut_names[row], backend[c],
				       mean[row][c]) >= 0)
				kprintf("%s\n", line);
		}
	}
}

void kut_view_print(void)
{
	if (!nbackends)
		return;
	kprintf("view: kvm-unit-tests x86/vmexit.c names, cycles per iteration (mean)\n");
	kprintf("%-28s", "test");
	for (unsigned int c = 0; c < nbackends; c++)
		kprintf(" %14s", backend[c]);
	kprintf("\n");
	for (int row = 0; row < KUT_NAMES; row++) {
		if (!row_measured(row))
			continue;
		kprintf("%-28s", kut_names[row]);
		for (unsigned int c = 0; c < nbackends; c++) {
			if (measured[row][c])
				kprintf(" %14lu", mean[row][c]);
			else
				kprintf(" %14s", "-");
		}
		kprintf("\n");
	}
	kut_view_notes();
	kut_view_records();
}

/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Which ipibench figure kvm-unit-tests' x86/vmexit.c reports under which
 * name, so its users can set our numbers beside theirs:
 *
 *   self_ipi_<shape>          self IPI through the ICR self shorthand as
 *                             vmexit.c's apic_icr_write() sends it: one
 *                             WRMSR in x2APIC mode (variants icr-*), the
 *                             ICR2 and then the ICR in xAPIC mode (icr2-*)
 *   x2apic_self_ipi_<shape>   self IPI through the x2APIC SELF IPI MSR
 *   ipi                       round trip to CPU 1, idle in HLT, sent again
 *                             at once (single-halt with halt_gap=0)
 *   ipi_halt                  the same, each iteration followed by a
 *                             2000-cycle spin inside the timing, as
 *                             vmexit.c does (single-halt's vmexit-gap pass)
 *
 * with <shape> one of sti_nop, sti_hlt, tpr, tpr_sti_nop, tpr_sti_hlt (TPR
 * through CR8, as there). Hypercall backends have no counterpart: their
 * sends, the self ones included, are not APIC writes.
 */
#ifndef LIB_KUT_NAMES_H
#define LIB_KUT_NAMES_H

#include <stdint.h>

/* The rows of the view, in kvm-unit-tests' order. */
#define KUT_NAMES 12
extern const char *const kut_names[KUT_NAMES];

/*
 * The kut_names[] index of a result (bench, metric and variant as in its
 * record, flags the backend's IPI_F_* bits, halt_gap_us the run's halt_gap=),
 * or -1 when vmexit.c has no such test.
 */
int kut_index(const char *bench, const char *metric, const char *variant, uint32_t flags,
	      uint32_t halt_gap_us);

#endif

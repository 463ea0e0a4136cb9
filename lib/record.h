/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The result records: one self-describing JSON object per line (schema in
 * docs/results.md) and the human table row beside it. Formatting lives here,
 * pure and host-tested, so the guest and the host tools agree on one shape.
 */
#ifndef LIB_RECORD_H
#define LIB_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "lib/stats.h"

#define RECORD_SCHEMA 1
#define RECORD_MAX 4096	/* bytes of one record line, histogram included */

/* One measured quantity of one benchmark on one backend. */
struct result {
	const char *bench;	  /* registry name: "single", "broadcast", ... */
	const char *metric;	  /* what one sample is: "round-trip", "send", ... */
	const char *variant;	  /* shape within the benchmark ("sti-hlt", "set"), or NULL */
	const char *backend;	  /* "x2apic", ... or "none" */
	const char *flags;	  /* backend delivery semantics, "dest=physical wait=never ..." */
	const char *target_state; /* "spin", "halt", "self" or "none" */
	uint32_t sender;	  /* CPU number */
	const char *targets;	  /* CPU numbers as a set: "1", "1-7", "none" */
	uint32_t ntargets;
	uint64_t iterations;	  /* measured iterations (after warm-up) */
	uint64_t invalid;	  /* of those, the ones whose sample was invalid (not summarised) */
	uint32_t mark;		  /* phase marker of the sampling (markers=1), 0: none */
	uint32_t host_read;	  /* host read around the sampling (host_stats=1), 0: none */
	const char *host_read_state; /* with host_read: "answered", "unanswered", "no-port" */
	const struct stats *st;	  /* cycles; NULL for a SKIP or FAILURE without samples */
	const struct histo *histo; /* may be NULL */
	uint64_t tsc_khz;
	uint64_t dryrun_cycles;	  /* median cost of the same loop without the operation */
	const char *status;	  /* "SUCCESS", "SKIP", "ERROR", "FAILURE" */
	const char *reason;	  /* why, for anything but SUCCESS; may be NULL */
	const char *untrusted;	  /* ids of lib/trust.h warnings that touch it, blank-separated; NULL: none */
	/*
	 * Some CPU of this boot had been in x2APIC mode before this was
	 * measured. On AMD AVIC without x2AVIC, KVM (Linux 6.3+, commit
	 * 2008fab34530) then traps every xAPIC access for the VM's lifetime.
	 */
	bool after_x2apic;
	/* Halted targets (late wakes, bench_late_wakes()): present when has_late. */
	bool has_late;
	uint64_t late_count, late_bound, late_max; /* wakes over late_bound cycles, the slowest */
	uint64_t tick_iters, late_ticks; /* iterations with a target tick; of those, over the bound */
	uint64_t rehalt_timeouts; /* iterations whose wait for the target's re-halt ran out */
};

/* One JSON line (no newline); length, or -E_NOSPC / -E_INVAL (buf = ""). */
int record_result(char *buf, size_t cap, const struct result *r);

/*
 * The view of Yury Norov's ipi_benchmark module (lkml, 2017-12-19): five
 * tests by their names there, each as total ns over a fixed loop, plus the
 * summed delivery time (send to handler entry) where the test records it.
 */
struct norov {
	const char *test;	/* "Dry-run", "Self-IPI", "Normal IPI", ... */
	const char *backend;
	uint64_t iterations;
	uint64_t delivery_ns;	/* 0 where delivery_note says why it is not reported */
	uint64_t total_ns;
	const char *status;	/* "SUCCESS" or "FAILURE" */
	const char *delivery_note; /* NULL when delivery_ns is a measured figure */
	bool after_x2apic;	/* as in struct result */
	const char *ack;	/* the handlers' order: "after-eoi" (Linux's) or "count-before-eoi" */
};

int record_norov(char *buf, size_t cap, const struct norov *n);

/*
 * One cell of the kvm-unit-tests view ("record": "kut"): a figure
 * x86/vmexit.c also reports, under its name, for one backend, as the mean
 * cycles per iteration of the result it comes from.
 */
int record_kut(char *buf, size_t cap, const char *name, const char *backend,
	       uint64_t mean_cycles);

/*
 * One unit of the benchmark walk opens ("record": "phase"): index of of,
 * the backend ("none", or one whose probe refused it) and the benchmark
 * ("all" for a refused backend), so the host can show progress.
 */
int record_phase(char *buf, size_t cap, unsigned int index, unsigned int of,
		 const char *backend, const char *bench);

/* The correctness suite's totals ("record": "check"). */
int record_check(char *buf, size_t cap, const char *backends, unsigned int passed,
		 unsigned int failed, unsigned int skipped);

/* Human table: a header line and one row per result (no newlines). */
int record_table_header(char *buf, size_t cap);
int record_table_row(char *buf, size_t cap, const struct result *r);

#endif

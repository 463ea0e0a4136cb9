// SPDX-License-Identifier: GPL-2.0-only
/*
 * Result records: the JSON line of docs/results.md ("record": "result")
 * and the matching human table row. Statistics go out in cycles and, when
 * the TSC frequency is known, in nanoseconds; the histogram lists only its
 * non-empty buckets as [low, high, count].
 */
#include "lib/error.h"
#include "lib/fmt.h"
#include "lib/json.h"
#include "lib/record.h"

static const char *or_none(const char *s)
{
	return s ? s : "none";
}

static void record_stats(struct json *j, const char *key, const struct stats *st,
			 uint64_t khz)
{
	uint64_t (*conv)(uint64_t, uint64_t) = stats_cycles_to_ns;
	const bool ns = key[0] == 'n';

	json_obj_begin(j, key);
	json_u64(j, "min", ns ? conv(st->min, khz) : st->min);
	json_u64(j, "p50", ns ? conv(st->p50, khz) : st->p50);
	json_u64(j, "mean", ns ? conv(st->mean, khz) : st->mean);
	json_u64(j, "p90", ns ? conv(st->p90, khz) : st->p90);
	json_u64(j, "p99", ns ? conv(st->p99, khz) : st->p99);
	json_u64(j, "max", ns ? conv(st->max, khz) : st->max);
	json_u64(j, "stddev", ns ? conv(st->stddev, khz) : st->stddev);
	json_obj_end(j);
}

static void record_histo(struct json *j, const struct histo *h)
{
	json_arr_begin(j, "histogram");
	for (unsigned int b = 0; b < HISTO_BUCKETS; b++) {
		if (!h->count[b])
			continue;
		json_arr_begin(j, NULL);
		json_u64(j, NULL, histo_bucket_low(b));
		json_u64(j, NULL, histo_bucket_high(b));
		json_u64(j, NULL, h->count[b]);
		json_arr_end(j);
	}
	json_arr_end(j);
}

/* key: [the blank-separated words of s]. */
static void record_words(struct json *j, const char *key, const char *s)
{
	json_arr_begin(j, key);
	while (*s) {
		size_t n = 0;

		while (s[n] && s[n] != ' ')
			n++;
		if (n)
			json_strn(j, NULL, s, n);
		s += n + (s[n] == ' ');
	}
	json_arr_end(j);
}

int record_result(char *buf, size_t cap, const struct result *r)
{
	struct json j;

	json_init(&j, buf, cap);
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "result");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "bench", r->bench);
	json_str(&j, "metric", r->metric);
	json_str(&j, "variant", or_none(r->variant));
	json_str(&j, "backend", or_none(r->backend));
	json_str(&j, "flags", r->flags ? r->flags : "");
	json_str(&j, "target_state", or_none(r->target_state));
	json_u64(&j, "sender", r->sender);
	json_str(&j, "targets", or_none(r->targets));
	json_u64(&j, "ntargets", r->ntargets);
	json_bool(&j, "after_x2apic", r->after_x2apic);
	json_str(&j, "status", r->status);
	if (r->reason)
		json_str(&j, "reason", r->reason);
	json_u64(&j, "iterations", r->iterations);
	if (r->mark)
		json_u64(&j, "mark", r->mark);
	if (r->host_read) {
		json_u64(&j, "host_read", r->host_read);
		json_str(&j, "host_read_state", or_none(r->host_read_state));
	}
	if (r->st && r->st->n) {
		json_u64(&j, "samples", r->st->n);
		json_u64(&j, "invalid", r->invalid);
		json_str(&j, "unit", "cycles");
		record_stats(&j, "cycles", r->st, r->tsc_khz);
		if (r->tsc_khz)
			record_stats(&j, "ns", r->st, r->tsc_khz);
		json_u64(&j, "dryrun_cycles", r->dryrun_cycles);
		if (r->has_late) {
			json_u64(&j, "late_wakes", r->late_count);
			json_u64(&j, "late_bound_cycles", r->late_bound);
			json_u64(&j, "late_max_cycles", r->late_max);
			json_u64(&j, "tick_iterations", r->tick_iters);
			json_u64(&j, "late_tick_wakes", r->late_ticks);
			json_u64(&j, "rehalt_timeouts", r->rehalt_timeouts);
		}
		if (r->untrusted && *r->untrusted)
			record_words(&j, "untrusted", r->untrusted);
		if (r->histo)
			record_histo(&j, r->histo);
	}
	json_obj_end(&j);
	return json_finish(&j);
}

int record_norov(char *buf, size_t cap, const struct norov *n)
{
	struct json j;

	json_init(&j, buf, cap);
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "norov");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "test", n->test);
	json_str(&j, "backend", or_none(n->backend));
	json_u64(&j, "iterations", n->iterations);
	json_u64(&j, "delivery_ns", n->delivery_ns);
	if (n->delivery_note)
		json_str(&j, "delivery_note", n->delivery_note);
	json_u64(&j, "total_ns", n->total_ns);
	json_bool(&j, "after_x2apic", n->after_x2apic);
	if (n->ack)
		json_str(&j, "ack", n->ack);
	json_str(&j, "status", n->status);
	json_obj_end(&j);
	return json_finish(&j);
}

int record_phase(char *buf, size_t cap, unsigned int index, unsigned int of,
		 const char *backend, const char *bench)
{
	struct json j;

	json_init(&j, buf, cap);
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "phase");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_u64(&j, "index", index);
	json_u64(&j, "of", of);
	json_str(&j, "backend", backend);
	json_str(&j, "bench", bench);
	json_obj_end(&j);
	return json_finish(&j);
}

int record_kut(char *buf, size_t cap, const char *name, const char *backend,
	       uint64_t mean_cycles)
{
	struct json j;

	json_init(&j, buf, cap);
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "kut");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "name", name);
	json_str(&j, "backend", backend);
	json_u64(&j, "mean_cycles", mean_cycles);
	json_obj_end(&j);
	return json_finish(&j);
}

int record_check(char *buf, size_t cap, const char *backends, unsigned int passed,
		 unsigned int failed, unsigned int skipped)
{
	struct json j;

	json_init(&j, buf, cap);
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "check");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "backend", backends);
	json_u64(&j, "passed", passed);
	json_u64(&j, "failed", failed);
	json_u64(&j, "skipped", skipped);
	json_obj_end(&j);
	return json_finish(&j);
}

int record_table_header(char *buf, size_t cap)
{
	return fmt_snprintf(buf, cap, "%-13s %-15s %-16s %-14s %-9s %10s %10s %10s %10s %7s %7s",
			    "bench", "metric", "variant", "backend", "cpus", "p50 cyc", "p50 ns",
			    "p99 cyc", "max cyc", "n", "dry");
}

int record_table_row(char *buf, size_t cap, const struct result *r)
{
	char cpus[32];
	int n;

	fmt_snprintf(cpus, sizeof(cpus), "%u>%s", r->sender, or_none(r->targets));
	if (!r->st || !r->st->n)
		return fmt_snprintf(buf, cap, "%-13s %-15s %-16s %-14s %-9s %s%s%s", r->bench,
				    r->metric, or_none(r->variant), or_none(r->backend), cpus,
				    r->status, r->reason ? ": " : "", r->reason ? r->reason : "");
	n = fmt_snprintf(buf, cap, "%-13s %-15s %-16s %-14s %-9s %10lu %10lu %10lu %10lu %7lu %7lu",
			 r->bench, r->metric, or_none(r->variant), or_none(r->backend), cpus,
			 (unsigned long)r->st->p50,
			 (unsigned long)stats_cycles_to_ns(r->st->p50, r->tsc_khz),
			 (unsigned long)r->st->p99, (unsigned long)r->st->max,
			 (unsigned long)r->st->n, (unsigned long)r->dryrun_cycles);
	if (n >= 0 && (size_t)n < cap && r->has_late && r->late_count)
		n += fmt_snprintf(buf + n, cap - (size_t)n, "  [late-wakes=%lu, max %lu us]",
				  (unsigned long)r->late_count,
				  (unsigned long)(stats_cycles_to_ns(r->late_max, r->tsc_khz) / 1000));
	if (n >= 0 && (size_t)n < cap && r->has_late && r->late_ticks)
		n += fmt_snprintf(buf + n, cap - (size_t)n, "  [late-by-tick=%lu]",
				  (unsigned long)r->late_ticks);
	if (n >= 0 && (size_t)n < cap && r->has_late && r->rehalt_timeouts)
		n += fmt_snprintf(buf + n, cap - (size_t)n, "  [rehalt-timeouts=%lu]",
				  (unsigned long)r->rehalt_timeouts);
	if (n >= 0 && (size_t)n < cap && r->untrusted && *r->untrusted)
		n += fmt_snprintf(buf + n, cap - (size_t)n, "  [untrusted: %s]", r->untrusted);
	return n;
}

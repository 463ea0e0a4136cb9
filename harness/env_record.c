// SPDX-License-Identifier: GPL-2.0-only
/*
 * The environment record (docs/results.md, "env"): everything a reader
 * needs to know whether two runs can be compared — build, command line, CPU
 * and hypervisor identity with the feature bits probed, TSC frequency and
 * its source, skew bound, CPUs and APIC IDs — printed once before any result.
 */
#include "harness/trust_probe.h"
#include "include/bench.h"
#include "include/boot.h"
#include "include/console.h"
#include "include/cpu.h"
#include "include/topology.h"
#include "include/tsc.h"
#include "lib/json.h"
#include "lib/record.h"

extern const char ipibench_version[];

static void env_cpu(struct json *j)
{
	json_obj_begin(j, "cpu");
	json_str(j, "vendor", cpu.vendor);
	json_str(j, "brand", cpu.brand);
	json_u64(j, "family", cpu.family);
	json_u64(j, "model", cpu.model);
	json_u64(j, "stepping", cpu.stepping);
	json_obj_end(j);
	json_obj_begin(j, "features");
	json_bool(j, "x2apic", cpu.x2apic);
	json_bool(j, "tsc_deadline", cpu.tsc_deadline);
	json_bool(j, "rdtscp", cpu.rdtscp);
	json_bool(j, "invariant_tsc", cpu.invariant_tsc);
	json_bool(j, "hypervisor", cpu.hypervisor);
	json_obj_end(j);
	json_obj_begin(j, "hypervisor");
	json_str(j, "vendor", cpu.hv_vendor);
	json_hex(j, "max_leaf", cpu.hv_max_leaf);
	json_bool(j, "hyperv", cpu.hyperv);
	json_hex(j, "hv_features_eax", cpu.hv_features_eax);
	json_hex(j, "hv_features_ebx", cpu.hv_features_ebx);
	json_hex(j, "hv_features_edx", cpu.hv_features_edx);
	json_hex(j, "hv_recommendations", cpu.hv_recommendations);
	json_hex(j, "kvm_base", cpu.kvm_base);
	json_hex(j, "kvm_features", cpu.kvm_features);
	json_hex(j, "xen_base", cpu.xen_base);
	json_hex(j, "xen_version", cpu.xen_version);
	json_obj_end(j);
}

static void env_tsc(struct json *j)
{
	json_obj_begin(j, "tsc");
	json_u64(j, "khz", tsc_khz);
	json_str(j, "source", tsc_source);
	json_u64(j, "pit_khz", tsc_pit_khz);
	json_u64(j, "skew_bound_cycles", tsc_skew_bound);
	json_bool(j, "skew_consistent", tsc_skew_consistent);
	json_str(j, "timing_end", cpu.rdtscp ? "rdtscp;lfence" : "mfence;lfence;rdtsc");
	json_obj_end(j);
}

void env_record_print(void)
{
	static char buf[RECORD_MAX * 4];
	struct json j;

	trust_check();
	json_init(&j, buf, sizeof(buf));
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "env");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "version", ipibench_version);
	json_str(&j, "cmdline", boot_cmdline);
	json_str(&j, "loader", boot_loader_name);
	env_cpu(&j);
	env_tsc(&j);
	json_obj_begin(&j, "cpus");
	json_u64(&j, "count", ncpus);
	json_u64(&j, "listed", topology_listed());
	json_arr_begin(&j, "apic_ids");
	for (unsigned int c = 0; c < ncpus; c++)
		json_u64(&j, NULL, percpu_of[c]->apic_id);
	json_arr_end(&j);
	json_obj_end(&j);
	json_u64(&j, "harness_cycles", bench_dryrun_cycles);
	trust_env(&j);
	json_obj_end(&j);
	if (json_finish(&j) < 0)
		kprintf("bench: the environment record did not fit %zu bytes\n", sizeof(buf));
	else
		kprintf("%s\n", buf);
}

void end_record_print(const char *status, unsigned int results)
{
	char buf[128];
	struct json j;

	json_init(&j, buf, sizeof(buf));
	json_obj_begin(&j, NULL);
	json_str(&j, "record", "end");
	json_u64(&j, "schema", RECORD_SCHEMA);
	json_str(&j, "status", status);
	json_u64(&j, "results", results);
	json_obj_end(&j);
	if (json_finish(&j) >= 0)
		kprintf("%s\n", buf);
}

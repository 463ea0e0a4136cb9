# SPDX-License-Identifier: GPL-2.0-only
"""Saving a run: the console's records merged with the host's facts, the
exits of --exits and KVM's statistics of host reads, written as
results.json and summary.txt (docs/results.md)."""
import os
import shlex
import sys

from ipibench.boot import qemu as Q
from ipibench.boot.xen_lane import EXITS_UNKNOWN
from ipibench.compare.correctness import correctness_failures
from ipibench.compare.model import row_key, row_name, X2apicBoot
from ipibench.exit_codes import EX_SAVE, ToolError
from ipibench.kvmhost import host_class, host_model, hoststats, pin_perf
from ipibench.kvmhost import trace as kvm_trace, trace_read
from ipibench.kvmhost import wake as kvm_wake
from ipibench.kvmhost.facts import host_facts, host_warnings, kvm_software
from ipibench.results.files import dump_results, load_json, RESULTS_FORMAT, RESULTS_VERSION
from ipibench.results.records import parse_console, RECORD_SCHEMA
from ipibench.results.saved import pin_of, pin_words, power_facts, SavedBoot
from ipibench.write import write_new


def power_line(host):
    """summary.txt's one line of the host's power state (power_facts: its facts as named)."""
    f = dict(power_facts(host))

    def two(a, b):
        if f[a] is None and f[b] is None:
            return "not read"
        return f"{f[a] or 'not read'}/{f[b] or 'not read'}"
    turbo = ", ".join(f"{k} {f[k]}" for k in ("boost", "intel_pstate no_turbo", "amd_pstate")
                      if f[k] is not None)
    return ("host power: cpuidle " + two("cpuidle driver", "cpuidle governor")
            + f", states {f['idle states'] or 'not read'}; cpufreq "
            + two("cpufreq driver", "cpufreq governor") + f"; turbo: {turbo or 'not read'}; "
            + f"SMT {f['SMT control'] or 'not read'} (active {f['SMT active'] or 'not read'}); "
            + f"isolated CPUs {f['isolated CPUs'] or 'not read'}; "
            + f"nohz_full {f['nohz_full'] or 'not read'}")


def summary_text(doc):
    host, run = doc["host"], doc["run"]
    known = [r for r in doc["records"] if r.get("schema") == RECORD_SCHEMA]
    boot = SavedBoot("results.json", host, run, known, doc["problems"])
    lines = [f"ipibench run {run['label']}: {run['status']} (run.sh exit {run['exit']}, "
             f"QEMU exit {run['qemu_exit']}) in {run['seconds']} s",
             f"started {run['started']}; accel {host['accel']}; config {run['config']}",
             f"QEMU: {shlex.join(host['qemu_cmdline'])}",
             f"host: {host['cpu_model']}, {host['cpus']} CPUs, Linux {host['kernel']}; "
             f"{host['qemu_version']}",
             xen_line(run["xen"]) if run.get("xen") else
             "KVM parameters: " + (" ".join(f"{k}={v}" for k, v in host["kvm_params"].items())
                                   or "none readable"),
             "host CPU flags: " + (" ".join(host["cpu_flags"]) if host.get("cpu_flags")
                                   is not None else "not read"),
             power_line(host),
             f"host kernel command line: {host.get('kernel_cmdline') or 'not read'}"]
    pin = pin_of(run)
    if pin:
        why = pin["why"] and (f" ({pin['why']})" if pin["state"] == "pinned" else
                              f": {pin['why']}")
        lines.append(pin_words(pin) + why)
    env = boot.env
    if env:
        cpus, tsc = env.get("cpus", {}), env.get("tsc", {})
        lines.append(f"guest: {env.get('version')}, {cpus.get('count')} CPUs, TSC "
                     f"{tsc.get('khz')} kHz ({tsc.get('source')})")
    for c in boot.checks:
        lines.append(f"correctness: {c['backend']}: {c['passed']} passed, {c['failed']} failed, "
                     f"{c['skipped']} skipped")
    if boot.results:
        lines.append("results (cycles: p50 p99; ns p50):")
        for rec in boot.results:
            name = row_name(row_key(rec))
            if rec["status"] == "SUCCESS":
                ns = rec.get("ns", {}).get("p50", "-")
                lines.append(f"  {name}  {rec['cycles']['p50']}  {rec['cycles']['p99']}  {ns}")
            else:
                lines.append(f"  {name}  {rec['status']}: {rec.get('reason', '')}")
    elif not doc["records"]:
        lines.append("the guest printed no records")
    if boot.kut:
        lines.append("kvm-unit-tests view (x86/vmexit.c names; mean cycles per iteration):")
        for rec in boot.kut:
            lines.append(f"  {rec.get('name')}  {rec.get('backend')}  {rec.get('mean_cycles')}")
    x2apic = X2apicBoot(boot)
    emulated = [r for r in boot.results if x2apic.result(r) is True]
    if emulated:
        lines.append(f"warning: {len(emulated)} xAPIC-mode results were measured after a vCPU "
                     "had been in x2APIC mode on AVIC without x2AVIC: xAPIC emulation, not "
                     "AVIC (docs/comparing.md, \"After x2APIC\")")
    lines += exits_lines(doc)
    lines += [f"problem: {p}" for p in doc["problems"]]
    lines += [f"not correct: {p}" for p in correctness_failures(boot)]
    return "\n".join(lines) + "\n"


def attach_exits(directory, records, kvm_params=None, kernel=None):
    """With a KVM trace beside the log (run.sh --exits): "exits" on every record
    that carries a phase marker, and what the run's summary keeps; else None.
    kernel: the release of the kernel whose KVM was traced, where known."""
    path = next((p for p in (os.path.join(directory, kvm_trace.TRACE_FILE),
                             os.path.join(directory, kvm_trace.XEN_TRACE_FILE))
                 if os.path.exists(p)), None)
    if path is None:
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        trace = trace_read.parse(f)
    env = next((r for r in records if r.get("record") == "env"), {})
    kvm_trace.attach(trace, [r for r in records if r.get("record") == "result"
                             and isinstance(r.get("mark"), int)], env.get("cmdline"),
                     kvm_params, kernel)
    return kvm_trace.summary(trace)


def attach_host_stats(directory, text, records):
    """With host reads in the run (host_stats=1): "host_stats" on every record
    that names one, from run.sh's host-reads.log or, in the lane, the lines
    its init wrote into the console; and the run's count of them, else None."""
    lines = text.splitlines()
    path = os.path.join(directory, hoststats.LOG)
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines += f.read().splitlines()
    reads = hoststats.read_lines(lines)
    named = [r for r in records if r.get("record") == "result" and r.get("host_read")]
    if not named:
        return None
    hoststats.attach(named, reads)
    return {"reads": len(reads["reads"]), "records": len(named),
            "log": hoststats.LOG if os.path.exists(path) else "console.log"}


def exits_lines(doc):
    """summary.txt's 'What the hypervisor did' part (run.sh --exits)."""
    ex = doc["run"].get("exits")
    if not ex:
        return []
    marked = [r for r in doc["records"] if "exits" in r]
    lines = ["what the hypervisor did (exits per measured iteration, from kvm-trace.txt):"] + \
        ["  " + line for line in kvm_trace.table(marked, ex)]
    if ex.get("apicv"):
        lines.append("  " + ex["apicv"])
    hc = ex.get("host_class") or {}
    if hc.get("name") in host_class.CLASSES:
        lines.append("  " + host_class.line(hc["name"], hc.get("why", "")))
    lines += ["  " + x for x in host_model.lines(ex.get("model"))]
    return lines


def xen_line(xen):
    """summary.txt's line on the Xen that ran a Xen lane boot."""
    return (f"Xen: {xen.get('version') or 'version unknown'}; command line "
            f"{xen.get('cmdline') or 'unknown'}; dom0 kernel {xen.get('dom0_kernel') or 'unknown'}")


def save_run(directory, *, qemu=(), label="", accel="", status="", config="", preset="", qemu_bin="",
             qemu_version="", started="", seconds=0.0, qemu_exit=0, exit=0, module_param=None,
             pin=None, pin_why=None, ab=None, exits_kvm_params=None, apicv="", matrix=None,
             xen=None):
    """directory/results.json and summary.txt of one boot, from its
    console.log and this host's facts; qemu is QEMU's command line. The
    rest are the run's facts as results.json keeps them (results/fields.py's
    RESULTS_JSON, docs/record-fields.md)."""
    log = os.path.join(directory, "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise ToolError(EX_SAVE, f"{log}: cannot read: {e.strerror}")
    records, problems = parse_console(text)
    host = host_facts(qemu_version)
    host.update({"accel": accel, "qemu_binary": qemu_bin, "qemu_cmdline": list(qemu),
                 "pit_policy": Q.pit_policy(qemu, accel)})
    run = {"label": label, "config": config or label, "preset": preset,
           "started": started, "seconds": seconds, "qemu_exit": qemu_exit,
           "status": status, "exit": exit, "console": "console.log", "pin": None,
           "perf_kvm": None, "module_param": module_param}
    # Whether and how the vCPUs were pinned, in every run: the
    # map --pin (or ab's and matrix's default) saved, or why there is none;
    # a lane boot's, as the lane said it (pin).
    pin_file = os.path.join(directory, "pin.json")
    run["pin"] = pin or pin_perf.pin_record(
        load_json(pin_file) if os.path.exists(pin_file) else None, pin_why)
    if ab:
        run["ab"] = ab  # this boot's side and place in ab's order (ipibench_ab)
    if xen:
        # The Xen lane's boot: what ran it is Xen (xen_lane.xen_facts); this
        # host's KVM, which only ran the outer TCG VM's nothing, is left out.
        run["xen"] = xen
        host["kvm_params"] = {}
    if matrix:
        run["matrix"] = matrix  # {"boot": i, "boots": n}: a night is whole with all n
    perf = os.path.join(directory, "perf-kvm.txt")
    if os.path.exists(perf):
        with open(perf, encoding="utf-8", errors="replace") as f:
            report = f.read()
        run["perf_kvm"] = {"report": "perf-kvm.txt", "exits": pin_perf.perf_parse(report)}
    # This host's kernel is the traced KVM's under accel kvm only (the
    # lane's is its L1's, a recent Debian kernel).
    run["exits"] = attach_exits(directory, records, exits_kvm_params,
                                host.get("kernel") if accel == "kvm" else None)
    if accel in ("xen-in-tcg", "xen") and run["exits"] is None:
        for r in records:
            if r.get("record") == "result":
                kvm_trace.exits_unknown(r, EXITS_UNKNOWN)
    # After the exits: under xen-in-tcg the warning says whether they were
    # traced, which only the records' attached exits tell.
    host["warnings"] = host_warnings(host, records)
    run["host_stats"] = attach_host_stats(directory, text, records)
    for r in records:
        kvm_wake.cross_check_wake(r)
    if run["exits"] is not None:
        run["exits"]["apicv"] = apicv or None
        run["exits"]["kvm_params"] = exits_kvm_params or {}
        kernel, cpu_pm = host_model.run_facts(accel, host.get("kernel"), qemu)
        name, why = host_class.classify(accel, host.get("cpu_flags"), exits_kvm_params,
                                        kvm_software() if accel == "kvm" else None, kernel,
                                        (host.get("cpu_vendor"), host.get("cpu_family")))
        run["exits"]["host_class"] = {"name": name, "why": why}
        run["exits"]["model"] = host_model.judge(records, name, kernel=kernel, cpu_pm=cpu_pm)
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, "host": host, "run": run,
           "problems": problems, "records": records}
    write_new(os.path.join(directory, "results.json"), dump_results(doc))
    write_new(os.path.join(directory, "summary.txt"), summary_text(doc))
    for p in problems[:5]:
        print(f"run.sh: warning: {p}", file=sys.stderr)
    return 0

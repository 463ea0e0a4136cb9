#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The host tools behind run.sh's subcommands (docs/host-tools.md):

  save DIR ...        merge a run's console records with host facts into
                      DIR/results.json and DIR/summary.txt (run.sh calls it)
  compare A B         A/B table of medians, change and significance
  gate --baseline B C regression gate with TAP and JUnit XML
  report INPUT...     gnuplot plots and an HTML/Markdown page
  presets [NAME]      the named configurations of tools/presets.conf
  kvm-only CPU        the -cpu features only KVM offers (run.sh's fallback rule)
  qmp-start, perf-parse  --pin's and --perf-kvm's helpers, for use by hand

run.sh itself is tools/ipibench_run.py, which calls save and the readers in
its own process.

Each error is one line on stderr and an exit code from docs/exit-codes.md."""
import argparse
import datetime
import os
import shlex
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import ipibench_modparam  # noqa: E402
import ipibench_results as R  # noqa: E402
import kvm_trace  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
PRESETS = os.path.join(HERE, "presets.conf")

EXIT_TABLE = """exit status: 0 done; 2 usage; 20 regression; 21 correctness failure;
22 results missing; 23 malformed or truncated; 24 unknown schema or format
version; 25 nothing in common to compare; 30 environments not comparable
(docs/exit-codes.md)."""


# --- save: host facts and the results file

# The CPU flags /proc/cpuinfo shows ("flags" and, since Linux 5.8, "vmx flags")
# that decide how KVM delivers an IPI: AMD's AVIC and x2AVIC (AVIC without
# x2AVIC emulates every xAPIC access once a vCPU has been in x2APIC mode, see
# ipibench_results.avic_without_x2avic), virtual NMIs, the pause filter;
# Intel's APIC-access virtualization, APIC-register virtualization, virtual
# interrupt delivery, posted interrupts, IPI virtualization, TPR shadow, PLE
# and the preemption timer; x2apic and hypervisor (the host is itself a VM).
CPU_FLAGS = ("svm", "avic", "x2avic", "vnmi", "pausefilter", "pfthreshold",
             "vmx", "vapic", "vapic_reg", "vid", "posted_intr", "ipi_virt", "tpr_shadow",
             "flexpriority", "ple", "preemption_timer", "x2apic", "hypervisor")


def read_first(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return None


def cpuinfo_facts(text):
    """(model name, the CPU_FLAGS the first CPU shows, sorted) from /proc/cpuinfo's
    text; (None, None) without it, so that a reader tells 'no x2avic' from
    'not read'."""
    if text is None:
        return None, None
    model, flags, seen = None, set(), set()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        key = key.strip()
        if key in seen and key in ("model name", "flags", "vmx flags"):
            continue  # the first CPU's lines only
        seen.add(key)
        if key == "model name":
            model = value.strip()
        elif key in ("flags", "vmx flags"):
            flags.update(value.split())
    return model, sorted(f for f in CPU_FLAGS if f in flags)


def idle_states(cpuidle):
    """cpu0's cpuidle states in order, [{"name", "enabled"}] ("enabled" None
    when its disable file is not read); None without the folder."""
    try:
        found = [d for d in os.listdir(cpuidle) if d.startswith("state") and d[5:].isdigit()]
    except OSError:
        return None
    out = []
    for d in sorted(found, key=lambda d: int(d[5:])):
        off = read_first(os.path.join(cpuidle, d, "disable"))
        out.append({"name": read_first(os.path.join(cpuidle, d, "name")),
                    "enabled": {"0": True, "1": False}.get(off)})
    return out


def power_facts(sysfs):
    """The host's power state, which moves figures on one host while no KVM
    parameter changes (issue 29): cpuidle's driver, governor and cpu0's
    states, cpufreq's driver and governor (cpu0), boost and turbo, SMT, and
    the CPUs kept from the scheduler or the tick. Each None where its file
    is not there or not readable (cpufreq is absent in most VMs)."""
    cpu = os.path.join(sysfs, "devices", "system", "cpu")

    def rd(*path):
        return read_first(os.path.join(cpu, *path))
    return {"cpuidle_driver": rd("cpuidle", "current_driver"),
            # current_governor since Linux 5.8; current_governor_ro before
            "cpuidle_governor": rd("cpuidle", "current_governor") or
            rd("cpuidle", "current_governor_ro"),
            "cpuidle_states": idle_states(os.path.join(cpu, "cpu0", "cpuidle")),
            "cpufreq_driver": rd("cpu0", "cpufreq", "scaling_driver"),
            "cpufreq_governor": rd("cpu0", "cpufreq", "scaling_governor"),
            "boost": rd("cpufreq", "boost"),  # acpi-cpufreq, amd-pstate
            "intel_no_turbo": rd("intel_pstate", "no_turbo"),
            "amd_pstate": rd("amd_pstate", "status"),
            "smt_control": rd("smt", "control"), "smt_active": rd("smt", "active"),
            "isolated": rd("isolated"), "nohz_full": rd("nohz_full")}


def host_facts(qemu_version):
    """What the host was: every fact that changes how IPIs are delivered.
    IPIBENCH_SYSFS, IPIBENCH_CPUINFO and IPIBENCH_PROC_CMDLINE point
    elsewhere (tests only)."""
    sysfs = os.environ.get("IPIBENCH_SYSFS", "/sys")
    model, flags = cpuinfo_facts(read_first(os.environ.get("IPIBENCH_CPUINFO",
                                                           "/proc/cpuinfo")))
    u = os.uname()
    return {"hostname": u.nodename, "kernel": u.release, "kernel_version": u.version,
            "machine": u.machine, "cpu_model": model, "cpus": os.cpu_count(),
            "cpu_flags": flags, "qemu_version": qemu_version,
            "kvm_params": ipibench_modparam.read_all(sysfs),
            "power": power_facts(sysfs),
            "kernel_cmdline": read_first(os.environ.get("IPIBENCH_PROC_CMDLINE",
                                                        "/proc/cmdline"))}


def host_warnings(host, records):
    """What the host knows that makes this run's figures untrustworthy, as
    [{id, text}] (the guest's own checks are in its env record's "trust")."""
    accel = host.get("accel") or ""
    out = []
    if accel.startswith("tcg"):
        out.append(("tcg", "QEMU TCG: every instruction emulated; only behaviour counts"))
    elif accel == "kvm-in-tcg":
        out.append(("kvm-in-tcg", "KVM nested inside QEMU TCG: every figure doubly emulated; "
                    "behaviour and exit counts only"))
    elif accel == "kvm":
        import ipibench_accel
        why = ipibench_accel.HostKvm("").software()
        if why:
            out.append(("kvm-software", why))
        env = next((r for r in records if r.get("record") == "env"), {})
        vcpus = (env.get("cpus") or {}).get("count") if isinstance(env.get("cpus"), dict) else None
        try:
            host_cpus = len(os.sched_getaffinity(0))
        except OSError:
            host_cpus = os.cpu_count()
        if isinstance(vcpus, int) and host_cpus and vcpus > host_cpus:
            out.append(("overcommit", f"{vcpus} vCPUs on {host_cpus} host CPUs: a target's "
                        "vCPU may not be running when its IPI arrives"))
    return [{"id": i, "text": t} for i, t in out]


def power_line(host):
    """summary.txt's one line of the host's power state (R.power_facts)."""
    f = dict(R.power_facts(host))

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
    known = [r for r in doc["records"] if r.get("schema") == R.RECORD_SCHEMA]
    boot = R.Boot("results.json", host, run, known, doc["problems"])
    lines = [f"ipibench run {run['label']}: {run['status']} (run.sh exit {run['exit']}, "
             f"QEMU exit {run['qemu_exit']}) in {run['seconds']} s",
             f"started {run['started']}; accel {host['accel']}; config {run['config']}",
             f"QEMU: {shlex.join(host['qemu_cmdline'])}",
             f"host: {host['cpu_model']}, {host['cpus']} CPUs, Linux {host['kernel']}; "
             f"{host['qemu_version']}",
             "KVM parameters: " + (" ".join(f"{k}={v}" for k, v in host["kvm_params"].items())
                                   or "none readable"),
             "host CPU flags: " + (" ".join(host["cpu_flags"]) if host.get("cpu_flags")
                                   is not None else "not read"),
             power_line(host),
             f"host kernel command line: {host.get('kernel_cmdline') or 'not read'}"]
    pin = R.pin_of(run)
    if pin:
        why = pin["why"] and (f" ({pin['why']})" if pin["state"] == "pinned" else
                              f": {pin['why']}")
        lines.append(R.pin_words(pin) + why)
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
            name = R.row_name(R.row_key(rec))
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
    x2apic = R.X2apicBoot(boot)
    emulated = [r for r in boot.results if x2apic.result(r) is True]
    if emulated:
        lines.append(f"warning: {len(emulated)} xAPIC-mode results were measured after a vCPU "
                     "had been in x2APIC mode on AVIC without x2AVIC: xAPIC emulation, not "
                     "AVIC (docs/host-tools.md, compare)")
    lines += exits_lines(doc)
    lines += [f"problem: {p}" for p in doc["problems"]]
    lines += [f"not correct: {p}" for p in R.correctness_failures(boot)]
    return "\n".join(lines) + "\n"


def attach_exits(directory, records, kvm_params=None):
    """With a KVM trace beside the log (run.sh --exits): "exits" on every record
    that carries a phase marker, and what the run's summary keeps; else None."""
    path = os.path.join(directory, kvm_trace.TRACE_FILE)
    if not os.path.exists(path):
        return None
    with open(path, encoding="utf-8", errors="replace") as f:
        trace = kvm_trace.parse(f)
    env = next((r for r in records if r.get("record") == "env"), {})
    kvm_trace.attach(trace, [r for r in records if r.get("record") == "result"
                             and isinstance(r.get("mark"), int)], env.get("cmdline"),
                     kvm_params)
    return kvm_trace.summary(trace)


def attach_host_stats(directory, text, records):
    """With host reads in the run (host_stats=1): "host_stats" on every record
    that names one, from run.sh's host-reads.log or, in the lane, the lines
    its init wrote into the console; and the run's count of them, else None."""
    import ipibench_hoststats
    lines = text.splitlines()
    path = os.path.join(directory, ipibench_hoststats.LOG)
    if os.path.exists(path):
        with open(path, encoding="utf-8", errors="replace") as f:
            lines += f.read().splitlines()
    reads = ipibench_hoststats.read_lines(lines)
    named = [r for r in records if r.get("record") == "result" and r.get("host_read")]
    if not named:
        return None
    ipibench_hoststats.attach(named, reads)
    return {"reads": len(reads["reads"]), "records": len(named),
            "log": ipibench_hoststats.LOG if os.path.exists(path) else "console.log"}


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
    return lines


def cmd_save(a):
    log = os.path.join(a.dir, "console.log")
    try:
        with open(log, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise R.ToolError(R.EX_SAVE, f"{log}: cannot read: {e.strerror}")
    records, problems = R.parse_console(text)
    host = host_facts(a.qemu_version)
    host.update({"accel": a.accel, "qemu_binary": a.qemu_bin, "qemu_cmdline": a.qemu})
    host["warnings"] = host_warnings(host, records)
    run = {"label": a.label, "config": a.config or a.label, "preset": a.preset,
           "started": a.started, "seconds": a.seconds, "qemu_exit": a.qemu_exit,
           "status": a.status, "exit": a.exit, "console": "console.log", "pin": None,
           "perf_kvm": None, "module_param": getattr(a, "module_param", None)}
    # Whether and how the vCPUs were pinned, in every run (issue 29): the
    # map --pin (or ab's and matrix's default) saved, or why there is none;
    # a lane boot's, as the lane said it (pin).
    import ipibench_kvm
    pin = os.path.join(a.dir, "pin.json")
    run["pin"] = getattr(a, "pin", None) or ipibench_kvm.pin_record(
        R._load_json(pin) if os.path.exists(pin) else None, getattr(a, "pin_why", None))
    if getattr(a, "ab", None):
        run["ab"] = a.ab  # this boot's side and place in ab's order (ipibench_ab)
    perf = os.path.join(a.dir, "perf-kvm.txt")
    if os.path.exists(perf):
        run["perf_kvm"] = {"report": "perf-kvm.txt",
                           "exits": ipibench_kvm.perf_parse(read_first(perf) or "")}
    run["exits"] = attach_exits(a.dir, records, getattr(a, "exits_kvm_params", None))
    run["host_stats"] = attach_host_stats(a.dir, text, records)
    if run["exits"] is not None:
        run["exits"]["apicv"] = getattr(a, "apicv", "") or None
        run["exits"]["kvm_params"] = getattr(a, "exits_kvm_params", None) or {}
    doc = {"format": R.RESULTS_FORMAT, "version": R.RESULTS_VERSION, "host": host, "run": run,
           "problems": problems, "records": records}
    R.write_new(os.path.join(a.dir, "results.json"), R.dump_results(doc))
    R.write_new(os.path.join(a.dir, "summary.txt"), summary_text(doc))
    for p in problems[:5]:
        print(f"run.sh: warning: {p}", file=sys.stderr)
    return 0


# --- compare and gate


def load_side(path):
    boots = R.load_set(path)
    return path.rstrip("/") or path, boots


def parse_pair(text):
    """compare --pair X=Y -> (X, Y)."""
    if text is None:
        return None
    x, _, y = text.partition("=")
    if not x or not y:
        raise R.ToolError(R.EX_USAGE,
                          f"--pair takes BACKEND_A=BACKEND_B (e.g. xapic=x2apic), not '{text}'")
    return x, y


def make_comparison(a_path, b_path, alpha, unit, pair=None):
    """b_path None (with --pair): both backends from the one set a_path."""
    a_name, a_boots = load_side(a_path)
    b_name, b_boots = load_side(b_path) if b_path else (a_name, a_boots)
    if pair:
        a_name, b_name = f"{a_name} [{pair[0]}]", f"{b_name} [{pair[1]}]"
    elif a_name == b_name:
        a_name, b_name = "A:" + a_name, "B:" + b_name
    return R.Comparison(a_name, a_boots, b_name, b_boots, alpha, unit, pair)


def emit(text, out):
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        R.replace_file(out, text)


def cmd_compare(a):
    pair = parse_pair(a.pair)
    if a.b is None and not pair:
        raise R.ToolError(R.EX_USAGE, "compare takes two result sets, or one with --pair X=Y")
    cmp = make_comparison(a.a, a.b, a.alpha, a.unit, pair)
    err = cmp.overlap_error()
    if err:
        raise err
    cmp.keep_rows({name: [v for v in (getattr(a, name) or "").split(",") if v]
                   for name in R.ROW_FILTERS})
    fmt = {"text": R.format_text, "markdown": R.format_markdown, "json": R.format_json}
    emit(fmt[a.format](cmp), a.output)
    if cmp.reasons:
        print("compare: NOT COMPARABLE: " + "; ".join(cmp.reasons), file=sys.stderr)
    if cmp.timing_reasons:
        print("compare: TIMINGS NOT COMPARABLE (exits per iteration still compare): "
              + "; ".join(cmp.timing_reasons), file=sys.stderr)
    return 0


def parse_threshold(text):
    try:
        v = float(text.rstrip("%"))
    except ValueError:
        raise R.ToolError(R.EX_USAGE, f"--threshold takes a percentage like 5%, not {text!r}")
    if v < 0:
        raise R.ToolError(R.EX_USAGE, "--threshold must not be negative")
    return v


class Verdict:
    """One gate check: a TAP line and a JUnit test case."""

    def __init__(self, group, name, ok, message, detail=""):
        self.group, self.name, self.ok = group, name, ok
        self.message, self.detail = message, detail


def exits_verdicts(cmp):
    """gate --exits: one verdict a row. More judged exits per iteration than the
    baseline by more than kvm_trace.EXITS_TOLERANCE on either side fails. A
    row that one side does not have at all (a benchmark that ran on one side
    only) is listed and judged by nothing. A row both sides ran, traced on
    one side only, is not comparable, as is a side whose trace lost events
    or was cut short: the rows a regression touched are the likeliest to be
    missing (an exit storm overflows the ring buffer). Not comparable is exit
    30, unless a comparable row has more exits (20); so is a gate where no
    row has exit data on both sides."""
    out = []
    for side, who in ((cmp.sa, "baseline"), (cmp.sb, "candidate")):
        for boot in side.boots:
            ex = boot.run.get("exits") if isinstance(getattr(boot, "run", None), dict) else None
            gaps = [f"{ex[k]} events lost" if k == "lost" else "cut short"
                    for k in ("lost", "cut") if isinstance(ex, dict) and ex.get(k)]
            if gaps:
                out.append(Verdict("exits", f"{who} trace", False,
                                   f"{EXITS_INCOMPARABLE}: the {who}'s trace {' and '.join(gaps)} "
                                   f"({boot.path}): rows may lack exits it did not record"))
    for r in cmp.rows:
        if r.a_exits is None and r.b_exits is None:
            continue
        if r.a_exits is None or r.b_exits is None:
            only = "baseline" if r.b_exits is None else "candidate"
            both = r.key in cmp.sa.statuses and r.key in cmp.sb.statuses
            out.append(Verdict("exits", r.name, not both,
                               f"{EXITS_INCOMPARABLE}: ran on both sides, exit data in the "
                               f"{only} only" if both else
                               f"{ONE_SIDE_EXITS}: exit data in the {only} only, the row in the "
                               f"{only} only"))
            continue
        worse = [f"{side} {a:.2f} -> {b:.2f}" for side, a, b in
                 zip(("sender", "targets"), r.a_exits, r.b_exits)
                 if b - a > kvm_trace.EXITS_TOLERANCE]
        msg = f"exits per iteration {R.fmt_exits(r.a_exits)} -> {R.fmt_exits(r.b_exits)}"
        if worse:
            msg = (f"more exits per iteration than the baseline (tolerance "
                   f"{kvm_trace.EXITS_TOLERANCE}): {', '.join(worse)}")
        out.append(Verdict("exits", r.name, not worse, msg))
    judged = [v for v in out if not v.message.startswith((ONE_SIDE_EXITS, EXITS_INCOMPARABLE))]
    if not judged:
        why = ("no row has exit data on both sides (run.sh --exits on both)" if out else
               "neither side has exits per iteration (run.sh --exits)")
        out.append(Verdict("exits", "exit data", False, f"{EXITS_INCOMPARABLE}: {why}"))
    return out


# gate --exits: a row on one side only (listed), and what cannot be judged.
ONE_SIDE_EXITS = "not judged"
EXITS_INCOMPARABLE = "not comparable"


def gate_verdicts(cmp, cand_boots, threshold):
    out = []
    for boot in cand_boots:
        bad = R.correctness_failures(boot)
        out.append(Verdict("correctness", boot.path, not bad,
                           "; ".join(bad) if bad else "correct run", "\n".join(bad)))
    if cmp.reasons:
        out.append(Verdict("environment", "comparable", False,
                           "not comparable: " + "; ".join(cmp.reasons)))
    if cmp.timing_reasons:
        out.append(Verdict("environment", "timings comparable", False,
                           "timings not comparable: " + "; ".join(cmp.timing_reasons)))
    for r in cmp.after_x2apic:
        sides = " and ".join({"A": "baseline", "B": "candidate"}[t] for t in r.after_x2apic)
        out.append(Verdict("environment", r.name, False,
                           f"not comparable: {R.AFTER_X2APIC_MARK} in the {sides} (measured "
                           "after a vCPU had been in x2APIC mode)"))
    for r in cmp.compared:
        worse = r.significant and r.change > threshold and not cmp.reasons \
            and not cmp.timing_reasons
        msg = (f"{R.fmt_change(r)} ({R.fmt_num(r.a)} -> {R.fmt_num(r.b)} {cmp.unit}, "
               f"p {R.fmt_p(r)}, {r.method}, {len(r.a_vals)}/{len(r.b_vals)} boots)")
        if worse:
            msg = f"slower than the baseline by {r.change:.1f}% > {threshold:g}%: " + msg
        out.append(Verdict("timing", r.name, not worse, msg))
    return out


def write_tap(verdicts):
    lines = [f"1..{len(verdicts)}"]
    for i, v in enumerate(verdicts, 1):
        lines.append(f"{'ok' if v.ok else 'not ok'} {i} - {v.group}: {v.name}: {v.message}")
        for d in (v.detail.splitlines() if not v.ok else []):
            lines.append(f"#   {d}")
    return "\n".join(lines) + "\n"


def write_junit(verdicts, name):
    fails = sum(not v.ok for v in verdicts)
    suites = ET.Element("testsuites", name=name, tests=str(len(verdicts)), failures=str(fails))
    suite = ET.SubElement(suites, "testsuite", name=name, tests=str(len(verdicts)),
                          failures=str(fails), errors="0", skipped="0",
                          timestamp=datetime.datetime.now(datetime.timezone.utc)
                          .strftime("%Y-%m-%dT%H:%M:%S"))
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname=f"ipibench.{v.group}", name=v.name)
        if v.ok:
            ET.SubElement(case, "system-out").text = v.message
        else:
            fail = ET.SubElement(case, "failure", message=v.message, type=v.group)
            fail.text = v.detail or v.message
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def cmd_gate(a):
    threshold = parse_threshold(a.threshold)
    cmp = make_comparison(a.baseline, a.candidate, a.alpha, a.unit)
    verdicts = gate_verdicts(cmp, cmp.sb.boots, threshold)
    if a.exits:
        verdicts += exits_verdicts(cmp)
    err = cmp.overlap_error()
    if err:
        verdicts.append(Verdict("timing", "overlap", False, err.message))
    if a.tap:
        emit(write_tap(verdicts), a.tap)
    if a.junit:
        emit(write_junit(verdicts, "ipibench gate"), a.junit)
    if a.tap != "-" and a.junit != "-":
        sys.stdout.write(R.format_markdown(cmp) if a.format == "markdown" else R.format_text(cmp))
    for w in cmp.ignored:
        print(f"gate: ignored for comparability: {w}", file=sys.stderr)
    bad_base = [p for b in cmp.sa.boots for p in R.correctness_failures(b)]
    if bad_base:
        print(f"gate: note: the baseline itself is not correct: {bad_base[0]}", file=sys.stderr)
    wrong = [v for v in verdicts if v.group == "correctness" and not v.ok]
    slow = [v for v in verdicts if v.group == "timing" and not v.ok and v.name != "overlap"]
    for v in wrong:
        print(f"gate: FAIL: correctness: {v.name}: {v.message}", file=sys.stderr)
    if wrong:
        return R.EX_CORRECTNESS
    if err:
        raise err
    if cmp.reasons:
        raise R.ToolError(R.EX_INCOMPARABLE, "not comparable: " + "; ".join(cmp.reasons))
    if cmp.after_x2apic:
        for v in verdicts:
            if v.group == "environment" and not v.ok:
                print(f"gate: FAIL: {v.name}: {v.message}", file=sys.stderr)
        raise R.ToolError(R.EX_INCOMPARABLE, f"not comparable: {len(cmp.after_x2apic)} rows "
                          "measured xAPIC emulation, not AVIC (AVIC without x2AVIC, after "
                          "x2APIC mode; compare's after-x2apic warning says why)")
    exits_bad = [v for v in verdicts if v.group == "exits" and not v.ok]
    for v in slow + exits_bad:
        print(f"gate: FAIL: {v.name}: {v.message}", file=sys.stderr)
    for v in verdicts:
        if v.group == "exits" and v.message.startswith(ONE_SIDE_EXITS):
            print(f"gate: listed: {v.name}: {v.message}", file=sys.stderr)
    more = [v for v in exits_bad if not v.message.startswith(EXITS_INCOMPARABLE)]
    if more:
        print(f"gate: regression: {gate_tally(cmp, verdicts, a.exits, slow, exits_bad)}",
              file=sys.stderr)
        return R.EX_REGRESSION
    if cmp.timing_reasons:
        raise R.ToolError(R.EX_INCOMPARABLE, "timings not comparable: "
                          + "; ".join(cmp.timing_reasons))
    if exits_bad:
        raise R.ToolError(R.EX_INCOMPARABLE, "exits not comparable: " + exits_bad[0].message)
    if slow:
        print(f"gate: regression: {gate_tally(cmp, verdicts, a.exits, slow, exits_bad)}",
              file=sys.stderr)
        return R.EX_REGRESSION
    print(f"gate: pass: {gate_tally(cmp, verdicts, a.exits, slow, exits_bad)}; none "
          f"significantly slower than the baseline by more than {threshold:g}%"
          f"{', and no more exits per iteration' if a.exits else ''}", file=sys.stderr)
    return 0


def gate_tally(cmp, verdicts, exits, slow, exits_bad):
    """gate's last line: what it compared, and whether timing could fail at all."""
    exit_rows = [v for v in verdicts if v.group == "exits"
                 and not v.message.startswith((ONE_SIDE_EXITS, EXITS_INCOMPARABLE))]
    listed = sum(v.group == "exits" and v.message.startswith(ONE_SIDE_EXITS) for v in verdicts)
    more = [v for v in exits_bad if not v.message.startswith(EXITS_INCOMPARABLE)]
    text = f"{len(cmp.compared)} timing rows compared ({len(slow)} slower)"
    if exits:
        text += f", {len(exit_rows)} exit rows compared ({len(more)} with more exits)"
        if listed:
            text += f", {listed} traced on one side only (listed, not judged)"
    blind = {r.verdict for r in cmp.compared}
    if cmp.compared and blind <= {"too few boots", "too few distinct values"}:
        text += (f"; every timing row was {' or '.join(repr(v) for v in sorted(blind))}: "
                 "the timing gate could not fail (more boots a side)")
    return text


# --- presets, report, KVM helpers


def cmd_presets(a):
    presets = R.load_presets(a.conf)
    if a.name:
        p = R.get_preset(presets, a.name, a.conf)
        print(p["cpu"])
        print(p["smp"])
        for x in p["extra"]:
            print(x)
        return 0
    width = max(len(n) for n in presets) if presets else 4
    for name, p in presets.items():
        print(f"{name.ljust(width)}  -smp {p['smp']}  {p['description']}")
        print(f"{''.ljust(width)}  -cpu BASE,{p['cpu']}" if p["cpu"] else
              f"{''.ljust(width)}  -cpu BASE")
        if p["extra"]:
            print(f"{''.ljust(width)}  {' '.join(p['extra'])}")
        if R.kvm_only_flags(p["cpu"]):
            print(f"{''.ljust(width)}  needs KVM (or --accel kvm-in-tcg): "
                  f"{','.join(R.kvm_only_flags(p['cpu']))}")
    return 0


def cmd_kvm_only(a):
    """The features of a -cpu value that only KVM offers, comma-separated (run.sh)."""
    print(",".join(R.kvm_only_flags(a.cpu)))
    return 0


def cmd_report(a):
    import ipibench_report
    a.pair = parse_pair(a.pair)
    return ipibench_report.report(a)


def cmd_qmp_start(a):
    import ipibench_kvm
    return ipibench_kvm.qmp_start(a)


def cmd_perf_parse(a):
    import ipibench_kvm
    import json
    print(json.dumps(ipibench_kvm.perf_parse(read_first(a.file) or ""), indent=1))
    return 0


def parser():
    p = argparse.ArgumentParser(prog="tools/ipibench.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    fmt = argparse.RawDescriptionHelpFormatter

    s = sub.add_parser("save", help="write results.json and summary.txt of a run")
    s.add_argument("dir")
    for opt in ("label", "config", "preset", "accel", "qemu-bin", "qemu-version", "status",
                "started"):
        s.add_argument("--" + opt, default="")
    for opt in ("qemu-exit", "exit"):
        s.add_argument("--" + opt, type=int, default=0)
    s.add_argument("--seconds", type=float, default=0)

    c = sub.add_parser("compare", prog="./run.sh compare", formatter_class=fmt,
                       description="Compare two result sets: one row per benchmark x metric x "
                       "variant x backend x target state x target count, with the medians of "
                       "the per-boot p50s of A and B, the change of B against A, and a "
                       "Mann-Whitney U test over the per-boot medians; with --pair, one "
                       "backend's rows against another's.",
                       epilog="A and B are results.json files, run directories or folders "
                       "searched for results.json (a matrix configuration: every boot).\n"
                       + EXIT_TABLE)
    c.add_argument("a")
    c.add_argument("b", nargs="?", help="the second set (optional with --pair: A's own)")
    c.add_argument("--pair", metavar="X=Y",
                   help="backend against backend: A's backend X rows against B's backend Y "
                        "rows (B defaults to A), e.g. --pair xapic=x2apic")
    c.add_argument("--format", choices=("text", "markdown", "json"), default="text")
    c.add_argument("--output", "-o", help="write here instead of standard output")
    c.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    c.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    for name, what in (("bench", "benchmarks (single,self)"), ("metric", "metrics (one-way)"),
                       ("variant", "variants (sti-nop)"),
                       ("backend", "backends (x2apic; with --pair: X=Y)"),
                       ("targets", "target counts (1,3)")):
        c.add_argument("--" + name, metavar="LIST",
                       help=f"only the rows of these {what}: exact names, comma-separated; "
                            "a name no row has is exit 2")

    g = sub.add_parser("gate", prog="./run.sh gate", formatter_class=fmt,
                       description="Fail when the candidate is incorrect or when any row's "
                       "median (p50) is significantly slower than the baseline's by more "
                       "than the threshold.",
                       epilog="Correctness failures (FAILURE records, a correctness suite with "
                       "failures, a guest status other than SUCCESS or SKIP, invalid records) "
                       "always fail the gate.\n" + EXIT_TABLE)
    g.add_argument("candidate")
    g.add_argument("--baseline", required=True)
    g.add_argument("--threshold", default="5%", help="allowed slowdown, e.g. 5%% (default)")
    g.add_argument("--alpha", type=float, default=0.05)
    g.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    g.add_argument("--tap", help="write TAP here ('-': standard output)")
    g.add_argument("--junit", help="write JUnit XML here")
    g.add_argument("--format", choices=("text", "markdown"), default="text")
    g.add_argument("--exits", action="store_true",
                   help="also fail on more exits per iteration than the baseline "
                        "(beyond 0.05; both sides need run.sh --exits)")

    r = sub.add_parser("report", prog="./run.sh report", formatter_class=fmt,
                       description="Plots (gnuplot, SVG and PNG) and a page (index.html, "
                       "report.md): latency distributions per backend, the scaling curve "
                       "against target count, the kvm-unit-tests view (a bar per backend "
                       "and x86/vmexit.c name), and with two inputs, or with --pair, the "
                       "A/B comparison and its bar chart.",
                       epilog="exit status: 0 written; 2 usage (--pair over more than two "
                       "sets); 9 gnuplot missing; 22-25 as compare.")
    r.add_argument("inputs", nargs="+")
    r.add_argument("--pair", metavar="X=Y",
                   help="the A/B part sets backend X (baseline) against backend Y "
                        "(candidate), as compare --pair: within one set, or the first "
                        "input's X against the second's Y")
    r.add_argument("--out", "-o", help="folder for the page and plots (default: "
                   "FIRST/report, or report/ beside a file)")
    r.add_argument("--title", default="ipibench report")
    r.add_argument("--alpha", type=float, default=0.05)
    r.add_argument("--unit", choices=("cycles", "ns"), default="cycles")

    pr = sub.add_parser("presets", help="list the configurations, or print one")
    pr.add_argument("name", nargs="?")
    pr.add_argument("--conf", default=PRESETS)

    k = sub.add_parser("kvm-only", help="the -cpu features only KVM offers (hv-*, kvm-pv-*)")
    k.add_argument("cpu", help="a -cpu value: model and flags, comma-separated")

    q = sub.add_parser("qmp-start", help="pin vCPU threads through QMP, then start the guest")
    q.add_argument("--qmp", required=True)
    q.add_argument("--pin", help="host CPU list for vCPU 0, 1, ...; empty: start only")
    q.add_argument("--out", help="write the vCPU -> host CPU map here (JSON)")
    q.add_argument("--wait", type=float, default=20)
    q.add_argument("--watch", type=int, help="give up at once if this process ends")

    pp = sub.add_parser("perf-parse", help="parse a 'perf kvm stat report' text")
    pp.add_argument("file")
    return p


COMMANDS = {"save": cmd_save, "compare": cmd_compare, "gate": cmd_gate, "report": cmd_report,
            "presets": cmd_presets, "kvm-only": cmd_kvm_only, "qmp-start": cmd_qmp_start,
            "perf-parse": cmd_perf_parse}


def main(argv):
    # save's QEMU command line follows '--' (argparse mishandles it in a subcommand).
    qemu = []
    if argv[:1] == ["save"] and "--" in argv:
        cut = argv.index("--")
        argv, qemu = argv[:cut], argv[cut + 1:]
    a = parser().parse_args(argv)
    a.qemu = qemu
    try:
        return COMMANDS[a.cmd](a)
    except R.ToolError as e:
        prog = {"save": "run.sh", "presets": "run.sh"}.get(a.cmd, a.cmd)
        print(f"{prog}: {e.message}", file=sys.stderr)
        return e.code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return R.EX_INTERRUPTED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of the results tools on synthetic result sets (tests/tools/synth.py):
save, compare, gate (with TAP and JUnit), report, the statistics against
hand-checked values, the configuration table, and every bad-input error with
its documented exit code (docs/exit-codes.md); then run.sh's own logic
without QEMU (tests/tools/test_runner.py). One TAP line per case,
"ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import re
import shutil
import sys
import tempfile
import textwrap
import xml.etree.ElementTree as ET

from harness import (call, check, expect, Fail, IPIBENCH, png_ok, registry, run_cases, run_cmd,
                     selected, svg_ok)
import synth
import test_runner  # run.sh's own logic; its cases run here too

from ipibench.compare.model import row_key, row_name
from ipibench.exit_codes import (EX_CORRECTNESS, EX_INCOMPARABLE, EX_MALFORMED, EX_MISSING,
                                 EX_NO_OVERLAP, EX_PRESET, EX_REGRESSION, EX_SAVE, EX_SCHEMA,
                                 EX_USAGE, ToolError)
from ipibench.kvmhost import pin_perf as K
from ipibench.presets import kvm_only_flags, load_presets, print_presets
from ipibench.presets import PRESETS as PRESETS_CONF
from ipibench.boot.save import save_run
from ipibench.results.stats import (bootstrap_change_ci, mann_whitney, mann_whitney_histograms,
                                    median)


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


TOOL = IPIBENCH
SLOW_KEY = ("single", "round-trip", "none", "x2apic", "spin", 1)
SLOW = row_name(SLOW_KEY)
CASES, case = registry()


def tool(*args, env=None):
    return run_cmd(TOOL + list(args), env)


class Sets:
    """The synthetic sets, made once (saving is the slow part)."""

    def __init__(self, tmp):
        j = lambda n: os.path.join(tmp, n)  # noqa: E731
        self.tmp = tmp
        self.base = synth.make_set(j("base"), seed=1)
        self.same = synth.make_set(j("same"), seed=1)
        self.rerun = synth.make_set(j("rerun"), seed=2)
        self.slow = synth.make_set(j("slow"), seed=3, scale={SLOW_KEY: 1.2})
        self.fast = synth.make_set(j("fast"), seed=4, scale={SLOW_KEY: 0.8})
        self.noisy_a = synth.make_set(j("noisy_a"), seed=5, boot_noise=0.35)
        self.noisy_b = synth.make_set(j("noisy_b"), seed=6, boot_noise=0.35,
                                      scale={SLOW_KEY: 1.2})
        self.cpus8 = synth.make_set(j("cpus8"), seed=7, cpus=8)
        self.tsc = synth.make_set(j("tsc"), seed=8, tsc_source="PIT calibration")
        other = {("ipi_benchmark", "total", "none", "x2apic", "spin", 1): 5000}
        self.disjoint = synth.make_set(j("disjoint"), boots=2, seed=9, rows=other)

        def fail_one(i, recs):
            if i == 2:
                for r in recs:
                    if r.get("bench") == "single" and r.get("backend") == "xapic":
                        r.clear()
                        r.update(synth.result(row_key({"bench": "single",
                                 "metric": "round-trip", "variant": "none", "backend": "xapic",
                                 "target_state": "spin", "ntargets": 1}), status="FAILURE",
                                 reason="IPI from CPU 0 to CPU 1 lost"))
                        break
        self.failure = synth.make_set(j("failure"), seed=1, mutate=fail_one)

        def check_failed(i, recs):
            recs[1]["failed"] = 2
        self.checkfail = synth.make_set(j("checkfail"), boots=1, seed=1, mutate=check_failed)
        self.crash = synth.make_set(j("crash"), boots=1, seed=1, status="CRASH", qemu_exit=73)


# --- statistics against hand-checked values


@case("tests/run: groups two at a time, one that must run alone alone but for a SCHED_IDLE "
      "companion, each printed whole with its counts, time and CPU time; --slowest; bad "
      "options exit 2")
def _(s):
    fake = os.path.join(s.tmp, "groups.sh")
    with open(fake, "w") as f:
        f.write(textwrap.dedent("""\
            all_groups=(fails slow quiet broken)
            alone=slow
            beside=quiet
            group_slow() {
                echo "$EPOCHREALTIME" >"$SPANS/slow.start"; sleep 1.2
                echo "ok - slow: first"; echo "ok - slow: second (0.3 s)"
                echo "$EPOCHREALTIME" >"$SPANS/slow.end"
            }
            group_fails() {
                echo "$EPOCHREALTIME" >"$SPANS/fails.start"; sleep 0.5
                echo "ok - fails: one"; echo "not ok - fails: two"; echo "#   why"
                echo "$EPOCHREALTIME" >"$SPANS/fails.end"
            }
            group_quiet() {
                echo "$EPOCHREALTIME" >"$SPANS/quiet.start"
                chrt -p "$BASHPID" >"$SPANS/quiet.policy"
                python3 -c 'import time
            while time.process_time() < 0.8: pass'
                echo "ok - quiet: skipped (0.1 s) # SKIP not here"
            }
            group_broken() { echo "$EPOCHREALTIME" >"$SPANS/broken.start"; echo "half a line"; return 3; }
            """))
    spans = os.path.join(s.tmp, "spans")
    os.makedirs(spans, exist_ok=True)
    rc, out, err = run_cmd([os.path.join(REPO, "tests", "run"), "--slowest", "3"],
                           env={"TESTS_RUN_FAKE_GROUPS": fake, "SPANS": spans})
    lines = out.splitlines()
    span = {g: [float(open(os.path.join(spans, f"{g}.{e}")).read()) for e in ("start", "end")]
            for g in ("slow", "fails")}
    check(span["slow"][0] >= span["fails"][1],
          f"the group that runs alone started before the one ahead of it ended: {span}")
    at = {g: float(open(os.path.join(spans, f"{g}.start")).read()) for g in ("quiet", "broken")}
    check(span["slow"][0] <= at["quiet"] <= span["slow"][1],
          f"the companion did not start beside the group that runs alone: {span}, {at}")
    check(at["broken"] >= span["slow"][1],
          f"a group not in beside= started beside the one that runs alone: {span}, {at}")
    policy = open(os.path.join(spans, "quiet.policy")).read()
    check("SCHED_IDLE" in policy, f"the companion does not run under SCHED_IDLE: {policy!r}")
    check(rc == 1, f"exit {rc}, expected 1 (a group failed):\n{out}{err}")
    check(lines[-1] == "3 passed, 2 failed, 1 skipped", f"last line {lines[-1]!r}")
    for g, counts in (("slow", "2 passed, 0 failed, 0 skipped"),
                      ("fails", "1 passed, 1 failed, 0 skipped"),
                      ("quiet", "0 passed, 0 failed, 1 skipped"),
                      ("broken", "0 passed, 1 failed, 0 skipped")):
        start = lines.index(f"# group {g}")
        end = next(i for i, l in enumerate(lines) if l.startswith(f"# group {g}: "))
        check(lines[end].startswith(f"# group {g}: {counts} in "), f"{lines[end]!r}")
        # quiet burns 0.8 s of CPU in a child; slow only sleeps.
        cpu = {"quiet": "1", "slow": "0"}.get(g)
        check(cpu is None or lines[end].endswith(f" s ({cpu} s CPU)"), f"CPU time: {lines[end]!r}")
        body = lines[start + 1:end]
        check(all(f" {g}:" in l or l.startswith("#   ") or l == "half a line" for l in body),
              f"group {g}'s output is not whole: {body}")
    check("not ok - broken: exited 3 without a failing test" in lines, "broken group not failed")
    i = lines.index("# slowest 3 tests (seconds):")
    check(re.match(r"^# +1\.[0-9]  slow: ok - slow: first$", lines[i + 1])
          and re.match(r"^# +0\.[5-9]  fails: ok - fails: one$", lines[i + 2])
          and re.match(r"^# +0\.3  slow: ok - slow: second", lines[i + 3]),
          f"slowest listing: {lines[i + 1:i + 4]}")
    for bad in (["--jobs", "x"], ["--slowest"], ["--only", "nope"], ["--frobnicate"]):
        rc, out, err = run_cmd([os.path.join(REPO, "tests", "run"), *bad],
                               env={"TESTS_RUN_FAKE_GROUPS": fake})
        check(rc == 2 and "tests/run: " in err, f"{bad}: exit {rc}, {err!r}")


@case("a test file runs one case by name (--case TEXT), lists them (--list), refuses an unknown one")
def _(s):
    import harness
    cases = [("alpha one", None), ("beta two", None), ("gamma", None)]
    check([n for n, _ in harness.selected(cases, [])] == ["alpha one", "beta two", "gamma"],
          "every case without --case")
    check([n for n, _ in harness.selected(cases, ["--case", "two", "--case", "gam"])] ==
          ["beta two", "gamma"], "--case picks by part of the name")
    rc, out, err = run_cmd([sys.executable, "tests/tools/test_hoststats.py", "--case", "zzz"])
    check(rc == 2 and "no case named like 'zzz'" in err and "ok -" not in out, f"{rc} {err}")
    rc, out, _ = run_cmd([sys.executable, "tests/tools/test_hoststats.py", "--case",
                          "same statistics"])
    check(rc == 0 and out.strip() == "ok - hoststats: the lane asks for the same statistics",
          out)


@case("Mann-Whitney U: exact p-values of hand-checked vectors")
def _(s):
    p, p_min, how = mann_whitney([1, 2, 3, 4, 5], [6, 7, 8, 9, 10])
    check(how == "exact" and abs(p - 2 / 252) < 1e-12, f"5 v 5 separated: p {p}, expected 2/252")
    check(abs(p_min - 2 / 252) < 1e-12, f"p_min {p_min}")
    p, p_min, _ = mann_whitney([1, 2, 3], [4, 5, 6])
    check(abs(p - 0.1) < 1e-12 and abs(p_min - 0.1) < 1e-12, f"3 v 3 separated: p {p}")
    # U = 1 for a = {1, 3}, b = {2, 4, 5}: P(U <= 1) = 2/10, two-sided 0.4.
    p, _, _ = mann_whitney([1, 3], [2, 4, 5])
    check(abs(p - 0.4) < 1e-12, f"2 v 3 with U=1: p {p}, expected 0.4")
    p, p_min, _ = mann_whitney([7, 7, 7], [7, 7, 7])
    check(p == 1.0 and p_min == 1.0, f"all tied: p {p}, p_min {p_min}")
    p, _, _ = mann_whitney([1, 2, 2, 3], [2, 3, 3, 4])
    check(0.1 < p < 0.5, f"ties, exact permutation: p {p}")


@case("Mann-Whitney U: normal approximation for large samples and for histograms")
def _(s):
    a = list(range(0, 60))
    p, p_min, how = mann_whitney(a, a)
    check(how == "normal" and p > 0.99, f"identical 60 v 60: {how} p {p}")
    p, _, _ = mann_whitney(a, [x + 30 for x in a])
    check(p < 1e-6, f"shifted by half the range: p {p}")
    h = [[96, 111, 10], [112, 127, 30], [128, 143, 10]]
    check(mann_whitney_histograms(h, h) == 1.0, "identical histograms")
    h2 = [[128, 143, 10], [144, 159, 30], [160, 175, 10]]
    check(mann_whitney_histograms(h, h2) < 1e-9, "separated histograms not significant")


@case("medians and the bootstrap interval")
def _(s):
    check(median([3, 1, 2]) == 2 and median([4, 1, 2, 3]) == 2.5, "median")
    ci = bootstrap_change_ci([100, 101, 99, 100, 100], [120, 121, 119, 120, 120], 1)
    check(ci and 17 < ci[0] <= 20 <= ci[1] < 23, f"CI {ci} should hold +20%")
    check(bootstrap_change_ci([100, 101], [120, 121], 1) is None, "two boots a side: no CI")
    check(ci == bootstrap_change_ci([100, 101, 99, 100, 100], [120, 121, 119, 120, 120], 1),
          "bootstrap not reproducible")


# --- save


# Module parameters a host can offer under /sys/module/*/parameters/, with
# values as each module prints them: APIC virtualization, halt polling, and
# pause-loop exiting (a spinning vCPU leaves guest mode), Intel's and AMD's;
# and ones no list of these tools names (issue 20): every one is recorded.
HOST_PARAMS = (("kvm_amd", "avic", "Y"), ("kvm", "halt_poll_ns", "200000"),
               ("kvm_amd", "vnmi", "Y"), ("kvm_amd", "enable_ipiv", "N"),
               ("kvm_intel", "preemption_timer", "Y"), ("kvm_intel", "vmentry_l1d_flush", "cond"),
               ("kvm", "enable_virt_at_load", "Y"), ("kvm", "pi_inject_timer", "0"),
               ("kvm_intel", "ple_gap", "128"), ("kvm_intel", "ple_window", "4096"),
               ("kvm_intel", "ple_window_grow", "2"), ("kvm_intel", "ple_window_shrink", "0"),
               ("kvm_intel", "ple_window_max", "4294967295"),
               ("kvm_amd", "pause_filter_thresh", "128"), ("kvm_amd", "pause_filter_count", "3000"),
               ("kvm_amd", "pause_filter_count_grow", "2"),
               ("kvm_amd", "pause_filter_count_shrink", "0"),
               ("kvm_amd", "pause_filter_count_max", "65535"))


@case("save: results.json holds the records and the host facts, summary.txt beside it")
def _(s):
    d = os.path.join(s.tmp, "save1")
    os.makedirs(d)
    recs = synth.boot_records(__import__("random").Random(1), synth.ROWS, 0.01, 0.05, 50, 4,
                              "CPUID 0x15")
    # The xAPIC broadcasts ran after x2APIC mode, on AVIC without x2AVIC (below).
    for r in recs:
        if r["record"] == "result":
            r["after_x2apic"] = r["bench"] == "broadcast"
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(synth.console(recs))
    fake = os.path.join(s.tmp, "sys")
    for mod, param, val in HOST_PARAMS:
        os.makedirs(os.path.join(fake, "module", mod, "parameters"), exist_ok=True)
        with open(os.path.join(fake, "module", mod, "parameters", param), "w") as f:
            f.write(val + "\n")
    # Another module's parameters (PVM's) are not KVM's: not recorded.
    os.makedirs(os.path.join(fake, "module", "kvm_pvm", "parameters"))
    with open(os.path.join(fake, "module", "kvm_pvm", "parameters", "nx_huge_pages"), "w") as f:
        f.write("N\n")
    # Zen 2: AVIC without x2AVIC; the second CPU's lines are not read.
    cpuinfo = os.path.join(s.tmp, "cpuinfo")
    with open(cpuinfo, "w") as f:
        f.write("processor\t: 0\nmodel name\t: AMD EPYC 7702 64-Core Processor\n"
                "flags\t\t: fpu apic svm x2apic npt pausefilter pfthreshold avic vgif\n\n"
                "processor\t: 1\nmodel name\t: other\nflags\t\t: fpu x2avic vnmi\n")
    with open(os.path.join(d, "pin.json"), "w") as f:
        json.dump([{"vcpu": 0, "thread_id": 1234, "host_cpu": 2}], f)
    facts = dict(label="lbl", accel="kvm", status="SUCCESS", qemu_exit=65,
                 qemu_version="QEMU emulator version 9.2.0",
                 qemu=["qemu-system-x86_64", "-accel", "kvm", "-append", "plan=bench x=1"])
    expect(call(save_run, d, env={"IPIBENCH_SYSFS": fake, "IPIBENCH_CPUINFO": cpuinfo},
                **facts), 0)
    doc = json.load(open(os.path.join(d, "results.json")))
    h = doc["host"]
    check(doc["format"] == "ipibench-results" and doc["version"] == 1, "format/version")
    want = {f"{mod}.{param}": val for mod, param, val in HOST_PARAMS}
    check(h["kvm_params"] == want, "kvm params: missing "
          f"{sorted(set(want) - set(h['kvm_params']))}, got {h['kvm_params']}")
    check(h["cpu_flags"] == ["avic", "pausefilter", "pfthreshold", "svm", "x2apic"] and
          h["cpu_model"] == "AMD EPYC 7702 64-Core Processor",
          f"CPU flags {h['cpu_flags']}, model {h['cpu_model']}")
    check(h["qemu_cmdline"][-1] == "plan=bench x=1" and h["accel"] == "kvm", "QEMU command line")
    check(h["kernel"] == os.uname().release and h["qemu_version"].endswith("9.2.0"), "host")
    check(doc["run"]["label"] == "lbl" and doc["run"]["pin"]["state"] == "pinned" and
          doc["run"]["pin"]["map"][0]["host_cpu"] == 2, f"run facts {doc['run']}")
    check(len(doc["records"]) == len(recs) and doc["problems"] == [], "records")
    summary = open(os.path.join(d, "summary.txt")).read()
    check("SUCCESS" in summary and SLOW in summary and "vCPU0->CPU2" in summary and
          "kvm_amd.vnmi=Y" in summary and "host CPU flags: avic pausefilter" in summary and
          "warning: 3 xAPIC-mode results were measured after a vCPU had been in x2APIC "
          "mode on AVIC without x2AVIC" in summary, "summary")
    check(sorted(os.listdir(d)) == ["console.log", "pin.json", "results.json", "summary.txt"],
          f"leftover files: {os.listdir(d)}")
    before = open(os.path.join(d, "results.json")).read()
    expect(call(save_run, d, **facts), EX_SAVE, "never overwritten")
    check(open(os.path.join(d, "results.json")).read() == before, "results.json was replaced")
    check(not [f for f in os.listdir(d) if f.startswith(".")], "temporary file left behind")


@case("save: the host's power state (cpuidle driver, governor and states, cpufreq, boost and "
      "turbo, SMT, isolated and nohz_full CPUs) and kernel command line, each file that is "
      "not there null (not read), never a crash; summary.txt's host power line")
def _(s):
    d = os.path.join(s.tmp, "power")
    cpu = os.path.join(d, "sys", "devices", "system", "cpu")
    files = {"cpuidle/current_driver": "intel_idle",
             "cpuidle/current_governor_ro": "menu",  # before Linux 5.8: no current_governor
             "cpu0/cpuidle/state0/name": "POLL", "cpu0/cpuidle/state0/disable": "0",
             "cpu0/cpuidle/state1/name": "C1", "cpu0/cpuidle/state1/disable": "0",
             "cpu0/cpuidle/state2/name": "C1E", "cpu0/cpuidle/state2/disable": "1",
             "cpu0/cpuidle/state10/name": "C10",  # no disable file: not read
             "cpu0/cpufreq/scaling_driver": "intel_pstate",
             "cpu0/cpufreq/scaling_governor": "performance",
             "intel_pstate/no_turbo": "0", "amd_pstate/status": "passive",
             "cpufreq/boost": "1", "smt/control": "on", "smt/active": "1",
             "isolated": "2-3", "nohz_full": ""}
    for rel, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(cpu, rel)), exist_ok=True)
        with open(os.path.join(cpu, rel), "w") as f:
            f.write(text + "\n")
    cmdline = os.path.join(d, "cmdline")
    with open(cmdline, "w") as f:
        f.write("BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 intel_idle.max_cstate=2\n")
    saved = []
    for name, sysfs, proc in (("full", os.path.join(d, "sys"), cmdline),
                              ("bare", os.path.join(d, "nothing"), os.path.join(d, "nothing"))):
        run = os.path.join(d, name)
        os.makedirs(run)
        with open(os.path.join(run, "console.log"), "w") as f:
            f.write(synth.console([synth.env()]))
        expect(call(save_run, run, label=name, accel="tcg", status="SUCCESS",
                    env={"IPIBENCH_SYSFS": sysfs, "IPIBENCH_PROC_CMDLINE": proc}), 0)
        saved.append((json.load(open(os.path.join(run, "results.json")))["host"],
                      open(os.path.join(run, "summary.txt")).read()))
    (host, summary), (bare, bare_summary) = saved
    want = {"cpuidle_driver": "intel_idle", "cpuidle_governor": "menu",
            "cpuidle_states": [{"name": "POLL", "enabled": True}, {"name": "C1", "enabled": True},
                               {"name": "C1E", "enabled": False},
                               {"name": "C10", "enabled": None}],
            "cpufreq_driver": "intel_pstate", "cpufreq_governor": "performance", "boost": "1",
            "intel_no_turbo": "0", "amd_pstate": "passive", "smt_control": "on",
            "smt_active": "1", "isolated": "2-3", "nohz_full": ""}
    check(host.get("power") == want, f"power {host.get('power')}")
    check(host.get("kernel_cmdline") == "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 "
          "intel_idle.max_cstate=2", f"{host['kernel_cmdline']}")
    check("host power: cpuidle intel_idle/menu, states POLL C1 C1E(disabled) C10(not read); "
          "cpufreq intel_pstate/performance; turbo: boost 1, intel_pstate no_turbo 0, "
          "amd_pstate passive; SMT on (active 1); isolated CPUs 2-3; nohz_full none\n"
          "host kernel command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=2-3 "
          "intel_idle.max_cstate=2\n" in summary, summary)
    # Nothing there: every fact null, and the summary says so.
    check(bare["power"] == {k: None for k in want} and bare["kernel_cmdline"] is None,
          f"{bare['power']} {bare['kernel_cmdline']}")
    check("host power: cpuidle not read, states not read; cpufreq not read; turbo: not read; "
          "SMT not read (active not read); isolated CPUs not read; nohz_full not read\n"
          "host kernel command line: not read\n" in bare_summary, bare_summary)


@case("save: broken records are kept as problems and fail the gate; another schema -> 24")
def _(s):
    d = os.path.join(s.tmp, "save2", "boot1")
    os.makedirs(d)
    recs = synth.boot_records(__import__("random").Random(1), synth.ROWS, 0.01, 0.05, 50, 4,
                              "CPUID 0x15")
    text = synth.console(recs).replace('"record":"check"', '"record":"check" BROKEN', 1)
    with open(os.path.join(d, "console.log"), "w") as f:
        f.write(text)
    expect(call(save_run, d, status="SUCCESS", qemu=["q"]), 0, "not JSON")
    doc = json.load(open(os.path.join(d, "results.json")))
    check(len(doc["problems"]) == 1 and "not JSON" in doc["problems"][0], f"{doc['problems']}")
    expect(tool("gate", "--baseline", s.base, os.path.dirname(d)), EX_CORRECTNESS,
           "invalid record")
    # A record that is JSON but breaks docs/results.md: dropped, named, gated.
    d2 = os.path.join(s.tmp, "save3", "boot1")
    os.makedirs(d2)
    broken = [dict(r) for r in recs]
    broken[3] = dict(broken[3], cycles=dict(broken[3]["cycles"], p50=10 ** 9))
    with open(os.path.join(d2, "console.log"), "w") as f:
        f.write(synth.console(broken))
    expect(call(save_run, d2, status="SUCCESS", qemu=["q"]), 0, "percentiles out of order")
    doc = json.load(open(os.path.join(d2, "results.json")))
    check(len(doc["records"]) == len(recs) - 1 and len(doc["problems"]) == 1, "dropped record")
    expect(tool("gate", "--baseline", s.base, os.path.dirname(d2)), EX_CORRECTNESS,
           "percentiles out of order")
    # A record of a schema these tools do not know is kept, and readers refuse it.
    d3 = os.path.join(s.tmp, "save4", "boot1")
    os.makedirs(d3)
    newer = [dict(r) for r in recs]
    newer[2] = dict(newer[2], schema=2, cycles="changed shape")
    with open(os.path.join(d3, "console.log"), "w") as f:
        f.write(synth.console(newer))
    expect(call(save_run, d3, status="SUCCESS", qemu=["q"]), 0, "schema 2")
    expect(tool("compare", s.base, d3), EX_SCHEMA, "schema 2")


# --- compare and gate


@case("identical sets: every row 'no change', compare and gate exit 0")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.same), 0)
    rows = [l for l in out.splitlines() if l.startswith(("single", "broadcast", "send", "self"))]
    check(len(rows) == len(synth.ROWS), f"{len(rows)} rows, expected {len(synth.ROWS)}")
    check(all(l.rstrip().endswith("no change") and "+0.0%" in l for l in rows),
          "a row changed:\n" + "\n".join(rows))
    tap, junit = os.path.join(s.tmp, "same.tap"), os.path.join(s.tmp, "same.xml")
    expect(tool("gate", "--baseline", s.base, s.same, "--tap", tap, "--junit", junit), 0,
           "gate: pass")
    t = open(tap).read()
    check(t.startswith("1..") and "not ok" not in t, "TAP has a failure")
    root = ET.parse(junit).getroot()
    check(root.get("failures") == "0" and int(root.get("tests")) >= len(synth.ROWS), "JUnit")


@case("a rerun with low noise: no row significantly slower by 5%, gate passes")
def _(s):
    expect(tool("gate", "--baseline", s.base, s.rerun, "--threshold", "5%"), 0, "gate: pass")


@case("20% slower in one benchmark, low noise: flagged; gate exits 20; TAP and JUnit name it")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.slow, "--format", "json"), 0)
    rows = {r["row"]: r for r in json.loads(out)["rows"]}
    r = rows[SLOW]
    check(r["verdict"] == "slower" and 18 < r["change_pct"] < 22 and r["p"] < 0.05,
          f"slowed row: {r}")
    check(r["test"] == "boots" and abs(r["p"] - 2 / 252) < 1e-9, f"5 v 5 boots: {r['p']}")
    others = [n for n, x in rows.items() if n != SLOW and x["verdict"] == "slower"
              and x["change_pct"] > 5]
    check(not others, f"other rows flagged: {others}")
    tap, junit = os.path.join(s.tmp, "slow.tap"), os.path.join(s.tmp, "slow.xml")
    expect(tool("gate", "--baseline", s.base, s.slow, "--threshold", "10%", "--tap", tap,
                "--junit", junit), EX_REGRESSION, f"gate: FAIL: {SLOW}")
    bad = [l for l in open(tap) if l.startswith("not ok")]
    check(len(bad) == 1 and SLOW in bad[0] and "slower than the baseline" in bad[0], f"TAP {bad}")
    fails = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    check(len(fails) == 1 and fails[0].get("name") == SLOW, "JUnit failure does not name it")
    expect(tool("gate", "--baseline", s.base, s.slow, "--threshold", "25%"), 0)


@case("20% faster: flagged 'faster', the gate passes")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.fast), 0)
    line = [l for l in out.splitlines() if l.startswith("single") and "x2apic" in l
            and "round-trip" in l][0]
    check(line.rstrip().endswith("faster") and "-2" in line, line)
    expect(tool("gate", "--baseline", s.base, s.fast), 0)


@case("20% change buried in boot-to-boot noise: not significant, gate passes")
def _(s):
    rc, out, _ = expect(tool("compare", s.noisy_a, s.noisy_b, "--format", "json"), 0)
    r = {x["row"]: x for x in json.loads(out)["rows"]}[SLOW]
    check(r["p"] > 0.05 and r["verdict"] != "slower", f"noisy row judged {r['verdict']}, "
          f"p {r['p']}, change {r['change_pct']}")
    lo, hi = r["ci_pct"]
    check(lo < 0 < hi or lo < 5, f"CI {r['ci_pct']} should reach below +5%")
    expect(tool("gate", "--baseline", s.noisy_a, s.noisy_b), 0)


@case("one boot a side: 'too few boots', never significant on the pooled samples alone")
def _(s):
    a, b = os.path.join(s.base, "boot1"), os.path.join(s.slow, "boot1")
    rc, out, _ = expect(tool("compare", a, b, "--format", "json"), 0)
    r = {x["row"]: x for x in json.loads(out)["rows"]}[SLOW]
    # The pooled samples say p < 1e-6, but they see no boot-to-boot spread.
    check(r["test"] == "boots" and r["verdict"] == "too few boots" and r["p_min"] == 1.0
          and r["samples_p"] < 1e-6 and r["ci_pct"] is None, f"{r}")
    expect(tool("gate", "--baseline", a, b, "--threshold", "5%"), 0)


@case("correctness failures always fail the gate (exit 21), named in TAP and JUnit")
def _(s):
    tap, junit = os.path.join(s.tmp, "f.tap"), os.path.join(s.tmp, "f.xml")
    expect(tool("gate", "--baseline", s.base, s.failure, "--tap", tap, "--junit", junit,
                "--threshold", "1000%"), EX_CORRECTNESS, "IPI from CPU 0 to CPU 1 lost")
    bad = [l for l in open(tap) if l.startswith("not ok")]
    check(len(bad) == 1 and "boot2" in bad[0] and "FAILURE: single on xapic" in bad[0], f"{bad}")
    fails = [c for c in ET.parse(junit).getroot().iter("testcase") if c.find("failure") is not None]
    check(len(fails) == 1 and fails[0].get("classname") == "ipibench.correctness", "JUnit")
    expect(tool("gate", "--baseline", s.base, s.checkfail), EX_CORRECTNESS,
           "correctness suite: 2 failed")
    expect(tool("gate", "--baseline", s.base, s.crash), EX_CORRECTNESS, "guest status CRASH")
    # A failing baseline is noted, not held against the candidate.
    expect(tool("gate", "--baseline", s.failure, s.base), 0, "baseline itself is not correct")


@case("different CPU count or TSC source: 'not comparable'; compare 0, gate 30")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.cpus8), 0, "NOT COMPARABLE",
                        "CPU count differs")
    rows = [l for l in out.splitlines() if l and not l.startswith("boots: ")]  # less the legend
    check("not comparable" in rows[-1], "rows not marked")
    expect(tool("gate", "--baseline", s.base, s.cpus8), EX_INCOMPARABLE, "CPU count differs")
    expect(tool("gate", "--baseline", s.base, s.tsc), EX_INCOMPARABLE, "TSC source differs")
    mixed = os.path.join(s.tmp, "mixed")
    os.makedirs(mixed)
    shutil.copytree(os.path.join(s.base, "boot1"), os.path.join(mixed, "a"))
    shutil.copytree(os.path.join(s.cpus8, "boot1"), os.path.join(mixed, "b"))
    expect(tool("compare", s.base, mixed), 0, "mixes CPU counts")


@case("baseline without overlapping benchmarks: exit 25 naming both sides")
def _(s):
    expect(tool("compare", s.base, s.disjoint), EX_NO_OVERLAP, "share no benchmark row",
           "ipi_benchmark")
    expect(tool("gate", "--baseline", s.disjoint, s.base), EX_NO_OVERLAP, "share no")


@case("Markdown output: a table with one line per row")
def _(s):
    rc, out, _ = expect(tool("compare", s.base, s.slow, "--format", "markdown"), 0)
    rows = [l for l in out.splitlines() if l.startswith("| ") and "benchmark" not in l]
    seps = [l for l in out.splitlines() if l.startswith("|---")]
    check(len(rows) == len(synth.ROWS) and len(seps) == 1, "markdown table shape")
    check(any("slower" in l and "| single | round-trip |" in l for l in rows), "slow row")


# --- bad input


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path


@case("missing inputs: exit 22 with the path")
def _(s):
    expect(tool("compare", os.path.join(s.tmp, "nope"), s.base), EX_MISSING, "nope")
    empty = os.path.join(s.tmp, "emptydir")
    os.makedirs(empty)
    expect(tool("compare", empty, s.base), EX_MISSING, "no results.json")
    write(os.path.join(s.tmp, "interrupted", "console.log"), "run.sh: INCOMPLETE\n")
    expect(tool("gate", "--baseline", s.base, os.path.join(s.tmp, "interrupted")),
           EX_MISSING, "saved no results.json")


@case("malformed and truncated results files: exit 23 with line and column")
def _(s):
    good = open(os.path.join(s.base, "boot1", "results.json")).read()
    cut = write(os.path.join(s.tmp, "bad", "cut", "results.json"), good[:len(good) // 2])
    expect(tool("compare", cut, s.base), EX_MALFORMED, "malformed or truncated", "line")
    empty = write(os.path.join(s.tmp, "bad", "empty", "results.json"), "")
    expect(tool("compare", empty, s.base), EX_MALFORMED, "empty results file")
    notjson = write(os.path.join(s.tmp, "bad", "nj", "results.json"), "hello\n")
    expect(tool("gate", "--baseline", s.base, notjson), EX_MALFORMED, "malformed")
    other = write(os.path.join(s.tmp, "bad", "other", "results.json"), '{"a": 1}')
    expect(tool("compare", other, s.base), EX_MALFORMED, "not an ipibench results file")
    doc = json.loads(good)
    doc["records"][3]["cycles"]["p50"] = 10 ** 9
    bad = write(os.path.join(s.tmp, "bad", "rec", "results.json"), json.dumps(doc))
    expect(tool("compare", bad, s.base), EX_MALFORMED, "record 4", "percentiles out of order")
    doc = json.loads(good)
    del doc["records"]
    bad = write(os.path.join(s.tmp, "bad", "norec", "results.json"), json.dumps(doc))
    expect(tool("compare", bad, s.base), EX_MALFORMED, "'records' missing")


@case("unknown versions: results format or record schema -> exit 24")
def _(s):
    doc = json.loads(open(os.path.join(s.base, "boot1", "results.json")).read())
    doc["version"] = 2
    p = write(os.path.join(s.tmp, "ver", "a", "results.json"), json.dumps(doc))
    expect(tool("compare", p, s.base), EX_SCHEMA, "format version 2")
    doc["version"] = 1
    doc["records"][2]["schema"] = 7
    p = write(os.path.join(s.tmp, "ver", "b", "results.json"), json.dumps(doc))
    expect(tool("gate", "--baseline", s.base, p), EX_SCHEMA, "schema 7")


@case("usage errors exit 2")
def _(s):
    expect(tool("gate", s.base), 2, "--baseline")
    expect(tool("gate", "--baseline", s.base, s.same, "--threshold", "lots"), 2, "percentage")
    expect(tool("compare", s.base), 2)


# --- configurations


@case("presets.conf: every configuration parses; unknown or malformed -> exit 26")
def _(s):
    p = load_presets(PRESETS_CONF)
    for name in ("xapic", "x2apic", "hv", "hv-xmm", "hv-vapic", "kvm-pv"):
        check(name in p, f"preset {name} missing")
    check("x2apic=off" in p["xapic"]["cpu"] and "hv-xmm-input" in p["hv-xmm"]["cpu"], "flags")
    expect(call(print_presets, PRESETS_CONF, "nope"), EX_PRESET,
           "unknown configuration 'nope'", "xapic")
    for text, msg in (("a | b | 2 | \n", "4 fields"), ("A | x | 2 | | d\n", "bad configuration"),
                      ("a | x | two | | d\n", "not a vCPU count"),
                      ("a | x | 2 | | d\na | y | 2 | | d\n", "defined twice")):
        conf = write(os.path.join(s.tmp, "p", "presets.conf"), text)
        expect(call(print_presets, conf), EX_PRESET, msg)
    expect(call(print_presets, os.path.join(s.tmp, "nope.conf")), EX_PRESET, "cannot read")


@case("the -cpu flags only KVM offers (hv-*, kvm-pv-* not turned off); the presets that need it")
def _(s):
    for cpu, want in (("host,hv-relaxed,hv-vpindex", "hv-relaxed,hv-vpindex"),
                      ("max,kvm-pv-ipi=on", "kvm-pv-ipi=on"),
                      ("host,+kvm-pv-unhalt", "kvm-pv-unhalt"),
                      ("host,x2apic=on,kvm-pv-ipi=off", ""), ("max,-hv-ipi,hv-vapic=no", ""),
                      ("max,-x2apic", ""), ("host", "")):
        out = ",".join(kvm_only_flags(cpu))
        check(out == want, f"kvm-only {cpu}: {out!r}, expected {want!r}")
    _, out, _ = expect(tool("list"), 0)
    needs, name = set(), None
    for line in out.splitlines():
        name = line.split()[0] if line[:1].strip() else name
        if "needs KVM" in line:
            needs.add(name)
    check(needs == {"hv", "hv-xmm", "hv-xmm-4", "hv-vapic", "kvm-pv"},
          f"listed as needing KVM: {sorted(needs)}")


# --- tools/deps.sh against a stand-in dpkg-query and id


@case("deps.sh: packages dpkg does not know are named with the command to run, exit 1; "
      "nothing missing is exit 0")
def _(s):
    deps = os.path.join(REPO, "tools", "deps.sh")
    with tempfile.TemporaryDirectory() as tmp:
        # dpkg-query -W lists the packages it knows and exits 1 when any
        # other is asked for, as on a fresh machine; id says "not root".
        write(os.path.join(tmp, "id"), "#!/bin/sh\necho 1000\n")
        write(os.path.join(tmp, "dpkg-query"), textwrap.dedent("""\
            #!/bin/sh
            rc=0
            for p; do
                case "$p" in -*) continue ;; esac
                if grep -qx "$p" "$DEPS_KNOWN"; then
                    echo "$p install ok installed"
                else
                    echo "dpkg-query: no packages found matching $p" >&2; rc=1
                fi
            done
            exit $rc
            """))
        for f in ("id", "dpkg-query"):
            os.chmod(os.path.join(tmp, f), 0o755)
        known = os.path.join(tmp, "known")
        env = {"PATH": tmp + ":" + os.environ["PATH"], "DEPS_KNOWN": known}
        pkgs = re.search(r"pkgs=\(([^)]*)\)", open(deps).read()).group(1).split()
        write(known, "make\ngcc\n")
        _, _, err = expect(run_cmd(["bash", deps, "build"], env), 1,
                           "ipibench: run as root (or with sudo):",
                           "apt-get update && apt-get install -y ")
        named = re.search(r"missing packages: (.*)", err)
        check(named and set(named.group(1).split()) == set(pkgs) - {"make", "gcc"},
              f"the missing packages named: {err.strip()[-300:]}")
        # tests/run installed QEMU >= 8.1 before this group: nothing is missing.
        write(known, "\n".join(pkgs) + "\n")
        expect(run_cmd(["bash", deps, "build"], env), 0)


# --- ab's module parameters against a stand-in /sys, /proc and modprobe


def modparam_tree(root, params, holders=None, builtin=()):
    """IPIBENCH_AB_ROOT for kvmhost/modparam.py: params {(module, param): (value,
    mode)}, holders {module: [modules holding it]}, modules in builtin without
    initstate. The stand-in modprobe logs its argv ('|'-separated, one call a
    line) and, loading MODULE P=V, leaves V in P's file (read-only, as a
    parameter read at load time is)."""
    for (mod, param), (val, mode) in params.items():
        d = os.path.join(root, "sys/module", mod, "parameters")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, param), "w") as f:
            f.write(val + "\n")
        os.chmod(os.path.join(d, param), mode)
    for mod in {m for m, _ in params}:
        if mod not in builtin:
            with open(os.path.join(root, "sys/module", mod, "initstate"), "w") as f:
                f.write("live\n")
    for mod, users in (holders or {}).items():
        os.makedirs(os.path.join(root, "sys/module", mod, "holders"))
        for u in users:
            os.symlink(f"../../{u}", os.path.join(root, "sys/module", mod, "holders", u))
    os.makedirs(os.path.join(root, "proc"), exist_ok=True)
    with open(os.path.join(root, "proc/cpuinfo"), "w") as f:
        f.write("flags : fpu sse svm avic\n")
    mp = os.path.join(root, "modprobe")
    log = os.path.join(root, "modprobe.log")
    with open(mp, "w") as f:
        f.write("#!/bin/sh\n"
                f"printf '%s|' \"$@\" >> {log}; echo >> {log}\n"
                "[ \"$1\" = -r ] && exit 0\n"
                "[ -n \"$2\" ] || exit 0\n"
                f"f={root}/sys/module/$1/parameters/${{2%%=*}}\n"
                "rm -f \"$f\"; echo \"${2#*=}\" > \"$f\"; chmod 444 \"$f\"\n")
    os.chmod(mp, 0o755)
    return {"IPIBENCH_AB_ROOT": root, "IPIBENCH_AB_EUID": "0", "IPIBENCH_AB_MODPROBE": mp}


def modprobe_calls(root):
    try:
        return [line.rstrip("\n") for line in open(os.path.join(root, "modprobe.log"))]
    except FileNotFoundError:
        return []


STAND_IN_PARAMS = {("kvm_amd", "avic"): ("N", 0o444), ("kvm_amd", "vnmi"): ("Y", 0o444),
                   ("kvm_amd", "pause_filter_count"): ("3000", 0o444),
                   ("kvm", "halt_poll_ns"): ("200000", 0o644),
                   ("kvm", "pi_inject_timer"): ("0", 0o644),
                   ("kvm", "enable_virt_at_load"): ("Y", 0o444),
                   ("kvm_intel", "vmentry_l1d_flush"): ("cond", 0o644),
                   ("kvm_intel", "preemption_timer"): ("Y", 0o444)}


@case("ab --module-param: refuses a foreign module, a path, an unknown name (listing what "
      "exists), a value not of the type, non-root, a built-in module; nothing changed")
def _(s):
    from ipibench.kvmhost import modparam as M
    root = os.path.join(s.tmp, "modparam-refuse")
    env = modparam_tree(root, STAND_IN_PARAMS, builtin=("kvm_intel",))
    before = {k: open(os.path.join(root, "sys/module", k[0], "parameters", k[1])).read()
              for k in STAND_IN_PARAMS}
    os.makedirs(os.path.join(root, "sys/module/video/parameters"))
    for mod, param, values, needle in (
            ("video", "brightness", ["0", "1"], "of kvm, kvm_amd, kvm_intel only"),
            ("kvm-amd", "avic", ["0", "1"], "kvm_amd, not kvm-amd"),
            ("kvm_amd", "../../video/parameters/x", ["0", "1"], "never a path"),
            ("kvm_amd", "avic/../vnmi", ["0", "1"], "never a path"),
            ("kvm_amd", "nope", ["0", "1"],
             "unknown parameter kvm_amd.nope: kvm_amd has avic, pause_filter_count, vnmi"),
            ("kvm_amd", "avic", ["0", "2"], "kvm_amd.avic takes a bool (0, 1, Y, N, y or n) "
             "(it reads N), not '2'"),
            ("kvm_amd", "pause_filter_count", ["3000", "Y"], "takes an integer (it reads 3000), "
             "not 'Y'"),
            ("kvm", "halt_poll_ns", ["0", "1e3"], "not '1e3'"),
            ("kvm", "halt_poll_ns", ["0", "1;reboot"], "not '1;reboot'"),
            ("kvm_intel", "vmentry_l1d_flush", ["never", "cond"],
             "reads 'cond', neither a bool nor an integer"),
            ("kvm_intel", "preemption_timer", ["N", "Y"], "built into this kernel")):
        p = M.Param(M.Host(env), mod, param)
        try:
            p.check(values)
            raise Fail(f"{mod}.{param}={values} was not refused")
        except M.Refused as e:
            check(e.code == 33 and needle in e.message and "nothing was changed" in e.message,
                  f"{mod}.{param}={values}: {e.message}")
    p = M.Param(M.Host(dict(env, IPIBENCH_AB_EUID="1000")), "kvm", "halt_poll_ns")
    try:
        p.check(["0", "1000"])
        raise Fail("non-root was not refused")
    except M.Refused as e:
        check("needs root" in e.message, e.message)
    # A VM on /dev/kvm: a reload is refused, a run-time write is not.
    os.makedirs(os.path.join(root, "proc/4242/fd"))
    os.symlink("/dev/kvm", os.path.join(root, "proc/4242/fd/3"))
    try:
        M.Param(M.Host(env), "kvm_amd", "vnmi").check(["N", "Y"])
        raise Fail("a reload under a running VM was not refused")
    except M.Refused as e:
        check("/dev/kvm is held by 4242" in e.message, e.message)
    M.Param(M.Host(env), "kvm", "halt_poll_ns").check(["0", "1000"])
    check(modprobe_calls(root) == [], f"modprobe ran: {modprobe_calls(root)}")
    after = {k: open(os.path.join(root, "sys/module", k[0], "parameters", k[1])).read()
             for k in STAND_IN_PARAMS}
    check(before == after, "a refusal changed a parameter")


@case("ab --module-param: a writable parameter is written, a read-only one reloads its module "
      "(holders out first and back after, argv never a shell); read back; put back")
def _(s):
    from ipibench.kvmhost import modparam as M
    root = os.path.join(s.tmp, "modparam-set")
    env = modparam_tree(root, STAND_IN_PARAMS, holders={"kvm": ["kvm_amd"]})
    pfile = lambda mod, param: os.path.join(root, "sys/module", mod, "parameters", param)  # noqa
    # kvm.halt_poll_ns is 0644: written, no modprobe.
    p = M.Param(M.Host(env), "kvm", "halt_poll_ns")
    p.check(["0", "1000"])
    check(p.set("1000") == "1000" and p.how == "write", "halt_poll_ns not written")
    p.restore()
    check(open(pfile("kvm", "halt_poll_ns")).read().strip() == "200000", "not put back")
    # A 0/1 integer takes Y and N, as 1 and 0.
    p = M.Param(M.Host(env), "kvm", "pi_inject_timer")
    p.check(["N", "Y"])
    check(p.set("Y") == "1", f"pi_inject_timer=Y read back {p.read()}")
    p.restore()
    check(modprobe_calls(root) == [], f"a write ran modprobe: {modprobe_calls(root)}")
    # kvm_amd.vnmi is 0444 (no list of these tools names it): reloaded with it.
    p = M.Param(M.Host(env), "kvm_amd", "vnmi")
    p.check(["N", "Y"])
    got = p.set("N")
    check(got == "N" and p.how == "reload" and M.granted("N", got), f"vnmi read back {got}")
    p.restore()
    calls = modprobe_calls(root)
    check(calls == ["-r|kvm_amd|", "kvm_amd|vnmi=N|", "-r|kvm_amd|", "kvm_amd|vnmi=Y|"],
          f"modprobe calls {calls}")
    # kvm's own load-time parameter: kvm_amd (its holder) out first, back after.
    os.unlink(os.path.join(root, "modprobe.log"))
    p = M.Param(M.Host(env), "kvm", "enable_virt_at_load")
    p.check(["N", "Y"])
    check(p.set("N") == "N", "enable_virt_at_load not set")
    calls = modprobe_calls(root)
    check(calls == ["-r|kvm_amd|", "-r|kvm|", "kvm|enable_virt_at_load=N|", "kvm_amd|"],
          f"modprobe calls {calls}")
    check(M.granted("10", "010") and M.granted("1", "Y") and not M.granted("1", "N") and
          not M.granted("1", "0"), "granted()")


@case("ab in the lane: side B granted what side A got ends the question after B's first "
      "boot (or before it), the refusal said once a boot, exit 34, nothing compared")
def _(s):
    import contextlib
    import io
    from ipibench.boot import ab as AB
    from ipibench.boot import run as B
    from ipibench.jobs import Jobs
    booted = []

    def fake_run(argv, env, jobs, prepared=False, pin_default=False, ab=None):
        # What the lane's run does: load the value, say what was granted
        # (as boot/run.py does, once a boot), save it in results.json.
        asked = argv[argv.index("--module-param") + 1].split("=", 1)[1]
        got = "N"
        d = argv[argv.index("--results-dir") + 1]
        booted.append(d)
        os.makedirs(d)
        mp = {"param": "kvm_amd.avic", "asked": asked, "got": got,
              "why": "" if asked == "0" else "the CPU has no AVIC"}
        json.dump({"run": {"module_param": mp}}, open(os.path.join(d, "results.json"), "w"))
        print(f"run.sh: the lane's kvm_amd.avic: asked {asked}, got {got}"
              + (f": {mp['why']}" if mp["why"] else ""), file=sys.stderr)
        return 0
    saved = B.run, B.prepare
    B.run, B.prepare = fake_run, lambda env, jobs: None
    try:
        # A B B A ...: the order stops after side B's first boot (0,1: A B),
        # or before it, its value known from side A's first (1,0: A).
        for values, b_boots in (("0,1", 1), ("1,0", 0)):
            booted.clear()
            env = B.Env(REPO, s.tmp, {"IPIBENCH_RESULTS": os.path.join(s.tmp, "ab-lane")})
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                rc = AB.run(["--module-param", f"kvm_amd.avic={values}", "--boots", "3",
                             "--accel", "kvm-in-tcg", "--preset", "x2apic"], env, Jobs())
            text = out.getvalue() + err.getvalue()
            check(rc == 34, f"{values}: exit {rc}: {text[-600:]}")
            b_side = [d for d in booted if f"avic_{values[2]}" in d]
            check(len(booted) == 1 + b_boots and len(b_side) == b_boots,
                  f"{values}: booted {booted}")
            check(text.count("asked 1, got N: the CPU has no AVIC") == 1,
                  f"{values}: the refusal not once a boot: {text}")
            check("ab: both sides " in text and "kvm_amd.avic=N: nothing to compare" in text
                  and "against" not in text, f"{values}: {text}")
    finally:
        B.run, B.prepare = saved


# --- KVM helpers that do not need KVM


@case("--pin CPU lists and the perf kvm stat report parser")
def _(s):
    check(K.parse_cpu_list("2-5,8") == [2, 3, 4, 5, 8], "2-5,8")
    check(K.parse_cpu_list("3,1") == [3, 1], "order kept")
    for bad in ("x", "5-2", "1-"):
        try:
            K.parse_cpu_list(bad)
            raise Fail(f"{bad!r} accepted")
        except ToolError as e:
            check(e.code == EX_USAGE, f"{bad}: code {e.code}")
    text = """Analyze events for all VMs, all VCPUs:

             VM-EXIT    Samples  Samples%     Time%    Min Time    Max Time         Avg time

     MSR_WRITE      10364    44.64%     1.28%      0.45us     48.25us      1.23us ( +-   0.78% )
           HLT       6063    26.12%    98.50%      0.66us  32446.31us    161.85us ( +-   6.69% )

Total Samples:16427, Total events handled time:996226.68us.
"""
    ex = K.perf_parse(text)
    check(len(ex) == 2 and ex[0] == {"reason": "MSR_WRITE", "samples": 10364, "samples_pct": 44.64,
                                     "time_pct": 1.28, "min_us": 0.45, "max_us": 48.25,
                                     "avg_us": 1.23}, f"{ex}")
    check(ex[1]["reason"] == "HLT" and ex[1]["avg_us"] == 161.85, "HLT line")
    # Lines that only look like the table are left out, never a ValueError.
    odd = "  IO 12 1.2.3% 1% 1us 2us 3us\n  IO 12 1..% 1% 1us 2us 3us\n  IO 12 .5% 1% 1us 2us 3us\n"
    check(K.perf_parse(odd) == [], f"malformed decimals parsed: {K.perf_parse(odd)}")


# --- report


def check_plots(out, names):
    for name in names:
        for ext, ok in (("svg", svg_ok), ("png", png_ok)):
            p = os.path.join(out, f"{name}.{ext}")
            check(os.path.isfile(p) and os.path.getsize(p) > 0, f"{p} missing or empty")
            why = ok(p)
            check(why is None, f"{p}: {why}")


@case("report: distributions, scaling and A/B plots as valid SVG and PNG, and the pages")
def _(s):
    if not shutil.which("gnuplot"):
        raise Fail("gnuplot missing (tools/deps.sh test installs gnuplot-nox)")
    out = os.path.join(s.tmp, "report")
    expect(tool("report", s.base, s.slow, "--out", out), 0, "plots")
    names = ["dist-single-round-trip", "dist-broadcast-all-ack", "scaling-broadcast-all-ack", "ab"]
    check_plots(out, names)
    page = open(os.path.join(out, "index.html")).read()
    for n in names:
        check(f'src="{n}.svg"' in page, f"index.html does not show {n}")
    check("<td>round-trip</td>" in page and "<td>slower</td>" in page,
          "comparison table missing from the page")
    md = open(os.path.join(out, "report.md")).read()
    check("![" in md and "| single | round-trip |" in md, "report.md")
    check(not [f for f in os.listdir(out) if f.startswith(".")], "temporaries left")
    out1 = os.path.join(s.tmp, "report1")
    expect(tool("report", s.base, "--out", out1), 0)
    check(not os.path.exists(os.path.join(out1, "ab.svg")), "A/B plot without two inputs")
    expect(tool("report", s.disjoint, s.base, "--out", os.path.join(s.tmp, "r3")), 0)
    expect(tool("report", os.path.join(s.tmp, "nope")), EX_MISSING)


def main():
    # This file runs its own cases and test_runner.py's: --case picks among both.
    chosen = selected(CASES + test_runner.CASES)
    tmp = tempfile.mkdtemp(prefix="ipibench-tools-")
    bad = 0
    try:
        bad += run_cases([c for c in chosen if c in CASES], "tools", Sets(tmp), select=False)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    bad += test_runner.run_all([c for c in chosen if c in test_runner.CASES], select=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

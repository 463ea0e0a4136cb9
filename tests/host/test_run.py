#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""End-to-end tests of run.sh's subcommands under QEMU TCG, and of its
robustness: a matrix over the xapic and x2apic
configurations x 2 boots, then compare, gate against itself and report on
what it saved; Ctrl-C (SIGINT) during a boot; QEMU killed by a signal; two
runs started at once; the bad-input exit codes. One TAP line per case,
"ok - tools: ..."; everything lands in a temporary IPIBENCH_RESULTS."""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

from harness import (Fail, case_begins, check, expect, IPIBENCH, png_ok, registry, run_cmd,
                     selected, stand_in_tracefs, svg_ok)

import hosts
from ipibench import machine


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


RUN = os.path.join(REPO, "run.sh")
# A boot that stays up: the BSP waits a minute for an AP that never gets its SIPI.
LONG = "plan=boot debug=skip-sipi ap_timeout=60000"
# What the short benchmark plan would like; keys the guest does not list are dropped.
SHORT = {"plan": "default", "backends": "xapic", "bench": "self,send-cost,broadcast",
         "iters": "20", "warmup": "2", "budget": "1"}
CASES, case = registry()


class Skip(Exception):
    pass


def run(*args, env=None, timeout=120):
    return run_cmd([RUN, *args], env, timeout)


def source_tree(dst):
    """A copy of the repository's sources (tracked and new files, as git
    lists them; no build/) at dst: its path."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=REPO, stdout=subprocess.PIPE, check=True).stdout.split(b"\0")
    for name in filter(None, (f.decode() for f in files)):
        src = os.path.join(REPO, name)
        if os.path.isfile(src):
            os.makedirs(os.path.dirname(os.path.join(dst, name)), exist_ok=True)
            shutil.copy2(src, os.path.join(dst, name))
    return dst


def short_append():
    rc, out, _ = run("--accel", "tcg", "--no-save", "--smp", "1", "--append", "help=1")
    keys = set(re.findall(r"^([a-z_]+)\s", out, re.M))
    return " ".join(f"{k}={v}" for k, v in SHORT.items() if k in keys)


def children(pid):
    out = []
    for d in os.listdir(machine.process("")):
        if d.isdigit():
            try:
                with open(machine.process(d, "stat")) as f:
                    fields = f.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(d))
    return out


def comm(pid):
    try:
        with open(machine.process(pid, "comm")) as f:
            return f.read().strip()
    except OSError:
        return ""


def qemu_of(runsh_pid):
    for t in children(runsh_pid):
        if comm(t) == "timeout":
            for q in children(t):
                if comm(q).startswith("qemu"):
                    return q
    return None


class LongBoot:
    """run.sh booting the long scenario into its own results root."""

    def __init__(self, root, *extra):
        self.root = root
        self.p = subprocess.Popen([RUN, "--accel", "tcg", "--smp", "2", "--quiet",
                                   "--append", LONG] + list(extra), cwd=REPO,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                  env=dict(os.environ, IPIBENCH_RESULTS=root))

    def wait_started(self, limit=30):
        """Until the guest has printed its ACPI line: it is then waiting for the AP."""
        end = time.monotonic() + limit
        while time.monotonic() < end:
            for d in (os.listdir(self.root) if os.path.isdir(self.root) else []):
                log = os.path.join(self.root, d, "console.log")
                if os.path.exists(log) and "acpi:" in open(log, errors="replace").read():
                    self.dir = os.path.join(self.root, d)
                    return self.dir
            if self.p.poll() is not None:
                break
            time.sleep(0.1)
        self.p.kill()
        raise Fail(f"the boot never started: {self.p.communicate()[1][-300:]}")

    def finish(self, limit=20):
        try:
            out, err = self.p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            self.p.kill()
            raise Fail(f"run.sh did not end within {limit} s")
        return self.p.returncode, out, err


# --- the matrix and what reads it


class Matrix:
    def __init__(self, root):
        self.root = root
        self.append = short_append()
        t0 = time.monotonic()
        # Single-threaded TCG: benchmarks on multi-threaded TCG starve on a
        # small loaded host (spinning vCPUs), and only behaviour counts here.
        self.res = run("matrix", "--presets", "xapic,x2apic", "--boots", "2", "--smp", "3",
                       "--accel", "tcg-single", "--timeout", "60", "--label", "e2e", "--append",
                       self.append, env={"IPIBENCH_RESULTS": root}, timeout=300)
        self.secs = time.monotonic() - t0
        dirs = [d for d in os.listdir(root) if d.endswith("-e2e")] if os.path.isdir(root) else []
        self.dir = os.path.join(root, dirs[0]) if len(dirs) == 1 else None

    def results(self, cfg):
        return [json.load(open(os.path.join(self.dir, cfg, f"boot{i}", "results.json")))
                for i in (1, 2)]

    def has_results(self):
        return any(r["record"] == "result" and r["status"] == "SUCCESS"
                   for cfg in ("xapic-smp3", "x2apic-smp3") for doc in self.results(cfg)
                   for r in doc["records"])


@case("matrix xapic,x2apic x 2 boots under TCG: every boot saved with host facts")
def _(ctx):
    m = ctx.matrix
    if m.res[0] != 0 and m.dir:
        for root, _, files in os.walk(m.dir):
            if "console.log" in files:
                text = open(os.path.join(root, "console.log"), errors="replace").read()
                for line in text.splitlines():
                    if re.search(r"FAILURE|ERROR|not ok|lost|did not", line) and \
                            not line.startswith("{"):
                        print(f"# {os.path.relpath(root, m.dir)}: {line}")
    expect(m.res, 0)
    check(m.dir is not None, f"no single matrix directory in {os.listdir(m.root)}")
    for cfg, flag in (("xapic-smp3", "x2apic=off"), ("x2apic-smp3", "x2apic=on")):
        for i, doc in enumerate(m.results(cfg), 1):
            where = f"{cfg}/boot{i}"
            files = sorted(os.listdir(os.path.join(m.dir, cfg, f"boot{i}")))
            check(files == ["console.log", "results.json", "summary.txt"], f"{where}: {files}")
            h, r = doc["host"], doc["run"]
            check(h["kernel"] == machine.kernel()["kernel"] and h["qemu_version"].startswith("QEMU"),
                  f"{where}: host facts {h}")
            check(h["accel"] == "tcg-single" and r["preset"] == cfg.split("-")[0], f"{where}: run {r}")
            cmd = " ".join(h["qemu_cmdline"])
            check(flag in cmd and "kvm-pit.lost_tick_policy=discard" in cmd and "-smp 3" in cmd,
                  f"{where}: QEMU command line {cmd}")
            check(r["status"] in ("SUCCESS", "SKIP") and r["exit"] == 0 and not doc["problems"],
                  f"{where}: status {r['status']}, problems {doc['problems'][:3]}")
            kinds = {x["record"] for x in doc["records"]}
            check({"env", "end"} <= kinds, f"{where}: record kinds {kinds}")
    summary = open(os.path.join(m.dir, "summary.txt")).read()
    check(summary.count("exit 0 SUCCESS or SKIP") == 4, f"matrix summary: {summary}")
    # One backend measured (backends=xapic): no backend pair to suggest.
    check("--pair" not in m.res[2], f"matrix hint: {m.res[2][-400:]}")
    print(f"# matrix: 4 boots in {m.secs:.1f} s, append '{m.append}'")


@case("the AVIC report's preset: one vCPU a host core (at least 2), dedicated, cpu-pm=on said "
      "in words; it boots and runs its broadcast under TCG (issue 42, item 7)")
def _(ctx):
    from ipibench import machine
    from ipibench.presets import host_vcpus
    want = max(2, len(machine.host_cores(machine.allowed_cpus())))
    check(host_vcpus("host") == want and host_vcpus(4) == 4, f"host_vcpus {host_vcpus('host')}")
    root = os.path.join(ctx.tmp, "avic-report")
    rc, out, err = run("--accel", "tcg", "--preset", "avic-report-x2apic", "--append",
                       "plan=bench bench=broadcast iters=5 warmup=1 budget=1",
                       env={"IPIBENCH_RESULTS": root})
    check(rc == 0 and "-overcommit cpu-pm=on: under KVM the guest's HLT" in err,
          f"exit {rc}: {err[-400:]}")
    (d,) = os.listdir(root)
    doc = json.load(open(os.path.join(root, d, "results.json")))
    cmd = doc["host"]["qemu_cmdline"]
    check(cmd[cmd.index("-smp") + 1] == str(want) and "cpu-pm=on" in cmd and
          any("kvm-hint-dedicated=on" in w for w in cmd), f"{cmd}")
    check(any(r.get("bench") == "broadcast" and r.get("status") == "SUCCESS"
              for r in doc["records"]), "no broadcast figure")


@case("the matrix suggests --pair xapic=x2apic where both ran, and that command works")
def _(ctx):
    root = os.path.join(ctx.tmp, "hint")
    rc, out, err = expect(run("matrix", "--presets", "xapic,x2apic", "--boots", "1", "--smp", "2",
                              "--accel", "tcg-single", "--append",
                              "plan=bench bench=send-cost iters=5 warmup=1 budget=1",
                              env={"IPIBENCH_RESULTS": root}), 0)
    m = re.search(r"backend against backend: \./run\.sh (compare --pair xapic=x2apic (\S+))", err)
    check(m and m.group(2).endswith("/x2apic-smp2"), f"hint: {err[-400:]}")
    expect(run(*m.group(1).split()), 0, "xapic=x2apic", "send-cost")


@case("compare the two configurations, gate one against itself, report both")
def _(ctx):
    m = ctx.matrix
    check(m.dir is not None, "no matrix")
    if not m.has_results():
        raise Skip("the guest printed no result records with " + repr(m.append))
    a, b = os.path.join(m.dir, "xapic-smp3"), os.path.join(m.dir, "x2apic-smp3")
    rc, out, err = expect(run("compare", a, b, "--format", "json"), 0)
    rows = [r for r in json.loads(out)["rows"] if r["a"] is not None]
    # One-way figures (first, last, one-way) are withheld in a boot whose TSC
    # skew bound is not under a tenth of them, which TCG's timing decides
    # boot by boot: such a row may have one boot a side. Every other row has
    # both boots on both sides.
    one_way = ("first", "last", "one-way")
    check(rows and all(len(r["a_boots"]) == 2 == len(r["b_boots"]) for r in rows
                       if r["metric"] not in one_way)
          and all(1 <= len(r["a_boots"]) <= 2 and 1 <= len(r["b_boots"]) <= 2 for r in rows),
          f"compared rows: {len(rows)}: " + ", ".join(
              f"{r['bench']}/{r['metric']}/{r['variant']} {len(r['a_boots'])}/{len(r['b_boots'])}"
              for r in rows if len(r["a_boots"]) != 2 or len(r["b_boots"]) != 2))
    tap, junit = os.path.join(ctx.tmp, "self.tap"), os.path.join(ctx.tmp, "self.xml")
    expect(run("gate", "--baseline", b, b, "--tap", tap, "--junit", junit), 0, "gate: pass")
    check("not ok" not in open(tap).read(), "TAP has a failure")
    check(ET.parse(junit).getroot().get("failures") == "0", "JUnit has failures")
    out_dir = os.path.join(ctx.tmp, "report")
    expect(run("report", a, b, "--out", out_dir), 0, "plots")
    plots = sorted(f[:-4] for f in os.listdir(out_dir) if f.endswith(".svg"))
    check("ab" in plots and any(p.startswith("dist-") for p in plots), f"plots {plots}")
    for p in plots:
        for ext, ok in (("svg", svg_ok), ("png", png_ok)):
            path = os.path.join(out_dir, f"{p}.{ext}")
            why = ok(path) if os.path.getsize(path) > 0 else "empty"
            check(why is None, f"{path}: {why}")
    expect(run("report", m.dir, "--out", os.path.join(ctx.tmp, "report2")), 0)


# --- robustness


@case("Ctrl-C (SIGINT) stops QEMU, marks console.log incomplete, saves no results; exit 11")
def _(ctx):
    root = os.path.join(ctx.tmp, "sigint")
    boot = LongBoot(root)
    d = boot.wait_started()
    q = qemu_of(boot.p.pid)
    check(q is not None, "no QEMU process under run.sh")
    t0 = time.monotonic()
    boot.p.send_signal(signal.SIGINT)
    rc, out, err = boot.finish()
    check(rc == 11, f"exit {rc}, expected 11; {err[-300:]}")
    check(time.monotonic() - t0 < 10, "took too long to stop")
    check(not os.path.exists(machine.process(q)), f"QEMU {q} still runs")
    lines = open(os.path.join(d, "console.log")).read().rstrip().splitlines()
    check(lines[-1].startswith("run.sh: INCOMPLETE: interrupted by SIGINT"), f"last: {lines[-1]}")
    check(sorted(os.listdir(d)) == ["console.log"], f"files: {os.listdir(d)}")
    check("interrupted by SIGINT" in err, f"stderr: {err[-200:]}")
    expect(run("compare", d, d), 22, "saved no results.json")


@case("Ctrl-C during a matrix stops the boot in flight and the matrix; exit 11")
def _(ctx):
    root = os.path.join(ctx.tmp, "mint")
    p = subprocess.Popen([RUN, "matrix", "--presets", "xapic", "--boots", "2", "--accel", "tcg",
                          "--append", LONG], cwd=REPO, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True,
                         env=dict(os.environ, IPIBENCH_RESULTS=root))
    log, end = None, time.monotonic() + 30
    while time.monotonic() < end and p.poll() is None:
        found = [os.path.join(r, "console.log") for r, _, f in os.walk(root) if "console.log" in f]
        if found and "acpi:" in open(found[0], errors="replace").read():
            log = found[0]
            break
        time.sleep(0.1)
    check(log is not None, "the first boot never started")
    p.send_signal(signal.SIGINT)
    try:
        _, err = p.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        p.kill()
        raise Fail("the matrix did not stop")
    check(p.returncode == 11, f"exit {p.returncode}: {err[-300:]}")
    boot = os.path.dirname(log)
    check(sorted(os.listdir(boot)) == ["console.log"], f"files: {os.listdir(boot)}")
    check("INCOMPLETE" in open(log).read(), "console.log not marked incomplete")
    mdir = os.path.dirname(os.path.dirname(boot))
    check(sorted(os.listdir(os.path.dirname(boot))) == ["boot1"], "the matrix went on")
    check(not os.path.exists(os.path.join(mdir, "summary.txt")), "summary of an interrupted matrix")


@case("QEMU killed by a signal (KILL, TERM) is reported as such; exit 8")
def _(ctx):
    for sig, num in ((signal.SIGKILL, 9), (signal.SIGTERM, 15)):
        root = os.path.join(ctx.tmp, f"kill{num}")
        boot = LongBoot(root)
        d = boot.wait_started()
        q = qemu_of(boot.p.pid)
        check(q is not None, "no QEMU process under run.sh")
        os.kill(q, sig)
        rc, out, err = boot.finish()
        check(rc == 8 and f"QEMU-KILLED (signal {num}" in err, f"{sig.name}: exit {rc}: {err}")
        check("Killed" not in err.replace("KILLED", ""), f"bash job notice leaked: {err}")
        doc = json.load(open(os.path.join(d, "results.json")))
        check(doc["run"]["status"] == "QEMU-KILLED", f"results status {doc['run']['status']}")


@case("a boot past --timeout is stopped; exit 7")
def _(ctx):
    expect(run("--accel", "tcg", "--no-save", "--quiet", "--smp", "2", "--timeout", "1",
               "--append", LONG), 7, "TIMEOUT")


# --- what run.sh prints (docs/host-tools.md, "What run.sh prints")


def progress(out):
    """The [i/N] and [i-j/N] lines of run.sh's output: (indices covered in
    order, the totals, {index: its line})."""
    covered, totals, lines = [], set(), {}
    for m in re.finditer(r"^\[ *(\d+)(?:-(\d+))?/(\d+)\] (.*)$", out, re.M):
        span = range(int(m.group(1)), int(m.group(2) or m.group(1)) + 1)
        covered += span
        totals.add(int(m.group(3)))
        lines.update((i, m.group(0)) for i in span)
    return covered, totals, lines


@case("the default plan at -smp 4: a progress line per phase, then a summary in 80x50")
def _(ctx):
    root = os.path.join(ctx.tmp, "console")
    # A first run in a fresh tree, as a new user's is: the whole build must
    # come to one line. A copy, not a touched source here: a rebuild in the
    # repository would relink every unit test and race the other groups'
    # boots of build/ (tests/run runs two groups at a time).
    tree = source_tree(os.path.join(ctx.tmp, "tree"))
    rc, out, err = expect(run_cmd([os.path.join(tree, "run.sh"), "--accel", "tcg-single",
                                   "--smp", "4"], env={"IPIBENCH_RESULTS": root},
                                  timeout=120), 0)
    d = os.path.join(root, os.listdir(root)[0])
    log = open(os.path.join(d, "console.log")).read()
    phases = [json.loads(l) for l in log.splitlines() if l.startswith('{"record":"phase"')]
    covered, totals, lines = progress(out)
    check(phases and covered == list(range(1, len(phases) + 1)) and totals == {len(phases)},
          f"{len(phases)} phases, progress covers {covered} of {totals}")
    for p in phases:
        line = lines[p["index"]]
        check(p["backend"] in line or p["bench"] in line, f"{p}: {line}")
    check(re.search(r"^check xapic: \d+ passed \.\.\. [0-9.]+ s$", out, re.M), "suite line")
    check(re.search(r"hv-icr.* \.\.\. SKIP: no Hyper-V interface", out), "a SKIP's reason")
    # The console's raw material stays in console.log; none of it on screen.
    check("\r" not in out and '{"record":' not in out and not re.search(r"^ok \d", out, re.M)
          and not re.search(r"^(broadcast|self|norov) ", out, re.M), f"raw lines: {out[:600]}")
    check(re.search(r"^smp: 4 of 4 CPUs online$", out, re.M), "boot facts")
    # The summary: within one 80x50 screen, each backend's figures as results.json has them.
    summary = out[out.index("\nsummary: ") + 1:].splitlines()
    check(len(summary) <= 50 and max(map(len, summary)) < 80,
          f"summary of {len(summary)} lines, widest {max(map(len, summary))}")
    recs = json.load(open(os.path.join(d, "results.json")))["records"]
    for b in ("xapic", "xapic-logical", "x2apic", "x2apic-cluster"):
        row = re.search(rf"^{b} +cyc (.*)$", out, re.M)
        check(row, f"no row for {b}")
        for bench, metric in (("send-cost", "send"), ("single", "round-trip"),
                              ("single-halt", "round-trip")):
            r = next(x for x in recs if x["record"] == "result" and x["backend"] == b and
                     (x["bench"], x["metric"]) == (bench, metric))
            check(str(r["cycles"]["p50"]) in row.group(1).split(), f"{b} {bench}: {row.group(0)}")
    check("skipped: hv-icr, hv-ipi, hv-ipi-slow, hv-ipi-ex, hv-ipi-ex-pad, hv-ipi-ex-xmm: no "
          "Hyper-V" in " ".join(out.split()),
          "skipped backends")
    check("skipped: xen-evtchn: no Xen CPUID leaves" in " ".join(out.split()),
          "xen-evtchn skipped for want of Xen")
    check(re.search(r"^correctness: check all: \d+ passed, 0 failed", out, re.M), "correctness")
    check(err.endswith(f"run.sh: done, nothing failed (guest status SKIP, exit 0)\n"
                       f"run.sh: results: {d}\n"), err[-300:])
    # Measured as the default root names it (results/), not this test's.
    console_once(out, err.replace(d, "results/" + os.path.basename(d)), recs)


def console_once(out, err, recs):
    """The console: the build in one line; after the last progress line
    one 80x50 screen; each condition said once; every SKIP with its reason;
    withheld one-way figures counted apart; the closing lines in words."""
    both = out + err
    steps = re.findall(r"^ +(?:CC|LD|OBJCOPY|NASM|GEN|HOSTCC) +\S+$", both, re.M)
    built = re.findall(r"^run\.sh: built the guest: .*$", both, re.M)
    check(not steps and len(built) == 1, f"build output: {len(steps)} steps, {built}")
    lines = out.splitlines()
    last = max(i for i, line in enumerate(lines) if re.match(r"\[ *\d+(-\d+)?/\d+\] ", line))
    screen = lines[last + 1:] + err.rstrip("\n").splitlines()[-2:]
    check(len(screen) <= 50 and max(map(len, screen)) <= 80,
          f"after the progress lines: {len(screen)} lines, widest {max(map(len, screen))}")
    flat = " ".join(line.strip() for line in screen)
    every = " ".join(line.strip() for line in both.splitlines())  # wrapped lines joined
    # TCG once (the closing words), the TSC's warning once, Hyper-V's reason in full once.
    hv = next(r["reason"] for r in recs if r["record"] == "result" and
              r["backend"] == "hv-icr" and r["status"] == "SKIP")
    check(every.count("emulates every instruction") == 1 and "running under TCG" not in every
          and "timings are emulated" not in every, "TCG said more than once")
    check(every.count("no invariant TSC") == 1 and "NOT invariant" not in every, "the TSC twice")
    check(every.count(hv) == 1 and every.count("no Hyper-V interface") > 3, f"{hv!r} not once")
    # Every SKIP with its reason, if only by its head.
    for i, line in enumerate(lines):
        if "SKIP" in line and re.match(r"(\[|check )", line):
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            check("SKIP: " in line or nxt.startswith("    SKIP: "), f"no reason: {line}")
    # One-way figures withheld for TSC skew: counted apart, their cause said once.
    held = [r for r in recs if r["record"] == "result" and r["status"] == "SKIP" and
            r.get("reason", "").startswith("one-way not reported: ")]
    if held:
        check(re.search(r"^\[ *\d+/\d+\] \S+ broadcast \.\.\. [0-9.]+ s, \d+ one-way figures? "
                        r"withheld \(TSC skew\)$", out, re.M) and
              "one-way not reported" not in every and len(re.findall(r"^    withheld: ", out,
                                                                      re.M)) == 1,
              "withheld figures")
        check(re.search(rf"^withheld: {len(held)} one-way figures? \(TSC skew, see above\)$", out,
                        re.M), "the summary's withheld line")
    check("ipibench: status SKIP" not in out and "QEMU exit 67" not in both, "status in code")
    for want in (r"proved: on \d+ backends every IPI of \d+ delivery checks reached exactly the "
                 r"CPUs it was sent to, once each; also passed: \d+ mode-switch, .*\d+ "
                 r"wake-from-HLT, \d+ NMI masking checks; 3 flush checks passed \(native: "
                 r"each flush completed, and no target read through a stale translation "
                 r"after it\); \d+ backends SKIPped every check "
                 r"\(above\); figures are emulated",
                 r"why SKIP, exit 0: nothing failed; what could not run is the normal outcome "
                 r"here \(reasons above\): \d+ backends, \d+ checks and \d+ figures? under TCG; "
                 r"1 backend and \d+ figures in this configuration",  # xen-evtchn: no Xen
                 r"next: on a KVM host, \./run\.sh --accel kvm --preset hv .*\./run\.sh report "
                 r"DIR"):
        check(re.search(want, flat), f"closing lines lack /{want}/: {flat[-600:]}")
    check(re.search(r"^topology: from CPUID \S+, \d+ packages? x \d+ cores? x 1 thread; APIC "
                    r"ID = package\.core\.thread: 0=0\.0\.0 1=\S+ 2=\S+ 3=\S+$", out, re.M),
          "topology line")


@case("-smp with threads=2 on TCG's AMD model: QEMU's topoext warning explained, threads decoded")
def _(ctx):
    rc, out, err = expect(run("--accel", "tcg-single", "--no-save", "--smp",
                              "4,sockets=1,cores=2,threads=2", "--append", "plan=boot"), 0)
    lines = (out + err).splitlines()
    at = [i for i, line in enumerate(lines) if "doesn't support hyperthreading" in line]
    check(len(at) == 1 and lines[at[0] + 1].startswith("  why: ") and
          "add +topoext to -cpu" in lines[at[0] + 1], f"{lines[:4]}")
    check(re.search(r"^topology: from CPUID 0xb, 1 package x 2 cores x 2 threads; APIC ID = "
                    r"package\.core\.thread: 0=0\.0\.0 1=0\.0\.1 2=0\.1\.0 3=0\.1\.1$", out,
                    re.M), out[:800])


@case("--verbose streams the whole console, records and TAP lines, as the log has it")
def _(ctx):
    append = "plan=default backends=x2apic bench=send-cost iters=5 warmup=1 budget=1"
    root = os.path.join(ctx.tmp, "verbose")
    rc, out, err = expect(run("--accel", "tcg-single", "--smp", "2", "--verbose", "--append",
                              append, env={"IPIBENCH_RESULTS": root}), 0)
    log = open(os.path.join(root, os.listdir(root)[0], "console.log")).read()
    check(out == log, "--verbose printed other than console.log")
    check('{"record":"phase"' in out and re.search(r"^ok 1 - ", out, re.M) and
          not re.search(r"^\[\d+/\d+\] ", out, re.M) and "summary:" not in out, out[-400:])
    # That the default run prints no records is the default plan's case's
    # check: each case runs alone too (--case, tests/host/on_hosts.py).


@case("--memory below what the guest needs: exit 2 at once, with the minimum")
def _(ctx):
    t0 = time.monotonic()
    expect(run("--accel", "tcg-single", "--no-save", "--memory", "1", "--timeout", "20"), 2,
           "--memory 1 (1 MiB) is below what the guest needs at -smp 4: 3 MiB")
    check(time.monotonic() - t0 < 10, "not at once")
    expect(run("--no-save", "--memory", "many"), 2, "--memory takes a size")
    root = os.path.join(ctx.tmp, "mem")
    expect(run("matrix", "--presets", "x2apic", "--smp", "64", "--memory", "4M",
               env={"IPIBENCH_RESULTS": root}), 2, "at -smp 64: 5 MiB")
    check(not os.path.exists(root), "a refused matrix created results")
    # The minimum is enough: the default plan at -smp 4 in 3 MiB.
    expect(run("--accel", "tcg-single", "--no-save", "--quiet", "--memory", "3M"), 0, "SKIP")


@case("QEMU that cannot start: exit 8, and QEMU's own line is run.sh's last")
def _(ctx):
    rc, out, err = expect(run("--accel", "tcg-single", "--no-save", "--", "-device",
                              "nonexistent"), 8, "QEMU-FAILED")
    last = err.strip().splitlines()[-1]
    check(last == "qemu-system-x86_64: -device nonexistent: 'nonexistent' is not a valid device "
          "model name", f"last line: {last!r}")


@case("past --timeout, run.sh's message quotes where the guest was")
def _(ctx):
    # The sender waits a minute for an IPI its target swallowed: inside [1/2].
    rc, out, err = expect(run("--accel", "tcg-single", "--no-save", "--timeout", "4",
                              "--append", "plan=bench bench=single,send-cost backends=x2apic "
                              "debug=swallow-ipi deadline=60000"), 7)
    check(re.search(r"^run\.sh: TIMEOUT \(QEMU exit 124\) after 4 s; last progress: \[1/2\] "
                    r"x2apic send-cost \.\.\. [0-9.]+ s$", err, re.M), err[-300:])
    check(re.search(r"^\[1/2\] x2apic send-cost \.\.\. [0-9.]+ s, stopped: TIMEOUT$", out,
                    re.M), out[-300:])
    # Stuck in bring-up, nothing printed but the final line: the guest's last line.
    rc, out, err = expect(run("--accel", "tcg", "--no-save", "--quiet", "--smp", "2",
                              "--timeout", "3", "--append", LONG), 7)
    check(out == "" and re.search(r"^run\.sh: TIMEOUT \(QEMU exit 124\) after 3 s; the guest's "
                                  r"last line: '(acpi|smp): ", err, re.M), err[-300:])


@case("two runs started at once write into two directories, never into a taken one")
def _(ctx):
    root = os.path.join(ctx.tmp, "twice")
    # Take the names of the next seconds, so that both runs collide for sure.
    now = time.time()
    taken = {time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(now + k)) + "-same" for k in range(-1, 8)}
    for d in taken:
        os.makedirs(os.path.join(root, d))
    args = [RUN, "--accel", "tcg", "--smp", "1", "--quiet", "--label", "same", "--append",
            "plan=boot"]
    env = dict(os.environ, IPIBENCH_RESULTS=root)
    ps = [subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE) for _ in range(2)]
    rcs = [p.wait(timeout=60) for p in ps]
    check(rcs == [0, 0], f"exits {rcs}")
    new = sorted(set(os.listdir(root)) - taken)
    check(len(new) == 2 and all(re.search(r"-same\.[0-9]+$", d) for d in new), f"new {new}")
    for d in new:
        check(os.path.exists(os.path.join(root, d, "results.json")), f"{d} has no results")
    for d in taken:
        check(not os.listdir(os.path.join(root, d)), f"{d} was written into")


@case("--pin and --perf-kvm without KVM fail clearly (exit 29); --pin pins through QMP")
def _(ctx):
    expect(run("--accel", "tcg", "--no-save", "--pin", "--append", "plan=boot"), 29,
           "--pin needs KVM")
    expect(run("--accel", "tcg", "--no-save", "--perf-kvm", "--append", "plan=boot"), 29,
           "--perf-kvm needs KVM")
    # The QMP path itself does not need KVM: exercise it under TCG.
    root = os.path.join(ctx.tmp, "pin")
    cpus = machine.allowed_cpus()
    spec = ",".join(map(str, (cpus * 2)[:2]))
    expect(run("--accel", "tcg", "--quiet", "--smp", "2", f"--pin={spec}", "--append",
               "plan=boot", env={"IPIBENCH_RESULTS": root, "IPIBENCH_PIN_ANY_ACCEL": "1"}), 0)
    d = os.path.join(root, os.listdir(root)[0])
    pin = json.load(open(os.path.join(d, "results.json")))["run"]["pin"]
    check(pin["state"] == "pinned" and pin["why"] == "asked: --pin", f"{pin}")
    pin = pin["map"]
    check([p["vcpu"] for p in pin] == [0, 1] and all(p["thread_id"] > 0 for p in pin),
          f"pin map {pin}")
    check([p["host_cpu"] for p in pin] == [int(x) for x in spec.split(",")], f"{pin}")
    cmd = json.load(open(os.path.join(d, "results.json")))["host"]["qemu_cmdline"]
    check("-S" in cmd and "-qmp" in cmd, "QEMU was not started paused with QMP")


def host_read_records(root):
    """single-halt's records of a run: SUCCESS, or a one-way figure withheld
    (SKIP) because the TSC skew bound was too wide, which a loaded host
    decides under TCG; either way the record carries its pass's host read."""
    d = os.path.join(root, os.listdir(root)[0])
    doc = json.load(open(os.path.join(d, "results.json")))
    return d, doc, [r for r in doc["records"] if r.get("bench") == "single-halt"
                    and r.get("status") in ("SUCCESS", "SKIP")]


@case("--host-stats: the guest waits at each single-halt edge until run.sh has read QMP")
def _(ctx):
    expect(run("--accel", "tcg", "--no-save", "--machine", "microvm", "--host-stats"), 2,
           "microvm does not have")
    base = "plan=bench bench=single-halt backends=x2apic iters=3 warmup=1 budget=1"
    # Asked under TCG: run.sh answers every edge; QEMU has no KVM statistics.
    root = os.path.join(ctx.tmp, "host-stats")
    expect(run("--accel", "tcg", "--quiet", "--machine", "pc", "--smp", "2", "--host-stats",
               "--append", base, env={"IPIBENCH_RESULTS": root}), 0)
    d, doc, recs = host_read_records(root)
    check(len(recs) == 7 and len({r["host_read"] for r in recs}) == 4,
          f"four passes, one host read each: {[(r['variant'], r.get('host_read')) for r in recs]}")
    check(all(r["host_read_state"] == "answered" for r in recs), "every edge answered")
    check(all("no KVM statistics" in r["host_stats"]["status"] for r in recs),
          f"{recs[0].get('host_stats')}")
    check(doc["run"]["host_stats"] == {"reads": 8, "records": 7, "log": "host-reads.log"},
          f"{doc['run']['host_stats']}")
    log = open(os.path.join(d, "host-reads.log")).read()
    check(log.count("@@@ host-read-stats ") == 8 and "@@@ host-read-cpus " in log, log[:300])
    # A COM2 nobody answers: each edge waits out deadline= and says so.
    root = os.path.join(ctx.tmp, "host-stats-unanswered")
    expect(run("--accel", "tcg", "--quiet", "--machine", "pc", "--smp", "2", "--append",
               base + " host_stats=1 deadline=200", "--", "-chardev", "null,id=mute",
               "-serial", "chardev:mute", env={"IPIBENCH_RESULTS": root}), 0)
    _, _, recs = host_read_records(root)
    check(recs and all(r["host_read_state"] == "unanswered" and
                       "unanswered" in r["host_stats"]["status"] for r in recs), f"{recs[:1]}")
    # No COM2 at all: nothing to wait on.
    root = os.path.join(ctx.tmp, "host-stats-no-port")
    expect(run("--accel", "tcg", "--quiet", "--machine", "pc", "--smp", "2", "--append",
               base + " host_stats=1", env={"IPIBENCH_RESULTS": root}), 0)
    _, _, recs = host_read_records(root)
    check(recs and all(r["host_read_state"] == "no-port" for r in recs), f"{recs[:1]}")


@case("--exits: 29 under TCG or without tracefs; the Xen lane traces with xentrace; with a "
      "tracefs, QEMU's threads traced, then undone")
def _(ctx):
    expect(run("--accel", "tcg", "--no-save", "--exits", "--append", "plan=boot"), 29,
           "--exits traces KVM's events", "--accel kvm-in-tcg")
    # The Xen lane's frame is traced (xen-lane.sh --exits) and marked (markers=1).
    expect(run("--accel", "xen-in-tcg", "--dry-run", "--exits", "--append", "plan=boot"), 0,
           "--exits", "plan=boot markers=1")
    empty = os.path.join(ctx.tmp, "no-tracefs")
    os.makedirs(empty)
    expect(run("--accel", "tcg-single", "--no-save", "--exits", "--append", "plan=boot",
               env={"IPIBENCH_PIN_ANY_ACCEL": "1", "IPIBENCH_HOST_ROOT": empty}), 29,
           "no tracefs with KVM's events")
    traced = os.path.join(ctx.tmp, "traced-host")
    t = stand_in_tracefs(os.path.join(traced, "sys", "kernel", "tracing"))
    res = os.path.join(ctx.tmp, "exits-results")
    rc, out, err = expect(run("--accel", "tcg-single", "--smp", "2", "--exits", "--quiet",
                              "--append", "plan=bench bench=send-cost backends=x2apic iters=5 "
                              "warmup=1 budget=1",
                              env={"IPIBENCH_PIN_ANY_ACCEL": "1", "IPIBENCH_HOST_ROOT": traced,
                                   "IPIBENCH_RESULTS": res}), 0,
                          "tracing ", "QEMU threads: kvm_exit kvm_pio kvm_msr",
                          "not on this kernel: kvm_hypercall", "what the hypervisor did")
    check(re.search(r"tracing ([2-9]|\d\d+) QEMU threads", err), "QEMU's threads not listed")
    for f, want in (("events/kvm/kvm_exit/enable", "0"), ("events/kvm/kvm_exit/filter", "0"),
                    ("set_event_pid", ""), ("tracing_on", "0")):
        got = open(os.path.join(t, f)).read().strip()
        check(got == want, f"{f} left at {got!r} after the run")
    d = os.path.join(res, os.listdir(res)[0])
    check(os.path.exists(os.path.join(d, "kvm-trace.txt")), "no kvm-trace.txt kept")
    doc = json.load(open(os.path.join(d, "results.json")))
    check(doc["run"]["exits"] is not None and "markers=1" in " ".join(doc["host"]["qemu_cmdline"]),
          "markers not asked or exits not saved")
    expect(run("--accel", "tcg", "--no-save", "--require-apicv", "--append", "plan=boot"), 2,
           "--require-apicv reads the KVM trace: it needs --exits")


def stand_in_kvm_tree(root, avic="0"):
    """A /sys and /proc for `ab` (IPIBENCH_HOST_ROOT) and a modprobe that writes the
    parameter, granting avic=1 as N, like kvm_amd on a CPU without AVIC. avic's
    file is read-only, as kvm_amd's is: ab reloads the module for it."""
    os.makedirs(os.path.join(root, "sys/module/kvm_amd/parameters"))
    os.makedirs(os.path.join(root, "proc"))
    with open(os.path.join(root, "sys/module/kvm_amd/initstate"), "w") as f:
        f.write("live\n")
    with open(os.path.join(root, "sys/module/kvm_amd/parameters/avic"), "w") as f:
        f.write(avic + "\n")
    os.makedirs(os.path.join(root, "sys/module/kvm/parameters"))
    with open(os.path.join(root, "sys/module/kvm/initstate"), "w") as f:
        f.write("live\n")
    with open(os.path.join(root, "sys/module/kvm/parameters/halt_poll_ns"), "w") as f:
        f.write("200000\n")  # 0644: written, not reloaded
    os.chmod(os.path.join(root, "sys/module/kvm_amd/parameters/avic"), 0o444)
    with open(os.path.join(root, "proc/cpuinfo"), "w") as f:
        f.write("flags : fpu sse svm\n")
    mp = os.path.join(root, "modprobe")
    with open(mp, "w") as f:
        f.write(f"#!/bin/sh\n[ \"$1\" = -r ] && exit 0\nv=${{2#*=}}; [ \"$v\" = 1 ] && v=N\n"
                f"f={root}/sys/module/$1/parameters/${{2%%=*}}\n"
                "rm -f \"$f\"; echo \"$v\" > \"$f\"; chmod 444 \"$f\"\n")
    os.chmod(mp, 0o755)
    return {"IPIBENCH_HOST_ROOT": root, "IPIBENCH_AB_EUID": "0", "IPIBENCH_AB_MODPROBE": mp}


@case("ab refuses what it cannot do (33, nothing changed); sets, reports, compares, puts back")
def _(ctx):
    root = os.path.join(ctx.tmp, "ab")
    env = stand_in_kvm_tree(root)
    avic = os.path.join(root, "sys/module/kvm_amd/parameters/avic")
    expect(run("ab", "--module-param", "kvm_amd.avic=1", env=env), 2, "two values")
    expect(run("ab", "--module-param", "kvm_amd.foo=0,1", env=env), 33,
           "unknown parameter kvm_amd.foo: kvm_amd has avic;")
    expect(run("ab", "--module-param", "kvm_amd.avic=0,on", env=env), 33,
           "kvm_amd.avic takes an integer, or Y or N (it reads 0), not 'on'")
    expect(run("ab", "--module-param", "kvm_amd.a/b=0,1", "--accel", "kvm-in-tcg", env=env),
           33, "never a path")
    expect(run("ab", "--module-param", "kvm_amd.avic=0,1", "--accel", "tcg-single",
               env=dict(env, IPIBENCH_AB_EUID="1000")), 33, "needs root", "nothing was changed")
    expect(run("ab", "--module-param", "kvm_intel.enable_apicv=0,1", "--accel", "tcg-single",
               env=env), 33, "not loaded here")
    os.makedirs(os.path.join(root, "proc/4242/fd"))
    os.symlink(machine.KVM_DEVICE, os.path.join(root, "proc/4242/fd/3"))
    with open(os.path.join(root, "proc/4242/comm"), "w") as f:
        f.write("qemu-other\n")
    expect(run("ab", "--module-param", "kvm_amd.avic=0,1", "--accel", "tcg-single", env=env), 33,
           "/dev/kvm is held by 4242 (qemu-other)", "nothing was changed")
    check(open(avic).read().strip() == "0", "a refusal changed the parameter")
    os.unlink(os.path.join(root, "proc/4242/fd/3"))
    res = os.path.join(ctx.tmp, "ab-results")
    small = ["--accel", "tcg-single", "--smp", "2", "--append",
             "plan=bench bench=send-cost backends=x2apic iters=5 warmup=1 budget=1"]
    # avic=1 granted as N, as A's 0: the question ends there: side B is not
    # booted, nothing is compared, the refusal said once.
    rc, out, err = expect(run("ab", "--module-param", "kvm_amd.avic=0,1", "--boots", "1",
                              *small, env=dict(env, IPIBENCH_RESULTS=res)), 34,
                          "asked 1, got N: the CPU has no AVIC", "put back to 0",
                          "ab: both sides would run with kvm_amd.avic=N: nothing to compare")
    check((out + err).count("asked 1, got N") == 1 and "B=1 against A=0" not in out and
          "send-cost" not in out, f"compared, or said twice: {(out + err)[-800:]}")
    (ab_dir,) = os.listdir(res)
    check(sorted(os.listdir(os.path.join(res, ab_dir))) == ["kvm_amd.avic_0", "summary.txt"],
          f"side B booted: {os.listdir(os.path.join(res, ab_dir))}")
    check(open(avic).read().strip() == "0", "not put back after the run")
    # Two values granted as asked: both sides booted and compared.
    poll = os.path.join(root, "sys/module/kvm/parameters/halt_poll_ns")
    rc, out, err = expect(run("ab", "--module-param", "kvm.halt_poll_ns=0,1000", "--boots", "1",
                              *small, env=dict(env, IPIBENCH_RESULTS=res)), 0,
                          "asked 1000, got 1000", "put back to 200000",
                          "ab: kvm.halt_poll_ns: B=1000 against A=0", "send-cost")
    check(open(poll).read().strip() == "200000", "halt_poll_ns not put back after the run")
    # A failing boot on each side still puts the parameter back, and its code
    # comes out: a clash of debug keys only the guest refuses (BAD-CMDLINE).
    expect(run("ab", "--module-param", "kvm_amd.avic=0,1", "--boots", "1", "--accel",
               "tcg-single", "--append", "debug=late-wake,no-halt-mark",
               env=dict(env, IPIBENCH_RESULTS=res)), 6, "put back to 0")
    check(open(avic).read().strip() == "0", "not put back after failing boots")


# --- a configuration that needs KVM where KVM cannot run it


def kvm_refusing_qemu(tmp):
    """QEMU= for run.sh: a QEMU whose KVM refuses every vCPU model with what
    this project's PVM-flavoured KVM says to the Hyper-V flags; anything else
    goes to the real QEMU. run.sh then finds no KVM for the model whether or
    not this host has a /dev/kvm, and whatever that KVM could run."""
    path = os.path.join(tmp, "qemu-kvm-refuses")
    real = shutil.which("qemu-system-x86_64")
    refusal = "qemu-system-x86_64: kernel doesn't allow setting HyperV VP_INDEX"
    with open(path, "w") as f:
        f.write("#!/bin/sh\n"
                f'case " $* " in *" -accel kvm "*) echo "{refusal}" >&2; exit 1 ;; esac\n'
                f'exec "{real}" "$@"\n')
    os.chmod(path, 0o755)
    return path


@case("a preset or -cpu flags needing KVM where KVM cannot run them: exit 31, how to run it")
def _(ctx):
    root = os.path.join(ctx.tmp, "needkvm")
    # A hardware KVM's host (tests/host/hosts.py) whose QEMU refuses the model.
    env = {"QEMU": kvm_refusing_qemu(ctx.tmp), "IPIBENCH_RESULTS": root,
           "IPIBENCH_HOST_ROOT": hosts.make(ctx.tmp, "intel-kvm")}
    for p in ("hv-xmm", "kvm-pv"):
        expect(run("--preset", p, "--append", "plan=boot", env=env), 31,
               f"preset {p} needs KVM", f"--accel kvm-in-tcg --preset {p}", "--allow-fallback")
    expect(run("--cpu", "max,hv-vpindex", "--append", "plan=boot", env=env), 31,
           "-cpu max,hv-vpindex needs KVM", "offers hv-vpindex", "--accel kvm-in-tcg")
    # A matrix stops before its first boot, naming the preset.
    rc, _, err = expect(run("matrix", "--presets", "x2apic,hv", "--boots", "1", "--append",
                            "plan=boot", env=env), 31, "preset hv needs KVM")
    check("preset x2apic" not in err, f"x2apic named: {err[-300:]}")
    check(not os.path.exists(root), "a refused configuration still created results")


@case("--allow-fallback runs such a preset under TCG with a warning; x2apic falls back as before")
def _(ctx):
    root = os.path.join(ctx.tmp, "fallback")
    # A hardware KVM that refuses the model, not a software one (a fixture
    # host, tests/host/hosts.py): this host's own must not decide the path.
    env = {"QEMU": kvm_refusing_qemu(ctx.tmp), "IPIBENCH_RESULTS": root,
           "IPIBENCH_HOST_ROOT": hosts.make(ctx.tmp, "intel-kvm")}
    _, _, err = expect(run("--preset", "hv", "--allow-fallback", "--quiet", "--append",
                           "plan=boot", env=env), 0, "warning:", "--allow-fallback",
                       "running preset hv under TCG")
    check("needs KVM" not in err, f"stderr: {err[-300:]}")
    (d,) = os.listdir(root)
    doc = json.load(open(os.path.join(root, d, "results.json")))
    cmd = " ".join(doc["host"]["qemu_cmdline"])
    check(doc["host"]["accel"] == "tcg-single" and doc["run"]["preset"] == "hv" and
          "-cpu max,hv-relaxed,hv-vpindex" in cmd, f"accel {doc['host']['accel']}, QEMU {cmd}")
    # Under TCG the APIC presets mean what they say: a notice, no error.
    for p in ("x2apic", "xapic"):
        _, _, err = expect(run("--preset", p, "--no-save", "--quiet", "--append", "plan=boot",
                               env=env), 0, "running under TCG")
        check("needs KVM" not in err and "warning" not in err, f"{p}: {err[-300:]}")
    # A matrix passes --allow-fallback on to its boots.
    expect(run("matrix", "--presets", "kvm-pv", "--boots", "1", "--allow-fallback",
               "--append", "plan=boot", "--label", "fb", env=env), 0, "exit 0")


# --- every kind of host KVM


def kvm_kinds(tmp):
    """(kind, environment, argv before run.sh, reason) of each kind of host
    but a hardware KVM, as run.sh meets it through the seam's fixture hosts
    (tests/host/hosts.py), whatever this host's own; prepared already
    (IPIBENCH_PREPARED): nothing is built."""
    env = {"IPIBENCH_PREPARED": "1", "IPIBENCH_RESULTS": os.path.join(tmp, "results")}

    def on(name, where=tmp):
        return dict(env, IPIBENCH_HOST_ROOT=hosts.make(where, name))
    regular = dict(env, IPIBENCH_HOST_ROOT=hosts.make(os.path.join(tmp, "regular"), "intel-kvm",
                                                       dev_kvm="file"))
    return [("no /dev/kvm", on("no-kvm"), [], "/dev/kvm is missing (No such file or directory)"),
            ("not a character device", regular, [],
             "/dev/kvm is not a character device (it is a regular file)"),
            ("software KVM (PVM)", on("pvm"), [], "this host's /dev/kvm is PVM (module kvm_pvm"),
            ("not accessible", on("kvm-closed"), [],
             "/dev/kvm is not accessible (Permission denied)")]


def last_line(res):
    return (res[1] + res[2]).strip().split("\n")[-1]


@case("--accel kvm where KVM is not usable, on every kind of host: exit 31, the reason last")
def _(ctx):
    tmp = os.path.join(ctx.tmp, "kvm-kinds")
    kinds = kvm_kinds(tmp)
    for kind, env, before, why in kinds:
        for args in (["--exits", "--accel", "kvm", "--preset", "x2apic", "--no-save"],
                     ["matrix", "--presets", "x2apic,kvm-pv", "--boots", "1", "--accel",
                      "kvm", "--exits", "--label", "base"]):
            res = run_cmd([*before, RUN, *args], env, 60)
            check(res[0] == 31 and why in last_line(res) and
                  last_line(res).startswith("run.sh: --accel kvm"),
                  f"{kind}: {' '.join(args[:2])}: exit {res[0]}: {last_line(res)}")
    # A plain --accel kvm without a device: the same refusal. On PVM --pin
    # and --perf-kvm are refused as --exits is (a plain boot there runs,
    # with a warning: test_accel.py and test_trust.py).
    expect(run("--accel", "kvm", "--preset", "x2apic", "--no-save", env=kinds[0][1]), 31,
           "--accel kvm: KVM is not usable here: ")
    pvm = kinds[2][1]
    res = expect(run("--pin", "--perf-kvm", "--accel", "kvm", "--no-save", env=pvm), 31,
                 "--accel kvm with --pin and --perf-kvm: this host's /dev/kvm is PVM")
    check("never a hardware hypervisor's" in last_line(res), last_line(res))
    # A hardware KVM (/dev/null: a device any user opens) without tracefs:
    # KVM as asked; --exits unavailable there is 29, as before.
    hw = dict(kinds[0][1], IPIBENCH_HOST_ROOT=hosts.make(tmp, "intel-kvm"))
    for args in (["--exits", "--accel", "kvm", "--preset", "x2apic", "--no-save"],
                 ["matrix", "--presets", "x2apic", "--accel", "kvm", "--exits"]):
        expect(run(*args, env=hw), 29, "--exits: no tracefs with KVM's events")
    # ab refuses before it touches the module.
    # (A host whose KVM modules are loaded and whose /dev/kvm is missing.)
    ab = dict(kinds[0][1], **stand_in_kvm_tree(os.path.join(tmp, "ab")))
    res = expect(run("ab", "--module-param", "kvm.halt_poll_ns=0,1000", "--boots", "1",
                     "--accel", "kvm", "--exits", env=ab), 31, kinds[0][3])
    check("asked 0" not in res[2] and kinds[0][3] in last_line(res), res[2][-400:])
    check(not os.path.exists(os.path.join(tmp, "results")), "a refusal created results")


# --- bad input and help


@case("help of every subcommand; unknown configuration (26); QEMU too old (27)")
def _(ctx):
    for sub in ([], ["run"], ["matrix"], ["list"], ["compare"], ["gate"], ["report"]):
        expect(run(*sub, "--help"), 0, "usage")
    rc, out, _ = expect(run("list", "--names"), 0)
    from ipibench.presets import load_presets, PRESETS
    names = list(load_presets(PRESETS))
    check(out.split() == names and names[:2] == ["x2apic", "xapic"], f"names {out.split()}")
    root = os.path.join(ctx.tmp, "bad")
    expect(run("--preset", "nope", "--accel", "tcg", env={"IPIBENCH_RESULTS": root}), 26,
           "unknown configuration 'nope'")
    # A Xen preset elsewhere: which accelerator runs it, not "unknown".
    expect(run("--preset", "xen-pvh", "--accel", "tcg", env={"IPIBENCH_RESULTS": root}), 26,
           "xen-pvh is a Xen preset", "runs under --accel xen-in-tcg or xen, not --accel tcg")
    expect(run("matrix", "--presets", "xapic,nope", "--accel", "tcg",
               env={"IPIBENCH_RESULTS": root}), 26, "'nope'")
    check(not os.path.exists(root), "a bad configuration name still created results")
    fake = os.path.join(ctx.tmp, "qemu-old")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\necho 'QEMU emulator version 7.2.0 (Debian 1:7.2+dfsg-7)'\n")
    os.chmod(fake, 0o755)
    expect(run("--accel", "tcg", "--no-save", env={"QEMU": fake}), 27, "QEMU 7.2", "too old")
    expect(run("--bogus"), 2, "unknown option")
    # One voice: every subcommand answers an unknown option in a few lines,
    # the reason, a did-you-mean, where the help is; never the whole help.
    for sub in ([], ["run"], ["matrix"], ["ab"], ["list"], ["compare"], ["gate"], ["report"],
                ["history"], ["model"], ["lava"]):
        rc, out, err = run_cmd(IPIBENCH + sub + ["--exitz"])
        lines = (out + err).strip().splitlines()
        check(rc == 2 and len(lines) <= 5 and "--help lists" in lines[-1] and
              not any(line.startswith("usage:") for line in lines),
              f"{sub}: exit {rc}, {len(lines)} lines: {lines[:6]}")
    rc, out, err = run_cmd(IPIBENCH + ["--exit"])
    check("did you mean --exits?" in err, f"no did-you-mean: {err}")
    expect(run("matrix", "--presets", "xapic", "--boots", "0"), 2, "--boots")


@case("--dry-run under every accelerator: what would run is printed, nothing boots or is saved")
def _(ctx):
    root = os.path.join(ctx.tmp, "dry")
    env = {"IPIBENCH_RESULTS": root}
    _, out, err = expect(run("--dry-run", "--accel", "tcg", "--smp", "2", "--append", "plan=check",
                             env=env), 0, "nothing was booted")
    line = out.strip().splitlines()
    check(len(line) == 1 and line[0].startswith("qemu-system-x86_64 -accel tcg") and
          "-smp 2 " in line[0] and "-kernel build/ipibench.elf32 -append plan=check" in line[0],
          f"not one QEMU command line: {out}")
    _, out, _ = expect(run("--dry-run", "--accel", "kvm-in-tcg", "--preset", "kvm-pv", env=env), 0)
    check(re.search(r"^host/lane/lane\.sh --image \S+ --presets kvm-pv ", out, re.M) and
          re.search(r"^in the lane's outer VM .*: qemu-system-x86_64 -accel kvm -cpu host,"
                    r"kvm-pv-ipi\S* -smp \d ", out, re.M), f"no lane command and frame: {out}")
    _, out, err = expect(run("--dry-run", "--accel", "xen-in-tcg", "--preset", "xen-pvh", env=env),
                         0, "skips what its outer emulator cannot run (skip=tpr-hold,self-tpr")
    check(re.search(r"^frame xen-pvh: the guest's command line: skip=tpr-hold,self-tpr ", out,
                    re.M) and
          re.search(r'^type="pvh"$', out, re.M) and re.search(r"^vcpus=2$", out, re.M),
          f"no command line and xl.cfg: {out}")
    # A Xen run's results say what ran Xen (xen_lane.xen_facts), from the
    # outer console's boot lines and the frame's xl.cfg.
    from ipibench.boot import xen_lane as X
    outer = ("(XEN) Xen version 4.17.7 (Debian 4.17.7)\n(XEN) Command line: console=com1\n"
             "(XEN) SVM: Supported advanced features:\n(XEN)  - Nested Page Tables (NPT)\n"
             "(XEN)  - Virtual GIF\n(XEN) HVM: SVM enabled\n")
    facts = X.xen_facts(outer, [os.path.join(REPO, X.XEN_LANE), "--presets", "xen-pvh",
                                "--vcpus", "3", "--append", ""])
    check(facts["version"] == "4.17.7 (Debian 4.17.7)" and facts["cmdline"] == "console=com1"
          and facts["svm_features"] == ["Nested Page Tables (NPT)", "Virtual GIF"] and
          "vcpus=3" in facts["xl_cfg"], f"xen facts: {facts}")
    # The Xen lane honours --smp and --memory in the domain's xl.cfg, a
    # skip= of the user's replaces the preset's, and what xl.cfg cannot say
    # is refused.
    _, out, err = expect(run("--dry-run", "--accel", "xen-in-tcg", "--smp", "4", "--memory", "128M",
                             "--append", "skip=none", env=env), 0)
    check(re.search(r"^vcpus=4$", out, re.M) and re.search(r"^memory=128$", out, re.M) and
          "command line: skip=none " in out and "skips what" not in err,
          f"--smp 4 --memory 128M skip=none: {out} {err}")
    for bad, why in ((["--machine", "pc"], "--machine: under --accel xen-in-tcg"),
                     (["--pin"], "--pin: under --accel xen-in-tcg"),
                     (["--smp", "4,sockets=2"], "takes a vCPU count")):
        expect(run("--dry-run", "--accel", "xen-in-tcg", *bad, env=env), 2, why)
    # A refusal is the run's own: the same checks ran.
    expect(run("--dry-run", "--append", "plna=check", env=env), 2, "did you mean plan")
    check(not os.path.exists(root), f"--dry-run saved something under {root}")


class Ctx:
    """tmp, and the matrix booted when a case first reads it (a case run
    alone, --case or tests/host/on_hosts.py, boots it only if it needs it)."""

    @property
    def matrix(self):
        if "_matrix" not in self.__dict__:
            self._matrix = Matrix(os.path.join(self.tmp, "results"))
        return self._matrix


def run_case(ctx, name, fn):
    t0 = time.monotonic()
    on = case_begins("tools", name)
    try:
        fn(ctx)
        print(f"ok - tools: {name}{on} ({time.monotonic() - t0:.1f} s)")
        ok = True
    except Skip as e:
        print(f"ok - tools: {name}{on} # SKIP {e}")
        ok = True
    except (Fail, subprocess.TimeoutExpired) as e:
        print(f"not ok - tools: {name}{on}")
        for line in str(e).splitlines():
            print(f"#   {line}")
        ok = False
    sys.stdout.flush()
    return ok


def main():
    ctx = Ctx()
    ctx.tmp = tempfile.mkdtemp(prefix="ipibench-run-")
    try:
        # One boot at a time: a guest starved of host CPU under TCG can miss
        # its own delivery deadlines, and this group must not be flaky.
        ok = [run_case(ctx, n, f) for n, f in selected(CASES)]
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    return 0 if all(ok) else 1


if __name__ == "__main__":
    sys.exit(main())

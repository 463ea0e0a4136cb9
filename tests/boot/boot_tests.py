#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot scenarios under QEMU TCG, judged from the console log and run.sh's
exit status. Each scenario is one TAP line; failures explain themselves on
'#' lines below it. Scenarios run in parallel, one per host core.

Every boot goes through run.sh, the users' entry point, so its exit-status
decoding is tested too. TCG only: timing is emulated, so nothing here looks
at a figure, only at behaviour (CPUs, APIC IDs, statuses, messages).

The generated shapes (machine x topology x CPU model, microvm's) are made
below; the hand-written scenarios are data, in scenarios.cfg beside this file,
whose header says its format. `boot_tests.py 'PART OF A NAME'` runs the
scenarios whose name has it.
"""
import concurrent.futures
import configparser
import functools
import inspect
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "host"))
from ipibench.record_lines import decode, record_lines  # noqa: E402

# run.sh exit codes (docs/exit-codes.md)
OK, ERROR, FAILURE, CRASH, BADCMD, TIMEOUT, QEMU_EXIT = 0, 3, 4, 5, 6, 7, 8

TOPOLOGIES = {
    "1": [0],
    "2": [0, 1],
    "4": [0, 1, 2, 3],
    "8": list(range(8)),
    "6,sockets=2,cores=3": [0, 1, 2, 4, 5, 6],
    "2,maxcpus=4": [0, 1],
}

# The boot fact that decodes each CPU's APIC ID (package.core.thread), as QEMU
# lays the -smp values above out: cores first, each field as wide as its count.
TOPOLOGY_LINES = {
    "1": "1 package x 1 core x 1 thread; APIC ID = package.core.thread: 0=0.0.0",
    "2": "1 package x 2 cores x 1 thread; APIC ID = package.core.thread: 0=0.0.0 1=0.1.0",
    "4": "1 package x 4 cores x 1 thread; APIC ID = package.core.thread: 0=0.0.0 1=0.1.0 "
         "2=0.2.0 3=0.3.0",
    "8": "1 package x 8 cores x 1 thread; APIC ID = package.core.thread: 0=0.0.0 1=0.1.0 "
         "2=0.2.0 3=0.3.0 4=0.4.0 5=0.5.0 6=0.6.0 7=0.7.0",
    "6,sockets=2,cores=3": "2 packages x 3 cores x 1 thread; APIC ID = package.core.thread: "
                           "0=0.0.0 1=0.1.0 2=0.2.0 4=1.0.0 5=1.1.0 6=1.2.0",
    "2,maxcpus=4": "1 package x 2 cores x 1 thread; APIC ID = package.core.thread: 0=0.0.0 "
                   "1=0.1.0",
    "8,sockets=2,cores=2,threads=2": "2 packages x 2 cores x 2 threads; APIC ID = "
    "package.core.thread: 0=0.0.0 1=0.0.1 2=0.1.0 3=0.1.1 4=1.0.0 5=1.0.1 6=1.1.0 7=1.1.1",
}


class Scenario:
    def __init__(self, name, smp="2", machine="q35", cpu="max", append="",
                 expect=OK, checks=(), iso=False, timeout=120, qemu=(), accel="tcg",
                 stderr=(), pvh=False):
        self.name, self.smp, self.machine, self.cpu = name, smp, machine, cpu
        self.pvh = pvh  # run.sh --pvh: the ELF64 through its PVH entry
        self.stderr = list(stderr)  # patterns run.sh's own messages must match
        self.append, self.expect, self.checks = append, expect, list(checks)
        self.iso, self.timeout, self.qemu, self.accel = iso, timeout, list(qemu), accel

    def command(self):
        cmd = ["./run.sh", "--verbose", "--accel", self.accel, "--no-save", "--smp", self.smp,
               "--machine", self.machine, "--cpu", self.cpu,
               "--timeout", str(self.timeout)]
        if self.iso:
            cmd.append("--iso")
        else:
            cmd += ["--append", self.append]
        if self.pvh:
            cmd.append("--pvh")
        if self.qemu:
            cmd += ["--"] + self.qemu
        return cmd


# --- checks: each takes (scenario, console text) and returns a list of problems


def check_factory(factory):
    """Marks a function that makes a check from arguments. Each check it makes
    says what made it: check.what is (the factory's name, its arguments by
    name), which makes two lists of scenarios comparable check by check."""
    signature = inspect.signature(factory)

    @functools.wraps(factory)
    def make(*args, **kwargs):
        check = factory(*args, **kwargs)
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        check.what = (factory.__name__, dict(bound.arguments))
        return check
    return make


@check_factory
def cpus_online(expected_ids):
    def check(sc, log):
        got = [(int(c), int(a)) for c, a in
               re.findall(r"^smp: CPU (\d+) APIC ID (\d+) online", log, re.M)]
        want = list(enumerate(expected_ids))
        problems = []
        if sorted(a for _, a in got) != sorted(expected_ids):
            problems.append(f"CPUs online {got}, expected APIC IDs {expected_ids}")
        if [c for c, _ in got] != list(range(len(got))):
            problems.append(f"CPU numbers not dense from 0: {got}")
        if got and got[0] != (0, 0):
            problems.append(f"BSP is not CPU 0 / APIC ID 0: {got[0]}")
        m = re.search(r"^smp: (\d+) of (\d+) CPUs online", log, re.M)
        if len(expected_ids) > 0 and (not m or int(m.group(1)) != len(want)):
            problems.append("missing or wrong 'smp: N of M CPUs online' line")
        return problems
    return check


@check_factory
def contains(*patterns):
    def check(sc, log):
        return [f"console lacks /{p}/" for p in patterns if not re.search(p, log, re.M)]
    return check


@check_factory
def lacks(*patterns):
    def check(sc, log):
        return [f"console has /{p}/" for p in patterns if re.search(p, log, re.M)]
    return check


@check_factory
def final_status(word):
    def check(sc, log):
        lines = [l for l in log.splitlines() if l.strip()]
        want = f"ipibench: status {word}"
        if not lines or lines[-1].strip() != want:
            return [f"last console line is {lines[-1:]!r}, expected {want!r}"]
        return []
    return check


def topology_line(sc, log):
    """The topology boot fact, from whichever CPUID leaf the model has."""
    want = TOPOLOGY_LINES.get(sc.smp)
    if want and not re.search(rf"^topology: from CPUID \S+, {re.escape(want)}$", log, re.M):
        got = re.findall(r"^topology: .*$", log, re.M)
        return [f"topology line {got}, expected '... {want}'"]
    return []


def skew_line(sc, log):
    if sc.smp != "1" and not re.search(r"^tsc: skew bound over \d+ APs: \d+ cycles", log, re.M):
        return ["no TSC skew bound line"]
    return []


def tsc_line(sc, log):
    return [] if re.search(r"^tsc: \d+ kHz from ", log, re.M) else ["no TSC frequency line"]


@check_factory
def records_valid(*kinds):
    """The log's records validate against docs/results.md (host/ipibench/results/validate.py)."""
    def check(sc, log):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(log)
        try:
            p = subprocess.run(["./run.sh", "validate", "--require", ",".join(kinds), f.name],
                               stdout=subprocess.PIPE, text=True)
        finally:
            os.unlink(f.name)
        return [] if p.returncode == 0 else ["records: " + l for l in p.stdout.splitlines()[:6]]
    return check


def suite_passed(sc, log):
    """The correctness suite ran and nothing failed; x2APIC backends SKIP only without x2APIC."""
    problems = [f"suite: {l}" for l in log.splitlines() if l.startswith("not ok")]
    m = re.search(r"^check: (\d+) passed, (\d+) failed, (\d+) skipped", log, re.M)
    if not m:
        return problems + ["no 'check: N passed, N failed, N skipped' line"]
    if int(m.group(1)) == 0 or int(m.group(2)) != 0:
        problems.append(f"suite summary {m.group(0)!r}")
    x2_skips = re.findall(r"^ok \d+ - x2apic(?:-cluster)?: .*# SKIP .*x2APIC", log, re.M)
    if sc.cpu == "max" and x2_skips:
        problems.append("x2APIC backends skipped although -cpu max has x2APIC")
    if sc.cpu == "qemu64" and not x2_skips:
        problems.append("x2APIC backends did not SKIP without x2APIC")
    if sc.cpu == "qemu64" and not re.search(r"x2APIC\[bit 21\] is 0", log):
        problems.append("x2APIC SKIP does not name the missing CPUID bit")
    return problems


def switch_sequence(sc, log):
    """xapic -> x2apic -> xapic in one boot, the mode stated before each phase."""
    modes = re.findall(r"^apic: all \d+ CPUs in (\S+) mode", log, re.M)
    if sc.cpu != "max":
        return []
    try:
        i = modes.index("x2apic")
        modes.index("xapic", i)
    except ValueError:
        return [f"no xapic -> x2apic -> xapic sequence in {modes}"]
    return [] if modes and modes[0] == "xapic" else [f"first mode is not xapic: {modes[:1]}"]


XAPIC_BACKENDS = ("xapic", "xapic-nmi", "xapic-logical", "hv-icr")


def xapic_before_x2apic(sc, log):
    """Every xAPIC-mode check and figure comes before the first x2APIC
    switch (on AVIC without x2AVIC, KVM traps every xAPIC access after it), and
    each record says on which side of it it was measured."""
    lines, problems = log.splitlines(), []
    first = next((i for i, l in enumerate(lines)
                  if re.match(r"apic: all \d+ CPUs in x2apic mode", l)), None)
    if first is None:
        return [] if sc.cpu != "max" else ["no switch to x2apic mode"]
    for i, l in enumerate(lines):
        m = re.match(r"(?:not )?ok \d+ - ([a-z0-9-]+): ", l)
        if m and m.group(1) in XAPIC_BACKENDS and i > first:
            problems.append(f"xAPIC check after the first x2APIC switch: {l[:90]}")
        r, _ = decode(l)
        if r is None or r.get("record") not in ("result", "norov"):
            continue
        if r.get("backend") == "none":
            continue
        want = r.get("backend") not in XAPIC_BACKENDS
        if r.get("after_x2apic") is not want or (i > first) is not want:
            problems.append(f"{r.get('bench', r.get('test'))} on {r.get('backend')}: "
                            f"after_x2apic {r.get('after_x2apic')} on line {i}, first x2APIC "
                            f"switch on line {first}")
    return problems[:6]


def bench_results(sc, log):
    """Every benchmark ran on every usable backend, or SKIPped with a reason."""
    problems = []
    recs = [r for _, r, _ in record_lines(log, "result") if r is not None]
    ran = {(r["bench"], r["backend"]) for r in recs if r["status"] == "SUCCESS"}
    skipped = {(r["bench"], r["backend"]): r.get("reason", "") for r in recs
               if r["status"] == "SKIP"}
    benches = ["broadcast", "self", "send-cost", "single", "single-halt"]
    backends = ["xapic", "xapic-logical"] + (["x2apic", "x2apic-cluster"]
                                             if sc.cpu == "max" else [])
    ncpus = len(TOPOLOGIES.get(sc.smp, [0, 1]))
    for b in benches:
        for be in backends:
            needs_two = b != "self"
            if needs_two and ncpus < 2:
                if "needs 2 CPUs" not in skipped.get((b, be), ""):
                    problems.append(f"{b} on {be}: no SKIP naming the CPU count on -smp 1")
            elif (b, be) not in ran and not (be == "xapic-logical" and ncpus > 8):
                problems.append(f"{b} on {be}: no SUCCESS result")
    for r in recs:
        if r["status"] == "FAILURE":
            problems.append(f"FAILURE: {r['bench']} {r['backend']}: {r.get('reason')}")
    return problems


def result_records(log):
    return [r for _, r, _ in record_lines(log, "result") if r is not None]


@check_factory
def sent_from(sender, halt_ran):
    """Every benchmark honours sender=; its records name it, nothing fails."""
    def check(sc, log):
        recs, problems = result_records(log), []
        sent = {r["bench"] for r in recs if r["status"] == "SUCCESS" and r["backend"] != "none"}
        for b in ("self", "send-cost", "single", "broadcast"):
            if b not in sent:
                problems.append(f"{b}: no SUCCESS record")
        if halt_ran and "single-halt" not in sent:
            problems.append("single-halt: no SUCCESS record")
        for r in recs:
            if r["status"] == "FAILURE":
                problems.append(f"FAILURE: {r['bench']} {r['backend']}: {r.get('reason')}")
            elif r["status"] == "SUCCESS" and r["bench"] not in ("dry-run", "exit-ref") \
                    and r["sender"] != sender:
                problems.append(f"{r['bench']} {r['variant']} {r['backend']}: sender "
                                f"{r['sender']}, expected {sender}")
            if r["bench"] == "self" and r["status"] == "SUCCESS" and r["targets"] != str(sender):
                problems.append(f"self {r['variant']}: targets {r['targets']}")
        norov = re.findall(r'^\{"record":"norov".*"test":"Normal IPI".*"status":"SUCCESS"', log,
                           re.M)
        if not norov:
            problems.append("ipi_benchmark: no SUCCESS Normal IPI record")
        return problems
    return check


def _help_choices(log, key):
    m = re.search(rf"^{key} +(.*?), comma-separated, or all", log, re.M)
    return m.group(1).split(", ") if m else []


def registry_lists(sc, log):
    """The backends and debug keys a user sees (help=1, from the guest's
    registries at boot) are what the build read from the image
    (build/guest-keys.json), which every other list is generated from or
    checked against at build time (tools/fuzz_words.py, tools/doc_reference.py,
    tools/registry_lists.py)."""
    backends, debug = _help_choices(log, "backends"), _help_choices(log, "debug")
    if not backends or not debug:
        return ["help=1 lists no backends or no debug keys"]
    with open("build/guest-keys.json") as f:
        built = {k["key"]: k.get("choices") for k in json.load(f)["keys"]}
    return [f"help=1's {key} {seen}, build/guest-keys.json's {built.get(key)}"
            for key, seen in (("backends", backends), ("debug", debug))
            if seen != built.get(key)]


@check_factory
def late_wakes(want):
    """single-halt's round-trip records count their late wakes, variant by variant."""
    def check(sc, log):
        got = {r["variant"]: r.get("late_wakes") for r in result_records(log)
               if r["bench"] == "single-halt" and r["metric"] == "round-trip"
               and r["status"] == "SUCCESS"}
        return [] if got == want else [f"late_wakes by variant {got}, expected {want}"]
    return check


@check_factory
def rehalt_timeouts(want):
    """single-halt's round-trip records count the measured iterations whose
    wait for the target's re-halt ran out, variant by variant."""
    def check(sc, log):
        got = {r["variant"]: r.get("rehalt_timeouts") for r in result_records(log)
               if r["bench"] == "single-halt" and r["metric"] == "round-trip"
               and r["status"] == "SUCCESS"}
        return [] if got == want else [f"rehalt_timeouts by variant {got}, expected {want}"]
    return check


def eoi_in_region(sc, log):
    """With debug=slow-eoi (2 ms before every EOI) the
    ack-after-eoi round trip holds the 2 ms, the default one does not: the
    region closes on the count, which the default handler stores first."""
    m = re.search(r'"tsc":\{"khz":(\d+)', log)
    if not m:
        return ["no TSC frequency in the env record"]
    ms = int(m.group(1))
    p50 = {r["variant"]: r["cycles"]["p50"] for r in result_records(log)
           if r["bench"] == "single" and r["metric"] == "round-trip" and r["status"] == "SUCCESS"}
    problems = []
    if not p50.get("ack-after-eoi", 0) >= 2 * ms:
        problems.append(f"ack-after-eoi p50 {p50.get('ack-after-eoi')} cycles: not the 2 ms "
                        f"({2 * ms} cycles) its EOI waited")
    if not 0 < p50.get("none", 0) < ms:
        problems.append(f"default p50 {p50.get('none')} cycles: its region should close before "
                        f"the EOI's 2 ms")
    return problems


def honest_records(sc, log):
    """Records state the ack order, the SELF IPI fence, invalid samples, set writes."""
    recs, problems = result_records(log), []
    for r in recs:
        flags = r.get("flags", "")
        ack = "after-eoi" if r["variant"] == "ack-after-eoi" else "count-before-eoi"
        if r["bench"] in ("send-cost", "single", "broadcast") and r["status"] == "SUCCESS" \
                and f"ack={ack} next-send=after-loop-ack" not in flags:
            problems.append(f"{r['bench']} {r['variant']} {r['backend']}: flags lack the ack "
                            f"order {ack}: {flags}")
        # The vmexit-gap pass (kvm-unit-tests' ipi_halt loop) spins in its region instead.
        gap = ("next-send=after-2000-cycle-spin-in-region" if r["variant"] == "vmexit-gap"
               else "next-send=after-rehalt-and-gap")
        if r["bench"] == "single-halt" and r["status"] == "SUCCESS" and gap not in flags:
            problems.append(f"single-halt {r['variant']} {r['backend']}: flags lack {gap}: "
                            f"{flags}")
        if r["bench"] == "single-halt" and r["status"] == "SUCCESS":
            want = {"block": "wake-aim=block", "vmexit-gap": "halt-gap-us=0 "}.get(r["variant"],
                                                                             "wake-aim=poll")
            if want not in flags or "target-timer=" not in flags \
                    or not isinstance(r.get("late_wakes"), int):
                problems.append(f"single-halt {r['variant']} {r['backend']}: no {want}, "
                                f"target-timer or late_wakes: {flags}")
        if r["bench"] == "self" and r["backend"].startswith("x2apic") \
                and r["status"] == "SUCCESS" and "self-fence=none" not in flags:
            problems.append(f"self {r['backend']}: flags lack self-fence=none: {flags}")
        if r["status"] == "SUCCESS" and not isinstance(r.get("invalid"), int):
            problems.append(f"{r['bench']} {r['metric']}: no 'invalid' count")
        if r["bench"] == "broadcast" and r["variant"] == "set" \
                and r["backend"] == "x2apic-cluster" and r["status"] == "SUCCESS" \
                and "set-writes=1" not in flags:
            problems.append(f"broadcast set x2apic-cluster to {r['targets']}: {flags}")
    # first and last are one decision: both reported or both SKIPped, with the reason.
    firsts = {(r["variant"], r["backend"], r["targets"]): r["status"] for r in recs
              if r["bench"] == "broadcast" and r["metric"] == "first"}
    lasts = {(r["variant"], r["backend"], r["targets"]): r["status"] for r in recs
             if r["bench"] == "broadcast" and r["metric"] == "last"}
    if not firsts or firsts != lasts:
        problems.append(f"broadcast first/last differ: {len(firsts)} first, {len(lasts)} last")
    return problems


def fence_words(sc, log):
    """Every x2APIC record states the fence Linux uses on the CPU's
    vendor: MFENCE;LFENCE once per send call, or none on AMD and Hygon."""
    env = [r for _, r, _ in record_lines(log, "env") if r is not None]
    vendor = env[0]["cpu"]["vendor"] if env else "?"
    want = ("fence=none" if vendor in ("AuthenticAMD", "HygonGenuine")
            else "fence=mfence+lfence fence-per=send")
    recs = [r for r in result_records(log) if r["status"] == "SUCCESS"
            and r["backend"] in ("x2apic", "x2apic-cluster")]
    problems = [] if recs else ["no x2APIC result record"]
    problems += [f"{r['bench']} {r['variant']} {r['backend']} (vendor {vendor}): flags lack "
                 f"{want!r}: {r['flags']}" for r in recs if f" {want} " not in f" {r['flags']} "]
    return problems[:4]


def watchdog_line(sc, log):
    """Issues 12 and 22: the boot says in one line of at most 100 characters what the stall
    watchdog watches (how many CPUs, its tick, its bound), and with one CPU that nothing is."""
    if sc.smp == "1":
        want = r"^watchdog: 1 CPU: no other CPU can watch it, so nothing is watched; run\.sh's " \
               r"--timeout is the bound$"
    else:
        count = str(len(TOPOLOGIES[sc.smp])) if sc.smp in TOPOLOGIES else r"\d+"
        want = rf"^watchdog: {count} CPUs watch each other: tick \d+ ms, stall = no progress " \
               r"for \d+ ms \+ phase budget$"
    lines = re.findall(want, log, re.M)
    if not lines:
        return [f"no boot line /{want}/"]
    return [f"boot line over 100 characters: {l}" for l in lines if len(l) > 100]


STALL_PHASE = r"(idle|target|plan|request|switch|sender|sampling|measuring)"


def resolve(addrs):
    """The functions addr2line names for addresses of build/ipibench.elf, innermost first
    (inlined callers too); None where it cannot run."""
    try:
        out = subprocess.run(["addr2line", "-fie", "build/ipibench.elf", *addrs],
                             capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.splitlines()[0::2] if out.returncode == 0 else None


def stall_story(sc, cpu, log):
    """Beside RSP to R8, the stalled CPU's R9-R15, CR2 (the last page
    fault's address) and CR3, stack words from RSP, a frame-pointer backtrace that addr2line
    names (RIP in the stalling sampling, the chain through on_sender_run, which runs every
    sender's benchmark), and lines of at most 100 characters for every CPU with its phase
    and time in it, the targets naming the word they wait on, the value they wait for and
    the one it holds, each whole: a field that does not fit a line goes on a continuation
    line 'watchdog: CPU N: ...' (lib/watch_line.h), never cut."""
    problems = []
    for regs in (r"R9  \S{16}  R10 \S{16}  R11 \S{16}  R12 \S{16}$",
                 r"R13 \S{16}  R14 \S{16}  R15 \S{16}$",
                 r"CR2 \(last #PF\) [0-9a-f]{16}  CR3 [0-9a-f]{16} \(read by its NMI handler\)$"):
        if not re.search(rf"^watchdog: CPU {cpu}: {regs}", log, re.M):
            problems.append(f"no register line /{regs}/")
    if not re.search(rf"^watchdog: CPU {cpu}: \[RSP\+00\]( [0-9a-f]{{16}}){{4}}$", log, re.M):
        problems.append("no stack words from RSP")
    trace = " ".join(re.findall(rf"^watchdog: CPU {cpu}: backtrace ((?:[0-9a-f]+ ?)+)$", log,
                                re.M)).split()
    names = resolve(trace) if len(trace) >= 3 else None
    if len(trace) < 3:
        problems.append(f"no backtrace of RIP and two callers or more: {trace}")
    elif names is None:
        problems.append("addr2line could not name the backtrace")
    elif "bench_sample" not in names or "on_sender_run" not in names or "??" in names:
        problems.append(f"backtrace {trace} names {names}")
    ids = TOPOLOGIES.get(sc.smp, [])
    if not ids:
        problems.append(f"-smp {sc.smp}: no APIC IDs known to check each CPU's line against")
    targets = 0
    for o, apic in enumerate(ids):
        tag = ", stalled" if o == cpu else "(, reporting)?"
        # Its head line, then any continuation lines of its own.
        m = re.search(rf"^watchdog: CPU {o} \(APIC ID {apic}{tag}\): phase {STALL_PHASE} for "
                      rf"\d+ ms.*(\nwatchdog: CPU {o}: (?:waits for|sees|mailbox) .*)*$", log, re.M)
        if not m:
            problems.append(f"no line saying what CPU {o} was doing")
            continue
        text = m.group(0)
        problems += [f"CPU {o}'s line is over 100 characters: {l}" for l in text.split("\n")
                     if len(l) > 100]
        # One line or more, the same fields: ", " within a line, a continuation between.
        one = re.sub(rf"\nwatchdog: CPU {o}: ", ", ", text)
        if o == cpu and m.group(1) != "measuring":
            problems.append(f"the stalled CPU's line: {text}")
        targets += bool(re.search(r": phase target for \d+ ms, waits for spin_stop == 1, "
                                  r"sees 0$", one))
        # An AP sender: the BSP, its target in bench_on_sender(), waits for that AP's
        # mailbox to acknowledge the request it posted: one past what the AP acknowledged.
        w = re.search(rf": phase target for \d+ ms, waits for CPU {cpu}'s mailbox ack == "
                      rf"(\d+), sees (\d+)$", one)
        if o == 0 and cpu and (not w or int(w.group(1)) != int(w.group(2)) + 1):
            problems.append(f"no BSP line waiting for CPU {cpu}'s mailbox ack one past what it "
                            f"sees: {text}")
    if not targets:
        problems.append("no target line naming spin_stop, the value it waits for and sees")
    return problems


@check_factory
def stalled(cpu, apic_id, deadline_ms, floor_ms):
    """The watchdog names the stalled CPU, what it did and its RIP, within its bound
    (2 x deadline= or watch_floor=, whichever is more, + 1 s)."""
    def check(sc, log):
        m = re.search(rf"^watchdog: CPU {cpu} \(APIC ID {apic_id}\) made no progress for (\d+) "
                      rf"ms \(bound (\d+) ms: 2 x deadline {deadline_ms} ms, at least {floor_ms} ms, "
                      rf"\+ 1000 ms \+ phase budget \d+ ms\): backend (\S+), benchmark (\S+) on "
                      rf"\S+, phase measuring "
                      rf"\d+ iterations .*, RIP ([0-9a-f]{{16}}) CS 0008 \(NMI taken\)$", log, re.M)
        if not m:
            return [f"no watchdog line naming CPU {cpu} (APIC ID {apic_id}), backend, benchmark, "
                    "phase and RIP"]
        stale, bound = int(m.group(1)), int(m.group(2))
        tick = re.search(r"^watchdog: \d+ CPUs watch each other: tick (\d+) ms", log, re.M)
        period = int(tick.group(1)) if tick else 0
        problems = [] if tick else ["no watchdog line with its tick period"]
        # Seen between the bound and the bound plus a tick or two (the timer's rate is
        # measured against the TSC in 10 ms, which a loaded host can skew).
        if not bound <= stale <= bound + 2 * period + 500:
            problems.append(f"reported after {stale} ms, bound {bound} ms, tick {period} ms")
        if not re.search(rf"^watchdog: CPU {cpu}: RSP [0-9a-f]{{16}} .* \(IF=0\)$", log, re.M):
            problems.append("no register line with IF=0 from the NMI")
        if not re.search(rf"^debug: stall: CPU {cpu} \(APIC ID {apic_id}\) is the sender", log,
                         re.M):
            problems.append("no 'debug: stall' line naming the CPU")
        return problems + stall_story(sc, cpu, log)
    return check


def marked(sc, log):
    """With markers=1 every measured record names its sampling's phase marker."""
    recs, problems = [r for r in result_records(log) if r["status"] == "SUCCESS"], []
    marks = [r.get("mark") for r in recs if r["bench"] != "flush" or r["iterations"] > 1]
    if not recs or any(not isinstance(m, int) or m < 1 for m in marks):
        problems.append(f"records without a mark: {marks[:8]}")
    by_mark = {}
    for r in recs:
        by_mark.setdefault(r.get("mark"), set()).add((r["bench"], r["variant"], r["backend"],
                                                      r["targets"]))
    shared = {m: v for m, v in by_mark.items() if len(v) > 1}
    if shared:
        problems.append(f"one mark over several samplings: {list(shared.items())[:2]}")
    if len(by_mark) < 10:
        problems.append(f"only {len(by_mark)} distinct marks")
    return problems


def withheld_marked(sc, log):
    """debug=withhold-one-way withholds every one-way figure
    (single's one-way, broadcast's first and last) as a skewed TSC would: a
    SKIP that says why, carrying the mark of its sampling, which a measured
    record of the same sampling shares (so the host's trace gives it exits)."""
    recs, problems = result_records(log), []

    def run_of(r):
        return (r.get("mark"), r["bench"], r["variant"], r["backend"], r["sender"], r["targets"])
    oneway = [r for r in recs if r["metric"] in ("one-way", "first", "last")]
    measured = {run_of(r) for r in recs if r["status"] == "SUCCESS" and r.get("iterations")}
    if not oneway:
        problems.append("no one-way record")
    for r in oneway:
        if r["status"] != "SKIP" or not r.get("reason", "").startswith("one-way not reported"):
            problems.append(f"{r['bench']} {r['metric']}: {r['status']} {r.get('reason')}")
        elif run_of(r) not in measured:
            problems.append(f"{r['bench']} {r['variant']} {r['backend']} {r['metric']}: mark "
                            f"{r.get('mark')} is no measured record's of its run")
    # Every other record without samples (another variant's SKIP, such as an
    # NMI backend's ack-after-eoi) is of no sampling: no mark to lend it exits.
    stray = [f"{r['bench']} {r['variant']} {r['backend']} {r['metric']} ({r['status']})"
             for r in recs if r not in oneway and r["status"] != "SUCCESS" and "mark" in r]
    if stray:
        problems.append(f"records of no sampling carry a mark: {stray[:4]}")
    if not any(r["status"] == "SKIP" and r not in oneway for r in recs):
        problems.append("no other SKIP to hold to that (the NMI backends' ack-after-eoi)")
    return problems


# INVLPG per page up to Linux's 33-page ceiling, CR3 only as its own
# variant, and the targets' loss beside the sender's time, in every flush row: each
# variant's shootdown and target-loss to 1, 2 and 3 targets. The
# same INVLPG shootdown in Linux's order (EOI, flush, count).
flush_rows = contains(*[rf'"bench":"flush","metric":"{m}","variant":"native-{v}",'
                        rf'"backend":"x2apic",.*"targets":"{t}",.*"status":"SUCCESS"'
                        for v in ("invlpg-1p", "invlpg-8p", "invlpg-33p", "cr3-8p", "cr3-33p",
                                  "invlpg-after-eoi-1p", "invlpg-after-eoi-33p")
                        for m in ("shootdown", "target-loss")
                        for t in ("1", "1-2", "1-3")])


# Shapes that also run every benchmark (the rest run the suite only, which
# keeps the group within a few minutes on two host cores under TCG).
SMALL = "iters=5 warmup=1 budget=1 norov_iters=10"
BENCH_SHAPES = {("pc", "1", "max"), ("q35", "2", "max"), ("pc", "4", "max"),
                ("q35", "4", "qemu64"), ("pc", "6,sockets=2,cores=3", "max")}
MACHINES = ("pc", "q35")


def shape_pairs():
    """(machine, smp, ids, cpu) for every topology twice: once with x2APIC
    (-cpu max) and once without (qemu64), each on one machine type, the
    machine for max alternating from one topology to the next. So every
    topology boots on both machines and both CPU models, and every machine
    boots both CPU models, in 12 boots where the whole cross product took 20
    (some 30 CPU seconds of the suite's budget): no pair of the three
    dimensions goes untested."""
    for i, (smp, ids) in enumerate(TOPOLOGIES.items()):
        yield MACHINES[i % 2], smp, ids, "max"
        yield MACHINES[(i + 1) % 2], smp, ids, "qemu64"


def shape_matrix():
    """The suite on every topology with and without x2APIC, on both machine
    types (shape_pairs), the benchmarks on BENCH_SHAPES."""
    pairs = {(m, smp, cpu) for m, smp, _, cpu in shape_pairs()}
    assert BENCH_SHAPES <= pairs, f"bench shapes never booted: {BENCH_SHAPES - pairs}"
    out = []
    for machine, smp, ids, cpu in shape_pairs():
        bench = (machine, smp, cpu) in BENCH_SHAPES
        checks = [cpus_online(ids), tsc_line, skew_line, suite_passed, switch_sequence,
                  watchdog_line, topology_line]
        if bench:
            checks += [bench_results, xapic_before_x2apic,
                       records_valid("env", "check", "result", "end")]
        else:
            checks += [records_valid("env", "check", "end")]
        # Under TCG the Hyper-V and KVM PV backends always SKIP.
        # Small iteration counts: behaviour, not speed, is tested here.
        # Benchmarks run on single-threaded TCG (spinning vCPUs would
        # starve each other on two host cores); the suite alone runs
        # on multi-threaded TCG, where vCPUs really run in parallel.
        out.append(Scenario(
            f"{machine} -smp {smp} -cpu {cpu}: CPUs up, suite passes"
            + (", benchmarks run" if bench else ""),
            accel="tcg-single" if bench else "tcg",
            smp=smp, machine=machine, cpu=cpu,
            append=f"plan=default {SMALL}" if bench else "plan=check",
            timeout=300 if bench else 120,
            checks=checks + [final_status("SKIP")]))
    return out


@check_factory
def microvm_facts(acpi):
    """microvm without an 8259, PIT or RTC, entered through PVH;
    CPUs from the MADT the start info's RSDP leads to, or (acpi=off) from the MP table;
    under TCG nothing gives the TSC frequency, and every figure says its ns are a guess."""
    def check(sc, log):
        n = len(TOPOLOGIES[sc.smp])
        want = [r"^loader: pvh$", r'"record":"env".*"loader":"pvh"',
                r"^pvh: start info version 1 at 0x[0-9a-f]+: [1-9]\d* memory map entries, ",
                r"^pic: no 8259 \(its mask register reads back 0xff\): nothing to mask$",
                r"^tsc: nothing declares the frequency .* \(no PIT channel 2 at port 0x61, no "
                r"ACPI PM timer\): assuming 5000 MHz, so every ns figure is unreliable",
                r"^tsc: 5000000 kHz from a guess, ", r"^warning: tsc-freq-guessed: ",
                r'"id":"tsc-freq-guessed","text":"[^"]*","per_figure":true',
                r"\[untrusted: [^]]*tsc-freq-guessed\]$"]
        if acpi:
            want += [r"^acpi: RSDP at 0x[0-9a-f]+, from the loader$",
                     rf"^acpi: MADT lists {n} usable CPUs"]
        else:
            want += [r"^pvh: start info .*, no RSDP, ", r"^acpi: no RSDP found",
                     rf"^mptable: {n} CPUs? \(APIC IDs"]
        return contains(*want)(sc, log) + lacks(r"^mptable: " if acpi else r"^acpi: MADT")(sc, log)
    return check


def microvm_scenarios():
    """QEMU microvm as microVM monitors present a guest (pic=off, pit=off,
    rtc=off; run.sh --machine microvm boots build/ipibench.elf through PVH), the default plan
    at -smp 1 and 4, with ACPI and with only the firmware's MP table (microvm-noacpi):
    one CPU, and APs to start (-smp 2 proved nothing more for 7 s of the budget).
    PVH on q35 (run.sh --pvh) is in scenarios.cfg."""
    out = []
    for machine, acpi in (("microvm", True), ("microvm-noacpi", False)):
        for smp in ("1", "4"):
            out.append(Scenario(
                f"{machine} -smp {smp}: PVH, no 8259, PIT or RTC, CPUs from the "
                f"{'MADT' if acpi else 'MP table'}, default plan runs",
                smp=smp, machine=machine, accel="tcg-single", append=f"plan=default {SMALL}",
                checks=[cpus_online(TOPOLOGIES[smp]), tsc_line, skew_line, suite_passed,
                        switch_sequence, watchdog_line, bench_results, microvm_facts(acpi),
                        records_valid("env", "check", "result", "end"), final_status("SKIP")]))
    return out


@check_factory
def virtio_console(path):
    """console=virtio (kernel/virtio_console.c, the transport of the KVM lane's
    frames): COM1 has the lines printed before the command line was read and
    nothing after; the virtio console's file has the device line, the suite,
    the records and the status."""
    def check(sc, log):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read().replace("\r", "")
        except OSError as e:
            return [f"no virtio console file: {e}"]
        problems = [f"virtio console: {p}" for p in
                    contains(r"\A^console: virtio console at PCI 00:[0-9a-f]{2}\.[0-7], "
                             r"ports 0x[0-9a-f]+, queue [1-9]\d*; what follows goes there$")(sc, text)
                    + suite_passed(sc, text) + records_valid("env", "check", "end")(sc, text)
                    + final_status("SUCCESS")(sc, text)]
        com1 = [x for x in log.strip().splitlines() if x]
        if [re.sub(r" .*", "", x) for x in com1] != ["ipibench", "loader:", "cmdline:"]:
            problems.append("COM1 has more (or less) than the banner, loader and command line: "
                            + " | ".join(com1[:6]))
        return problems
    return check


def virtio_console_scenarios():
    """console=virtio under TCG: COM1 on run.sh's stdout, the virtconsole on a
    file of its own (this process's). The KVM lane muxes both onto one file;
    apart, they show which transport carried what."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build",
                        "boot-tests", f"virtio-console-{os.getpid()}.log")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    if os.path.exists(path):
        os.remove(path)
    qemu = ["-device", "virtio-serial-pci,disable-legacy=off,ioeventfd=off",
            "-device", "virtconsole,chardev=vcon", "-chardev", f"file,id=vcon,path={path}"]
    return [Scenario("console=virtio: every line after the command line through the virtqueue, "
                     "none on COM1; the suite passes", smp="2",
                     append="plan=check backends=x2apic console=virtio",
                     qemu=qemu, checks=[virtio_console(path)])]


# --- the hand-written scenarios: tests/boot/scenarios.cfg, whose header says its format

SCENARIO_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "scenarios.cfg")
# What ${NAME} in an append stands for.
VARIABLES = {"SMALL": SMALL}
EXIT_NAMES = {"OK": OK, "ERROR": ERROR, "FAILURE": FAILURE, "CRASH": CRASH, "BADCMD": BADCMD,
              "TIMEOUT": TIMEOUT, "QEMU_EXIT": QEMU_EXIT}
STATUS_WORDS = ("SUCCESS", "SKIP", "ERROR", "FAILURE", "CRASH", "BAD-CMDLINE")
# The checks a scenario names in its checks = key.
PLAIN_CHECKS = {f.__name__: f for f in (
    suite_passed, tsc_line, skew_line, topology_line, switch_sequence, watchdog_line,
    bench_results, xapic_before_x2apic, honest_records, fence_words, eoi_in_region,
    registry_lists, marked, withheld_marked)}
PLAIN_CHECKS["flush_rows"] = flush_rows


class ScenarioFileError(Exception):
    """scenarios.cfg is broken: the message names the file, the line, the scenario and the
    key."""


def _one_word(text):
    words = text.split()
    if len(words) != 1:
        raise ValueError(f"one word expected, not {text!r}")
    return words[0]


def _lines(text):
    return [line.strip() for line in text.splitlines() if line.strip()]


def _regexes(text):
    patterns = _lines(text)
    if not patterns:
        raise ValueError("no regex")
    for p in patterns:
        try:
            re.compile(p)
        except re.error as e:
            raise ValueError(f"bad regex /{p}/: {e}") from None
    return patterns


def _yes_no(text):
    word = _one_word(text)
    if word not in ("yes", "no"):
        raise ValueError(f"yes or no, not {word!r}")
    return word == "yes"


def _number(text):
    word = _one_word(text)
    if not word.isdigit():
        raise ValueError(f"a number, not {word!r}")
    return int(word)


def _words(text, allowed=None):
    words = text.split()
    if not words:
        raise ValueError("no value")
    bad = [w for w in words if allowed is not None and w not in allowed]
    if bad:
        raise ValueError(f"unknown {', '.join(map(repr, bad))} (known: {', '.join(allowed)})")
    return words


def _append(text):
    def variable(m):
        if m.group(1) not in VARIABLES:
            raise ValueError(f"unknown ${{{m.group(1)}}} (known: {', '.join(VARIABLES)})")
        return VARIABLES[m.group(1)]
    return re.sub(r"\$\{([^}]*)\}", variable, " ".join(_lines(text)))


def _expect(text):
    word = _one_word(text)
    if word.isdigit():
        return int(word)
    if word not in EXIT_NAMES:
        raise ValueError(f"unknown exit status {word!r} (known: {', '.join(EXIT_NAMES)}, "
                         "or a number)")
    return EXIT_NAMES[word]


def _counts(text):
    """VARIANT=N ... as a dict."""
    out = {}
    for word in _words(text):
        variant, eq, n = word.partition("=")
        if not eq or not variant or not n.isdigit() or variant in out:
            raise ValueError(f"VARIANT=N words, each variant once, not {word!r}")
        out[variant] = int(n)
    return out


def _named(text, **kinds):
    """NAME=VALUE words, every name of kinds once, each value read by its kind."""
    out = {}
    for word in _words(text):
        name, eq, value = word.partition("=")
        if not eq or name not in kinds or name in out:
            raise ValueError(f"{word!r}: expected {' '.join(n + '=...' for n in kinds)}, "
                             "each once")
        out[name] = kinds[name](value)
    if set(out) != set(kinds):
        raise ValueError(f"missing {', '.join(sorted(set(kinds) - set(out)))}=")
    return out


# Scenario's arguments: key -> reader of its value.
BOOT_KEYS = {
    "smp": _one_word, "machine": _one_word, "cpu": _one_word, "accel": _one_word,
    "append": _append, "expect": _expect, "timeout": _number, "iso": _yes_no, "pvh": _yes_no,
    "qemu": _words, "stderr": _regexes,
}
REQUIRED_KEYS = ("smp", "expect")  # and append unless iso = yes
# Check keys: key -> the list of checks its value makes.
CHECK_KEYS = {
    "contains": lambda v: [contains(*_regexes(v))],
    "lacks": lambda v: [lacks(*_regexes(v))],
    "status": lambda v: [final_status(_words(_one_word(v), STATUS_WORDS)[0])],
    "records": lambda v: [records_valid(*_words(v))],
    "cpus_online": lambda v: [cpus_online([_number(w) for w in _words(v)])],
    "checks": lambda v: [PLAIN_CHECKS[n] for n in _words(v, list(PLAIN_CHECKS))],
    "late_wakes": lambda v: [late_wakes(_counts(v))],
    "rehalt_timeouts": lambda v: [rehalt_timeouts(_counts(v))],
    "sent_from": lambda v: [sent_from(**_named(v, sender=_number, halt_ran=_yes_no))],
    "stalled": lambda v: [stalled(**_named(v, cpu=_number, apic_id=_number,
                                           deadline_ms=_number, floor_ms=_number))],
    "microvm_facts": lambda v: [microvm_facts(**_named(v, acpi=_yes_no))],
}


def _place(lines, lineno=None, section=None, key=None):
    """'LINE: [SECTION] KEY' for a message: the line of the section's key (or header),
    or the section and the key above line lineno."""
    header = re.compile(r"\[(.+)\]$")
    if lineno is None:
        for i, line in enumerate(lines, 1):
            m = header.match(line.strip())
            if m and m.group(1) == section:
                lineno = i
            elif m and lineno:
                break
            elif lineno and key and re.match(rf"{re.escape(key)}\s*=", line):
                lineno = i
                break
    else:
        for line in lines[:lineno - 1]:
            m, k = header.match(line.strip()), re.match(r"([^\s=#][^=]*?)\s*=", line)
            section, key = (m.group(1), None) if m else (section, k.group(1) if k else key)
    return f"{lineno or '?'}: " + (f"[{section}]" if section else "before any [scenario]") \
        + (f" {key}" if key else "")


def load_scenarios(path=SCENARIO_FILE, text=None):
    """The scenarios of the file at path (or of text, named path), in its order; a
    ScenarioFileError naming file, line, scenario and key for anything it cannot take."""
    parser = configparser.ConfigParser(
        delimiters=("=",), comment_prefixes=("#",), inline_comment_prefixes=None,
        strict=True, interpolation=None, default_section="\0 no defaults")
    parser.optionxform = str  # keys are case-sensitive: a misspelt one is unknown
    try:
        if text is None:
            with open(path) as f:
                text = f.read()
    except OSError as e:
        raise ScenarioFileError(f"{path}: {e.strerror}") from None
    path, lines = os.path.relpath(path), text.splitlines()  # as run from the repository
    try:
        parser.read_string(text, source=path)
    except configparser.DuplicateSectionError as e:
        raise ScenarioFileError(f"{path}:{e.lineno}: [{e.section}]: a second scenario of that "
                                "name") from None
    except configparser.DuplicateOptionError as e:
        raise ScenarioFileError(f"{path}:{e.lineno}: [{e.section}] {e.option}: a second time "
                                "(each key once; a value goes on on lines indented below its "
                                "key)") from None
    except configparser.MissingSectionHeaderError as e:
        raise ScenarioFileError(f"{path}:{e.lineno}: before any [scenario]: {e.line.strip()!r}") \
            from None
    except configparser.ParsingError as e:
        lineno = e.errors[0][0]
        raise ScenarioFileError(f"{path}:{_place(lines, lineno)}: {lines[lineno - 1].strip()!r} "
                                "is no [scenario], KEY = VALUE, # comment, or line of a value "
                                "(indented below its key)") from None
    except configparser.Error as e:
        raise ScenarioFileError(f"{path}: {e}") from None
    out = []
    for name in parser.sections():
        section = parser[name]
        boot, checks = {}, []
        for key, value in section.items():
            try:
                if key in BOOT_KEYS:
                    boot[key] = BOOT_KEYS[key](value)
                elif key in CHECK_KEYS:
                    checks += CHECK_KEYS[key](value)
                else:
                    raise ValueError("unknown key (known: "
                                     f"{', '.join(list(BOOT_KEYS) + list(CHECK_KEYS))})")
            except ValueError as e:
                raise ScenarioFileError(f"{path}:{_place(lines, None, name, key)}: {e}") \
                    from None
        required = REQUIRED_KEYS + (() if boot.get("iso") else ("append",))
        missing = [k for k in required if k not in boot]
        where = f"{path}:{_place(lines, None, name)}"
        if missing:
            raise ScenarioFileError(f"{where} {missing[0]}: missing (required: "
                                    f"{', '.join(required)})")
        if boot.get("iso") and "append" in boot:
            raise ScenarioFileError(f"{path}:{_place(lines, None, name, 'append')}: the GRUB "
                                    "ISO (iso = yes) boots with its own command line")
        if not checks:
            raise ScenarioFileError(f"{where}: no check key (one of {', '.join(CHECK_KEYS)})")
        out.append(Scenario(name, checks=checks, **boot))
    return out


# Broken files the reader must refuse, and what its message must name.
BROKEN_FILES = [
    ("[s]\nsmp = 2\nappend = plan=boot\nexpect = OK\nstaus = SUCCESS\n", "[s] staus: unknown key"),
    ("[s]\nsmp = 2\nappend = plan=boot\nexpect = OK\nchecks = suite_passed sute_passed\n",
     "[s] checks: unknown 'sute_passed'"),
    ("[s]\nsmp = 2\nappend = plan=boot\nstatus = SUCCESS\n", "[s] expect: missing"),
    ("[s]\nsmp = 2\nappend = ${SMAL}\nexpect = OK\nstatus = SKIP\n", "[s] append: unknown ${SMAL}"),
    ("[s]\nsmp = 2\nappend = plan=boot\nexpect = OK\nstatus = SKIP\nstatus = SUCCESS\n",
     ":6: [s] status: a second time"),
    ("[s]\nsmp = 2\nappend = plan=boot\nexpect = OK\nlacks =\n    (\n", "[s] lacks: bad regex"),
    ("[s]\nsmp = 2\nappend = plan=boot\nexpect = OK\n", "[s]: no check key"),
]


def reader_self_test():
    """Problems of the reader: a broken file it takes, or a message that does not say
    where; a check name that scenarios.cfg's header does not document."""
    problems = []
    for text, want in BROKEN_FILES:
        try:
            load_scenarios("broken.cfg", text)
            problems.append(f"took a broken file: {text!r}")
        except ScenarioFileError as e:
            if not str(e).startswith("broken.cfg:") or want not in str(e):
                problems.append(f"message {str(e)!r} lacks {want!r}")
    with open(SCENARIO_FILE) as f:
        header = f.read().split("\n[", 1)[0]
    problems += [f"{SCENARIO_FILE}'s header does not document {name}"
                 for name in list(PLAIN_CHECKS) + list(BOOT_KEYS) + list(CHECK_KEYS)
                 if not re.search(rf"\b{name}\b", header)]
    return problems


def all_scenarios():
    """The generated shapes, the virtio console's, then the hand-written scenarios of
    scenarios.cfg."""
    return shape_matrix() + microvm_scenarios() + virtio_console_scenarios() + load_scenarios()


def run(sc):
    t0 = time.monotonic()
    # A BAD-CMDLINE scenario tests the guest's own parser: run.sh's check of
    # --append against the guest's keys (boot/guest_keys.py, tested in
    # tests/host/test_guest_keys.py) would refuse the line before the boot.
    env = dict(os.environ, IPIBENCH_GUEST_KEYS="") if sc.expect == BADCMD else None
    try:
        p = subprocess.run(sc.command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", timeout=sc.timeout + 30, env=env)
        rc, log, err = p.returncode, p.stdout.replace("\r", ""), p.stderr
    except subprocess.TimeoutExpired:
        rc, log, err = None, "", "run.sh did not return"
    problems = []
    if rc != sc.expect:
        problems.append(f"run.sh exited {rc}, expected {sc.expect}; stderr: {err.strip()[-300:]}")
    for check in sc.checks:
        problems += check(sc, log)
    problems += [f"run.sh's stderr lacks /{p}/" for p in sc.stderr if not re.search(p, err, re.M)]
    if problems:
        problems.append("console tail: " + " | ".join(log.strip().splitlines()[-6:]))
    return sc, problems, time.monotonic() - t0


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    problems = reader_self_test()
    if problems:
        print("not ok - boot: the reader of scenarios.cfg")
        print("".join(f"#   {p}\n" for p in problems), end="")
        return 1
    try:
        todo = [s for s in all_scenarios() if not only or only in s.name]
    except ScenarioFileError as e:
        print(f"not ok - boot: {e}")
        return 1
    workers = max(1, min(len(todo), os.cpu_count() or 2))
    bad = 0
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        for sc, problems, secs in pool.map(run, todo):
            print(f"{'not ok' if problems else 'ok'} - boot: {sc.name} ({secs:.1f} s)")
            for p in problems:
                print(f"#   {p}")
            bad += bool(problems)
            sys.stdout.flush()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot scenarios under QEMU TCG, judged from the console log and run.sh's
exit status. Each scenario is one TAP line; failures explain themselves on
'#' lines below it. Scenarios run in parallel, one per host core.

Every boot goes through run.sh, the users' entry point, so its exit-status
decoding is tested too. TCG only: timing is emulated, so nothing here looks
at a figure, only at behaviour (CPUs, APIC IDs, statuses, messages).
"""
import concurrent.futures
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


def contains(*patterns):
    def check(sc, log):
        return [f"console lacks /{p}/" for p in patterns if not re.search(p, log, re.M)]
    return check


def lacks(*patterns):
    def check(sc, log):
        return [f"console has /{p}/" for p in patterns if re.search(p, log, re.M)]
    return check


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
    """Issue 20: every xAPIC-mode check and figure comes before the first x2APIC
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


def sent_from(sender, halt_ran):
    """Issue 15: every benchmark honours sender=; its records name it, nothing fails."""
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
    """Issue 21: the backends and debug keys a user sees come from the guest's
    registries (help=1); every list kept elsewhere must agree with them."""
    backends, debug = _help_choices(log, "backends"), _help_choices(log, "debug")
    if not backends or not debug:
        return ["help=1 lists no backends or no debug keys"]
    problems = []
    regions = open("docs/timed-regions.md").read()
    table = regions[regions.index("## Backends"):].split("\n\n")[2]
    in_table = re.findall(r"`([a-z0-9-]+)`", "\n".join(l.split("|")[1] for l in
                                                       table.splitlines()[2:]))
    if in_table != backends:
        problems.append(f"docs/timed-regions.md's Backends table {in_table}, registry {backends}")
    row = next(l for l in open("docs/results.md") if l.startswith("| `backend` |"))
    if re.findall(r"`([a-z0-9-]+)`", row)[1:len(backends) + 1] != backends:
        problems.append("docs/results.md's backend row does not list the registry in order")
    fuzz = open("tests/fuzz/fuzz_cmdline.c").read()
    arr = re.search(r"backend_names\[\] = \{(.*?)NULL\}", fuzz, re.S).group(1)
    if re.findall(r'"([a-z0-9-]+)"', arr) != backends:
        problems.append("tests/fuzz/fuzz_cmdline.c's backend_names differ from the registry")
    sys.path.insert(0, "tests/kvm-lane")
    import judge
    named = {b for names in judge.MUST_RUN.values() for b in names} - set(judge.NOT_BACKENDS)
    if named - set(backends):
        problems.append(f"tests/kvm-lane/judge.py names unknown backends {sorted(named - set(backends))}")
    cmdline = open("docs/command-line.md").read()
    missing = [d for d in debug if f"`debug={d}`" not in cmdline]
    if missing:
        problems.append(f"docs/command-line.md's fault injection table lacks debug={missing}")
    return problems


def late_wakes(want):
    """Issue 20: single-halt's round-trip records count their late wakes, variant by variant."""
    def check(sc, log):
        got = {r["variant"]: r.get("late_wakes") for r in result_records(log)
               if r["bench"] == "single-halt" and r["metric"] == "round-trip"
               and r["status"] == "SUCCESS"}
        return [] if got == want else [f"late_wakes by variant {got}, expected {want}"]
    return check


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
    """Issue 20 item 2: with debug=slow-eoi (2 ms before every EOI) the
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
    """Issue 15: records state the ack order, the SELF IPI fence, invalid samples, set writes."""
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
    """Issue 20 item 7: every x2APIC record states the fence Linux uses on the CPU's
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
    """Issue 22 item 8: beside RSP to R8, the stalled CPU's R9-R15, CR2 (the last page
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


def stalled(cpu, apic_id, deadline_ms):
    """Issue 12: the watchdog names the stalled CPU, what it did and its RIP, within its bound."""
    def check(sc, log):
        m = re.search(rf"^watchdog: CPU {cpu} \(APIC ID {apic_id}\) made no progress for (\d+) "
                      rf"ms \(bound (\d+) ms: 2 x deadline {deadline_ms} ms, at least 4000 ms, "
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
    """Issue 11: with markers=1 every measured record names its sampling's phase marker."""
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
    """Issue 29 item 1: debug=withhold-one-way withholds every one-way figure
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


# Shapes that also run every benchmark (the rest run the suite only, which
# keeps the group within a few minutes on two host cores under TCG).
SMALL = "iters=5 warmup=1 budget=1 norov_iters=10"
BENCH_SHAPES = {("q35", "1", "max"), ("pc", "2", "max"), ("q35", "4", "max"),
                ("q35", "4", "qemu64"), ("q35", "6,sockets=2,cores=3", "max")}


def scenarios():
    out = []
    for machine in ("pc", "q35"):
        for smp, ids in TOPOLOGIES.items():
            for cpu in ("max", "qemu64"):
                if machine == "pc" and cpu == "qemu64" and smp not in ("1", "4"):
                    continue  # keep the matrix small: x2APIC absence is covered below
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
    out += [
        Scenario("-smp 8,sockets=2,cores=2,threads=2: the topology line decodes package, core "
                 "and thread", smp="8,sockets=2,cores=2,threads=2", append="plan=boot",
                 checks=[cpus_online(list(range(8))), topology_line, final_status("SUCCESS")]),
        Scenario("GRUB ISO boots, brings up every CPU and runs the default plan", smp="4",
                 iso=True, accel="tcg-single",
                 checks=[cpus_online([0, 1, 2, 3]), contains(r"^loader: GRUB"), suite_passed,
                         records_valid("env", "result", "end"), final_status("SKIP")]),
        Scenario("an x2APIC ID above 255 (260) comes up in x2APIC mode and passes the suite",
                 smp="1,sockets=1,cores=288,maxcpus=288", append="plan=check",
                 qemu=["-device", "max-x86_64-cpu,socket-id=0,core-id=260,thread-id=0"],
                 expect=OK,
                 checks=[contains(r"^smp: CPU 1 APIC ID 260 online",
                                  r"^ok \d+ - xapic: every check # SKIP an APIC ID above 254",
                                  r"^topology: from CPUID \S+, 1 package x 2 cores x 1 thread; "
                                  r"APIC ID = package\.core\.thread: 0=0\.0\.0 260=0\.260\.0$"),
                         suite_passed, records_valid("env", "check", "end"),
                         final_status("SKIP")]),
        Scenario("swallow-ipi makes the suite fail naming the CPU", smp="4",
                 append="plan=check debug=swallow-ipi debug_cpu=2 deadline=200", expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - .*CPU 2 lost it"), final_status("FAILURE")]),
        Scenario("double-ipi makes the suite fail naming the CPU", smp="6,sockets=2,cores=3",
                 cpu="qemu64", append="plan=check debug=double-ipi", expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - .*CPU 5 .*duplicate"),
                         final_status("FAILURE")]),
        Scenario("a duplicate IPI inside a benchmark is a FAILURE naming the CPU", smp="3",
                 accel="tcg-single",
                 append="plan=bench bench=single backends=x2apic debug=double-ipi",
                 expect=FAILURE,
                 checks=[contains(r"CPU 2 \(APIC ID 2\) handled (\d+) IPIs of vector 0x40 for "
                                  r"\d+ sent to it"),
                         records_valid("env", "result", "end"), final_status("FAILURE")]),
        Scenario("sender=, target= and matrix=1 choose the pairs", smp="3", accel="tcg-single",
                 append="plan=bench bench=single backends=x2apic matrix=1",
                 checks=[contains(r"^single matrix on x2apic", r'"sender":2,"targets":"1"',
                                  r'"sender":1,"targets":"0"',
                                  # the table: target CPUs as its header, '-' on the diagonal
                                  r"^  snd\\tgt +0 +1 +2$", r"^ +0 +- +\d+ +\d+$",
                                  r"^ +1 +\d+ +- +\d+$", r"^ +2 +\d+ +\d+ +-$"),
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        Scenario("sender= the last CPU: every benchmark sends from it (the BSP a target)",
                 smp="4", accel="tcg-single", append=f"plan=bench sender=3 {SMALL}",
                 checks=[sent_from(3, halt_ran=False), honest_records,
                         contains(r'"bench":"flush".*"status":"SKIP","reason":"[^"]*sender'),
                         records_valid("env", "result", "norov", "end"),
                         final_status("SKIP")]),
        Scenario("sender= and target= two APs: every benchmark, single-halt included",
                 smp="4", accel="tcg-single", append=f"plan=bench sender=3 target=1 {SMALL}",
                 checks=[sent_from(3, halt_ran=True), honest_records,
                         records_valid("env", "result", "norov", "end"),
                         final_status("SKIP")]),
        Scenario("debug=late-wake: the wake check calls a late wake late, not lost, FAILURE",
                 smp="4", append="plan=check backends=x2apic debug=late-wake", expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - x2apic: CPU 0 wakes CPU 3 from HLT after \d+ "
                                  r"us idle, 5 times, none lost or late: CPU 3 woke late on "
                                  r"wake 3: its handler ran \d+ us after the send",
                                  r"^#   CPU 3 woke late on wake 3 of the retry"),
                         lacks(r"lost wake"), final_status("FAILURE")]),
        Scenario("debug=late-wake in single-halt: its record counts one late wake, the others none",
                 smp="3", accel="tcg-single",
                 append=f"plan=bench bench=single-halt backends=x2apic debug=late-wake {SMALL}",
                 checks=[late_wakes({"none": 1, "ack-after-eoi": 0, "block": 0,
                                     "vmexit-gap": 0}),
                         contains(r"^single-halt +round-trip +none .*\[late-wakes=1, max \d+ us\]"),
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        Scenario("debug=no-halt-mark: one re-halt wait runs out, counted on its record alone",
                 smp="3", accel="tcg-single",
                 append="plan=bench bench=single-halt backends=x2apic debug=no-halt-mark "
                        f"deadline=2000 {SMALL}",
                 checks=[rehalt_timeouts({"none": 1, "ack-after-eoi": 0, "block": 0,
                                          "vmexit-gap": 0}),
                         contains(r"^single-halt +round-trip +none .*\[rehalt-timeouts=1\]"),
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        Scenario("debug=stale-tlb: a shootdown that does not flush leaves a stale TLB entry, FAILURE",
                 smp="3", append="plan=check backends=x2apic debug=stale-tlb",
                 expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - native: IPI shootdown over x2apic \(INVLPG a "
                                  r"page, count, EOI\), 2 pages, CPU 0 -> CPUs \{1-2\}: CPU 1 "
                                  r"still reached page 0's old frame after the flush",
                                  r"^not ok \d+ - native: IPI shootdown over x2apic \(EOI, "
                                  r"INVLPG a page, count\), 2 pages",
                                  r"^not ok \d+ - native: IPI shootdown over x2apic \(CR3 "
                                  r"reload, count, EOI\), CPU 0 -> CPUs \{1-2\}"),
                         lacks(r"the TLB effect went unseen"), final_status("FAILURE")]),
        Scenario("debug=nmi-as-fixed: Fixed IPIs in place of NMIs fail every NMI check",
                 smp="4", append="plan=check backends=x2apic-nmi debug=nmi-as-fixed deadline=200",
                 expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - x2apic-nmi: CPU 0 -> CPU 1, NMI: CPU 1 counted 1 "
                                  r"but took 0 NMIs",
                                  r"^not ok \d+ - x2apic-nmi: an NMI from CPU 0 to CPU 3 is taken "
                                  r"through IF=0: CPU 3 did not take the NMI",
                                  r"^not ok \d+ - x2apic-nmi: an NMI from CPU 0 to CPU 3 is taken "
                                  r"through TPR 0xf0: CPU 3 did not take the NMI",
                                  r"^not ok \d+ - x2apic-nmi: of two NMIs .*none was held"),
                         final_status("FAILURE")]),
        Scenario("debug=nested-nmi: an NMI inside the NMI handler is a FAILURE naming the CPU, "
                 "not a crash",
                 smp="2", append="plan=check backends=x2apic-nmi debug=nested-nmi deadline=200",
                 expect=FAILURE,
                 checks=[contains(r"^ipibench: FAILURE: nested NMI on CPU 1 \(APIC ID 1\): an NMI "
                                  r"was delivered while this CPU was still in its NMI handler"),
                         lacks(r"exception #"), final_status("FAILURE")]),
        Scenario("swallow-ipi fails the NMI delivery checks as it fails the Fixed ones",
                 smp="4", append="plan=check backends=x2apic-nmi,xapic-nmi deadline=200 debug=swallow-ipi "
                                 "debug_cpu=2", expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - xapic-nmi: CPU 0 -> CPU 2, NMI: CPU 2 lost it"),
                         final_status("FAILURE")]),
        Scenario("double-ipi on an NMI backend: the duplicate is named",
                 smp="2", append="plan=check backends=x2apic-nmi debug=double-ipi", expect=FAILURE,
                 checks=[contains(r"^not ok \d+ - x2apic-nmi: .*CPU 1 counted it 2 times "
                                  r"\(duplicate\)"), final_status("FAILURE")]),
        Scenario("debug=slow-eoi: the EOI is inside ack-after-eoi's round trip, outside the default's",
                 smp="2", accel="tcg-single",
                 append="plan=bench bench=single backends=x2apic debug=slow-eoi iters=5 warmup=1",
                 checks=[eoi_in_region, records_valid("env", "result", "end"),
                         final_status("SUCCESS")]),
        Scenario("debug=extra-exit adds a register read to each send and changes no result",
                 smp="2", accel="tcg-single",
                 append=f"plan=bench bench=send-cost,single backends=xapic,x2apic "
                        f"debug=extra-exit {SMALL}",
                 checks=[contains(r'"bench":"send-cost".*"backend":"x2apic".*"status":"SUCCESS"',
                                  r'"bench":"single".*"backend":"xapic".*"status":"SUCCESS"'),
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        Scenario("markers=1: every measured record carries its sampling's phase marker; "
                 "a withheld one-way figure carries its sampling's",
                 smp="2", accel="tcg-single",
                 append=f"plan=bench bench=dry-run,self,single,broadcast markers=1 "
                        f"debug=withhold-one-way {SMALL}",
                 checks=[marked, withheld_marked, records_valid("env", "result", "end"),
                         final_status("SKIP")]),
        Scenario("an exception on an AP in the middle of a benchmark names CPU and benchmark",
                 smp="3", accel="tcg-single", append="plan=bench bench=single debug=fault-ap-bench",
                 expect=CRASH,
                 checks=[contains(r"^CPU 2 \(APIC ID 2\): exception #UD",
                                  r"^  during benchmark single on xapic"),
                         final_status("CRASH")]),
        Scenario("a forced deadline expiry is a FAILURE naming CPU and benchmark; the plan goes on",
                 smp="3", accel="tcg-single",
                 append="plan=bench bench=single backends=xapic,x2apic debug=expire-deadline",
                 expect=FAILURE,
                 checks=[contains(r"^bench: FAILURE: single on xapic: CPU 0 sent vector 0x40 to "
                                  r"CPU 2 \(APIC ID 2\): not handled within 1000 us",
                                  r'"bench":"single","metric":"round-trip".*"backend":"x2apic"'
                                  r'.*"status":"SUCCESS"'),
                         records_valid("env", "result", "end"), final_status("FAILURE")]),
        Scenario("a forced deadline expiry with sender= an AP: the BSP answers late, FAILURE",
                 smp="3", accel="tcg-single",
                 append="plan=bench bench=single backends=xapic,x2apic debug=expire-deadline "
                        "sender=2",
                 expect=FAILURE,
                 checks=[contains(r"^bench: FAILURE: single on xapic: CPU 2 sent vector 0x40 to "
                                  r"CPU 0 \(APIC ID 0\): not handled within 1000 us",
                                  r"^bench: harness cost \d+ cycles on CPU 2 ",
                                  r'"bench":"single","metric":"round-trip".*"backend":"x2apic"'
                                  r'.*"sender":2.*"status":"SUCCESS"'),
                         records_valid("env", "result", "end"), final_status("FAILURE")]),
        # Issue 12 item 3: a CPU that stops making progress (here spinning with IF=0 in
        # a benchmark's measured iterations, no deadline of its own) is found by another
        # CPU's watchdog tick, which takes its registers by NMI and ends the run ERROR.
        Scenario("debug=stall on the BSP: an AP's watchdog names CPU 0, its phase and RIP, ERROR",
                 smp="2", accel="tcg-single", timeout=60,
                 append=f"plan=bench bench=broadcast backends=xapic deadline=200 debug=stall "
                        f"debug_cpu=0 {SMALL}",
                 expect=ERROR,
                 checks=[stalled(0, 0, 200), watchdog_line,
                         lacks(r'"record":"result".*"bench":"broadcast"'),
                         final_status("ERROR")]),
        Scenario("debug=stall on an AP: the watchdog names its CPU and APIC ID, phase and RIP",
                 smp="6,sockets=2,cores=3", accel="tcg-single", timeout=60,
                 append=f"plan=bench bench=broadcast backends=x2apic deadline=200 debug=stall "
                        f"debug_cpu=4 {SMALL}",
                 expect=ERROR,
                 checks=[stalled(4, 5, 200), contains(r"^watchdog: CPU 4 .*backend x2apic, "
                                                      r"benchmark broadcast on x2apic"),
                         final_status("ERROR")]),
        Scenario("debug=stall with one CPU: nobody could watch it, so it is not armed, ERROR",
                 smp="1", append="plan=boot debug=stall", expect=ERROR,
                 checks=[watchdog_line,
                         contains(r"^debug: stall needs another CPU to watch CPU 0 \(1 online\): "
                                  r"not armed"),
                         final_status("ERROR")]),
        Scenario("without a PIT the TSC is calibrated against the ACPI PM timer", smp="2",
                 accel="tcg-single", append="plan=boot", qemu=["-machine", "pit=off"],
                 checks=[contains(r"^tsc: \d+ kHz from ACPI PM timer calibration"),
                         records_valid("env", "end"), final_status("SUCCESS")]),
        Scenario("plan=boot runs no suite and no benchmark", smp="2", append="plan=boot",
                 checks=[lacks(r"^check: ", r'^\{"record":"result"'),
                         records_valid("env", "end"), final_status("SUCCESS")]),
        Scenario("bench= and backends= select what runs", smp="2", accel="tcg-single",
                 append="plan=bench bench=single backends=x2apic",
                 checks=[contains(r'"bench":"single".*"backend":"x2apic"'),
                         lacks(r'"bench":"broadcast"', r'"backend":"xapic"'),
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        # -cpu max is AuthenticAMD under TCG; the Intel vendor takes the fenced x2APIC paths.
        Scenario("the kvm-unit-tests view names self, single and single-halt figures",
                 smp="2", accel="tcg-single", cpu="max,vendor=GenuineIntel",
                 append="plan=bench bench=self,single,single-halt backends=xapic,x2apic",
                 checks=[contains(r"^view: kvm-unit-tests x86/vmexit\.c names",
                                  r"^test +xapic +x2apic$",
                                  r"^self_ipi_sti_nop +\d+ +\d+$",
                                  r"^x2apic_self_ipi_tpr_sti_hlt +- +\d+$",
                                  r"^ipi_halt +\d+ +\d+$",
                                  r"^note: ipi_halt here is CPU 0 -> CPU 1 \(vmexit\.c: CPU 0 -> "
                                  r"CPU 1\); as in vmexit\.c, each iteration is the round trip "
                                  r"and a 2000-cycle spin inside the timing",
                                  r"^note: the self rows here end when the handler has run",
                                  # The pass the ipi_halt row comes from: no gap, the
                                  # spin inside the region.
                                  r'"bench":"single-halt","metric":"round-trip",'
                                  r'"variant":"vmexit-gap","backend":"xapic",.*'
                                  r'next-send=after-2000-cycle-spin-in-region',
                                  r"^note: on x2APIC every ICR write here, .*MFENCE;LFENCE "
                                  r"\(SDM 11\.12\.3; Linux's rule for vendor GenuineIntel\)",
                                  # Issue 20 item 8: vmexit.c's xAPIC self send, ICR2 then ICR.
                                  r'"bench":"self","metric":"send-to-handler",'
                                  r'"variant":"icr2-sti-nop","backend":"xapic",',
                                  r"^note: the xAPIC self_ipi_\* cells are the icr2-\* passes",
                                  r"^note: vmexit\.c times its loops with RDTSC accumulators "
                                  r"inside them, .*tsc_ipi, .*tsc_eoi, ",
                                  r'^\{"record":"kut","schema":1,"name":"self_ipi_sti_nop",'
                                  r'"backend":"x2apic","mean_cycles":\d+\}$',
                                  r'^\{"record":"kut","schema":1,"name":"ipi_halt",'
                                  r'"backend":"xapic","mean_cycles":\d+\}$'),
                         lacks(r"^ipi ",  # a spinning target is not vmexit.c's ipi
                               r"^note: on x2APIC the ICR writes here are unfenced"),
                         fence_words,
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        Scenario("with halt_gap=0 the kvm-unit-tests view calls single-halt 'ipi', "
                 "beside the vmexit-gap pass's ipi_halt",
                 smp="2", accel="tcg-single",
                 append="plan=bench bench=single-halt backends=x2apic halt_gap=0",
                 checks=[contains(r"^ipi +\d+$", r"^ipi_halt +\d+$",
                                  r"^note: on x2APIC the ICR writes here are unfenced, as Linux "
                                  r"sends them on AMD and Hygon \(vendor AuthenticAMD\)"),
                         lacks(r"^self_ipi", r"^note: on x2APIC every ICR write here"),
                         fence_words,
                         records_valid("env", "result", "end"), final_status("SUCCESS")]),
        # Issue 15 item 6: INVLPG per page up to Linux's 33-page ceiling, CR3 only as its
        # own variant, and the targets' loss beside the sender's time in every flush row.
        # Issue 30 item 4: the same INVLPG shootdown in Linux's order (EOI, flush, count).
        Scenario("flush: INVLPG per page to 33 pages, also after the EOI, labelled CR3 variants, "
                 "targets' loss",
                 smp="4", accel="tcg-single", append="plan=bench bench=flush backends=x2apic",
                 checks=[contains(*[rf'"bench":"flush","metric":"{m}","variant":"native-{v}",'
                                    rf'"backend":"x2apic",.*"targets":"{t}",.*"status":"SUCCESS"'
                                    for v in ("invlpg-1p", "invlpg-8p", "invlpg-33p", "cr3-8p",
                                              "cr3-33p", "invlpg-after-eoi-1p",
                                              "invlpg-after-eoi-33p")
                                    for m in ("shootdown", "target-loss")
                                    for t in ("1", "1-2", "1-3")]),
                         contains(r'"metric":"target-loss","variant":"undisturbed",'
                                  r'"backend":"x2apic",.*"targets":"1-3",.*"status":"SUCCESS"',
                                  r'"metric":"call","variant":"hv-flush","backend":"none",'
                                  r'.*"status":"SKIP"'),
                         lacks(r'"variant":"native-cr3-1p"', r'"bench":"flush".*"FAILURE"'),
                         records_valid("env", "result", "end"), final_status("SKIP")]),
        Scenario("deliberate fault on the BSP dumps registers and ends in CRASH",
                 smp="2", append="plan=boot debug=fault-bsp", expect=CRASH,
                 checks=[contains(r"^CPU 0 \(APIC ID 0\): exception #UD invalid opcode \(vector 6\)",
                                  r"RIP [0-9a-f]{16}", r"CR2 [0-9a-f]{16}", r"RSP [0-9a-f]{16}"),
                         final_status("CRASH")]),
        Scenario("a triple fault resets the VM: no status, run.sh says so and exits 8",
                 smp="2", append="plan=boot debug=triple-fault", expect=QEMU_EXIT,
                 checks=[contains(r"^debug: empty IDT and #UD on the BSP: a triple fault"),
                         lacks(r"^ipibench: status ", r"exception #")],
                 stderr=[r"guest reset or powered off without a status.*\(QEMU exit 0\)"]),
        Scenario("deliberate fault on an AP names that CPU and ends in CRASH",
                 smp="6,sockets=2,cores=3", append="plan=boot debug=fault-ap", expect=CRASH,
                 checks=[contains(r"^CPU 5 \(APIC ID 6\): exception #UD"), final_status("CRASH")]),
        Scenario("an AP that never gets its SIPI is reported and left out",
                 smp="4", append="plan=boot debug=skip-sipi debug_cpu=2 ap_timeout=200",
                 expect=ERROR,
                 checks=[contains(r"^smp: CPU 2 \(APIC ID 2\) did not come up within 200 ms"),
                         contains(r"^smp: 3 of 4 CPUs online"), final_status("ERROR")]),
        Scenario("unknown command-line key is rejected by name", append="itres=5",
                 expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: unknown key 'itres' in 'itres=5'"),
                         final_status("BAD-CMDLINE"), lacks(r"^smp: CPU 1")]),
        Scenario("malformed number is rejected with the accepted range",
                 append="ap_timeout=12x", expect=BADCMD,
                 checks=[contains(r"bad number in 'ap_timeout=12x' \(accepted: 1\.\.60000"),
                         final_status("BAD-CMDLINE")]),
        Scenario("out-of-range number is rejected", append="ap_timeout=0", expect=BADCMD,
                 checks=[contains(r"'ap_timeout=0'"), final_status("BAD-CMDLINE")]),
        Scenario("two faults that share the idle loop's slot are rejected together",
                 append="plan=boot debug=late-wake,no-halt-mark", expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: debug=late-wake and "
                                  r"debug=no-halt-mark plant their faults in the same place"),
                         final_status("BAD-CMDLINE")]),
        Scenario("duplicate key is rejected", append="plan=boot plan=boot", expect=BADCMD,
                 checks=[contains(r"duplicate key 'plan'"), final_status("BAD-CMDLINE")]),
        # Issue 22 item 7: a CPU the machine lacks used to SKIP every benchmark and exit 0,
        # a run that measured nothing it was asked for passing; now it is checked once
        # the CPUs are up, before the plan.
        Scenario("sender= beyond the online CPUs is rejected naming them", smp="4",
                 accel="tcg-single", append=f"plan=bench sender=9 {SMALL}", expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: sender=9 names no CPU: "
                                  r"CPUs 0-3 are online$"),
                         lacks(r'^\{"record":"result"'), final_status("BAD-CMDLINE")]),
        Scenario("target= beyond the online CPUs is rejected naming them", smp="2",
                 accel="tcg-single", append=f"plan=bench target=99 {SMALL}", expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: target=99 names no CPU: "
                                  r"CPUs 0-1 are online$"),
                         lacks(r'^\{"record":"result"'), final_status("BAD-CMDLINE")]),
        Scenario("debug_cpu= beyond the online CPUs is rejected naming them", smp="2",
                 append="plan=boot debug=swallow-ipi debug_cpu=5", expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: debug_cpu=5 names no CPU: "
                                  r"CPUs 0-1 are online$"),
                         final_status("BAD-CMDLINE")]),
        # skip-sipi's debug_cpu is a CPU the machine lists but that stays down by design:
        # it is checked against the listed CPUs, not the online ones.
        Scenario("skip-sipi may name the last listed CPU, which then is not online",
                 smp="4", append="plan=boot debug=skip-sipi debug_cpu=3 ap_timeout=200",
                 expect=ERROR,
                 checks=[contains(r"^smp: 3 of 4 CPUs online"),
                         lacks(r"bad command line"), final_status("ERROR")]),
        Scenario("sender= a listed CPU that did not come up is rejected: CPUs 0-2 online",
                 smp="4", append="plan=bench debug=skip-sipi debug_cpu=3 ap_timeout=200 sender=3",
                 expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: sender=3 names no CPU: "
                                  r"CPUs 0-2 are online \(3 of 4 listed\)$"),
                         lacks(r'^\{"record":"result"'), final_status("BAD-CMDLINE")]),
        Scenario("skip-sipi's debug_cpu= beyond the listed CPUs is rejected", smp="2",
                 append="plan=boot debug=skip-sipi debug_cpu=2", expect=BADCMD,
                 checks=[contains(r"^ipibench: bad command line: debug_cpu=2 names no CPU: "
                                  r"the machine lists CPUs 0-1$"),
                         final_status("BAD-CMDLINE")]),
        Scenario("help=1 lists the keys and succeeds; every list of backends and debug keys "
                 "matches the registries", append="help=1",
                 checks=[contains(r"ap_timeout", r"debug"), registry_lists,
                         final_status("SUCCESS")]),
    ]
    return out


def mptable_scenarios():
    """Issue 14 item 3: CPUs from the Intel MP table when ACPI gives none. QEMU's pc
    SeaBIOS builds both tables; debug=no-acpi makes the kernel ignore ACPI. SeaBIOS
    lists only the first logical CPU of each package in its MP table, so the four
    CPUs are four sockets here (tests/fixtures/mptable/README.md)."""
    return [
        Scenario("debug=no-acpi: 4 CPUs come up through SeaBIOS's MP table, the suite passes",
                 smp="4,sockets=4", machine="pc", append="plan=check debug=no-acpi",
                 checks=[cpus_online([0, 1, 2, 3]),
                         contains(r"^debug: no-acpi: ACPI ignored, CPUs from the MP table$",
                                  r"^mptable: 4 CPUs \(APIC IDs 0 1 2 3\)$",
                                  r"^mptable: MP 1\.4 table at 0xf[0-9a-f]{4}: \d+ entries, "
                                  r"0 disabled, 0 duplicates; local APIC at 0xfee00000$"),
                         lacks(r"^acpi: ", r"^mptable: .*BP flag"),
                         suite_passed, records_valid("env", "check", "end"),
                         final_status("SKIP")]),
    ]


def microvm_facts(acpi):
    """Issue 14 items 1 and 2: microvm without an 8259, PIT or RTC, entered through PVH;
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
    """Issue 14 item 4: QEMU microvm as microVM monitors present a guest (pic=off, pit=off,
    rtc=off; run.sh --machine microvm boots build/ipibench.elf through PVH), the default plan
    at -smp 1, 2 and 4, with ACPI and with only the firmware's MP table (microvm-noacpi);
    and PVH on q35 (run.sh --pvh), where the firmware has every legacy device."""
    out = []
    for machine, acpi in (("microvm", True), ("microvm-noacpi", False)):
        for smp in ("1", "2", "4"):
            out.append(Scenario(
                f"{machine} -smp {smp}: PVH, no 8259, PIT or RTC, CPUs from the "
                f"{'MADT' if acpi else 'MP table'}, default plan runs",
                smp=smp, machine=machine, accel="tcg-single", append=f"plan=default {SMALL}",
                checks=[cpus_online(TOPOLOGIES[smp]), tsc_line, skew_line, suite_passed,
                        switch_sequence, watchdog_line, bench_results, microvm_facts(acpi),
                        records_valid("env", "check", "result", "end"), final_status("SKIP")]))
    out.append(Scenario(
        "q35 --pvh: build/ipibench.elf boots through its PVH entry, RSDP from the start info",
        smp="4", machine="q35", pvh=True, append="plan=check",
        checks=[cpus_online(TOPOLOGIES["4"]), suite_passed,
                contains(r"^loader: pvh$", r"^cmdline: plan=check$",
                         r"^pvh: start info version 1 at 0x[0-9a-f]+: [1-9]\d* memory map "
                         r"entries, RSDP at 0x[0-9a-f]+",
                         r"^acpi: RSDP at 0x[0-9a-f]+, from the loader$",
                         r"^tsc: \d+ kHz from PIT calibration"),
                lacks(r"^pic: no 8259", r"tsc-freq-guessed"),
                records_valid("env", "check", "end"), final_status("SKIP")]))
    # Multiboot puts the image path first and the parser skips it; PVH passes
    # the arguments alone, so a bare first word must be refused, not skipped.
    out.append(Scenario(
        "--pvh: a bare first word on the command line is refused, not taken for an image path",
        smp="2", machine="q35", pvh=True, append="help plan=boot", expect=BADCMD,
        checks=[contains(r"^ipibench: bad command line: 'help' is not key=value"),
                final_status("BAD-CMDLINE")]))
    return out


def run(sc):
    t0 = time.monotonic()
    try:
        p = subprocess.run(sc.command(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, errors="replace", timeout=sc.timeout + 30)
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
    todo = [s for s in scenarios() + mptable_scenarios() + microvm_scenarios()
            if not only or only in s.name]
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

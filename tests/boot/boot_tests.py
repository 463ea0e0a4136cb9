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
import time

# run.sh exit codes (docs/exit-codes.md)
OK, ERROR, FAILURE, CRASH, BADCMD, TIMEOUT = 0, 3, 4, 5, 6, 7

TOPOLOGIES = {
    "1": [0],
    "2": [0, 1],
    "4": [0, 1, 2, 3],
    "8": list(range(8)),
    "6,sockets=2,cores=3": [0, 1, 2, 4, 5, 6],
    "2,maxcpus=4": [0, 1],
}


class Scenario:
    def __init__(self, name, smp="2", machine="q35", cpu="max", append="",
                 expect=OK, checks=(), iso=False, timeout=120):
        self.name, self.smp, self.machine, self.cpu = name, smp, machine, cpu
        self.append, self.expect, self.checks = append, expect, list(checks)
        self.iso, self.timeout = iso, timeout

    def command(self):
        cmd = ["./run.sh", "--accel", "tcg", "--no-save", "--smp", self.smp,
               "--machine", self.machine, "--cpu", self.cpu,
               "--timeout", str(self.timeout)]
        if self.iso:
            cmd.append("--iso")
        else:
            cmd += ["--append", self.append]
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


def skew_line(sc, log):
    if sc.smp != "1" and not re.search(r"^tsc: skew bound over \d+ APs: \d+ cycles", log, re.M):
        return ["no TSC skew bound line"]
    return []


def tsc_line(sc, log):
    return [] if re.search(r"^tsc: \d+ kHz from ", log, re.M) else ["no TSC frequency line"]


def scenarios():
    out = []
    for machine in ("pc", "q35"):
        for smp, ids in TOPOLOGIES.items():
            for cpu in ("max", "qemu64"):
                if machine == "pc" and cpu == "qemu64" and smp not in ("1", "4"):
                    continue  # keep the matrix small: x2APIC absence is covered below
                out.append(Scenario(
                    f"{machine} -smp {smp} -cpu {cpu}: every CPU up with its APIC ID",
                    smp=smp, machine=machine, cpu=cpu, append="plan=boot",
                    checks=[cpus_online(ids), tsc_line, skew_line, final_status("SUCCESS")]))
    out += [
        Scenario("GRUB ISO boots and brings up every CPU", smp="4", iso=True,
                 checks=[cpus_online([0, 1, 2, 3]), contains(r"^loader: GRUB"),
                         final_status("SUCCESS")]),
        Scenario("deliberate fault on the BSP dumps registers and ends in CRASH",
                 smp="2", append="plan=boot debug=fault-bsp", expect=CRASH,
                 checks=[contains(r"^CPU 0 \(APIC ID 0\): exception #UD invalid opcode \(vector 6\)",
                                  r"RIP [0-9a-f]{16}", r"CR2 [0-9a-f]{16}", r"RSP [0-9a-f]{16}"),
                         final_status("CRASH")]),
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
        Scenario("duplicate key is rejected", append="plan=boot plan=boot", expect=BADCMD,
                 checks=[contains(r"duplicate key 'plan'"), final_status("BAD-CMDLINE")]),
        Scenario("help=1 lists the keys and succeeds", append="help=1",
                 checks=[contains(r"ap_timeout", r"debug"), final_status("SUCCESS")]),
    ]
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
    if problems:
        problems.append("console tail: " + " | ".join(log.strip().splitlines()[-6:]))
    return sc, problems, time.monotonic() - t0


def main():
    only = sys.argv[1] if len(sys.argv) > 1 else None
    todo = [s for s in scenarios() if not only or only in s.name]
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

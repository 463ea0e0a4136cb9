#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make bench: the harness benchmarked. Runs the default plan under TCG with
-smp 4 (single-threaded, as run.sh does when it falls back to TCG) several
times and prints the wall time of the whole plan, the time from QEMU start
to the first result record, the dry-run cost in cycles, and the run-to-run
spread: the coefficient of variation of each headline median
(p50 of every SUCCESS result) across the boots.

Goals: the whole default plan within 30 s under TCG on a 2-core
machine; headline medians varying under 10% between boots. Under TCG the
figures are emulated, so the spread measures the harness and the host, not
a hypervisor. A benchmark, not a test: it never fails on speed.

Measured here: the whole plan in 0.72 s, the first result
after 0.36 s, medians within 1.5% between boots (broadcast, the worst rows,
moves with host load: 3-25% on a busy machine). With --icount every one of
155 medians repeats exactly, so the spread comes from TCG's host-clock TSC
and vCPU scheduling, not from the harness.

usage: tools/bench_plan.py [BOOTS] [--icount] [--kernel ELF32] [--cpu MODEL] [--append ARGS]
                          [--save FILE] [--against FILE]
  --icount  boot with -icount shift=0,sleep=off: the TSC counts executed
            instructions, so the emulated timing no longer follows the host's
            clock and QEMU's round-robin slices. What spread is left then is
            the harness's own (its sample choice, its order of work): every
            median should repeat exactly. Slower (about 16 s a boot here).
  --kernel  boot this image instead of build/ipibench.elf32 (an old build)
  --cpu     the -cpu value (default max, whose TCG vendor is AuthenticAMD;
            max,vendor=GenuineIntel takes the Intel paths, e.g. the x2APIC fence)
  --append  more kernel command line after plan=default, or instead of it when
            it names its own plan=. Under KVM markers=1 moves medians (each
            mark is an exit to QEMU), so compare and gate keep timings with
            and without it apart (docs/comparing.md)
  --save    write every headline median (median over the boots) as JSON
  --against a file --save wrote: print every median that moved, old -> new.
            Under --icount a change of the timed code shows as exact
            instruction counts: the before/after table a timed-region change
            owes its reviewers."""
import json
import os
import statistics
import subprocess
import sys
import time

# The host application's reader of record lines (a development script, run
# from the repository root or anywhere).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
from ipibench.record_lines import decode  # noqa: E402

def option(name):
    """Removes --name VALUE from the arguments; its value or None."""
    if name not in sys.argv:
        return None
    i = sys.argv.index(name)
    value = sys.argv[i + 1]
    del sys.argv[i:i + 2]
    return value


KERNEL = option("--kernel") or "build/ipibench.elf32"
APPEND = option("--append") or ""
CPU = option("--cpu") or "max"
SAVE, AGAINST = option("--save"), option("--against")
ICOUNT = "--icount" in sys.argv[1:]
ARGS = [a for a in sys.argv[1:] if a != "--icount"]
BOOTS = int(ARGS[0]) if ARGS else 5
QEMU = ["qemu-system-x86_64", "-accel", "tcg,thread=single", "-M", "q35", "-cpu", CPU, "-smp", "4",
        "-m", "256M", "-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio",
        "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
        "-kernel", KERNEL, "-append", (APPEND if any(w.startswith("plan=") for w in APPEND.split())
                              else f"plan=default {APPEND}").strip()]
if ICOUNT:
    QEMU[3:3] = ["-icount", "shift=0,sleep=off,align=off"]


def boot():
    t0 = time.monotonic()
    p = subprocess.Popen(["timeout", "-k", "2", "300"] + QEMU, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL)
    first, records = None, []
    for raw in p.stdout:
        rec, _ = decode(raw.decode(errors="replace").strip())
        if rec is not None and rec.get("record") == "result":
            first = first or time.monotonic() - t0
            records.append(rec)
    p.wait()
    return time.monotonic() - t0, first, records, p.returncode


def key(r):
    return (r["bench"], r["metric"], r["variant"], r["backend"], r["ntargets"])


def compare(medians, path):
    """Prints the medians that moved against an earlier --save, old -> new."""
    with open(path) as f:
        old = {tuple(k): v for k, v in json.load(f)}
    new = {k: statistics.median(v) for k, v in medians.items()}
    moved = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
    print(f"  against {path}: {len(moved)} of {len(set(old) | set(new))} medians moved")
    print(f"    {'bench metric variant backend ntargets':60} {'old':>9} {'new':>9} {'delta':>8}")
    for k in moved:
        o, n = old.get(k), new.get(k)
        delta = f"{n - o:+8.0f}" if o is not None and n is not None else "       -"
        print(f"    {' '.join(str(x) for x in k):60} {o if o is not None else '-':>9} "
              f"{n if n is not None else '-':>9} {delta}")


def main():
    walls, firsts, medians, dry = [], [], {}, []
    for i in range(BOOTS):
        wall, first, recs, rc = boot()
        if rc not in (65, 67):
            print(f"bench: boot {i + 1} ended with QEMU status {rc}")
            return 1
        walls.append(wall)
        firsts.append(first or wall)
        for r in recs:
            if r["status"] == "SUCCESS":
                medians.setdefault(key(r), []).append(r["cycles"]["p50"])
                if r["bench"] == "dry-run":
                    dry.append(r["cycles"]["p50"])
    cvs = sorted((statistics.pstdev(v) / statistics.mean(v) * 100, k)
                 for k, v in medians.items() if len(v) == BOOTS and statistics.mean(v) > 0)
    mode = "TCG with -icount (instruction-counted TSC)" if ICOUNT else "TCG"
    print(f"bench: default plan, {mode}, -smp 4, {BOOTS} boots")
    print(f"  whole plan wall time: median {statistics.median(walls):.2f} s "
          f"(min {min(walls):.2f}, max {max(walls):.2f}; goal <= 30 s)")
    print(f"  QEMU start to first result: median {statistics.median(firsts):.2f} s")
    print(f"  dry-run cost: median {statistics.median(dry) if dry else 0} cycles")
    if cvs:
        under = sum(1 for c, _ in cvs if c < 10)
        print(f"  run-to-run CV of {len(cvs)} headline medians: median "
              f"{statistics.median(c for c, _ in cvs):.1f}%, {under} under 10% "
              f"(goal: all under 10%)")
        for c, k in cvs[-5:]:
            print(f"    worst: {c:6.1f}%  {' '.join(str(x) for x in k)}")
    if SAVE:
        with open(SAVE, "w") as f:
            json.dump([[list(k), statistics.median(v)] for k, v in sorted(medians.items())], f)
    if AGAINST:
        compare(medians, AGAINST)
    return 0


if __name__ == "__main__":
    sys.exit(main())

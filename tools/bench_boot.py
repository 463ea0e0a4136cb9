#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""make bench-boot: time from QEMU start to "all CPUs up" for -smp 4 under
TCG, beside the time QEMU needs to boot a do-nothing multiboot kernel in the
same run (tools/nothing.asm). Goal: at most 1.5x the do-nothing boot.
Prints the median of several boots of each, interleaved so that a change in
machine load hits both alike. A benchmark, not a test: it never fails on speed."""
import statistics
import subprocess
import sys
import time

ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
QEMU = ["qemu-system-x86_64", "-accel", "tcg", "-M", "q35", "-cpu", "max", "-smp", "4",
        "-m", "256M", "-nodefaults", "-display", "none", "-no-reboot", "-serial", "stdio",
        "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04"]


def boot(image, marker=None):
    """Seconds from spawning QEMU to the marker line (or to QEMU's exit)."""
    t0 = time.monotonic()
    p = subprocess.Popen(["timeout", "-k", "2", "60"] + QEMU + ["-kernel", image]
                         + (["-append", "plan=boot"] if marker else []),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    t = None
    for line in p.stdout:
        if marker and marker in line.decode(errors="replace"):
            t = time.monotonic() - t0
    p.wait()
    return t if marker else time.monotonic() - t0


def main():
    ours, nothing = [], []
    for _ in range(ROUNDS):
        nothing.append(boot("build/nothing.elf32"))
        t = boot("build/ipibench.elf32", "smp: 4 of 4 CPUs online")
        if t is None:
            print("bench-boot: ipibench never printed 'smp: 4 of 4 CPUs online'")
            return 1
        ours.append(t)
    n, o = statistics.median(nothing), statistics.median(ours)
    print(f"bench-boot: -smp 4 TCG, median of {ROUNDS} boots each")
    print(f"  do-nothing multiboot kernel: {n * 1000:7.1f} ms (QEMU start to exit)")
    print(f"  ipibench, all CPUs up:       {o * 1000:7.1f} ms (QEMU start to 'smp: 4 of 4')")
    print(f"  ratio: {o / n:.2f}x (goal <= 1.5x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

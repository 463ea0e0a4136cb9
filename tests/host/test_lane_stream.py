#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""boot/lane_stream.py: the Xen lane's guest lines and progress as they
come. FrameLines must hand the Console what xen-lane.sh's own splitter
(--resplit) writes of the frame's guest, whatever chunks outer.log grows
by: 199-character pieces joined, Xen's lines and other frames' left out;
LaneProgress says the lane's progress lines, and nothing under --quiet.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import contextlib
import io
import os
import re
import subprocess

from harness import REPO, check, registry
from fixtures import main

from ipibench.boot import lane_stream as S

CASES, case = registry()

FIXTURE = os.path.join(REPO, "tests", "xen-lane", "fixtures", "outer.log")


class Sink:
    """A run.Lines stand-in: the lines fed, and the times they came at."""

    def __init__(self):
        self.text, self.times, self.closed = b"", [], False

    def feed(self, chunk, now):
        self.text += chunk
        self.times.append(now)

    def tick(self, _now):
        pass

    def close(self, _now):
        self.closed = True


def stream(frame, data, size):
    """FrameLines over data fed size bytes at a time: (its lines, the sink)."""
    sink = Sink()
    f = S.FrameLines(frame, sink)
    for i in range(0, len(data), size):
        f.feed(data[i:i + size], float(i))
    f.close(float(len(data)))
    lines = sink.text.decode().split("\n")[:-1]
    check(f.count == len(lines) and sink.closed, f"count {f.count}, {len(lines)} lines")
    return lines, sink


@case("lane stream: a Xen frame's guest lines as xen-lane.sh --resplit writes them, "
      "in any chunks; 199-character pieces joined; Xen's lines and other frames' left out")
def _(s):
    # The xen-lane group's fixture, each frame opening with ipibench's banner.
    with open(FIXTURE, "rb") as f:
        data = re.sub(rb"^(@@@ lane-begin [^\n]*\n)", rb"\1(d1) \n(d1) ipibench 1234567\n",
                      f.read(), flags=re.M)
    d = os.path.join(s.tmp, "resplit")
    os.makedirs(d)
    with open(os.path.join(d, "outer.log"), "wb") as f:
        f.write(data)
    subprocess.run([os.path.join(REPO, "host/lane/xen-lane.sh"), "--resplit", d],
                   capture_output=True, check=False)
    with open(os.path.join(d, "whole.xen-pvh.log")) as f:
        split = f.read().split("\n")[:-1]
    whole, _ = stream("whole.xen-pvh", data, len(data))
    # The splitter keeps the frame's Xen lines too; the guest's are the same
    # from ipibench's banner on (before it: the firmware's, none here).
    check(whole[0] == "ipibench 1234567" and
          whole == [line for line in S.guest_lines("\n".join(split))
                    if not line.startswith("(XEN)")], f"streamed {whole!r}\nsplit {split!r}")
    fw = b"@@@ lane-begin f\n(d3) SeaBIOS (version 1.16.3)\n(d3) Booting from ROM...\n(d3) \n" \
         b"(d3) ipibench 1234567\n(d3) smp: 2 of 2 CPUs online\n@@@ lane-end f status=- t\n"
    got, _ = stream("f", fw, 5)
    check(got == ["ipibench 1234567", "smp: 2 of 2 CPUs online"], f"the firmware's lines: {got}")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        stream("f", fw + b"@@@ lane-rerun f xen-rip: a triple fault at a RIP in Xen's code\n"
               + fw, 64)
    check("run.sh: the Xen lane runs the frame again: xen-rip: a triple fault" in err.getvalue(),
          f"a rerun said: {err.getvalue()!r}")
    # Lines of exactly 199 and 398 bytes: full pieces, then an empty one;
    # 200 bytes of two-byte characters, counted as Xen counts, in bytes.
    a, b, u = b"a" * 199, b"b" * 398, ("\u00e9" * 100).encode()
    text = b"@@@ lane-begin g\n(d1) ipibench 1\n" + b"".join(
        b"".join(b"(d1) " + x[i:i + 199] + b"\n" for i in range(0, len(x), 199)) + b"(d1) \n"
        for x in (a, b)) + b"(d1) " + u[:199] + b"\n(d1) " + u[199:] + b"\n(d1) end\n"
    got, _ = stream("g", text, 3)
    check(got == ["ipibench 1", "a" * 199, "b" * 398, "\u00e9" * 100, "end"],
          f"long lines: {[len(x) for x in got]}")
    check(S.guest_lines("SeaBIOS\nipibench 1\nx") == ["ipibench 1", "x"] and
          S.guest_lines("xen-lane: error: no dom0") == ["xen-lane: error: no dom0"],
          "after the fact: from the banner, or all where none came")
    check(any(len(line) > 199 and line.startswith('{"record":"result"') for line in whole),
          "no record joined from its 199-character pieces")
    for size in (1, 7, 200, 4096):
        got, sink = stream("whole.xen-pvh", data, size)
        check(got == whole, f"in chunks of {size}: {got!r}")
        check(size != 1 or len(set(sink.times)) == len(whole),
              "each line at the time its end came")
    # A frame cut short: its last piece (199 characters, the rest never
    # came) still reaches the Console at the end.
    cut, _ = stream("cut.xen-pvh", data, 64)
    check(len(cut) == 3 and len(cut[-1]) == 199 and
          not any("status" in line for line in cut), f"cut.xen-pvh: {cut!r}")
    check(stream("no-such-frame", data, 64)[0] == [], "another frame's lines")


@case("lane stream: xen-lane.sh's progress lines said as they come (run.sh: xen-lane: ...), "
      "its other output not; none under --quiet")
def _(_s):
    out = b"xen-lane: outer VM: booting Xen\nxen-lane: [ 12.1s] dom0: init started, up 5s\n" \
          b"some other line\nxen-lane: [ 13.0s] suite: xl create\n"
    for quiet in (False, True):
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            p = S.LaneProgress(quiet)
            p.feed(out[:30], 0)
            p.feed(out[30:], 1)
            p.close(2)
        want = "" if quiet else ("run.sh: xen-lane: [ 12.1s] dom0: init started, up 5s\n"
                                 "run.sh: xen-lane: [ 13.0s] suite: xl create\n")
        check(err.getvalue() == want, f"quiet={quiet}: {err.getvalue()!r}")
    # Beside a live Console: its redrawn unit line is taken off first.
    said = []

    class Console:
        def aside(self):
            said.append("aside")

    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        S.LaneProgress(False, Console()).feed(out, 0)
    check(said == ["aside", "aside"] and err.getvalue().count("run.sh: xen-lane: [") == 2,
          f"{said}: {err.getvalue()!r}")


@case("lane stream: a failed Xen run names the outer emulator's known faults where its "
      "console shows them, and only then")
def _(_s):
    stall = ("ok 13 - x2apic: CPU 1 -> set {0-1}, vector 0x4d\nwatchdog: CPU 0 (APIC ID 0) made "
             "no progress for 5128 ms (bound 5000 ms): backend x2apic, the correctness suite, "
             "phase driving the plan, RIP 0000000000107f0d CS 0008 (NMI taken)\n")
    abort = "qemu-system-x86_64: ../accel/tcg/tcg-accel-ops.c:83: tcg_handle_interrupt: " \
            "assertion failed: (bql_locked())\n"
    check(len(S.known_causes(stall, "", {"none"})) == 1 and
          "TPR hold" in S.known_causes(stall, "", {"none"})[0], "a stall with the holds")
    check(S.known_causes(stall, "", {"tpr-hold", "self-tpr"}) == [], "the holds skipped")
    check(S.known_causes(stall.replace("the correctness suite", "benchmark single"), "",
                         {"none"}) == [], "a stall elsewhere")
    got = S.known_causes("", abort, {"none"})
    check(len(got) == 1 and "skip=self-tpr" in got[0], f"the outer QEMU's abort: {got}")
    check(S.known_causes("ipibench: status ERROR\n", "xen-lane: error: x\n", set()) == [],
          "nothing known")


if __name__ == "__main__":
    main(CASES)

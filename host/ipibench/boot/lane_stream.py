# SPDX-License-Identifier: GPL-2.0-only
"""The Xen lane's progress as it happens (--accel xen-in-tcg): Follower
sinks (boot/run.py) over what xen-lane.sh writes while it runs. FrameLines
reads its outer.log and hands the frame's guest lines to the Console, as a
plain QEMU boot's console would, so that the progress lines and their times
come live; Xen's, dom0's and the firmware's lines stay in console.log.
LaneProgress says xen-lane.sh's own progress lines (dom0 up, xl create,
domain gone) as they come. known_causes() names the outer emulator's
faults a Xen run can meet, where its console shows one."""
import contextlib
import re

from ipibench.jobs import say

# A guest's debug-port line as Xen prints it (guest_loglvl=all): "(dN) text".
GUEST = re.compile(rb"\(d[1-9][0-9]*\) ")
# ipibench's first line (kernel/main.c's banner): what came before it in the
# domain is the firmware's (hvmloader, SeaBIOS), and stays in console.log.
BANNER = "ipibench "
# Xen prints a guest's line at its '\n' or when its buffer is full
# (hvm_print_line(), DOMAIN_PBUF_SIZE 200: 199 bytes and the NUL): a piece
# of 199 bytes goes on in the next one, and an empty piece after it ends a
# line of exactly 199, as xen-lane.sh's split_console joins them. Bytes,
# not characters: Xen counts what the guest wrote.
PIECE = 199


class FrameLines:
    """outer.log's lines; those the guest of frame printed between its
    `@@@ lane-begin` and `@@@ lane-end`, joined and without Xen's prefix,
    from ipibench's banner on, go to lines.feed() (a run.Lines) as they
    come. count: how many went."""

    def __init__(self, frame, lines, lock=None):
        self.frame, self.lines = frame.encode(), lines
        self.rest, self.pending, self.inside, self.count = b"", b"", False, 0
        self.started = False
        # Shared with LaneProgress: one thread at a time writes the terminal.
        self.lock = lock or contextlib.nullcontext()

    def feed(self, chunk, now):
        *done, self.rest = (self.rest + chunk).split(b"\n")
        with self.lock:
            for raw in done:
                self._line(raw[:-1] if raw.endswith(b"\r") else raw, now)

    def _line(self, raw, now):
        # A guest's piece on the end of a dom0 line whose newline came
        # after it (split_console's first pass says why): two lines.
        m = None if raw.startswith(b"(XEN) ") else GUEST.search(raw)
        if m and m.start() > 0:
            self._line(raw[:m.start()], now)
            raw = raw[m.start():]
        if raw.startswith(b"@@@ lane-begin "):
            self._flush(now)
            self.inside = raw.split()[2:3] == [self.frame]
            self.started = False
            return
        if raw.startswith(b"@@@ lane-rerun ") and raw.split()[2:3] == [self.frame]:
            # What streamed of the first run stays on screen; console.log
            # keeps the second (xen-lane.sh's split).
            say(f"run.sh: the Xen lane runs the frame again: "
                f"{raw.decode('utf-8', 'replace').split(None, 3)[-1]}")
            return
        if raw.startswith(b"@@@ lane-end "):
            self._flush(now)
            self.inside = False
            return
        if self.inside and raw.startswith(b"@@@ guest "):
            # A real dom0's runner: the guest's COM1 line, whole (xen-frames.sh).
            self._flush(now)
            self.pending = raw[len(b"@@@ guest "):]
            self._flush(now, force=True)
            return
        m = GUEST.match(raw)
        if not self.inside or not m:
            return
        piece = raw[m.end():]
        self.pending += piece
        if len(piece) != PIECE:
            self._flush(now, force=True)

    def _flush(self, now, force=False):
        if self.pending or force:
            self.started = self.started or self.pending.startswith(BANNER.encode())
            if self.started:
                self.count += 1
                self.lines.feed(self.pending + b"\n", now)
        self.pending = b""

    def tick(self, now):
        with self.lock:
            self.lines.tick(now)

    def close(self, now):
        with self.lock:
            self._flush(now)
            self.lines.close(now)


class LaneProgress:
    """xen-lane.sh's output; its progress lines ("xen-lane: [ 12.1s] ...")
    said as they come, each once; none when quiet (--quiet). console, lock:
    the Console FrameLines feeds and their shared lock, so that a line said
    here never lands on the unit line the Console redraws."""

    def __init__(self, quiet=False, console=None, lock=None):
        self.rest, self.quiet, self.console = b"", quiet, console
        self.lock = lock or contextlib.nullcontext()

    def feed(self, chunk, _now):
        *done, self.rest = (self.rest + chunk).split(b"\n")
        for raw in done:
            text = raw.decode("utf-8", "replace").rstrip("\r")
            if text.startswith("xen-lane: [") and not self.quiet:
                with self.lock:
                    if self.console:
                        self.console.aside()
                    say(f"run.sh: {text}")

    def tick(self, _now):
        pass

    def close(self, _now):
        self.rest = b""


# The outer emulator's faults under Xen nested in TCG (docs/xen.md, "What
# differs"), each by what shows it: (where, pattern, words).
OUTER_QEMU_ABORT = re.compile(r"tcg_handle_interrupt: assertion failed: \(bql_locked\(\)\)")
STALL = re.compile(r"^watchdog: CPU \d+ \(APIC ID \d+\) made no progress .*the correctness suite",
                   re.M)


def known_causes(guest, lane, skips):
    """The known causes of a failed Xen run, in words: guest, its console;
    lane, the lane's own output and outer console; skips, the skip= words
    in force on the guest's command line."""
    out = []
    if OUTER_QEMU_ABORT.search(lane):
        out.append("the outer QEMU aborted (tcg_handle_interrupt: assertion failed: "
                   "(bql_locked())), as it does at the self benchmark's first CR8 write with "
                   "its self IPI pending: the outer emulator's fault, which skip=self-tpr "
                   "avoids (docs/xen.md)")
    if STALL.search(guest) and "tpr-hold" not in skips:
        out.append("a CPU stalled in the correctness suite with the TPR holds in it: nested in "
                   "TCG the first TPR hold never ends, the outer emulator's fault, which "
                   "skip=tpr-hold avoids (docs/xen.md, item 1)")
    return out


def guest_lines(text):
    """A frame's guest log (xen-lane.sh's split) from ipibench's banner on:
    what FrameLines hands the Console, read after the fact; all of it where
    the guest never said its banner (a firmware stall, the lane's own
    errors), which then is what there is to see."""
    lines = text.replace("\r", "").split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith(BANNER)), 0)
    return lines[first:]

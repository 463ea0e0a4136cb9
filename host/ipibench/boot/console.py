# SPDX-License-Identifier: GPL-2.0-only
"""What run.sh prints of a boot's console as it runs (docs/host-tools.md,
"What run.sh prints"): the guest's console filtered, and one progress line
per unit of the plan (the lines' text: progress.py). The summary under it
is summary.py's. The guest's console itself is not changed: console.log
keeps all of it and --verbose streams it.

- Boot facts and anything unexpected (errors, register dumps, `not ok`
  lines, QEMU's own messages) are shown as the guest printed them; what is
  hidden is listed in HIDDEN: record lines, passing TAP lines, the table
  rows each record repeats, the per-CPU bring-up lines, the mode switches,
  the kvm-unit-tests table.
- Progress: the correctness suite by its TAP lines, one line per label
  ("check x2apic: 23 passed ... 0.05 s"); the benchmarks by the guest's
  phase records (docs/results.md), "[12/40] x2apic broadcast ... 3.1 s",
  printed when the unit ends, with its SKIPs and failures. One-way figures
  withheld for TSC skew are counted apart from SKIPs ("; 10 one-way figures
  withheld (TSC skew)"). Whole units that SKIP for one reason one after the
  other share a line. On a terminal the unit in flight is redrawn in place;
  elsewhere only finished lines are written, so a CI log reads the same
  without carriage returns.
- Each condition is said once: a SKIP reason in full the first time, then
  by its head ("no Hyper-V interface (see above)") when the very same reason
  comes again (another detail is said in full); the withheld figures' cause
  likewise; the trust warnings (TCG, no invariant TSC) only in the summary,
  beside the figures they concern.

Pure but for the clock and the writer it is handed; tests/host/test_console.py
holds its cases."""
import re

from ipibench.boot.progress import check_lines, merged_skip, unit_lines, unit_name, unit_tag
from ipibench.boot.tap import TAP
from ipibench.boot.wording import secs, told, WIDTH
from ipibench.record_lines import decode, PREFIX

# A finished SKIP line waits this long for the next one with the same reason.
HOLD_S = 0.5
# A terminal's line of the unit in flight is refreshed at most this often.
REDRAW_S = 0.25
# Lines of the guest's console a person does not need on screen (all stay in
# console.log): each pattern matches from the start of a line.
HIDDEN = [re.compile(p) for p in (
    r'\{"record":',                                   # results.json keeps the records
    r"ok \d+ - ",                                     # passing and skipped checks: counted
    r"1\.\.\d+$",                                     # the TAP plan
    r"check: delivery correctness on \d+ CPUs(: .*)?$",  # the suite's progress replaces it
    r"check: \d+ passed, \d+ failed, \d+ skipped$",   # the summary repeats it
    r"smp: CPU \d+ APIC ID \d+ online",               # one line per CPU
    r"apic: all \d+ CPUs in \S+ mode, backend ",      # every switch
    r"bench +metric +variant +backend +cpus ",        # the table header ...
    r"[a-z][a-z0-9_-]* +\S+ +\S+ +\S+ +\d+>\S+ ",     # ... and its rows: each has a record
    r"norov ",                                        # the ipi_benchmark rows, likewise
    # The summary has the BSP's (env); this line is measured on sender=.
    r"bench: harness cost \d+ cycles",
    r"flush: crossover: ",                            # in the summary
    r"hyperv: guest OS ID 0x[0-9a-f]+ set for ",      # every Hyper-V switch
    r"hyperv: guest OS ID back to 0 ",
    r"kvm-pv-ipi: Hyper-V guest OS ID cleared ",
    r"hyperv: VP index by CPU:",                      # one number per CPU
    r"warning: [a-z0-9-]+: ",                         # the trust warnings: in the summary
    r"ipibench: status (SUCCESS|SKIP)$",              # the summary's last lines say it in words
)]
# The kvm-unit-tests view: its title, then a header, rows and notes.
VIEW_START = re.compile(r"view: kvm-unit-tests ")
VIEW_LINE = re.compile(r"(test +\S|(x2apic_)?self_ipi_\S+ |ipi(_halt)? |note: )")
QEMU_LINE = re.compile(r"qemu-system-\S*: ")  # QEMU's own messages share the console
# QEMU's warning for -smp ...,threads=N (N > 1) on an AMD model without
# topoext (target/i386/cpu.c), and what it means for the guest.
QEMU_HT = re.compile(r"qemu-system-\S*: warning: This family of AMD CPU doesn't support "
                     r"hyperthreading")
QEMU_HT_WHY = ("  why: this AMD -cpu model lacks topoext, so AMD's CPUID 0x8000001E cannot "
               "show the threads (the topology line says what the guest read); add +topoext "
               "to -cpu under KVM (TCG cannot)")


def hidden(line):
    return any(p.match(line) for p in HIDDEN)


class Console:
    """Follows a boot's console line by line (line(), tick(), finish()), writing
    through write(text) what a person reads when show is set; tty: redraw the
    unit in flight in place. now: monotonic seconds, or None for a log read
    after the fact (no times then)."""

    def __init__(self, write=None, tty=False, show=True, width=WIDTH):
        self.write, self.tty, self.show = write, tty, show and write is not None
        self.width = width     # of the terminal: a redrawn line must not wrap
        self.unit = None       # {"phase", "t0", "records", "shown"}
        self.group = None      # {"label", "t0", "passed", "failed", "skipped", "reasons"}
        self.checking, self.in_view, self.ended = False, False, False
        self.check_t0 = None
        self.held = None       # {"kind", "reason", "items", "t"}: SKIP lines to merge
        # The SKIP reasons said in full, and the causes of withheld figures
        # said ("withheld: TSC skew"): after that, by their heads.
        self.seen = set()
        self.last_line = ""    # the last console line that is not a record
        self.last_done = ""    # the last progress line written
        self.drawn = False     # a redrawn line is on the terminal
        self.drawn_at = None
        self.phases = 0
        self.cut = None        # why the console stopped inside a unit

    # --- output

    def _out(self, text):
        if not self.show:
            return
        self._undraw()
        self.write(text + "\n")

    def _undraw(self):
        if self.drawn:
            self.write("\r\033[K")
            self.drawn = False

    def aside(self):
        """Before a line of run.sh's own (stderr) in the middle of the
        console: the unit in flight off the terminal's last line, redrawn at
        the next tick."""
        if self.show:
            self._undraw()

    def _draw(self, now):
        """The unit in flight on the terminal's last line: drawn when none is,
        refreshed a few times a second, not on every console line."""
        if not (self.show and self.tty) or now is None:
            return
        if self.drawn and now - self.drawn_at < REDRAW_S:
            return
        text = self.in_flight(now)
        if text:
            self._undraw()
            self.write(text[:self.width - 1])
            self.drawn, self.drawn_at = True, now

    def _done(self, lines):
        self.last_done = lines[0]
        self._flush_held()
        for text in lines:
            self._out(text)

    def _skip(self, kind, item, reason, line, now):
        """A whole SKIP: held to share a line with the next of the same reason."""
        self.last_done = line
        h = self.held
        if h and (h["kind"], h["reason"]) == (kind, reason) and \
                (kind == "check" or h["items"][-1][0] + 1 == item[0]):
            h["items"].append(item)
            h["t"] = now
            return
        self._flush_held()
        self.held = {"kind": kind, "reason": reason, "items": [item], "t": now}

    def _flush_held(self):
        h, self.held = self.held, None
        if h:
            self._out(merged_skip(h["kind"], h["items"], told(h["reason"], self.seen,
                                                              self.show)))

    # --- input

    def line(self, text, now=None):
        """One console line, without its newline."""
        text = text.rstrip("\r\n")
        if text.startswith(PREFIX):
            rec, _ = decode(text)  # a broken record is the saved log's problem
            if rec is not None:
                self._record(rec, now)
            return
        if text.strip() and not QEMU_LINE.match(text):
            self.last_line = text
        self._suite(text, now)
        if text.startswith("ipibench: status "):
            self._close_unit(now)
            self._close_group(now)
        if self.show and text.strip() and not self._hidden(text):
            self._flush_held()
            self._out(text)
            if self.unit:
                self.unit["shown"] += text + "\n"
            if QEMU_HT.match(text):
                self._out(QEMU_HT_WHY)
        self._draw(now)

    def _hidden(self, text):
        if VIEW_START.match(text):
            self.in_view = True
            return True
        if self.in_view and VIEW_LINE.match(text):
            return True
        self.in_view = False
        return hidden(text)

    def _record(self, rec, now):
        kind = rec.get("record")
        if kind == "phase":
            self._close_group(now)
            self.checking = False
            self._close_unit(now)
            self.phases += 1
            self.unit = {"phase": rec, "t0": now, "records": [], "shown": ""}
        elif kind in ("result", "norov") and self.unit:
            self.unit["records"].append(rec)
        elif kind == "check":
            self._close_group(now)
            self.checking = False
        elif kind == "end":
            self._close_unit(now)
            self.ended = True
        self._draw(now)

    def _suite(self, text, now):
        """The correctness suite's TAP lines, grouped by their label."""
        if text.startswith("check: delivery correctness on "):
            self.checking, self.check_t0 = True, now
            return
        if not self.checking:
            return
        if re.match(r"1\.\.\d+$", text) or re.match(r"check: \d+ passed", text):
            self._close_group(now)
            self.checking = False
            return
        m = TAP.match(text)
        if not m:
            return
        label = m.group(2).split(": ", 1)[0]
        g = self.group
        if g is None or g["label"] != label:
            t0 = self._close_group(now) if g else self.check_t0
            g = self.group = {"label": label, "t0": t0, "passed": 0, "failed": 0,
                              "skipped": 0, "reasons": []}
        if m.group(1):
            g["failed"] += 1
        elif m.group(3) is not None:
            g["skipped"] += 1
            g["reasons"].append(m.group(3))
        else:
            g["passed"] += 1

    def _close_group(self, now):
        g, self.group = self.group, None
        if g is None:
            return now
        s = None if now is None or g["t0"] is None else now - g["t0"]
        reason, lines = check_lines(g["label"], s, g["passed"], g["failed"], g["skipped"],
                                    g["reasons"], self.seen if self.show else set())
        if self.cut:
            reason, lines[0] = None, f"{lines[0]}, stopped: {self.cut}"
        if reason is not None:
            self._skip("check", g["label"], reason, lines[0], now)
        else:
            self._done(lines)
        return now

    def _close_unit(self, now):
        u, self.unit = self.unit, None
        if u is None:
            return
        p = u["phase"]
        s = None if now is None or u["t0"] is None else now - u["t0"]
        reason, lines = unit_lines(p, s, u["records"], self.seen, u["shown"], self.cut)
        if reason is not None:
            self._skip("unit", (p.get("index"), p.get("of"), unit_name(p)), reason, lines[0],
                       now)
        else:
            self._done(lines)

    def tick(self, now):
        """Time passes: a held SKIP line is written, the unit in flight redrawn."""
        if self.held and now is not None and self.held["t"] is not None and \
                now - self.held["t"] >= HOLD_S:
            self._flush_held()
        self._draw(now)

    def finish(self, now=None, cut=None):
        """The console ended: what is still open is written as it stands; cut:
        why it ended there (TIMEOUT, interrupted by SIGINT ...), or None."""
        if cut and (self.unit or self.group):
            self.cut = cut
        self._close_group(now)
        self._close_unit(now)
        self._flush_held()
        self._undraw()

    def in_flight(self, now=None):
        """The unit (or suite label) under way, as its progress line would begin."""
        u, g = self.unit, self.group
        if u:
            p = u["phase"]
            head, t0 = f"{unit_tag(p.get('index'), p.get('index'), p.get('of'))} " \
                f"{unit_name(p)} ...", u["t0"]
        elif g:
            head, t0 = f"check {g['label']}: {g['passed']} passed so far ...", g["t0"]
        else:
            return ""
        return head + ("" if now is None or t0 is None else " " + secs(now - t0))

    def last_progress(self, now=None):
        """For a boot that never ended: the unit it was in, else the last
        progress line, else the guest's last console line."""
        flying = self.in_flight(now)
        if flying:
            return f"last progress: {flying}"
        if self.last_done and not self.ended:
            return f"last progress: {self.last_done} (then: {self.last_line!r})"
        return f"the guest's last line: {self.last_line!r}" if self.last_line else \
            "the guest printed nothing"


def replay(text, write=None, tty=False):
    """A whole console log read after the fact (the KVM lane; a timed-out
    --quiet boot): the Console that followed it."""
    c = Console(write, tty)
    for line in text.replace("\r", "").split("\n"):
        c.line(line)
    return c

# SPDX-License-Identifier: GPL-2.0-only
"""What run.sh prints of a boot by default (docs/host-tools.md, "What run.sh
prints"): the guest's console filtered, one progress line per unit of the
plan, and a one-screen summary. The guest's console itself is not changed:
console.log keeps all of it and --verbose streams it.

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
- The summary: headline p50s per backend in cycles and ns, correctness
  counts, failures, skipped backends and warnings, then what the run proved
  (the delivery checks counted apart from the others, told by their TAP
  names), why a SKIP (exit 0) is the normal outcome where it is, or why a
  SKIP that ran nothing asked for exits 35 (ran_nothing), and the commands
  to try next, within 80 columns.

Pure but for the clock and the writer it is handed; tests/host/test_console.py
holds its cases."""
import re
import textwrap

from ipibench.exit_codes import EX_NOTHING_RAN
from ipibench.record_lines import decode, PREFIX

WIDTH = 80
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
TAP = re.compile(r"(not )?ok \d+ - (.*?)(?: # SKIP (.*))?$")
# QEMU's warning for -smp ...,threads=N (N > 1) on an AMD model without
# topoext (target/i386/cpu.c), and what it means for the guest.
QEMU_HT = re.compile(r"qemu-system-\S*: warning: This family of AMD CPU doesn't support "
                     r"hyperthreading")
QEMU_HT_WHY = ("  why: this AMD -cpu model lacks topoext, so AMD's CPUID 0x8000001E cannot "
               "show the threads (the topology line says what the guest read); add +topoext "
               "to -cpu under KVM (TCG cannot)")
# A one-way figure the guest withholds because the TSCs cannot time it
# (bench/point.c, bench/broadcast.c): counted apart from the SKIPs.
WITHHELD = "one-way not reported: "


def secs(s):
    """Elapsed seconds as a person reads them: 0.03 s, 3.1 s, 290 s."""
    if s < 1:
        return f"{s:.2f} s"
    return f"{s:.1f} s" if s < 100 else f"{s:.0f} s"


def reason_head(reason):
    """A reason's short form, what it says before its first ": " (the
    details after it: why, and what to do), or the whole of it."""
    first = (reason or "").split(": ", 1)[0]
    return first if len(first) < len(reason or "") else reason or ""


def told(reason, said, mark=True):
    """The reason in full the first time, by its head ("no Hyper-V interface
    (see above)") once this very reason was said: a reason of the same head
    or shape but another detail is new, and said in full; mark: it is said
    now."""
    if reason in said and reason_head(reason) != reason:
        return f"{reason_head(reason)} (see above)"
    if mark:
        said.add(reason)
    return reason


def withheld(rec):
    return rec.get("status") == "SKIP" and str(rec.get("reason", "")).startswith(WITHHELD)


def withheld_cause(reason):
    """What stopped a one-way figure, in two words."""
    if "skew bound" in reason:
        return "TSC skew"
    return "TSCs disagree" if "disagree" in reason else "TSC"


def unit_name(phase):
    """"x2apic broadcast", "dry-run", "hv-icr" (every benchmark of a refused backend)."""
    b, bench = phase.get("backend", "?"), phase.get("bench", "?")
    if b == "none":
        return str(bench)
    return str(b) if bench == "all" else f"{b} {bench}"


def unit_tag(first, last, total):
    """"[ 3/36]", "[31-35/36]": the index padded to the total's width, so the lines align."""
    w = len(str(total))
    return f"[{first:>{w}}/{total}]" if first == last else f"[{first:>{w}}-{last}/{total}]"


def unit_lines(phase, seconds, records, seen, shown="", cut=None):
    """A finished unit: (skip reason when every record SKIPped for one, else
    None; its lines). seen: the SKIP reasons already said in full, and the
    causes of withheld one-way figures ("withheld: TSC skew"), updated;
    shown: what the console showed during the unit (a failure already there
    is not repeated); cut: why the console ended inside it. seconds None: not
    timed (a log read afterwards)."""
    head = f"{unit_tag(phase.get('index'), phase.get('index'), phase.get('of'))} " \
        f"{unit_name(phase)} ..."
    counts = {}
    for r in records:
        counts[r.get("status")] = counts.get(r.get("status"), 0) + 1
    skips = [r for r in records if r.get("status") == "SKIP"]
    reasons = {r.get("reason", "") for r in skips}
    if skips and len(skips) == len(records) and len(reasons) == 1 and not cut:
        return skips[0].get("reason", ""), [f"{head} SKIP: {skips[0].get('reason', '')}"]
    line = head + ("" if seconds is None else " " + secs(seconds))
    held = [r for r in skips if withheld(r)]
    skips = [r for r in skips if not withheld(r)]
    # Each SKIP's reason: in full on a line of its own the first time, by its
    # head on the progress line once said.
    fresh, known = [], []
    for why in dict.fromkeys(r.get("reason", "") for r in skips):
        (known if why in seen else fresh).append(why)
    notes = [f"{counts[s]} {s}" for s in ("FAILURE", "ERROR") if counts.get(s)]
    if skips:
        brief = ", ".join(dict.fromkeys(map(reason_head, known)))
        notes.append(f"{len(skips)} of {len(records) - len(held)} SKIP" +
                     (f": {brief}" if known else "") +
                     (" (see above)" if any(reason_head(w) != w for w in known) else ""))
    if cut:
        notes.append(f"stopped: {cut}")
    elif not records:
        notes.append("no records")
    if notes:
        line += (", " if seconds is not None else " ") + ", ".join(notes)
    if held:
        causes = dict.fromkeys(withheld_cause(r.get("reason", "")) for r in held)
        line += ";" if notes else ("," if seconds is not None else "")
        line += f" {len(held)} one-way figure{'' if len(held) == 1 else 's'} withheld " \
            f"({', '.join(causes)})"
    out = [line]
    for r in records:
        st, why = r.get("status"), r.get("reason", "")
        if st in ("FAILURE", "ERROR") and why and why not in shown:
            what = " ".join(str(r.get(k)) for k in ("bench", "metric", "variant")
                            if r.get(k) not in (None, "none", "-"))
            out.append(f"    {st}: {what}: {why}")
        elif withheld(r):
            cause = "withheld: " + withheld_cause(why)
            if cause not in seen:
                seen.add(cause)
                out.append(f"    withheld: {why[len(WITHHELD):]}")
        elif st == "SKIP" and why in fresh and why not in seen:
            out.append(f"    SKIP: {told(why, seen)}")
    return None, out


def check_lines(label, seconds, passed, failed, skipped, reasons, said=None):
    """A finished label of the correctness suite: (skip reason when its only
    TAP line was a SKIP, else None; its lines). said: the reasons already
    said in full (updated), None: each in full."""
    if not passed and not failed and skipped == 1 and reasons:
        return reasons[0], [f"check {label} ... SKIP: {reasons[0]}"]
    parts = [f"{passed} passed"] + ([f"{failed} FAILED"] if failed else [])
    if skipped:
        why = [r if said is None else told(r, said) for r in dict.fromkeys(reasons)]
        parts.append(f"{skipped} skipped ({'; '.join(why)})")
    t = "" if seconds is None else " " + secs(seconds)
    return None, [f"check {label}: {', '.join(parts)} ...{t}"]


def merged_skip(kind, items, reason):
    """Consecutive whole SKIPs of one reason, as one line."""
    if kind == "check":
        return f"check {', '.join(items)} ... SKIP: {reason}"
    first, last, total = items[0][0], items[-1][0], items[0][1]
    names = ", ".join(name for _, _, name in items)
    return f"{unit_tag(first, last, total)} {names} ... SKIP: {reason}"


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


# --- the summary

HEAD = ("self", "send-cost", "single", "single", "broadcast", "flush")
SUB = ("sti-nop", "send", "spin", "halt", "all-ack", "crossover")
BROADCAST_ORDER = ("shorthand", "set", "loop")


def _pick(results, backend, bench, metric, variant=None):
    """The first record of (backend, bench, metric[, variant]) in console order."""
    for r in results:
        if (r.get("backend"), r.get("bench"), r.get("metric")) == (backend, bench, metric) and \
                (variant is None or r.get("variant") == variant):
            return r
    return None


def _broadcast(results, backend):
    """all-ack to the most targets, by shorthand, else one set write, else the loop."""
    rows = [r for r in results if (r.get("backend"), r.get("bench"), r.get("metric")) ==
            (backend, "broadcast", "all-ack")]
    if not rows:
        return None
    most = max(r.get("ntargets", 0) for r in rows)
    rows = [r for r in rows if r.get("ntargets", 0) == most]
    rank = {v: i for i, v in enumerate(BROADCAST_ORDER)}
    return min(rows, key=lambda r: rank.get(r.get("variant"), len(rank)))


def _flush_cell(results, backend):
    """Pages from which a flush hypercall beats the native shootdown to the
    most targets ("8p"), "never", or "-" when no crossover was computed."""
    rows = [r for r in results if (r.get("backend"), r.get("bench"), r.get("metric")) ==
            (backend, "flush", "crossover-pages")]
    if not rows:
        return "-"
    r = max(rows, key=lambda r: r.get("ntargets", 0))
    return str(r.get("variant")) if r.get("status") == "SUCCESS" else "never"


def _cells(rec, tsc_known):
    """(cycles cell, ns cell) of one record."""
    if rec is None:
        return "-", ""
    st = rec.get("status")
    if st != "SUCCESS":
        return {"SKIP": "skip", "FAILURE": "FAIL"}.get(st, str(st)), ""
    cyc = (rec.get("cycles") or {}).get("p50")
    ns = (rec.get("ns") or {}).get("p50")
    return (str(cyc) if cyc is not None else "-"), (str(ns) if ns is not None and tsc_known
                                                    else "")


def headline(results, backend, tsc_known=True):
    """The summary's two rows of one backend: cycles cells, ns cells."""
    recs = (_pick(results, backend, "self", "send-to-handler", "sti-nop"),
            _pick(results, backend, "send-cost", "send"),
            _pick(results, backend, "single", "round-trip"),
            _pick(results, backend, "single-halt", "round-trip"),
            _broadcast(results, backend))
    cells = [_cells(r, tsc_known) for r in recs]
    return [c for c, _ in cells] + [_flush_cell(results, backend)], [n for _, n in cells] + [""]


def _wrap(text, indent="  "):
    return textwrap.wrap(text, WIDTH - 1, subsequent_indent=indent, break_on_hyphens=False,
                         break_long_words=True) or [""]


def _listed(where, key="warnings"):
    """where[key], or where["trust"][key], as a list ([] when neither is one)."""
    if not isinstance(where, dict):
        return []
    for w in (where.get(key), (where.get("trust") or {}).get(key)
              if isinstance(where.get("trust"), dict) else None):
        if isinstance(w, list):
            return w
    return []


def warning_items(env, host=None):
    """The (id, text) of each warning of the env record and of the host facts,
    once each (by id: the guest's text of a condition both saw). Either may
    have none (the field is new): a list under "warnings" (or "trust":
    {"warnings"}), each entry {"id", "text"} or a plain string (id None)."""
    out, ids, texts = [], set(), set()
    for w in _listed(env) + _listed(host):
        wid = w.get("id") if isinstance(w, dict) else None
        text = (w.get("text") or wid) if isinstance(w, dict) else w
        if not isinstance(text, str) or not text or text in texts or (wid and wid in ids):
            continue
        out.append((wid, text))
        ids.add(wid)
        texts.add(text)
    return out


def says_tcg(records, host=None):
    """Whether the summary of these records says that the figures are TCG's:
    the env record or the host facts warn of it (id tcg)."""
    env = next((r for r in records if r.get("record") == "env"), {})
    return any(wid == "tcg" for wid, _ in warning_items(env, host))


def warnings_of(env, host=None):
    """The texts of warning_items()."""
    return [text for _, text in warning_items(env, host)]


def _backends(results):
    """Backends in console order: those with a figure, and those that only SKIPped (with
    their reasons, in order)."""
    order, skipped = [], {}
    for r in results:
        b = r.get("backend")
        if not isinstance(b, str) or b == "none" or b in order:
            continue
        mine = [x for x in results if x.get("backend") == b]
        if all(x.get("status") == "SKIP" for x in mine):
            if b not in skipped:
                skipped[b] = mine[0].get("reason", "")
            continue
        order.append(b)
    return order, skipped


def _failures(results, norov, tap_failures):
    out = []
    for r in results:
        if r.get("status") in ("FAILURE", "ERROR"):
            out.append(f"{r['status']}: {r.get('bench')} {r.get('metric')} on "
                       f"{r.get('backend')}: {r.get('reason', '')}")
    for r in norov:
        if r.get("status") not in ("SUCCESS", "SKIP", None):
            out.append(f"{r['status']}: ipi_benchmark {r.get('test')} on {r.get('backend')}")
    return out + [f"not ok: {t}" for t in tap_failures]


# What each of the suite's TAP lines checks, by its name after the label
# (suite/delivery.c, suite/nmi.c, suite/flush_effect.c): the first kind
# whose pattern matches from the start of it; "other" for none.
CHECK_KINDS = [(kind, re.compile(p)) for kind, p in (
    # delivery_name(): one send, and every CPU of the destination counts it once.
    ("delivery", r"(self on CPU \d+|CPU \d+ -> (CPU \d+|all-but-self|all-including-self|"
                 r"set \{[^}]*\})), (vector 0x[0-9a-f]+|NMI)(: |$)"),
    ("delivery", r"sends from an AP$"),          # the AP's sends, SKIPped on one CPU
    ("masking", r"(TPR 0x[0-9a-f]+|IF=0) holds vector "),
    ("nmi", r"(an NMI .* is taken through |of two NMIs |an NMI held while in the handler)"),
    ("wake", r"CPU \d+ wakes CPU \d+ from HLT "),
    ("switch", r"switch all \d+ CPUs to \S+ mode"),
    # The flushes: the hypercalls' return status, the native shootdown over
    # a backend; each then that no target reads through a stale translation.
    ("flush", r"(Hv\w+ \(|every flush hypercall$|enable |IPI shootdown over |every shootdown$)"),
    ("backend", r"every check$"),                # a backend whose probe refused it
)]
KIND_WORDS = {"delivery": "delivery", "masking": "TPR/IF=0 masking", "nmi": "NMI masking",
              "wake": "wake-from-HLT", "switch": "mode-switch", "flush": "flush",
              "backend": "whole-backend", "other": "other"}
# The skip reasons that are TCG's (the hypervisor interfaces it has none of).
TCG_REASON = re.compile(r"\bTCG\b")


def check_kind(name):
    """The kind of a TAP line's name after its label (CHECK_KINDS)."""
    return next((kind for kind, p in CHECK_KINDS if p.match(name)), "other")


def suite_labels(text):
    """The correctness suite's TAP lines of a console by label, in order:
    {label: {kind: [passed, failed, skipped, [skip reasons]]}} ("xapic
    (again)" and "xapic (for the flush checks)" count as xapic; kinds:
    CHECK_KINDS)."""
    out = {}
    for line in text.replace("\r", "").split("\n"):
        m = TAP.match(line)
        if not m:
            continue
        label, _, name = m.group(2).partition(": ")
        label = re.sub(r" \((again|for the flush checks)\)$", "", label)
        n = out.setdefault(label, {}).setdefault(check_kind(name), [0, 0, 0, []])
        n[1 if m.group(1) else 2 if m.group(3) is not None else 0] += 1
        if m.group(3) is not None and not m.group(1):
            n[3].append(m.group(3))
    return out


def _tally(kinds):
    """[passed, failed, skipped] of a label, all its kinds together."""
    return [sum(n[i] for n in kinds.values()) for i in range(3)]


def flush_label(kinds):
    """A label whose every line is a flush check (hv-flush, hv-flush-xmm,
    native): no backend of its own."""
    return bool(kinds) and set(kinds) == {"flush"}


def _plural(n, word):
    return f"{n} {word}{'' if n == 1 else 's'}"


def _names(names):
    return ", ".join(names)


def proved(suite, checks, tcg):
    """What the correctness suite showed, in words, no more than it checked:
    the delivery checks (each IPI reached exactly the CPUs it was sent to,
    once) counted apart from the others, per backend, the flush labels apart
    from the backends, and the backends that skipped some; tcg: the figures
    are emulated."""
    rec_passed = sum(c.get("passed", 0) for c in checks if isinstance(c.get("passed"), int))
    rec_failed = sum(c.get("failed", 0) for c in checks if isinstance(c.get("failed"), int))
    backends = {b: k for b, k in suite.items() if not flush_label(k)}
    flushes = {b: k for b, k in suite.items() if flush_label(k)}
    bad = [b for b, k in suite.items() if _tally(k)[1]]
    failed = sum(_tally(k)[1] for k in suite.values())
    if bad or rec_failed:
        total = sum(sum(_tally(k)[:2]) for k in suite.values()) or rec_passed + rec_failed
        by_kind = {}
        for k in suite.values():
            for kind, n in k.items():
                by_kind[kind] = by_kind.get(kind, 0) + n[1]
        what = ", ".join(f"{n} {KIND_WORDS[kind]}" for kind, n in by_kind.items() if n)
        text = f"{failed or rec_failed} of {total} checks FAILED" + \
            (f" ({what})" if what else "") + (f", on {_names(bad)}" if bad else "") + \
            " (the not ok lines above say how)"
    elif suite:
        delivered = {b: k["delivery"][0] for b, k in backends.items()
                     if k.get("delivery", [0])[0]}
        parts = [f"on {_plural(len(delivered), 'backend')} every IPI of "
                 f"{_plural(sum(delivered.values()), 'delivery check')} reached exactly the "
                 f"CPUs it was sent to, once each" if delivered else
                 "no delivery check could run here"]
        others = {}
        for k in backends.values():
            for kind, n in k.items():
                if kind not in ("delivery", "backend") and n[0]:
                    others[kind] = others.get(kind, 0) + n[0]
        if others:
            parts.append("also passed: " + ", ".join(f"{n} {KIND_WORDS[kind]}" for kind, n in
                                                     others.items()) + " checks")
        flushed = {b: k["flush"][0] for b, k in flushes.items() if k["flush"][0]}
        if flushed:
            parts.append(f"{_plural(sum(flushed.values()), 'flush check')} passed "
                         f"({_names(flushed)}: each flush completed, and no target read "
                         "through a stale translation after it)")
        # Backends checked in part, grouped when they passed and skipped alike.
        partial = {}
        for b, k in backends.items():
            p, _, sk = _tally(k)
            if p and sk:
                why = "; ".join(dict.fromkeys(r for n in k.values() for r in n[3]))
                partial.setdefault((p, sk, why), []).append(b)
        for (p, sk, why), bs in partial.items():
            parts.append(f"{_names(bs)}: {p} passed, {sk} skipped" +
                         (" each" if len(bs) > 1 else "") + (f" ({why})" if why else ""))
        none = [b for b, k in backends.items() if not _tally(k)[0]]
        if none:
            parts.append(f"{_plural(len(none), 'backend')} SKIPped every check (above)")
        text = "; ".join(parts)
    elif rec_passed:
        # No TAP lines to tell the kinds apart (a log without them).
        text = f"passed every correctness check it ran ({_plural(rec_passed, 'check')}: " \
            "delivery, TPR/IF=0 masking, wake from HLT, mode switch)"
    elif checks:
        text = "no backend could run its checks here"
    else:
        text = "no delivery check ran (plan=check and plan=default run them)"
    if tcg:
        text += "; figures are emulated (QEMU TCG emulates every instruction): " \
            "behaviour only, not speed"
    return f"proved: {text}"


def could_not_run(skipped, skips, held, suite):
    """What could not run, as (what, reason) pairs: "backend" for each
    backend whose every benchmark or every check SKIPped, "check" for each
    other SKIPped check, "figure" for each other SKIPped or withheld figure."""
    out = [("backend", why) for why in skipped.values()]
    for b, k in (suite or {}).items():
        if b in skipped:
            continue
        if not flush_label(k) and not sum(_tally(k)[:2]):
            out.append(("backend", next((r for n in k.values() for r in n[3]), "")))
            continue
        out += [("check", r) for n in k.values() for r in n[3]]
    return out + [("figure", r.get("reason", "")) for r in list(skips) + list(held)]


def _counted(items):
    """"7 backends, 2 checks and 1 figure" of (what, reason) pairs."""
    n = {}
    for what, _ in items:
        n[what] = n.get(what, 0) + 1
    words = [_plural(c, w) for w, c in n.items()]
    return " and ".join([", ".join(words[:-1])] + words[-1:]) if len(words) > 1 else words[0]


def why_skip(skipped, skips, held, tcg, suite=None):
    """Why a SKIP status with exit 0 is what this run should end in: what
    could not run is counted, by whether TCG is the reason (it has no
    Hyper-V or KVM PV interface) or this configuration (one CPU, TSC skew,
    what a backend does not do); its reasons are the lines above."""
    items = could_not_run(skipped, skips, held, suite)
    by_tcg = [x for x in items if tcg and TCG_REASON.search(x[1] or "")]
    rest = [x for x in items if x not in by_tcg]
    parts = ([f"{_counted(by_tcg)} under TCG"] if by_tcg else []) + \
        ([f"{_counted(rest)} in this configuration"] if rest else [])
    what = "; ".join(parts) or "some checks, in this configuration"
    return f"why SKIP, exit 0: nothing failed; what could not run is the normal outcome " \
        f"here (reasons above): {what}"


# What every benchmark plan measures first, asked or not: the harness's own
# cost and the reference exits (backend none). They count as something that
# ran only when the command line names them (bench=dry-run).
HARNESS_BENCHES = ("dry-run", "exit-ref")


def ran_nothing(records, suite=None):
    """The skip reasons of a boot that measured and checked nothing that was
    asked for, in console order, each once; None when it did either: a
    `result` or `norov` record SUCCEEDED (dry-run and exit-ref only when the
    env record's command line names them in bench=), or a check passed (a TAP
    `ok` line without `# SKIP`, or the `check` record's `passed`). run.sh exits
    35 on such a SKIP (docs/exit-codes.md)."""
    env = next((r for r in records if r.get("record") == "env"), {})
    m = re.search(r"(?:^|\s)bench=(\S+)", str(env.get("cmdline") or ""))
    asked = set(m.group(1).split(",")) if m else set()
    for r in records:
        if r.get("record") in ("result", "norov") and r.get("status") == "SUCCESS" and \
                (r.get("bench") not in HARNESS_BENCHES or r.get("bench") in asked):
            return None
        if r.get("record") == "check" and isinstance(r.get("passed"), int) and r["passed"] > 0:
            return None
    if any(_tally(k)[0] for k in (suite or {}).values()):
        return None
    why = [r for k in (suite or {}).values() for n in k.values() for r in n[3]]
    why += [r.get("reason", "") for r in records
            if r.get("record") in ("result", "norov") and r.get("status") == "SKIP"]
    return list(dict.fromkeys(w for w in why if w))


def nothing_line(reasons, tcg):
    """The summary's closing line for a SKIP that ran nothing asked for (exit 35)."""
    under = " (under TCG)" if tcg and reasons and all(TCG_REASON.search(r) for r in reasons) \
        else ""
    return f"why exit 35: nothing that was asked for ran{under}: every check and benchmark " \
        "SKIPped (reasons above), and a run that measures nothing never passes"


def next_steps(skipped, tcg, saved=False, suite=None):
    """The commands to try after this run; saved: its results directory is on
    run.sh's last line; suite: suite_labels(), whose skips count too."""
    why = list(skipped.values()) + [r for k in (suite or {}).values() for n in k.values()
                                    for r in n[3]]
    presets = [p for p, test in (("hv", "Hyper-V"), ("kvm-pv", "KVM PV"))
               if any(test in w for w in why)]
    out = []
    if tcg:
        pick = f"--preset {presets[0]}" if presets else "--preset x2apic"
        also = f" (or {', '.join(presets[1:])}; ./run.sh list)" if presets[1:] else \
            " (./run.sh list)"
        out.append(f"on a KVM host, ./run.sh --accel kvm {pick}{also}")
        if presets:
            out.append(f"here, KVM nested in TCG: ./run.sh --accel kvm-in-tcg {pick}")
    where = "this run's results directory (last line)" if saved else \
        "a run's results directory (--no-save kept none of this one)"
    out.append(f"then, DIR {where}: ./run.sh report DIR (plots), ./run.sh compare DIR OTHER")
    return "next: " + "; ".join(out)


def summary(records, host=None, tap_failures=(), most_failures=5, said=None, suite=None,
            saved=False):
    """The summary's lines (each within 80 columns): status and environment,
    warnings, the headline table, correctness, failures and skipped backends,
    then what the run proved, why a SKIP is the normal outcome (when it is)
    and what to run next. records: the boot's records in console order; host:
    results.json's host facts, if saved; tap_failures: the text of its `not
    ok` lines; said: the SKIP reasons the console already said in full
    (Console.seen), which are then named by their heads; suite: the
    correctness suite by label (suite_labels()); saved: the run's results
    directory is on run.sh's last line."""
    said = said if said is not None else set()
    kinds = {}
    for r in records:
        kinds.setdefault(r.get("record"), []).append(r)
    env = (kinds.get("env") or [{}])[0]
    end = (kinds.get("end") or [None])[-1]
    results, checks, norov = kinds.get("result", []), kinds.get("check", []), \
        kinds.get("norov", [])
    tsc = env.get("tsc") if isinstance(env.get("tsc"), dict) else {}
    cpus = env.get("cpus") if isinstance(env.get("cpus"), dict) else {}
    hv = env.get("hypervisor") if isinstance(env.get("hypervisor"), dict) else {}
    status = end.get("status") if end else "no end record: the plan did not finish"
    accel = (host or {}).get("accel") if isinstance(host, dict) else None
    facts = [f"{cpus['count']} CPU{'' if cpus['count'] == 1 else 's'}" if "count" in cpus else None,
             f"accel {accel}" if isinstance(accel, str) and accel else
             f"hypervisor {hv['vendor']}" if hv.get("vendor") else None,
             f"TSC {tsc['khz']} kHz ({tsc.get('source', '?')})" if tsc.get("khz") else None,
             f"harness {env['harness_cycles']} cycles" if "harness_cycles" in env else None]
    said_status = f"finished, status {status} (see the end)" if status in ("SUCCESS", "SKIP") \
        else status
    out = _wrap(f"summary: {said_status}; " + ", ".join(f for f in facts if f))
    warnings = warning_items(env, host)
    # TCG's warning is the last lines' to say ("figures are emulated ..."): once.
    tcg = says_tcg(records, host)
    out += [x for wid, w in warnings if wid != "tcg" for x in _wrap(f"warning: {w}")]
    shown, skipped = _backends(results)
    if shown:
        most = max((r.get("ntargets", 0) for r in results if r.get("bench") == "broadcast"),
                   default=0)
        out.append("p50 per backend, cycles and ns; single: round trip to a spinning or halted")
        out.append(f"target; broadcast: to all {most} others (shorthand, else set); flush: pages")
        out.append("from which a flush hypercall beats the native INVLPG shootdown (-: none)")
        out.append(f"{'':18}" + "".join(f"{h:>10}" for h in HEAD))
        out.append(f"{'backend':18}" + "".join(f"{h:>10}" for h in SUB))
        for b in shown:
            cyc, ns = headline(results, b, bool(tsc.get("khz")))
            out.append(f"{b[:14]:<14} cyc" + "".join(f"{c:>10}" for c in cyc))
            if any(ns):
                out.append(f"{'':14} ns " + "".join(f"{c:>10}" for c in ns))
    elif not results:
        out.append("no benchmark figure")
    by_reason = {}  # by the whole reason: another detail is another line
    for b, why in skipped.items():
        by_reason.setdefault(why, []).append(b)
    for why, bs in by_reason.items():
        out += _wrap(f"skipped: {', '.join(bs)}: {told(why, said)}")
    counts = {}
    mine = {b for b in skipped}
    held = [r for r in results if withheld(r)]
    skips = [r for r in results if r.get("status") == "SKIP" and not withheld(r) and
             r.get("backend") not in mine]
    for r in results:
        if not withheld(r):
            counts[r.get("status")] = counts.get(r.get("status"), 0) + 1
    suite_text = "; ".join(f"check {c.get('backend')}: {c.get('passed')} passed, "
                           f"{c.get('failed')} failed, {c.get('skipped')} skipped"
                           for c in checks) or "no check suite"
    figures = ", ".join(f"{counts[s]} {s}" for s in ("SUCCESS", "SKIP", "FAILURE", "ERROR")
                        if counts.get(s)) or "none"
    if held:
        causes = list(dict.fromkeys(withheld_cause(r.get("reason", "")) for r in held))
        told_before = all(f"withheld: {c}" in said for c in causes)
        out += _wrap(f"withheld: {_plural(len(held), 'one-way figure')} ({', '.join(causes)}" +
                     (", see above)" if told_before else
                      f": {held[0].get('reason', '')[len(WITHHELD):]})"))
    out += _wrap(f"correctness: {suite_text}; benchmark records: {figures}")
    bad = _failures(results, norov, tap_failures)
    for f in bad[:most_failures]:
        out += _wrap(f)
    if len(bad) > most_failures:
        out.append(f"... {len(bad) - most_failures} more in console.log")
    suite = suite if suite is not None else {}
    out += _wrap(proved(suite, checks, tcg))
    nothing = ran_nothing(records, suite) if status == "SKIP" else None
    if nothing is not None:
        out += _wrap(nothing_line(nothing, tcg))
    elif status == "SKIP":
        out += _wrap(why_skip(skipped, skips, held, tcg, suite))
    if end is not None and status in ("SUCCESS", "SKIP"):
        out += _wrap(next_steps(skipped, tcg, saved, suite))
    return [line.rstrip() for line in out]


def closing(what, code, rc, nothing=None):
    """run.sh's last words on a boot: a run that ended as it should (exit 0)
    in words, with the guest's status and the exit code after them; a SKIP
    that ran nothing asked for (exit 35) with its skip reasons (nothing:
    ran_nothing()'s, the first two in full); any other end as the status
    decoding says it (qemu.decode_status), with QEMU's exit status."""
    if code == 0 and what == "SKIP":
        return "done, nothing failed (guest status SKIP, exit 0)"
    if code == 0 and what == "SUCCESS":
        return "done, everything passed (guest status SUCCESS, exit 0)"
    if code == EX_NOTHING_RAN:
        why = list(nothing or [])
        text = "; ".join(why[:2]) or "no record says why"
        if len(why) > 2:
            text += f"; and {len(why) - 2} more (console.log)"
        return f"nothing that was asked for ran: {text} (guest status SKIP, exit {code})"
    return f"{what} (QEMU exit {rc})"


def tap_failures(text):
    """The `not ok` lines of a console, without their number."""
    return [m.group(1) for m in re.finditer(r"^not ok \d+ - (.*)$", text, re.M)]

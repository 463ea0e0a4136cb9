# SPDX-License-Identifier: GPL-2.0-only
"""run.sh report: plots drawn by gnuplot (SVG, and PNG through pngcairo, or
gnuplot's plain png terminal where cairo is missing) and a page that shows
them beside the tables (index.html, report.md). docs/comparing.md, "report".

- latency distribution: for each benchmark and metric, one empirical CDF per
  backend (and variant, target state, configuration), pooled over boots,
  with the band the boots' own CDFs span; a distribution of one distinct
  value is one marked point;
- scaling: for each benchmark measured at several target counts, the median
  p50 against the target count, one curve per backend, min..max over boots
  as error bars; a series measured at one count only (broadcast's shorthand)
  is a marker on the panels of the curves of its backend;
- matrix: matrix=1's round trips, a heatmap per backend, row = sender,
  column = target;
- kvm-unit-tests view: for each x86/vmexit.c name the guest reports, one bar
  per backend (with two inputs, baseline and candidate side by side): the
  median over boots of the mean per iteration, min..max over boots as an
  error bar;
- A/B: with two inputs, the change of every compared row, coloured by the
  significance verdict, with its bootstrap confidence interval; with --pair
  X=Y, backend X's rows (baseline) against backend Y's (candidate), through
  the same comparison compare --pair prints.

With two inputs, or --pair, a comparison's baseline and candidate curves
share a panel, a scale and a colour: the candidate dashed with open marks
(Roles); heatmaps, which cannot be drawn as one, sit side by side.

A title has two lines at most (split_title): what the figure is, then what
ran, or in a comparison which side is which; the rest is the caption under
the figure on the page. Every figure says what ran: the accelerator with the
trust warnings of its records ("TCG: emulated, behaviour only") and the
guest's CPUs (with sockets, cores and threads where -smp named them). Labels
are words, not record fields. Every curve is drawn: a figure with more
than PANEL_MAX curves becomes small multiples (one panel per backend, or
per configuration and backend), no two curves of a panel share a colour or
a marker (but a baseline and its candidate), and curves that coincide are
drawn dashed over the one they hide and named in the caption. Tick values are chosen here (1-2-5 steps on the log axes) and
printed with a fixed format, the scale and unit in the axis label; legends
sit outside the graphs. Plots are written under temporary names and renamed
once gnuplot succeeded.
"""
import bisect
import datetime
import hashlib
import html
import math
import os
import re
import shutil
import subprocess

from ipibench import REPO
from ipibench.compare.formats import format_markdown, legend, table_head, table_rows
from ipibench.compare.model import Comparison, row_key, row_order, Side
from ipibench.exit_codes import EX_DEPS, EX_NO_OVERLAP, EX_SAVE, EX_TOOL_FAILED, EX_USAGE, ToolError
from ipibench.results.files import load_set, split_by_config
from ipibench.results.stats import median
from ipibench.write import replace_file


COLOURS = {"slower": "0xc0392b", "faster": "0x27ae60", "other": "0x95a5a6"}
# Ten colours told apart on screen and paper (Tableau 10, yellow-green last)
# and ten marker shapes (gnuplot's filled and open point types).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
# The pale partner of each (Tableau 20): a candidate's bar beside its baseline's.
PALE = ("#aec7e8", "#ff9896", "#98df8a", "#ffbb78", "#c5b0d5", "#c49c94",
        "#f7b6d2", "#9edae5", "#c7c7c7", "#dbdb8d")
MARKERS = (7, 5, 9, 11, 13, 6, 4, 8, 10, 12)
# A series of one point drawn on another panel: shapes no curve uses (star,
# cross, plus, pentagon), one per such series of a figure.
MARKER_ALT = (3, 2, 1, 15)
DASHES = (2, 3, 4, 5)          # the curves that coincide with an earlier one
PANEL_MAX = 8                  # curves in one panel; more become small multiples
PANEL_W, PANEL_H = 640, 450    # pixels of one panel
MAX_BARS = 120                 # rows in the A/B chart (the largest changes)
BAR_PX = 16                    # pixels per A/B row: above the label font's height
KUT_PX = 11                    # pixels per bar of the kvm-unit-tests view
TAIL_SHARE = 1.0               # % of samples: the x axis ends where every
                               # curve holds all but this much below it
COINCIDE = 0.01                # scaling curves within 1% of the y axis coincide
COINCIDE_CDF = 2.0             # CDFs within 2 points of % everywhere coincide
TITLE_CHAR_PX = 6.5            # a title glyph's width, for wrapping titles
TITLE_ROWS = 2                 # rows of a title; the rest goes under the figure
FONT_SVG, FONT_PNG = 11, 10


def slug(*parts):
    return re.sub(r"[^a-zA-Z0-9]+", "-", "-".join(map(str, parts))).strip("-").lower()


def gp_str(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', "'") + '"'


def gp_lines(lines):
    """One gnuplot string of several lines (a title)."""
    return '"' + "\\n".join(str(t).replace("\\", "\\\\").replace('"', "'")
                            for t in lines) + '"'


def wrap(lines, width_px):
    """Title lines cut at spaces so that none runs past width_px."""
    limit = max(40, int(width_px / TITLE_CHAR_PX))
    out = []
    for line in lines:
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > limit // 2 else limit
            out.append(line[:cut].rstrip())
            line = "    " + line[cut:].lstrip()
        out.append(line)
    return out


def split_title(lines, width_px):
    """(title rows, caption lines): the first lines that fit in TITLE_ROWS
    rows of width_px, in their order, and the rest whole, for the caption
    under the figure. A long title hides the plot it names; the page has
    room to say the rest. A first line too long for the rows is cut, and
    the caption repeats it whole."""
    rows = wrap(lines[:1], width_px)
    rest = []
    if len(rows) > TITLE_ROWS:
        rows, rest = rows[:TITLE_ROWS - 1] + [rows[TITLE_ROWS - 1] + " ..."], lines[:1]
    i = 1
    while i < len(lines) and len(rows) + len(wrap([lines[i]], width_px)) <= TITLE_ROWS:
        rows += wrap([lines[i]], width_px)
        i += 1
    return rows, rest + list(lines[i:])


class Plot:
    """lines: gnuplot commands that draw the whole figure on a fresh terminal
    of size (width, height) pixels; run once for SVG and once for PNG.
    caption: the figure in a sentence (alt text); notes: the lines of its
    title that did not fit in it, shown under it on the page."""

    def __init__(self, name, title, lines, caption, size, notes=()):
        self.name, self.title, self.lines, self.caption = name, title, lines, caption
        self.size, self.notes = size, list(notes)


def load_sets(inputs):
    """[(name, boots)]: one per input, or one per configuration of a matrix
    (named INPUT/CONFIG)."""
    sets = []
    for path in inputs:
        boots = load_set(path)
        groups = split_by_config(boots)
        base = path.rstrip("/") or path
        if len(groups) > 1:
            sets += [(os.path.join(base, str(c)), b) for c, b in groups.items()]
        else:
            sets.append((base, boots))
    return sets


def display_names(names):
    """The shortest trailing path parts that tell the sets apart: 'xapic-smp4'
    beside 'x2apic-smp4', but 'DATE-before/x2apic-smp4' beside
    'DATE-after/x2apic-smp4'."""
    parts = [[p for p in os.path.normpath(n).split(os.sep) if p] or [n] for n in names]
    short = names
    for k in range(1, max(len(p) for p in parts) + 1):
        short = ["/".join(p[-k:]) for p in parts]
        if len(set(short)) == len(short):
            return short
    return [f"{s} #{i + 1}" for i, s in enumerate(short)]


# --- words for record fields

ACCEL_WORDS = {"tcg": "TCG", "tcg-single": "TCG", "kvm": "KVM",
               "kvm-in-tcg": "KVM nested in TCG", "xen-in-tcg": "Xen nested in TCG"}
# The trust warnings (the env record's "trust", results.json's host
# "warnings"), most telling first.
WARNING_WORDS = {
    "tcg": "emulated, behaviour only",
    "kvm-in-tcg": "doubly emulated, behaviour and exit counts only",
    "xen-in-tcg": "doubly emulated, behaviour only",
    "kvm-software": "PVM, virtualization in software: figures measure PVM",
    "rdtsc-exits": "RDTSC exits inflate every figure",
    "tsc-freq-guessed": "TSC frequency guessed, ns off by an unknown ratio",
    "overcommit": "more vCPUs than host CPUs",
    "tsc-unstable": "no invariant TSC",
    "tsc-skew": "TSC skew, one-way figures doubtful",
}
# (bench, metric): what one sample is.
METRIC_WORDS = {
    ("dry-run", "loop"): "an empty timed region",
    ("exit-ref", "cpuid"): "one CPUID, an exit under a hypervisor",
    ("exit-ref", "pio-0x80"): "one port 0x80 write, an exit",
    ("self", "send-to-handler"): "self IPI, send until the handler ran",
    ("send-cost", "send"): "what the sender pays for one send",
    ("single", "round-trip"): "send until the target's handler counted",
    ("single", "one-way"): "send until the target's handler entry",
    ("single-halt", "round-trip"): "target halted in HLT, send until its handler counted",
    ("single-halt", "one-way"): "target halted in HLT, send until its handler entry",
    ("broadcast", "send"): "what the sender pays for the broadcast's send(s)",
    ("broadcast", "first"): "send until the first target's handler entry",
    ("broadcast", "last"): "send until the last target's handler entry",
    ("broadcast", "all-ack"): "send until every target acknowledged",
    ("flush", "shootdown"): "TLB shootdown: IPI, INVLPG, every target's ack",
    ("flush", "call"): "one flush hypercall",
    ("flush", "target-loss"): "the targets' longest pass, what a flush costs them",
}
VARIANT_WORDS = {"shorthand": "shorthand", "set": "set send", "loop": "unicast loop",
                 "ack-after-eoi": "EOI before the ack", "block": "blocked wake",
                 "vmexit-gap": "vmexit.c ipi_halt loop", "undisturbed": "no flush"}
SHAPE_WORDS = {"sti-nop": "STI;NOP", "sti-hlt": "STI;HLT", "tpr": "TPR drop",
               "tpr-sti-nop": "TPR, STI;NOP", "tpr-sti-hlt": "TPR, STI;HLT"}
FIELD_WORDS = {"set": "configuration", "backend": "backend", "variant": "variant",
               "state": "target state"}


def variant_words(v):
    """'icr-sti-nop' -> 'ICR self shorthand, STI;NOP', 'loop' -> 'unicast loop'."""
    if not v or v == "none":
        return ""
    if v in VARIANT_WORDS:
        return VARIANT_WORDS[v]
    for prefix, words in (("icr2-", "ICR2 then ICR, "), ("icr-", "ICR self shorthand, ")):
        if v.startswith(prefix) and v[len(prefix):] in SHAPE_WORDS:
            return words + SHAPE_WORDS[v[len(prefix):]]
    if v in SHAPE_WORDS:
        return SHAPE_WORDS[v]
    m = re.fullmatch(r"(.*?)-?(\d+)p", v)      # flush: native-invlpg-8p, 33p
    if m:
        pages = f"{m.group(2)} page" + ("" if m.group(2) == "1" else "s")
        return f"{m.group(1).replace('-', ' ')}, {pages}" if m.group(1) else pages
    return v.replace("-", " ")


def state_words(state, n=None):
    """'spin' -> 'spinning targets' ('spinning target' for one)."""
    one = n == 1
    return {"spin": "spinning target" if one else "spinning targets",
            "halt": "halted target" if one else "halted targets",
            "self": "self IPI", "none": ""}.get(state, state or "")


def field_words(field, value, n=None, legend=False):
    """A field's value in words; in a legend a configuration is its name alone,
    elsewhere 'configuration NAME'."""
    if field == "variant":
        return variant_words(value)
    if field == "state":
        return state_words(value, n)
    if field == "set" and not legend:
        return f"configuration {value}" if value else ""
    return value or ""


def metric_head(bench, metric):
    words = METRIC_WORDS.get((bench, metric))
    return f"{bench} {metric} ({words})" if words else f"{bench} {metric}"


def targets_words(bench, n, cpus):
    """'1 target', 'to all 3 other CPUs', '8 targets'."""
    if not isinstance(n, int):
        return ""
    if bench == "broadcast" and cpus and n == cpus - 1:
        return f"to all {n} other CPUs"
    return f"{n} target" + ("" if n == 1 else "s")


# --- what ran: accelerator, trust warnings, guest topology


def parse_smp(spec):
    """(cpus, {key: int}) of a -smp value: '8,sockets=2,cores=2,threads=2'."""
    cpus, keys = None, {}
    for part in str(spec or "").split(","):
        k, eq, v = part.partition("=")
        if not v.isdigit() and not (not eq and k.isdigit()):
            continue
        if not eq:
            cpus = int(k)
        elif k == "cpus":
            cpus = int(v)
        else:
            keys[k] = int(v)
    return cpus, keys


def smp_topology(spec, count):
    """[(count, 'socket'), ('die'), ('cluster'), ('core'), ('thread')] of a
    -smp value that names any of sockets, cores and threads (the rest
    derived as QEMU 6.2 and later derive it: threads 1, then cores before
    sockets); None when it names none of them."""
    cpus, k = parse_smp(spec)
    if not {"sockets", "cores", "threads"} & set(k):
        return None
    total = k.get("maxcpus") or cpus or count or 1
    threads = k.get("threads") or 1
    inner = (k.get("dies") or 1) * (k.get("clusters") or 1) * threads
    sockets, cores = k.get("sockets"), k.get("cores")
    if not cores:
        cores = max(1, total // (inner * (sockets or 1)))
    if not sockets:
        sockets = max(1, total // (inner * cores))
    return [(sockets, "socket")] + [(k[x], x[:-1]) for x in ("dies", "clusters") if x in k] + \
        [(cores, "core"), (threads, "thread")]


def smp_words(spec, count):
    """The guest's topology in words: '8 CPUs: 2 sockets x 2 cores x 2
    threads' where -smp named any of them, else '4 CPUs (-smp 4)'."""
    count = count or parse_smp(spec)[0]
    head = f"{count} CPU" + ("" if count == 1 else "s") if count else "CPUs unknown"
    parts = smp_topology(spec, count)
    if parts is None:
        return head + (f" (-smp {spec})" if spec else "")
    return head + ": " + " x ".join(f"{n} {w}" + ("" if n == 1 else "s") for n, w in parts)


def socket_size(boots, n):
    """CPUs per socket when every boot's -smp named the sockets of exactly
    its n CPUs (QEMU numbers them socket by socket), else None."""
    sizes = set()
    for boot in boots:
        parts = smp_topology(smp_of(boot), n)
        if parts is None:
            return None
        per = math.prod(c for c, _ in parts[1:])
        if parts[0][0] < 2 or parts[0][0] * per != n:
            return None
        sizes.add(per)
    return sizes.pop() if len(sizes) == 1 else None


def id_ranges(ids):
    out, i = [], 0
    while i < len(ids):
        j = i
        while j + 1 < len(ids) and ids[j + 1] == ids[j] + 1:
            j += 1
        out.append(str(ids[i]) if i == j else f"{ids[i]}-{ids[j]}")
        i = j + 1
    return ",".join(out)


def smp_of(boot):
    qemu = boot.host.get("qemu_cmdline") if isinstance(boot.host.get("qemu_cmdline"),
                                                       list) else []
    return next((qemu[i + 1] for i in range(len(qemu) - 1) if qemu[i] == "-smp"), None)


def set_context(boots):
    """What ran, in one line: 'TCG: emulated, behaviour only; no invariant
    TSC; guest 4 CPUs (-smp 4)'. The warnings are every boot's: the guest's
    own (env trust), the host's (results.json host warnings) and those its
    result records carry (untrusted)."""
    accels, warned, guests = [], {}, []
    for boot in boots:
        accel = boot.host.get("accel")
        if accel and ACCEL_WORDS.get(accel, accel) not in accels:
            accels.append(ACCEL_WORDS.get(accel, accel))
        trust = boot.env.get("trust") if isinstance(boot.env.get("trust"), dict) else {}
        for w in trust.get("warnings") or []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                warned.setdefault(w["id"], str(w.get("text", "")))
        host = boot.host.get("warnings")
        for w in host if isinstance(host, list) else []:
            if isinstance(w, dict) and isinstance(w.get("id"), str):
                warned.setdefault(w["id"], str(w.get("text", "")))
        for rec in boot.results:
            own = rec.get("untrusted")
            for i in own if isinstance(own, list) else []:
                warned.setdefault(str(i), "")
        cpus = boot.env.get("cpus") if isinstance(boot.env.get("cpus"), dict) else {}
        guest = smp_words(smp_of(boot), cpus.get("count"))
        ids = cpus.get("apic_ids")
        if isinstance(ids, list) and all(isinstance(i, int) for i in ids) and \
                ids != list(range(len(ids))):
            guest += f", APIC IDs {id_ranges(ids)}"
        if guest not in guests:
            guests.append(guest)
    order = list(WARNING_WORDS)
    ids = sorted(warned, key=lambda i: order.index(i) if i in order else len(order))
    words = [WARNING_WORDS.get(i) or warned[i].split(":")[0] or i for i in ids]
    line = " / ".join(accels) or "accelerator not recorded"
    line += (": " + "; ".join(words)) if words else ""
    return line + "; guest " + " / ".join(guests or ["not recorded"])


class Context(dict):
    """{set name: what ran, in words (set_context)}; boots: {set name: its
    boots}, for the line that says what ran over several sets at once."""

    def __init__(self, names, sets):
        super().__init__((n, set_context(b)) for n, (_, b) in zip(names, sets))
        self.boots = {n: b for n, (_, b) in zip(names, sets)}


def context_lines(names, context):
    """The figure's lines on what ran: one when its sets agree, else one per set."""
    texts = list(dict.fromkeys(context[n] for n in names if n in context))
    if len(texts) == 1:
        return texts
    return [f"{n}: {context[n]}" for n in dict.fromkeys(names) if n in context]


def context_title(names, context):
    """(one line on what ran, the lines for the caption): when the sets
    differ, the line names every accelerator, warning and guest of them all
    (no warning is left to the caption), and the caption says which set is
    which."""
    lines = context_lines(names, context)
    if len(lines) < 2:
        return lines, []
    boots = getattr(context, "boots", {})
    every = [b for n in dict.fromkeys(names) for b in boots.get(n, [])]
    return ([set_context(every)] if every else []), lines


# --- curves, panels and their styles

FIELDS = ("set", "backend", "variant", "state")


def curve(set_name, key, points, kind="line", n=None):
    _, _, variant, backend, state, _ = key
    return {"f": {"set": set_name, "backend": str(backend), "state": str(state),
                  "variant": "" if variant in ("none", None) else str(variant)},
            "points": points, "kind": kind, "n": n}


ROLE_RANK = {"baseline": 0, "candidate": 1}
# The marks of a comparison: a baseline's filled, its candidate's the open
# one of the same shape (circle, square, triangles, diamond, pentagon).
FILLED = (7, 5, 9, 11, 13, 15)
OPEN = (6, 4, 8, 10, 12, 14)
ROLE_DASH = {"candidate": 2}   # the candidate's curve is dashed, the baseline's solid


class Roles:
    """The two sides of a comparison: the first set (baseline) and the last
    (candidate), or with --pair X=Y backend X of the first set and backend Y
    of the last. A baseline curve and its candidate (the same fields but
    those) are drawn on one panel, in one colour, the candidate dashed with
    open marks, so that a reader compares them on one scale."""

    def __init__(self, names, pair=None):
        self.base, self.cand, self.pair = names[0], names[-1], pair

    def role(self, f):
        if not self.pair:
            return {self.base: "baseline", self.cand: "candidate"}.get(f["set"])
        if f["set"] == self.base and f["backend"] == self.pair[0]:
            return "baseline"
        if f["set"] == self.cand and f["backend"] == self.pair[1]:
            return "candidate"
        return None

    def partner(self, f):
        """What a baseline curve shares with its candidate."""
        drop = ("set", "backend") if self.pair else ("set",)
        return tuple(f[k] for k in FIELDS if k not in drop)

    def side(self, role):
        if not self.pair:
            return self.base if role == "baseline" else self.cand
        x, y = self.pair
        return f"{x} of {self.base}" if role == "baseline" else f"{y} of {self.cand}"

    def line(self):
        """The figure's line that tells the sides apart."""
        return (f"baseline: {self.side('baseline')} (solid, filled marks); "
                f"candidate: {self.side('candidate')} (dashed, open marks)")


def pair_up(curves, roles):
    """Each curve's role and partner key (none without a comparison), and
    the curves reordered so that a candidate follows its baseline."""
    first = {}
    for i, c in enumerate(curves):
        c["role"] = roles.role(c["f"]) if roles else None
        c["pair"] = roles.partner(c["f"]) if c["role"] else ("alone", i)
        first.setdefault(c["pair"], i)
    curves.sort(key=lambda c: (first[c["pair"]], ROLE_RANK.get(c["role"], 2)))
    return curves


def group_by(curves, by):
    groups = {}
    for c in curves:
        groups.setdefault(tuple(c["f"][k] for k in by), []).append(c)
    return groups


def splits_pairs(groups):
    """Whether a baseline and its candidate would land on different panels."""
    home = {}
    for values, cs in groups.items():
        for c in cs:
            if home.setdefault(c.get("pair"), values) != values:
                return True
    return False


def cut(cs, count):
    """cs in count pieces of about even size, never between a baseline and
    its candidate."""
    units = []
    for c in cs:
        if units and units[-1][-1].get("pair") == c.get("pair"):
            units[-1].append(c)
        else:
            units.append([c])
    size = -(-len(cs) // count)
    if any(len(u) > 1 for u in units):    # whole pairs: an even size
        size = min(PANEL_MAX, size + size % 2)
    pieces = [[]]
    for unit in units:
        if pieces[-1] and len(pieces[-1]) + len(unit) > size:
            pieces.append([])
        pieces[-1] += unit
    return pieces


def panels_of(curves):
    """(fields, [(panel title, [curve])]): one panel when the curves fit in
    one, else small multiples by the fields that give the fewest panels of at
    most PANEL_MAX curves (by backend, by variant, ...); if none does, by
    configuration and backend, each panel cut in even pieces. A comparison's
    baseline and candidate curves always share a panel."""
    best = None
    options = ((), ("backend",), ("variant",), ("set",), ("set", "backend"),
               ("set", "variant"), ("backend", "variant"))
    for by in options:
        groups = group_by(curves, by)
        if splits_pairs(groups):
            continue
        if max(len(g) for g in groups.values()) <= PANEL_MAX and \
                (best is None or len(groups) < len(best[1])):
            best = (by, groups)
    if best is None:
        whole = [by for by in options if not splits_pairs(group_by(curves, by))]
        by = ("set", "backend") if ("set", "backend") in whole else whole[-1]
        best = (by, group_by(curves, by))
    by, groups = best
    panels = []
    for values, cs in groups.items():
        title = ", ".join(w for w in (field_words(k, v) or ("plain" if k == "variant" else "")
                                      for k, v in zip(by, values)) if w)
        pieces = cut(cs, -(-len(cs) // PANEL_MAX))
        for j, piece in enumerate(pieces):
            more = f" ({j + 1} of {len(pieces)})" if len(pieces) > 1 else ""
            panels.append((title + more, piece))
    return by, panels


def label_curves(curves, by):
    """Each curve's legend title in words: the fields that vary in the figure
    and are not the panel's (in a comparison, its role instead of its set);
    returns the words for the fields common to every curve."""
    same = [k for k in FIELDS if len({c["f"][k] for c in curves}) == 1]
    shown = [k for k in FIELDS if k not in same and k not in by]

    def words(c, keys):
        return ", ".join(w for w in (field_words(k, c["f"][k], c.get("n"), True) for k in keys)
                         if w)
    for c in curves:
        if c.get("role"):
            # In a comparison the role says which set.
            rest = [k for k in FIELDS if k != "set"]
            series = words(c, [k for k in shown if k != "set"]) or words(c, rest)
            c["label"] = ", ".join(w for w in (series, c["role"]) if w)
        else:
            c["label"] = words(c, shown) or words(c, FIELDS)
    return [w for w in (field_words(k, curves[0]["f"][k], curves[0].get("n")) for k in same)
            if w]


def style_curves(panels):
    """A colour and a marker per curve, never shared within a panel; the same
    legend title keeps its style across panels when the palette allows. In
    a comparison a baseline and its candidate share a colour and a shape:
    the candidate's marks are open and its line dashed."""
    compare = any(c.get("role") for _, cs in panels for c in cs)
    key = "pair" if compare else "label"
    labels = list(dict.fromkeys(c[key] for _, cs in panels for c in cs))
    shared = len(labels) <= (len(FILLED) if compare else len(PALETTE))
    for _, cs in panels:
        mine = list(dict.fromkeys(c[key] for c in cs))
        for i, c in enumerate(cs):
            n = labels.index(c[key]) if shared else mine.index(c[key]) if compare else i
            c["colour"] = PALETTE[n % len(PALETTE)]
            if compare:
                c["pt"] = (OPEN if c.get("role") == "candidate" else FILLED)[n % len(FILLED)]
                if c.get("role") in ROLE_DASH:
                    c["dash"] = ROLE_DASH[c["role"]]
            else:
                c["pt"] = MARKERS[n]


def interp(points, x):
    """The polyline points [(x, y)] at x (its ends held flat beyond them)."""
    xs = [p[0] for p in points]
    i = bisect.bisect_right(xs, x)
    if i == 0:
        return points[0][1]
    if i == len(points):
        return points[-1][1]
    (x0, y0), (x1, y1) = points[i - 1][:2], points[i][:2]
    return y0 if x1 == x0 else y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def coincide(a, b, top):
    """Whether two curves of a panel would hide one another: at every x
    within COINCIDE of the y axis's top (scaling), within COINCIDE_CDF points
    of % (CDFs), or on one value (points)."""
    pa, pb = a["points"], b["points"]
    if a["kind"] != b["kind"] or not pa or not pb:
        return False
    if a["kind"] == "point":
        return abs(pa[0][0] - pb[0][0]) <= COINCIDE * max(pa[0][0], pb[0][0])
    if a["kind"] == "cdf":
        grid = sorted({p[0] for p in pa} | {p[0] for p in pb})
        return all(abs(interp(pa, x) - interp(pb, x)) <= COINCIDE_CDF for x in grid)
    if [p[0] for p in pa] != [p[0] for p in pb]:
        return False
    return all(abs(p[1] - q[1]) <= COINCIDE * top for p, q in zip(pa, pb))


def mark_coinciding(panels):
    """Dashes for every curve that coincides with an earlier one of its
    panel; the title line that names them, or None."""
    notes = []
    for ptitle, cs in panels:
        drawn = [c for c in cs if c["kind"] in ("line", "err", "cdf", "point")]
        top = max((abs(v) for c in drawn if c["kind"] in ("line", "err")
                   for p in c["points"] for v in p[1:]), default=1.0)
        groups = []
        for c in drawn:
            # A candidate on its baseline is no change, not a hidden curve:
            # only curves of one side are looked at; a candidate is dashed already.
            home = next((g for g in groups if g[0].get("role") == c.get("role") and
                         coincide(g[0], c, top)), None)
            if home is None:
                groups.append([c])
            else:
                dashes = DASHES[1:] if c.get("role") else DASHES
                c["dash"] = dashes[min(len(home) - 1, len(dashes) - 1)]
                home.append(c)
        said = [" = ".join(c["label"] for c in g) for g in groups if len(g) > 1]
        if said:
            notes.append((f"{ptitle}: " if ptitle and len(panels) > 1 else "") + ", ".join(said))
    if not notes:
        return None
    return "coincide, drawn dashed over the first: " + "; ".join(notes)


def axis_scale(hi, unit):
    """(divisor, axis unit) that keep tick labels to five digits."""
    big = ((1e8, 1e6, "ms"), (1e5, 1e3, "µs")) if unit == "ns" else \
        ((1e8, 1e6, "million cycles"), (1e5, 1e3, "thousand cycles"))
    for limit, div, name in big:
        if hi >= limit:
            return div, name
    return 1, unit


def num(v):
    """A figure for a title: whole when 100 or more, else three digits."""
    return f"{v:.0f}" if v >= 100 else f"{v:.3g}"


MANTISSAS = ((1,), (1, 2, 5), (1, 2, 3, 5, 7), (1, 1.5, 2, 3, 4, 5, 6, 7, 8, 9))


def log_ticks(lo, hi, div):
    """[(label, position)] on a log axis from lo to hi: the sparsest family of
    1-2-5 steps that gives four ticks or more, never more than eight."""
    best = []
    for ms in MANTISSAS:
        decades = range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1)
        ticks = [t for t in (m * 10.0 ** e for e in decades for m in ms) if lo <= t <= hi]
        if len(ticks) > 8:
            break
        best = ticks
        if len(ticks) >= 4:
            break
    if len(best) < 2:
        best = [lo, hi]
    return [(f"{t / div:g}", t) for t in best]


def gp_tics(axis, ticks):
    return f"set {axis}tics (" + ", ".join(f"{gp_str(lab)} {pos:.6g}" for lab, pos in ticks) + ")"


def data_rows(points):
    return "\n".join(" ".join(f"{v:.6g}" for v in p) for p in points)


def curve_clauses(name, c, blocks):
    """The plot clauses of one curve (its data appended to blocks): a band
    of its boots' spread under it, then the curve itself."""
    src = gp_str("data/" + name + ".dat")
    out = []
    if c["kind"] == "legend":      # a legend entry for the markers of a series
        return [f"NaN with points lc rgb 'black' pt {c['pt']} ps 1.8 lw 1.5 "
                f"title {gp_str(c['label'])}"]
    if c.get("band"):
        blocks.append(data_rows(c["band"]))
        out.append(f"{src} index {len(blocks) - 1} using 1:2:3 with filledcurves "
                   f"fc rgb '{c['colour']}' fs transparent solid 0.10 noborder notitle")
    blocks.append(data_rows(c["points"]))
    at = f"{src} index {len(blocks) - 1}"
    style = f"lc rgb '{c['colour']}' pt {c['pt']}" + (f" dt {c['dash']}" if c.get("dash") else "")
    title = gp_str(c["label"])
    if c["kind"] == "marker":
        out.append(f"{at} using 1:2 with points lc rgb '{c['colour']}' pt {c['pt']} ps 1.8 "
                   "lw 1.5 notitle")
    elif c["kind"] == "point":
        out.append(f"{at} using 1:2 with points {style} ps 1.6 title {title}")
    elif c["kind"] == "cdf":
        out.append(f"{at} using 1:2 with linespoints {style} lw 1.3 pi 4 ps 0.6 title {title}")
    elif c["kind"] == "err":
        out.append(f"{at} using 1:2:3:4 with yerrorlines {style} ps 0.7 title {title}")
    else:
        out.append(f"{at} using 1:2 with linespoints {style} ps 0.7 title {title}")
    return out


def figure(name, title_lines, panels, data_dir, common, per_panel=None):
    """Plot of panels [(title, [curve])]: the data file, the multiplot
    commands, the canvas size and the title lines left for the caption;
    common: settings shared by every panel."""
    blocks, plots = [], []
    for ptitle, cs in panels:
        clauses = [cl for c in cs for cl in curve_clauses(name, c, blocks)]
        plots += [f"set title {gp_str(ptitle)}"] + (per_panel or []) + \
            ["plot " + ", ".join(clauses)]
    replace_file(os.path.join(data_dir, name + ".dat"), "\n\n\n".join(blocks) + "\n")
    cols = 1 if len(panels) == 1 else 2
    rows = -(-len(panels) // cols)
    width = 960 if cols == 1 else cols * PANEL_W
    title_lines, notes = split_title(title_lines, width - 20)
    height = (540 if rows == 1 and cols == 1 else rows * PANEL_H) + 18 * len(title_lines)
    lines = common + ["set key below height 1", "set grid",
                      f"set multiplot layout {rows},{cols} title {gp_lines(title_lines)}"] + \
        plots + ["unset multiplot"]
    return lines, (width, height), notes


def figure_title(head, curves, by, npanels, context, markers=0, roles=None):
    """The figure's lines, most telling first (the title keeps them until it
    is full, the caption the rest): head, which side of a comparison is
    which, what ran, what the curves are; markers: how many of the curves
    are series of one point, drawn as markers."""
    common = label_curves(curves, by)
    lines = len(curves) - markers
    line = f"{lines} curve" + ("" if lines == 1 else "s")
    if npanels > 1:
        line += f" in {npanels} panels, one per " + " and ".join(FIELD_WORDS[k] for k in by)
    if markers:
        line += f", and {markers} series of one target count as markers in their backend's colour"
    if common:
        line += "; every curve: " + ", ".join(common)
    said, detail = context_title([c["f"]["set"] for c in curves], context)
    sides = [roles.line()] if roles and any(c.get("role") for c in curves) else []
    return [head] + sides + said + [line] + detail


# --- the plots


def ogive(buckets, scale):
    """[(x, % of samples at or below x)] of one histogram {low: [high,
    count]}: exact at every bucket edge, linear within a bucket (its samples
    taken as spread evenly over it); scale: x units per cycle."""
    # No cycle count is past 2^64: a bucket beyond it is a corrupt file's.
    buckets = {low: (high, count) for low, (high, count) in buckets.items()
               if 0 <= low <= high <= 1 << 64}
    total = sum(c for _, c in buckets.values())
    pts, cum = [], 0
    for low, (high, count) in sorted(buckets.items()):
        if count <= 0:
            continue
        start = (low * scale, 100.0 * cum / total)
        if not pts or pts[-1] != start:
            pts.append(start)
        cum += count
        pts.append(((high + 1) * scale, 100.0 * cum / total))
    return pts


def dist_data(boots, unit):
    """{row key: {"boots": [(samples, ogive)], "extremes": {(min, max)},
    "pairs": {(sender, targets)}}}: each boot's histogram of a row (several
    records of a row in a boot, matrix=1's pairs, pooled), in unit (ns
    through the boot's TSC frequency; a boot without one is left out)."""
    out = {}
    for boot in boots:
        scale = 1.0
        if unit == "ns":
            khz = tsc_khz(boot)
            if khz is None:
                continue
            scale = 1e6 / khz
        per = {}
        for rec in boot.results:
            stats = rec.get(unit)
            if rec.get("status") != "SUCCESS" or not isinstance(stats, dict) or \
                    not rec.get("histogram"):
                continue
            key = row_key(rec)
            buckets = per.setdefault(key, {})
            for low, high, count in rec["histogram"]:
                buckets.setdefault(low, [high, 0])[1] += count
            e = out.setdefault(key, {"boots": [], "extremes": set(), "pairs": set()})
            e["extremes"].add((stats.get("min"), stats.get("max")))
            e["pairs"].add((rec.get("sender"), rec.get("targets")))
        for key, buckets in per.items():
            total = sum(c for _, c in buckets.values())
            if total > 0:
                out[key]["boots"].append((total, ogive(buckets, scale)))
    return out


def cdf_curve(set_name, key, data):
    """The pooled CDF of a row with the band its boots' CDFs span, or, when
    every sample had one value, that value as a point."""
    ext = data["extremes"]
    if len(ext) == 1:
        lo, hi = next(iter(ext))
        if lo is not None and lo == hi:
            c = curve(set_name, key, [(float(lo), 100.0)], "point", key[5])
            c["value"] = float(lo)
            return c
    boots = data["boots"]
    if not boots:
        return None
    grid = sorted({p[0] for _, pts in boots for p in pts})
    total = sum(n for n, _ in boots)
    points = [(x, sum(n * interp(pts, x) for n, pts in boots) / total) for x in grid]
    c = curve(set_name, key, points, "cdf", key[5])
    if len(boots) > 1:
        c["band"] = [(x, min(interp(p, x) for _, p in boots),
                      max(interp(p, x) for _, p in boots)) for x in grid]
    c["boots"] = len(boots)
    return c


def dist_range(curves, share):
    """(lo, hi, tail): the x range from the smallest sample to where every
    curve holds share % of its samples, and the largest % of a curve beyond."""
    lo = min(c["points"][0][0] for c in curves)
    hi = lo
    for c in curves:
        hi = max(hi, next((p[0] for p in c["points"] if p[1] >= share), c["points"][-1][0]))
    lo, hi = lo / 1.15, hi * 1.15
    tail = max(100.0 - interp(c["points"], hi) for c in curves)
    return lo, hi, tail


def env_cpus(boots):
    counts = [b.env["cpus"].get("count") for b in boots if isinstance(b.env.get("cpus"), dict)]
    return max((c for c in counts if isinstance(c, int)), default=None)


def dist_plots(sets, names, data_dir, unit, context, roles=None):
    plots = []
    data = [dist_data(boots, unit) for _, boots in sets]
    cpus = max((c for c in (env_cpus(b) for _, b in sets) if c), default=None)
    groups = {}
    for d in data:
        for key in d:
            groups.setdefault(key[:2], set()).add(key[5])
    for (bench, metric), ntargets in sorted(groups.items()):
        nmax = max((n for n in ntargets if isinstance(n, int)), default=None)
        curves, pairs = [], {}
        for d, sname in zip(data, names):
            for key in sorted(d, key=row_order):
                if key[:2] == (bench, metric) and key[5] == nmax:
                    c = cdf_curve(sname, key, d[key])
                    if c:
                        curves.append(c)
                        if len(d[key]["pairs"]) > 1:
                            pairs[sname] = max(pairs.get(sname, 0), len(d[key]["pairs"]))
        if not curves:
            continue
        lo, hi, tail = dist_range(curves, 100.0 - TAIL_SHARE)
        div, axis_unit = axis_scale(hi, unit)
        name = slug("dist", bench, metric)
        by, panels = panels_of(pair_up(curves, roles))
        label_curves(curves, by)
        style_curves(panels)
        head = metric_head(bench, metric)
        where = targets_words(bench, nmax, cpus)
        title = figure_title(f"{head}{', ' + where if where else ''}: latency distribution "
                             "(empirical CDF, pooled over boots)", curves, by, len(panels),
                             context, roles=roles)
        for c in curves:
            if c["kind"] == "point":
                c["label"] += f": every sample {num(c['value'] / div)} {axis_unit}"
        banded = max((c.get("boots", 1) for c in curves), default=1)
        if banded > 1:
            title.append(f"shaded: the range the boots' own CDFs span (min..max over up to "
                         f"{banded} boots)")
        if any(c["kind"] == "point" for c in curves):
            title.append("a single marker: every sample of that curve had one value")
        for sname, n in pairs.items():
            title.append(f"{sname}: its {n} sender/target pairs (matrix=1) pooled")
        if tail > 0.005:
            title.append(f"x axis ends at {num(hi / div)} {axis_unit}; beyond it lie at "
                         f"most {tail:.2f}% of a curve's samples (the data under data/)")
        same = mark_coinciding(panels)
        if same:
            title.append(same)
        common = ["set logscale x 10", f"set xrange [{lo:.6g}:{hi:.6g}]",
                  gp_tics("x", log_ticks(lo, hi, div)),
                  f"set xlabel {gp_str(axis_unit + ', log scale')}",
                  "set ylabel '% of samples at or below'", "set yrange [0:102]",
                  "set ytics 0,20,100", "set format y '%g'"]
        lines, size, notes = figure(name, title, panels, data_dir, common)
        cap = (f"{head}: empirical CDF of every sample, {len(curves)} curve"
               f"{'' if len(curves) == 1 else 's'}; {context_lines(names, context)[0]}")
        plots.append(Plot(name, f"{bench} {metric}: distribution", lines, cap, size, notes))
    return plots


def int_ticks(lo, hi):
    step = max(1, math.ceil((hi - lo + 1) / 10))
    return [(str(n), n) for n in range(lo, hi + 1, step)]


def dodge(panels):
    """Shifts each panel's curves sideways, evenly about their x, so that
    their error bars do not sit on one another; the largest shift."""
    most = 0.0
    for _, cs in panels:
        k = len(cs)
        step = min(0.04, 0.24 / max(k, 1))
        for i, c in enumerate(cs):
            d = (i - (k - 1) / 2) * step
            c["points"] = [(p[0] + d,) + tuple(p[1:]) for p in c["points"]]
            most = max(most, abs(d))
    return most


def place_markers(singles, panels):
    """Each series of one point as a marker on every panel that holds a curve
    of its configuration, backend and target state (in that curve's colour),
    one marker shape per such series, named once per panel in the legend."""
    def kind_of(m):
        # A comparison's two sides get two shapes: their colours are one.
        return m["f"]["variant"], m["f"]["state"], m["points"][0][0], m.get("role")
    kinds = list(dict.fromkeys(kind_of(m) for m in singles))
    homeless = []
    for m in singles:
        m["pt"] = MARKER_ALT[kinds.index(kind_of(m)) % len(MARKER_ALT)]
        placed = False
        for _, cs in panels:
            twin = next((c for c in cs if c["kind"] != "marker" and
                         all(c["f"][k] == m["f"][k] for k in ("set", "backend", "state"))), None)
            if twin is not None:
                cs.append(dict(m, kind="marker", colour=twin["colour"]))
                placed = True
        if not placed:
            homeless.append(m)
    for m in homeless:          # its backend has no curve: the first panel, a free colour
        cs = panels[0][1]
        used = {c.get("colour") for c in cs}
        colour = next((p for p in PALETTE if p not in used), PALETTE[-1])
        cs.append(dict(m, kind="marker", colour=colour))
    for _, cs in panels:
        seen = []
        for c in list(cs):
            if c["kind"] == "marker" and c["pt"] not in seen:
                seen.append(c["pt"])
                v, s, n = c["f"]["variant"], c["f"]["state"], c["points"][0][0]
                words = variant_words(v) or state_words(s)
                role = f", {c['role']}" if c.get("role") else ""
                cs.append({"kind": "legend", "pt": c["pt"], "f": c["f"],
                           "label": f"{words or 'one point'} ({n:g} targets only){role}"})


def shared_y(curves):
    """One y range for every panel of a comparison, from 0 to above the
    highest point or error bar: panels of their own ranges would make a
    reader compare heights on two scales."""
    top = max((v for c in curves for p in c["points"] for v in p[1:]), default=1.0)
    return f"[0:{top * 1.05:.6g}]"


def scaling_plots(sides, names, data_dir, unit, context, roles=None):
    plots = []
    groups = {}
    for side, sname in zip(sides, names):
        for key, vals in side.values.items():
            if vals:
                groups.setdefault(key[:2], {}).setdefault((sname,) + key[2:5], {})[key[5]] = \
                    vals
    for (bench, metric), series in sorted(groups.items()):
        counts = {n for pts in series.values() for n in pts if isinstance(n, int)}
        if len(counts) < 2:
            continue
        top = max(max(v) for pts in series.values() for v in pts.values())
        div, axis_unit = axis_scale(top, unit)
        spread = max(len(v) for pts in series.values() for v in pts.values())
        curves = []
        for s, pts in sorted(series.items(), key=lambda s: tuple(map(str, s[0]))):
            points = [(n, median(v) / div, min(v) / div, max(v) / div)
                      for n, v in sorted(pts.items()) if isinstance(n, int)]
            if spread < 2:
                points = [p[:2] for p in points]
            curves.append(curve(s[0], (None, None) + s[1:] + (None,), points,
                                "err" if spread > 1 else "line"))
        pair_up(curves, roles)
        multi = [c for c in curves if len(c["points"]) > 1] or curves
        singles = [c for c in curves if c not in multi]
        name = slug("scaling", bench, metric)
        by, panels = panels_of(multi)
        label_curves(curves, by)
        style_curves(panels)
        head = metric_head(bench, metric)
        title = figure_title(f"{head}: median p50 against the number of targets",
                             curves, by, len(panels), context, len(singles), roles)
        same = mark_coinciding(panels)
        if spread > 1:
            shift = dodge(panels)
            title.append(f"error bars: min..max of the boots' p50 (up to {spread} boots); "
                         f"curves shifted sideways by up to {shift:.2g} target to keep "
                         "them apart")
        if singles:
            place_markers(singles, panels)
        if same:
            title.append(same)
        common = [f"set xlabel {gp_str('targets: the first k CPUs other than the sender')}",
                  f"set ylabel {gp_str('median p50, ' + axis_unit)}",
                  f"set xrange [{min(counts) - 0.3}:{max(counts) + 0.3}]",
                  gp_tics("x", int_ticks(min(counts), max(counts))),
                  f"set yrange {shared_y(curves) if roles else '[0:*]'}", "set format y '%g'"]
        lines, size, notes = figure(name, title, panels, data_dir, common)
        plots.append(Plot(name, f"{bench} {metric}: scaling", lines,
                          f"{head}: median p50 against the number of targets, "
                          f"{len(curves)} curves; {context_lines(names, context)[0]}", size,
                          notes))
    return plots


# --- matrix=1: every sender/target pair of single's round trip

MATRIX_ROW = ("single", "round-trip", "none")   # bench, metric, variant of matrix=1


def matrix_cells(boots, unit):
    """{backend: {(sender, target): [the pair's p50, one per boot]}} of the
    boots whose single round trips came from more than one sender (matrix=1:
    one record per ordered pair, docs/results.md)."""
    out = {}
    for boot in boots:
        per = {}
        for rec in boot.results:
            stats = rec.get(unit)
            if tuple(rec.get(k) for k in ("bench", "metric", "variant")) != MATRIX_ROW or \
                    rec.get("status") != "SUCCESS" or not isinstance(stats, dict) or \
                    not isinstance(rec.get("sender"), int) or \
                    not str(rec.get("targets", "")).isdigit():
                continue
            per.setdefault(rec.get("backend"), {}).setdefault(
                (rec["sender"], int(rec["targets"])), []).append(stats["p50"])
        for backend, cells in per.items():
            if len({s for s, _ in cells}) < 2:
                continue
            for cell, vals in cells.items():
                out.setdefault(backend, {}).setdefault(cell, []).append(median(vals))
    return out


def matrix_order(panels, roles):
    """The heatmaps of a comparison in pairs, a row each: the baseline's on
    the left, its candidate's on the right (None: a gap where a side lacks
    it; two heatmaps cannot be drawn as one), each panel with its role; the
    others after them."""
    if roles is None:
        return [p + (None,) for p in panels]
    pairs, rest = {}, []
    for p in panels:
        role = roles.role({"set": p[0], "backend": p[1]})
        if role is None:
            rest.append(p + (None,))
            continue
        two = pairs.setdefault(None if roles.pair else p[1], [None, None])
        two[ROLE_RANK[role]] = p + (role,)
    return [p for two in pairs.values() for p in two] + rest


def matrix_plots(sets, names, data_dir, unit, context, roles=None):
    """A heatmap per configuration and backend: row = sender, column =
    target, each cell the median over boots of that pair's round-trip p50,
    '-' on the diagonal (a CPU does not send to itself)."""
    panels = []
    for (_, boots), sname in zip(sets, names):
        cells = matrix_cells(boots, unit)
        for backend, pairs in cells.items():
            n = max([env_cpus(boots) or 0] + [max(p) + 1 for p in pairs])
            panels.append((sname, backend, n, pairs, len(boots), socket_size(boots, n)))
    if not panels:
        return []
    vals = [median(v) for p in panels for v in p[3].values()]
    div, axis_unit = axis_scale(max(vals), unit)
    lo, hi = min(vals) / div, max(vals) / div
    if hi <= lo:
        lo, hi = lo * 0.99, hi * 1.01 + 1e-9
    several = len({p[0] for p in panels}) > 1
    blocks, cmds, widest = [], [], 0.0
    slots = matrix_order(panels, roles)
    for slot in slots:
        if slot is None:
            cmds.append("set multiplot next")
            continue
        sname, backend, n, pairs, _, per_socket, role = slot
        rows = []
        for s in range(n):
            for t in range(n):
                v = pairs.get((s, t))
                if s == t:
                    rows.append(f"{t} {s} NaN -")
                elif not v:
                    rows.append(f"{t} {s} NaN n/a")
                else:
                    rows.append(f"{t} {s} {median(v) / div:.6g} {num(median(v) / div)}")
                    widest = max(widest, max(v) / min(v) - 1 if min(v) > 0 else 0)
            rows.append("")
        blocks.append("\n".join(rows).rstrip("\n"))
        src = f"{gp_str('data/matrix.dat')} index {len(blocks) - 1}"
        ticks = [(str(c), c) for c in range(n)]
        cmds.append("unset arrow")
        for edge in range(per_socket or n, n, per_socket or n):
            cmds += [f"set arrow from {edge - 0.5},-0.5 to {edge - 0.5},{n - 0.5} nohead front "
                     "lw 2.5 lc rgb 'black'",
                     f"set arrow from -0.5,{edge - 0.5} to {n - 0.5},{edge - 0.5} nohead front "
                     "lw 2.5 lc rgb 'black'"]
        ptitle = f"{sname}: {backend}" if several else backend
        if role:
            ptitle = f"{backend}, {role}" + (f" ({sname})" if several else "")
        cmds += [f"set title {gp_str(ptitle)}",
                 f"set xrange [-0.5:{n - 0.5}]", f"set yrange [{n - 0.5}:-0.5]",
                 gp_tics("x", ticks), gp_tics("y", ticks),
                 f"plot {src} using 1:2:3 with image notitle, "
                 f"{src} using 1:2:4 with labels font ',{9 if n > 6 else 10}' notitle"]
    replace_file(os.path.join(data_dir, "matrix.dat"), "\n\n\n".join(blocks) + "\n")
    boots = max(p[4] for p in panels)
    cols = 1 if len(slots) == 1 else 2
    rows = -(-len(slots) // cols)
    side = 640 if cols == 1 else 520
    width = cols * side
    said, detail = context_title([p[0] for p in panels], context)
    sides = [f"left: the baseline, {roles.side('baseline')}; right: the candidate, "
             f"{roles.side('candidate')}"] \
        if roles and any(s and s[6] for s in slots) else []
    title = [metric_head(*MATRIX_ROW[:2]) + ", matrix=1: every sender/target pair"] + sides + \
        said + ["row = sender CPU, column = target CPU; cell: the pair's p50" +
                (f", median over {boots} boots" if boots > 1 else "") +
                "; '-': a CPU does not send to itself; one colour scale for all"] + detail
    if boots > 1:
        title.append(f"spread over boots: a pair's p50 varied by at most {100 * widest:.1f}% "
                     "(max/min)")
    if any(p[5] for p in panels):
        title.append("black lines: socket boundaries (QEMU numbers CPUs socket by socket)")
    title, notes = split_title(title, width - 20)
    height = rows * (side - 40) + 18 * len(title)
    lines = ["set key off", "set size ratio -1", "set tics scale 0",
             f"set xlabel {gp_str('target CPU; cells: round-trip p50, ' + axis_unit)}",
             "set ylabel 'sender CPU'",
             "set palette defined (0 '#fff7bc', 0.5 '#fe9929', 1 '#cc4c02')",
             f"set cbrange [{lo:.6g}:{hi:.6g}]", "set format cb '%g'",
             "set object 1 rect from graph 0,0 to graph 1,1 behind fc rgb '#e4e4e4' "
             "fs solid noborder",
             f"set multiplot layout {rows},{cols} title {gp_lines(title)}"] + \
        cmds + ["unset multiplot"]
    cap = (f"matrix=1: round-trip p50 of every sender/target pair, {len(panels)} "
           f"heatmap{'' if len(panels) == 1 else 's'}; {context_lines(names, context)[0]}")
    return [Plot("matrix", "single round trip, every pair (matrix=1)", lines, cap,
                 (width, height), notes)]


# --- the kvm-unit-tests view (docs/results.md, "kut")


def tsc_khz(boot):
    tsc = boot.env.get("tsc") if isinstance(boot.env.get("tsc"), dict) else {}
    khz = tsc.get("khz")
    return khz if isinstance(khz, (int, float)) and khz > 0 else None


def kut_values(boots, unit):
    """({(name, backend): [one value per boot]}, names, backends, boots left
    out): each boot's mean per iteration in cycles, or in ns through that
    boot's TSC frequency (a boot without one is left out); names and
    backends in the guest's order (lib/kut_names.c, its column order)."""
    values, names, backends, left = {}, {}, {}, 0
    for boot in boots:
        khz = tsc_khz(boot)
        if unit == "ns" and khz is None:
            left += bool(boot.kut)
            continue
        per_boot = {}
        for rec in boot.kut:
            names.setdefault(rec["name"])
            backends.setdefault(rec["backend"])
            v = rec["mean_cycles"] if unit == "cycles" else rec["mean_cycles"] * 1e6 / khz
            per_boot.setdefault((rec["name"], rec["backend"]), []).append(v)
        for key, vs in per_boot.items():
            values.setdefault(key, []).append(median(vs))
    return values, list(names), list(backends), left


def kut_series(label, values, backend, colour, fill=None):
    """One bar series: {name: [per boot]} of one backend; fill: a pale fill
    inside a border of colour (a candidate beside its baseline)."""
    style = f"lc rgb '{colour}' fs solid 0.85 border lc rgb 'black'" if fill is None else \
        f"lc rgb '{fill}' fs solid 1.0 border lc rgb '{colour}'"
    return {"label": label, "style": style,
            "values": {n: v for (n, b), v in values.items() if b == backend}}


def kut_panels(views):
    """[(panel title, names, [series])]: with two sets one panel, each
    backend's baseline bar above its candidate's (same hue, the candidate
    pale); else one panel per set. A backend keeps its colour everywhere."""
    backends = list(dict.fromkeys(b for v in views for b in v["backends"]))
    hue = {b: i % len(PALETTE) for i, b in enumerate(backends)}
    if len(views) == 2:
        names = list(dict.fromkeys(n for v in views for n in v["names"]))
        series = [kut_series(f"{b} {role}", v["values"], b, PALETTE[hue[b]],
                             PALE[hue[b]] if role == "candidate" else None)
                  for b in backends for v, role in zip(views, ("baseline", "candidate"))
                  if b in v["backends"]]
        return [("", names, series)]
    return [(v["name"] if len(views) > 1 else "", v["names"],
             [kut_series(b, v["values"], b, PALETTE[hue[b]])
              for b in backends if b in v["backends"]]) for v in views]


def kut_panel(name, names, series, div, blocks):
    """The plot commands of one panel: a group of bars per x86/vmexit.c name,
    the first name on top, the series in legend order within each group; a
    backend without that figure leaves its slot empty. Data go to blocks."""
    n_s, n_g = len(series), len(names)
    clauses, every, spread = [], [], False
    for s, ser in enumerate(series):
        rows = []
        for g, kname in enumerate(names):
            vals = ser["values"].get(kname)
            if vals:
                y = (n_g - 1 - g) * (n_s + 1) + n_s - 1 - s
                rows.append(f"{y} {median(vals) / div:.6g} {min(vals) / div:.6g} "
                            f"{max(vals) / div:.6g}")
                spread |= len(vals) > 1
        blocks.append("\n".join(rows))
        every += rows
        clauses.append(f"{gp_str('data/' + name + '.dat')} index {len(blocks) - 1} using "
                       f"2:1:(0):2:($1-0.4):($1+0.4) with boxxyerror {ser['style']} "
                       f"title {gp_str(ser['label'])}")
    if spread:
        blocks.append("\n".join(every))
        clauses.append(f"{gp_str('data/' + name + '.dat')} index {len(blocks) - 1} using "
                       "2:1:3:4 with xerrorbars lc rgb 'black' pt 0 ps 0 "
                       "title 'min..max over boots'")
    centres = [(k, (n_g - 1 - g) * (n_s + 1) + (n_s - 1) / 2) for g, k in enumerate(names)]
    return [f"set yrange [-0.7:{n_g * (n_s + 1) - 1.3}]", gp_tics("y", centres),
            f"set lmargin {max(len(k) for k in names) + 3}", "plot " + ", ".join(clauses)]


def kut_cell(vals):
    if not vals:
        return "-"
    med = num(median(vals))
    return med if len(vals) == 1 else f"{med} ({num(min(vals))}..{num(max(vals))})"


def kut_view(sets, names, data_dir, unit, context=None):
    """(plots, tables, notes) of the kvm-unit-tests view: a table per panel,
    [(title, head, rows)], each cell the median over boots (min..max)."""
    views, notes = [], []
    for (_, boots), disp in zip(sets, names):
        values, knames, backends, left = kut_values(boots, unit)
        if left:
            notes.append(f"kvm-unit-tests view: {left} boot(s) of {disp} left out of the ns "
                         "figures: no TSC frequency")
        views.append({"name": disp, "boots": len(boots) - left, "values": values,
                      "names": knames, "backends": backends})
    if len(views) != 2:
        views = [v for v in views if v["values"]]
    if not any(v["values"] for v in views):
        return [], [], notes
    panels = kut_panels(views)
    top = max(max(v) for view in views for v in view["values"].values())
    div, axis_unit = axis_scale(top, unit)
    blocks, plots_cmds = [], []
    for ptitle, knames, series in panels:
        plots_cmds += [f"set title {gp_str(ptitle)}"] + \
            kut_panel("kut", knames, series, div, blocks)
    replace_file(os.path.join(data_dir, "kut.dat"), "\n\n\n".join(blocks) + "\n")
    said, detail = context_title([v["name"] for v in views], context or {})
    head, sub = kut_title(views)
    # Which set is which comes first in a comparison; else what ran.
    title = [head, sub] + said + detail if len(views) == 2 else [head] + said + [sub] + detail
    lines, size, title_notes = kut_canvas(title, panels, plots_cmds, axis_unit)
    tables = [(ptitle, ["x86/vmexit.c name"] + [s["label"] for s in series],
               [[k] + [kut_cell(s["values"].get(k)) for s in series] for k in knames])
              for ptitle, knames, series in panels]
    cap = (f"kvm-unit-tests view: mean {axis_unit} per iteration of each x86/vmexit.c name, "
           "one bar per backend" + (", baseline and candidate side by side"
                                    if len(views) == 2 else "") +
           ", median over boots, min..max over boots as error bars; " +
           "; ".join(context_lines([v["name"] for v in views], context or {})))
    return [Plot("kut", "kvm-unit-tests view", lines, cap, size, title_notes)], tables, notes


def kut_title(views):
    """The figure's title: what a bar is, and which set is which."""
    if len(views) == 2:
        sub = (f"baseline: {views[0]['name']} ({views[0]['boots']} boots), "
               f"candidate: {views[1]['name']} ({views[1]['boots']} boots)")
    elif len(views) == 1:
        sub = f"{views[0]['name']} ({views[0]['boots']} boots)"
    else:
        sub = f"{len(views)} configurations, one panel each"
    if any(len(x) > 1 for v in views for x in v["values"].values()):
        sub += "; error bars: min..max over boots"
    return ["kvm-unit-tests view (x86/vmexit.c names): mean per iteration, median over boots",
            sub]


def kut_panel_height(names, series, width):
    """Pixels for a panel's bars (a slot per series and a gap per name), its
    title, axis and legend rows (an entry a label and its sample wide)."""
    per_row = max(1, width // (8 * max(len(s["label"]) + 8 for s in series)))
    key_rows = -(-(len(series) + 1) // per_row)
    return max(300, 110 + 16 * key_rows + KUT_PX * len(names) * (len(series) + 1))


def kut_canvas(title, panels, plots_cmds, axis_unit):
    """(commands, size, the title lines left for the caption): the panels in
    one or two columns, each tall enough for its bars and legend rows."""
    cols = 1 if len(panels) == 1 else 2
    rows = -(-len(panels) // cols)
    width = 1024 if cols == 1 else cols * PANEL_W
    title, notes = split_title(title, width - 20)
    height = max(kut_panel_height(n, s, width // cols) for _, n, s in panels) * rows + \
        18 * len(title)
    lines = ["set style fill solid 0.85 border -1", "set grid xtics", "set ytics nomirror scale 0",
             "set xrange [0:*]", "set format x '%g'",
             f"set xlabel {gp_str('mean per iteration, ' + axis_unit + ' (median over boots)')}",
             "set key below horizontal height 1",
             f"set multiplot layout {rows},{cols} title {gp_lines(title)}"] + \
        plots_cmds + ["unset multiplot"]
    return lines, (width, height), notes


def bar_plot(cmp, data_dir, names, context=None):
    """Horizontal bars, one row per compared row, its name beside it."""
    rows = sorted(cmp.compared, key=lambda r: -abs(r.change))
    total = len(rows)
    rows = sorted(rows[:MAX_BARS], key=lambda r: r.name, reverse=True)
    if not rows:
        return []
    out = []
    for i, r in enumerate(rows):
        lo, hi = r.ci if r.ci else (r.change, r.change)
        colour = COLOURS[r.verdict] if r.verdict in COLOURS else COLOURS["other"]
        out.append(f"{i} {gp_str(r.name)} {r.change:.3f} {lo:.3f} {hi:.3f} {colour}")
    replace_file(os.path.join(data_dir, "ab.dat"), "\n".join(out) + "\n")
    a, b = names
    largest = f", the {len(rows)} largest of {total}" if total > len(rows) else ""
    if cmp.pair:
        x, y = cmp.pair
        head = f"A/B: {x} (baseline) vs {y} (candidate), {a}" if a == b else \
            f"A/B: {x} of {a} (baseline) vs {y} of {b} (candidate)"
        boots = f"{len(cmp.sa.boots)} boots" if a == b else \
            f"{len(cmp.sa.boots)} and {len(cmp.sb.boots)} boots"
        title = [head, f"each row's p50 ({cmp.unit}): change of {y} against {x}, "
                 f"{boots}{largest}"]
        xlabel = f"change of {y} against {x}, % of {x} ({cmp.unit} p50)"
        what = f"{x} (baseline) vs {y} (candidate)"
    else:
        title = [f"A/B: change of each row's p50 ({cmp.unit}), candidate B against baseline A"
                 + largest, f"baseline A: {a} ({len(cmp.sa.boots)} boots); "
                 f"candidate B: {b} ({len(cmp.sb.boots)} boots)"]
        xlabel = f"change of B against A, % of A ({cmp.unit} p50)"
        what = f"baseline A {a}, candidate B {b}"
    longest = max(len(r.name) for r in rows)
    said, detail = context_title(list(dict.fromkeys(names)), context or {})
    # The title centres over the canvas (a multiplot's), not over the bars
    # right of the names' margin: two rows of the canvas's width hold more.
    title, notes = split_title(title + said + detail, 1004)
    lines = ["set style fill solid 0.7 border -1", f"set lmargin {longest + 3}",
             "set grid xtics", "set yzeroaxis lt -1", "set ytics nomirror scale 0",
             f"set yrange [-0.6:{len(rows) - 0.4}]", "set format x '%+g%%'",
             f"set xlabel {gp_str(xlabel)}",
             "set key below horizontal height 1",
             f"set multiplot layout 1,1 title {gp_lines(title)}",
             "plot 'data/ab.dat' using 3:1:(($3<0)?$3:0):(($3<0)?0:$3):($1-0.35):($1+0.35):6"
             ":ytic(2) with boxxyerror lc rgb variable notitle, "
             "'' using 3:1:4:5 with xerrorbars lc rgb 'black' pt -1 title '95% CI', "
             f"NaN with boxes lc rgb '#{COLOURS['slower'][2:]}' title 'slower (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['faster'][2:]}' title 'faster (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['other'][2:]}' title 'not significant'",
             "unset multiplot"]
    return [Plot("ab", "A/B comparison" + (f": {what}" if cmp.pair else ""), lines,
                 f"change of each compared row, {what}, with its bootstrap 95% confidence "
                 "interval; " + "; ".join(context_lines(list(dict.fromkeys(names)),
                                                        context or {})),
                 (1024, 154 + 18 * len(title) + BAR_PX * len(rows)), notes)]


def png_terminal(listing):
    """The PNG terminal to draw with, from what `gnuplot -e 'set terminal'`
    lists: pngcairo (antialiased, transparency), else gnuplot's own png
    (libgd, truecolor for the shaded bands); None when it lists neither."""
    names = {line.split()[0] for line in listing.splitlines() if line.strip()}
    for term in ("pngcairo", "png"):
        if term in names:
            return term
    return None


def png_term_spec(term, w, h):
    if term == "pngcairo":
        return f"pngcairo size {w},{h} noenhanced font 'sans,{FONT_PNG}'"
    return f"png size {w},{h} truecolor noenhanced font 'sans,{FONT_PNG}' background '#ffffff'"


def gnuplot_path():
    """gnuplot's path, or exit 9 (a missing dependency) saying how to get it:
    a reader that draws asks it before its work, not after."""
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise ToolError(EX_DEPS, "gnuplot is missing (Debian package gnuplot-nox; tools/deps.sh report installs it)")
    return gnuplot


def run_gnuplot(out, plots):
    gnuplot = gnuplot_path()
    listing = subprocess.run([gnuplot, "-e", "set terminal"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
    png = png_terminal(listing)
    if png is None:
        raise ToolError(EX_DEPS, "gnuplot lists neither the pngcairo nor the png terminal (Debian package gnuplot-nox has both)")
    script = ["set encoding utf8"]
    for p in plots:
        w, h = p.size
        for ext, term in (("svg", f"svg size {w},{h} dynamic noenhanced font 'sans,{FONT_SVG}' "
                                  "background 'white'"),
                          ("png", png_term_spec(png, w, h))):
            script += ["reset", f"set terminal {term}",
                       f"set output {gp_str(f'.{p.name}.{ext}.tmp')}"] + p.lines + \
                ["unset output"]
    replace_file(os.path.join(out, "plots.gp"), "\n".join(script) + "\n")
    proc = subprocess.run([gnuplot, "plots.gp"], cwd=out, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise ToolError(EX_TOOL_FAILED, "gnuplot failed: " + proc.stdout.strip()[-500:])
    for p in plots:
        for ext in ("svg", "png"):
            os.replace(os.path.join(out, f".{p.name}.{ext}.tmp"),
                       os.path.join(out, f"{p.name}.{ext}"))


def facts_lines(sets):
    out = []
    for name, boots in sets:
        h = boots[0].host
        params = h.get("kvm_params") if isinstance(h.get("kvm_params"), dict) else {}
        kvm = " ".join(f"{k}={v}" for k, v in params.items()) or "-"
        out.append((name, len(boots), h.get("accel", "-"), h.get("cpu_model", "-"),
                    h.get("kernel", "-"), h.get("qemu_version", "-"), kvm))
    return out


FACT_HEAD = ("set", "boots", "accel", "host CPU", "host kernel", "QEMU", "KVM parameters")


def html_table(head, rows):
    e = html.escape
    return ["<table><tr>" + "".join(f"<th>{e(str(h))}</th>" for h in head) + "</tr>"] + \
        ["<tr>" + "".join(f"<td>{e(str(c))}</td>" for c in r) + "</tr>" for r in rows] + \
        ["</table>"]


def md_table(head, rows):
    return ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)] + \
        ["| " + " | ".join(str(c).replace("|", "\\|") for c in r) + " |" for r in rows]


def sides_line(cmp):
    """Which set (and, with --pair, which backend) is A and which is B."""
    return (f"A (baseline): {cmp.sa.name} ({len(cmp.sa.boots)} boots); "
            f"B (candidate): {cmp.sb.name} ({len(cmp.sb.boots)} boots)")


KUT_CAPTION = ("x86/vmexit.c names, mean {unit} per iteration: the median over boots, "
               "min..max over boots in brackets; '-': that backend has no such figure")


FIGURE_CSS = ("figure{margin:1em 0}img{max-width:100%}"
              "figcaption{font-size:90%;color:#333;margin-top:4px}")


def figure_html(p):
    """A plot on the page: its SVG, and under it the caption: the lines its
    title had no room for, and a link to the PNG."""
    e = html.escape
    said = "".join(f"{e(n)}<br>" for n in p.notes)
    return [f'<figure id="{p.name}"><img src="{p.name}.svg" alt="{e(p.caption)}">',
            f'<figcaption>{said}(<a href="{p.name}.png">PNG</a>)</figcaption></figure>']


def figure_markdown(p):
    """A plot in report.md: its PNG, and the caption's lines as a list under it."""
    return [f"![{p.caption}]({p.name}.png)", ""] + \
        [f"- {n}" for n in p.notes] + ([""] if p.notes else [])


def page_html(title, sets, cmp, plots, notes, kut_tables=(), unit="cycles"):
    e = html.escape
    now = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    body = [f"<h1>{e(title)}</h1>", f"<p>generated {now}</p>", "<h2>Inputs</h2>"]
    body += html_table(FACT_HEAD, facts_lines(sets))
    body += [f"<p><b>{e(n)}</b></p>" for n in notes]
    if cmp is not None:
        body += ["<h2>Comparison</h2>", f"<p>{e(sides_line(cmp))}</p>"]
        if cmp.reasons:
            body.append(f"<p><b>NOT COMPARABLE</b>: {e('; '.join(cmp.reasons))}</p>")
        if cmp.timing_reasons:
            body.append("<p><b>TIMINGS NOT COMPARABLE</b>: "
                        f"{e('; '.join(cmp.timing_reasons))}</p>")
        body += [f"<p><b>warning</b>: {e(w)}</p>" for w in cmp.after_x2apic_lines()]
        body += html_table(table_head(cmp), table_rows(cmp))
        body += [f"<p>{e(line)}</p>" for line in legend(cmp)]
    if kut_tables:
        body += ["<h2>kvm-unit-tests view</h2>", f"<p>{e(KUT_CAPTION.format(unit=unit))}</p>"]
        for ktitle, head, rows in kut_tables:
            body += ([f"<h3>{e(ktitle)}</h3>"] if ktitle else []) + html_table(head, rows)
    for p in plots:
        body += [f"<h2>{e(p.title)}</h2>"] + figure_html(p)
    return html_page(title, body)


def html_page(title, body):
    """The page around body (its lines of HTML): report's and history's."""
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse;font-size:90%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}" + FIGURE_CSS)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{style}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def page_markdown(title, sets, cmp, plots, notes, kut_tables=(), unit="cycles"):
    lines = [f"# {title}", ""] + md_table(FACT_HEAD, facts_lines(sets))
    lines += [""] + [f"**{n}**\n" for n in notes]
    if cmp is not None:
        lines += ["## Comparison", "", format_markdown(cmp)]
    if kut_tables:
        lines += ["## kvm-unit-tests view", "", KUT_CAPTION.format(unit=unit) + ".", ""]
        for ktitle, head, rows in kut_tables:
            lines += ([f"### {ktitle}", ""] if ktitle else []) + md_table(head, rows) + [""]
    for p in plots:
        lines += [f"## {p.title}", ""] + figure_markdown(p)
    return "\n".join(lines) + "\n"


NAME_MAX = 100                 # characters of a default report folder's name


def report_name(inputs, pair=None):
    """The default folder's name, from the inputs' trailing folder names (two
    at least, as many as tell them apart): 'DATE-before-x2apic-smp4-vs-DATE-
    after-x2apic-smp4'; a long one is cut, a digest of it keeps it apart."""
    paths = [os.path.abspath(p) for p in inputs]
    parts = [[x for x in (os.path.dirname(p) if os.path.isfile(p) else p).split(os.sep) if x]
             for p in paths]
    short = []
    for k in range(2, max(len(p) for p in parts) + 2):
        short = ["-".join(p[-k:]) for p in parts]
        if len(set(short)) == len(short):
            break
    name = ("-vs-" if len(short) == 2 else "-and-").join(short)
    if pair:
        name += f"-{pair[0]}-vs-{pair[1]}"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "report"
    if len(name) > NAME_MAX:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = name[:NAME_MAX - 9].rstrip("-.") + "-" + digest
    return name


def within(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def default_out(inputs, pair=None, environ=None):
    """RESULTS/reports/NAME: under the results root (IPIBENCH_RESULTS, else
    the checkout's results/, where run.sh saves), never in an input's folder:
    that holds what a run saved, and a comparison's report belongs to both
    sides, not to the first. Running it again replaces it. Usage (exit 2)
    when that folder lies within an input."""
    environ = os.environ if environ is None else environ
    root = os.path.abspath(environ.get("IPIBENCH_RESULTS") or os.path.join(REPO, "results"))
    out = os.path.join(root, "reports", report_name(inputs, pair))
    inside = [i for i in inputs if os.path.isdir(i) and within(out, i)]
    if inside:
        raise ToolError(EX_USAGE, f"the default folder {out} lies within the input {inside[0]}: give --out DIR")
    return out


def pair_comparison(sets, pair, alpha, unit):
    """report --pair X=Y: compare --pair's comparison, backend X of the first
    set against backend Y of the last (the same set when there is one)."""
    if len(sets) > 2:
        raise ToolError(EX_USAGE, f"--pair compares within one set or across two, not {len(sets)} ({', '.join(n for n, _ in sets[:4])}{', ...' if len(sets) > 4 else ''}): give one configuration folder")
    (a_name, a_boots), (b_name, b_boots) = sets[0], sets[-1]
    cmp = Comparison(f"{a_name} [{pair[0]}]", a_boots, f"{b_name} [{pair[1]}]", b_boots,
                     alpha, unit, pair)
    err = cmp.overlap_error()
    if err:
        raise err
    return cmp


def report(a):
    sets = load_sets(a.inputs)
    sides = [Side(name, boots, a.unit) for name, boots in sets]
    if not any(s.keys() for s in sides):
        raise ToolError(EX_NO_OVERLAP, "nothing to plot: no result records in "
                        + ", ".join(a.inputs))
    cmp, notes = None, []
    pair = getattr(a, "pair", None)
    if pair:
        cmp = pair_comparison(sets, pair, a.alpha, a.unit)
    elif len(sets) == 2:
        cmp = Comparison(sets[0][0], sets[0][1], sets[1][0], sets[1][1], a.alpha, a.unit)
        err = cmp.overlap_error()
        if err:
            notes.append(err.message)
            cmp = None
    out = a.out or default_out(a.inputs, pair)
    data = os.path.join(out, "data")
    try:
        os.makedirs(data, exist_ok=True)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot write the report under {out}: {e.strerror or e}")
    names = display_names([s.name for s in sides])
    context = Context(names, sets)
    # Before and after on one panel and one scale: the comparison's sides.
    roles = Roles(names, pair) if cmp is not None else None
    plots = dist_plots(sets, names, data, a.unit, context, roles) + \
        scaling_plots(sides, names, data, a.unit, context, roles) + \
        matrix_plots(sets, names, data, a.unit, context, roles)
    if not any(p.name.startswith("scaling") for p in plots):
        notes.append("no scaling curve: no benchmark was measured at more than one target count")
    kut_plots, kut_tables, kut_notes = kut_view(sets, names, data, a.unit, context)
    plots += kut_plots
    notes += kut_notes
    if cmp is not None:
        plots += bar_plot(cmp, data, (names[0], names[-1]), context)
    run_gnuplot(out, plots)
    replace_file(os.path.join(out, "index.html"),
                 page_html(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    replace_file(os.path.join(out, "report.md"),
                 page_markdown(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    print(f"report: {len(plots)} plots (SVG and PNG) and {os.path.join(out, 'index.html')}")
    return 0

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Host tests of run.sh report's plots (host/ipibench/report/) on known
synthetic inputs (tests/host/synth.py): every series a figure claims is
drawn and named, no two curves of a panel share a colour or a marker, tick
labels have a fixed format and units and neither overlap nor leave the
canvas (measured on the SVG text that gnuplot wrote), legends sit outside the
graphs, the A/B title names baseline and candidate apart, and the PNGs have
the SVG's size. The kvm-unit-tests view draws a bar per backend and name with
the median and min..max over boots that the results files hold, and --pair
sets one backend against another through compare --pair's own comparison.
And on the synthetic sets the other host test files share (fixtures.Sets):
distributions, scaling and A/B plots as valid SVG and PNG, and the pages.
One TAP line per case, "ok - report: ..." (on the shared sets "ok - tools:
report: ..."); problems follow on '#' lines."""
import html
import importlib
import json
import math
import os
import re
import shutil
import struct
import sys
import tempfile

from harness import (check, expect, Fail, png_ok, registry, run_cases, run_cmd, selected,
                     svg_ok)
import synth
import fixtures
from fixtures import SLOW, SLOW_KEY, TOOL, tool
from test_history import series

from ipibench.exit_codes import EX_MISSING, EX_REGRESSION, ToolError


HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))


CASES, case = registry()
# Cases on the synthetic sets the other host test files share (fixtures.Sets),
# "ok - tools: report: ..."; they run with fixtures' Context.
SET_CASES, set_case = registry()

# Many curves, spread over several powers of two at large values: 18 self
# curves and 9 broadcast series (3 target counts) per set.
SELF_VARIANTS = ("sti-nop", "sti-hlt", "tpr", "tpr-sti-nop", "icr-sti-nop", "icr-tpr")
BACKENDS = ("x2apic", "x2apic-cluster", "xapic")
MANY = {("self", "send-to-handler", v, b, "self", 1): 150_000 + 40_000 * i + 9_000 * j
        for i, v in enumerate(SELF_VARIANTS) for j, b in enumerate(BACKENDS)}
for _n in (1, 2, 3):
    for _i, _v in enumerate(("loop", "set", "shorthand")):
        for _j, _b in enumerate(BACKENDS):
            MANY[("broadcast", "all-ack", _v, _b, "spin", _n)] = \
                400_000 + 150_000 * _n + 60_000 * _i + 20_000 * _j
# A row whose long name must fit beside its A/B bar.
MANY[("flush", "target-loss", "native-invlpg-33p", "xapic-logical", "spin", 3)] = 90_000
CHAR_EM = 0.55      # average width of a sans glyph, in font sizes
# Broadcast as the guest runs it: set and loop at 1, 2 and 3 targets, the
# shorthand at all 3 only; x2apic-nmi's centres are x2apic's (coinciding curves).
SHORT = {}
for _j, _b in enumerate(("x2apic", "x2apic-nmi", "xapic")):
    for _i, _v in enumerate(("loop", "set")):
        for _n in (1, 2, 3):
            SHORT[("broadcast", "all-ack", _v, _b, "spin", _n)] = \
                3000 + 1000 * _n + 2500 * _i + 6000 * (_b == "xapic")
    SHORT[("broadcast", "all-ack", "shorthand", _b, "spin", 3)] = 4000 + 6000 * (_b == "xapic")
# A TCG boot of 8 CPUs in 2 sockets; x2apic's send cost one value in every sample.
EXACT = ("send-cost", "send", "none", "x2apic", "spin", 1)
TCG_ROWS = dict(synth.ROWS)
# matrix=1 on 3 CPUs: a centre per ordered pair, told apart by sender and target.
MATRIX = {b: {(snd, tgt): base + 300 * snd + 40 * tgt for snd in range(3) for tgt in range(3)
              if snd != tgt} for b, base in (("x2apic", 2000), ("xapic", 3500))}


class Sets:
    """Two sets whose folders share a name (DATE-before/x2apic-smp4 and
    DATE-after/x2apic-smp4), each with many curves and the kvm-unit-tests
    view; one plain small set; one set of two backends (x2apic and xapic)
    reported with --pair xapic=x2apic, and again in ns."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.before = synth.make_set(os.path.join(tmp, "before", "x2apic-smp4"), boots=3,
                                     rows=MANY, seed=11, samples=200, sample_noise=0.9,
                                     kut=synth.KUT)
        self.after = synth.make_set(os.path.join(tmp, "after", "x2apic-smp4"), boots=3,
                                    rows=MANY, seed=12, samples=200, sample_noise=0.9,
                                    scale={k: 1.1 for k in MANY if k[3] == "xapic"},
                                    kut={k: v * 1.2 for k, v in synth.KUT.items()})
        self.small = synth.make_set(os.path.join(tmp, "small"), boots=2, seed=13)
        self.two = synth.make_set(os.path.join(tmp, "pair", "x2apic-smp4"), boots=4, seed=14,
                                  kut=synth.KUT, boot_noise=0.03)
        self.out = os.path.join(tmp, "many")
        self.res = tool("report", self.before, self.after, "--out", self.out)
        self.out1 = os.path.join(tmp, "one")
        self.res1 = tool("report", self.small, "--out", self.out1)
        self.out_pair = os.path.join(tmp, "pair-report")
        self.res_pair = tool("report", "--pair", "xapic=x2apic", self.two, "--out",
                             self.out_pair)
        self.out_ns = os.path.join(tmp, "ns")
        self.res_ns = tool("report", self.two, "--unit", "ns", "--out", self.out_ns)
        self.tcg = synth.make_set(os.path.join(tmp, "tcg", "tcg-smp8"), boots=2, seed=15,
                                  accel="tcg", trust=["tcg", "tsc-unstable"], cpus=8,
                                  smp="8,sockets=2,cores=2,threads=2", rows=TCG_ROWS,
                                  exact=[EXACT])
        self.out_tcg = os.path.join(tmp, "tcg-report")
        self.res_tcg = tool("report", self.tcg, "--out", self.out_tcg)
        self.mat = synth.make_set(os.path.join(tmp, "matrix", "x2apic-smp3"), boots=3, seed=16,
                                  cpus=3, rows={("send-cost", "send", "none", "x2apic", "spin",
                                                 1): 300}, matrix=MATRIX, boot_noise=0.02)
        self.out_mat = os.path.join(tmp, "matrix-report")
        self.res_mat = tool("report", self.mat, "--out", self.out_mat)
        self.short = synth.make_set(os.path.join(tmp, "short", "x2apic-smp4"), boots=3,
                                    seed=17, rows=SHORT, boot_noise=0.01, sample_noise=0.02)
        self.out_short = os.path.join(tmp, "short-report")
        self.res_short = tool("report", self.short, "--out", self.out_short)
        # The matrix again, 20% slower: before and after as heatmaps.
        self.mat2 = synth.make_set(os.path.join(tmp, "matrix2", "x2apic-smp3"), boots=2,
                                   seed=18, cpus=3, rows={("send-cost", "send", "none",
                                                           "x2apic", "spin", 1): 300},
                                   matrix={b: {k: v * 1.2 for k, v in cells.items()}
                                           for b, cells in MATRIX.items()})
        self.out_mat2 = os.path.join(tmp, "matrix-ab")
        self.res_mat2 = tool("report", self.mat, self.mat2, "--out", self.out_mat2)
        self.reports = ((self.out, self.res), (self.out1, self.res1),
                        (self.out_pair, self.res_pair), (self.out_ns, self.res_ns),
                        (self.out_tcg, self.res_tcg), (self.out_mat, self.res_mat),
                        (self.out_short, self.res_short), (self.out_mat2, self.res_mat2))


# --- reading what the tool wrote


def figures(out):
    """{figure name: [gnuplot lines drawing its SVG]} from plots.gp."""
    figs, cur = {}, None
    for line in open(os.path.join(out, "plots.gp")).read().splitlines():
        m = re.match(r'set output "\.(.+)\.svg\.tmp"', line)
        if m:
            cur = figs.setdefault(m.group(1), [])
        elif cur is not None and (line.startswith("set terminal") or line == "unset output"):
            cur = None
        elif cur is not None:
            cur.append(line)
    return figs


def clauses(plot_line):
    """The clauses of a plot command (commas outside quotes and brackets)."""
    out, depth, quote, start = [], 0, None, 5
    for i, ch in enumerate(plot_line):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "\"'":
            quote = ch
        elif ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(plot_line[start:i].strip())
            start = i + 1
    return out + [plot_line[start:].strip()]


def titled(plot_line):
    """(title, clause) of every clause with a legend title."""
    out = []
    for c in clauses(plot_line):
        m = re.search(r'title (["\'])(.*?)\1', c)
        if m and " notitle" not in c:
            out.append((m.group(2), c))
    return out


def svg_texts(path):
    """[(x, y, angle, font size, anchor, text)] of every text gnuplot placed."""
    data = open(path).read()
    pat = re.compile(r'<g transform="translate\(([-\d.]+),([-\d.]+)\)(?: rotate\(([-\d.]+)\))?"'
                     r'[^>]*?font-size="([\d.]+)"[^>]*?text-anchor="(\w+)"[^>]*>\s*'
                     r'<text>(.*?)</text>', re.S)
    return [(float(x), float(y), float(a or 0), float(fs), anchor,
             html.unescape(re.sub(r"<[^>]+>", "", t)).strip())
            for x, y, a, fs, anchor, t in pat.findall(data)]


def svg_size(path):
    m = re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', open(path).read())
    return float(m.group(1)), float(m.group(2))


def png_size(path):
    return struct.unpack(">II", open(path, "rb").read()[16:24])


def text_box(x, y, angle, fs, anchor, text):
    """The text's box (x0, y0, x1, y1), estimated from its length."""
    w = len(text) * CHAR_EM * fs
    start = {"start": 0.0, "middle": -w / 2, "end": -w}[anchor]
    a = math.radians(angle)
    ends = [(x + (start + d) * math.cos(a), y + (start + d) * math.sin(a)) for d in (0, w)]
    xs = [p[0] for p in ends]
    ys = [p[1] for p in ends]
    return min(xs), min(ys) - fs * 0.75, max(xs), max(ys) + fs * 0.25


def overlaps(b1, b2):
    return b1[0] < b2[2] - 1 and b2[0] < b1[2] - 1 and b1[1] < b2[3] - 1 and b2[1] < b1[3] - 1


def geometry_problems(svg):
    """Texts that overlap one another or leave the canvas."""
    w, h = svg_size(svg)
    texts = [t for t in svg_texts(svg) if t[5]]
    boxes = [(t, text_box(*t)) for t in texts]
    bad = [f"{t[5]!r} leaves the {w:.0f}x{h:.0f} canvas" for t, b in boxes
           if b[0] < -2 or b[1] < -2 or b[2] > w + 2 or b[3] > h + 2]
    flat = [(t, b) for t, b in boxes if t[2] == 0]     # rotated: the canvas check only
    for i, (t1, b1) in enumerate(flat):
        for t2, b2 in flat[i + 1:]:
            if overlaps(b1, b2):
                bad.append(f"{t1[5]!r} at ({t1[0]:.0f},{t1[1]:.0f}) overlaps "
                           f"{t2[5]!r} at ({t2[0]:.0f},{t2[1]:.0f})")
    return bad


def kut_expected(folder, unit="cycles"):
    """{(name, backend): (median, min, max) over boots}, read straight from
    the results files: what the kvm-unit-tests bars must show."""
    per = {}
    for root, _, files in sorted(os.walk(folder)):
        if "results.json" not in files:
            continue
        recs = json.load(open(os.path.join(root, "results.json")))["records"]
        khz = next(r["tsc"]["khz"] for r in recs if r["record"] == "env")
        for r in recs:
            if r["record"] == "kut":
                v = r["mean_cycles"] * (1 if unit == "cycles" else 1e6 / khz)
                per.setdefault((r["name"], r["backend"]), []).append(v)
    out = {}
    for key, vals in per.items():
        v, n = sorted(vals), len(vals)
        out[key] = (v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2, v[0], v[-1])
    return out


def kut_bars(out):
    """({series title: {name: (median, min, max)}}, [(title, clause)] of the
    clauses that draw no bar), as the kut figure draws them: each bar's name
    is the y tick nearest to it, its group's centre."""
    figs = figures(out)
    check("kut" in figs, f"no kut figure: {sorted(figs)}")
    lines = figs["kut"]
    ticks = re.search(r"set ytics \((.*)\)", "\n".join(lines)).group(1)
    centres = [(float(pos), name) for name, pos in re.findall(r'"([^"]+)" ([-\d.]+)', ticks)]
    blocks = open(os.path.join(out, "data", "kut.dat")).read().split("\n\n\n")
    bars, others = {}, []
    for p in (ln for ln in lines if ln.startswith("plot ")):
        for title, c in titled(p):
            if "boxxyerror" not in c:
                others.append((title, c))
                continue
            for row in filter(str.strip, blocks[int(re.search(r"\bindex (\d+)", c).group(1))]
                              .split("\n")):
                y, med, lo, hi = map(float, row.split())
                name = min(centres, key=lambda t: abs(t[0] - y))[1]
                check(name not in bars.get(title, {}), f"kut: {title}: {name} drawn twice")
                bars.setdefault(title, {})[name] = (med, lo, hi)
    return bars, others


def close(got, want):
    return all(abs(g - w) <= 1e-4 * max(1.0, abs(w)) for g, w in zip(got, want))


def need(s, res):
    if not shutil.which("gnuplot"):
        raise Fail("gnuplot missing (tools/deps.sh test installs gnuplot-nox)")
    expect(res, 0, "plots")


# --- cases


@case("every series is drawn and named: 36 self curves, 18 scaling series, none dropped")
def _(s):
    need(s, s.res)
    figs = figures(s.out)
    expected = {"dist-self-send-to-handler": 2 * len(SELF_VARIANTS) * len(BACKENDS),
                "dist-broadcast-all-ack": 2 * 3 * len(BACKENDS),
                "scaling-broadcast-all-ack": 2 * 3 * len(BACKENDS)}
    for name, count in expected.items():
        check(name in figs, f"no figure {name}: {sorted(figs)}")
        lines = figs[name]
        plots = [ln for ln in lines if ln.startswith("plot ")]
        drawn = [t for p in plots for t in titled(p)]
        check(len(drawn) == count, f"{name}: {len(drawn)} curves drawn, {count} in the data")
        panel_titles = [ln for ln in lines if ln.startswith("set title ")]
        named = set()
        for ptitle, p in zip(panel_titles, plots):
            for title, _ in titled(p):
                check((ptitle, title) not in named, f"{name}: {title!r} twice in one panel")
                named.add((ptitle, title))
        blocks = open(os.path.join(s.out, "data", name + ".dat")).read().split("\n\n\n")
        check(len(blocks) >= count and all(b.strip() for b in blocks[:count]),
              f"{name}: {len(blocks)} data blocks for {count} curves, or an empty one")
        svg = open(os.path.join(s.out, name + ".svg")).read()
        for title, _ in drawn:
            check(f"<text>{html.escape(title, quote=False)}</text>" in svg,
                  f"{name}.svg lacks the legend title {title!r}")
    page = open(os.path.join(s.out, "index.html")).read()
    check("first 12" not in page, "index.html still notes dropped curves")


# gnuplot's filled point types and the open one of the same shape.
OPEN_OF = {7: 6, 5: 4, 9: 8, 11: 10, 13: 12, 15: 14}


def panel_styles(name, plot_line):
    """[(legend title, colour, marker or None for a bar, dashed)] of a panel."""
    out = []
    for title, c in titled(plot_line):
        lc, pt = re.search(r"lc rgb '([^']+)'", c), re.search(r"\bpt (\d+)", c)
        bar = "boxxyerror" in c
        check(lc and (pt or bar), f"{name}: {title!r} without lc rgb or pt")
        out.append((title, lc.group(1), None if bar else int(pt.group(1)), " dt " in c))
    return out


def check_compare_colours(name, styles):
    """In a comparison a colour is one baseline's and its candidate's: the
    same words, filled and open marks of one shape, the candidate dashed."""
    by_colour = {}
    for st in styles:
        by_colour.setdefault(st[1], []).append(st)
    for colour, group in by_colour.items():
        if len(group) == 1:
            continue
        check(len(group) == 2, f"{name}: {len(group)} curves in {colour}: {group}")
        (bt, _, bpt, bdash), (ct, _, cpt, cdash) = group
        check(bt.endswith(", baseline") and ct == bt[:-len("baseline")] + "candidate",
              f"{name}: {colour} is shared by {bt!r} and {ct!r}, not a baseline and its candidate")
        check(OPEN_OF.get(bpt) == cpt and cdash and not bdash,
              f"{name}: {bt!r} (pt {bpt}) and {ct!r} (pt {cpt}, dashed {cdash}) are not filled "
              "and open marks of one shape, the candidate dashed")


@case("no two curves of a panel share a colour or a marker, no two bars a colour; in a "
      "comparison only a baseline and its candidate share one, told apart by marks and dashes")
def _(s):
    for out, res, compare in ((s.out, s.res, True), (s.out_short, s.res_short, False),
                              (s.out1, s.res1, False)):
        need(s, res)
        for name, lines in figures(out).items():
            if name == "ab":
                continue
            for p in (ln for ln in lines if ln.startswith("plot ")):
                styles = panel_styles(name, p)
                colours = [st[1] for st in styles]
                markers = [st[2] for st in styles if st[2] is not None]
                check(len(set(markers)) == len(markers), f"{name}: markers repeat: {markers}")
                if compare and not name.startswith("kut"):
                    check_compare_colours(name, styles)
                else:
                    check(len(set(colours)) == len(colours), f"{name}: colours repeat: {colours}")


@case("ticks in a fixed format, scale and unit in the axis label, no exponent")
def _(s):
    for out, res in s.reports:
        need(s, res)
        for name, lines in figures(out).items():
            text = "\n".join(lines)
            check(re.search(r"set xtics \(|set format x '", text), f"{name}: x ticks unset")
            xlabel = re.search(r"set xlabel (.*)", text)
            check(xlabel and re.search(r"cycles|ns|µs|ms|targets", xlabel.group(1)),
                  f"{name}: x axis label without a unit: {xlabel and xlabel.group(1)}")
            if name.startswith("dist-"):
                check("log scale" in xlabel.group(1), f"{name}: log axis not said")
            svg = os.path.join(out, name + ".svg")
            for t in svg_texts(svg):
                check(not re.fullmatch(r"[-+\d.]+e[-+]\d+%?", t[5]),
                      f"{name}.svg: tick label {t[5]!r} in exponent form")
    big = "\n".join(figures(s.out)["dist-self-send-to-handler"])
    check("thousand cycles" in big, "values of 150000 cycles and more not scaled to thousands")


@case("no text overlaps another or leaves the canvas (measured on the SVGs)")
def _(s):
    for out, res in s.reports:
        need(s, res)
        for name in figures(out):
            bad = geometry_problems(os.path.join(out, name + ".svg"))
            check(not bad, f"{name}.svg: " + "; ".join(bad[:4]) +
                  (f" (and {len(bad) - 4} more)" if len(bad) > 4 else ""))


@case("legends sit outside the graphs")
def _(s):
    for out, res in s.reports:
        need(s, res)
        for name, lines in figures(out).items():
            keys = [ln for ln in lines if ln.startswith("set key")]
            check(keys, f"{name}: no key placement")
            for k in keys:
                check(re.search(r"\b(outside|below|above|off)\b", k) and "inside" not in k,
                      f"{name}: {k!r} may cover data")


@case("A/B title names baseline and candidate, told apart by their parent folders")
def _(s):
    need(s, s.res)
    ab = "\n".join(figures(s.out)["ab"])
    for role, side in (("baseline A", "before"), ("candidate B", "after")):
        want = f"{role}: {side}/x2apic-smp4"
        check(want in ab, f"ab title lacks {want!r}")
        check(want in open(os.path.join(s.out, "ab.svg")).read(), f"ab.svg lacks {want!r}")
    check(not re.search(r"x2apic-smp4 -> x2apic-smp4", ab), "ab title names one set twice")


KUT_NAMES = list(dict.fromkeys(n for n, _ in synth.KUT))   # the guest's order


@case("kvm-unit-tests view: a group per vmexit.c name, baseline beside candidate per backend, "
      "median and min..max over boots as the results files hold them")
def _(s):
    need(s, s.res)
    bars, others = kut_bars(s.out)
    titles = [f"{b} {role}" for b in ("xapic", "x2apic") for role in ("baseline", "candidate")]
    check(list(bars) == titles, f"series {list(bars)}, expected {titles}")
    want = {"baseline": kut_expected(s.before), "candidate": kut_expected(s.after)}
    for title, drawn in bars.items():
        backend, role = title.split()
        exp = {n: v for (n, b), v in want[role].items() if b == backend}
        check(set(drawn) == set(exp), f"{title}: bars {sorted(drawn)}, results {sorted(exp)}")
        for n, v in exp.items():
            check(close(drawn[n], v), f"{title} {n}: drawn {drawn[n]}, results hold {v}")
    check([t for t, _ in others] == ["min..max over boots"] and "xerrorbars" in others[0][1],
          f"no min..max error bars: {others}")
    text = "\n".join(figures(s.out)["kut"])
    ticks = re.findall(r'"([^"]+)" ([-\d.]+)', re.search(r"set ytics \((.*)\)", text).group(1))
    check([n for n, _ in ticks] == KUT_NAMES, f"groups {ticks}, expected {KUT_NAMES}")
    check(all(float(a[1]) > float(b[1]) for a, b in zip(ticks, ticks[1:])),
          f"groups not in the guest's order from the top: {ticks}")
    check(re.search(r"set xlabel .*cycles", text), "kut: no unit in the x axis label")
    svg = open(os.path.join(s.out, "kut.svg")).read()
    for label in KUT_NAMES + titles:
        check(f"<text>{label}</text>" in svg, f"kut.svg lacks {label!r}")


@case("kvm-unit-tests view in ns (--unit ns): each boot's mean through its TSC frequency")
def _(s):
    need(s, s.res_ns)
    bars, _ = kut_bars(s.out_ns)
    check(list(bars) == ["xapic", "x2apic"], f"series {list(bars)}")
    exp = kut_expected(s.two, "ns")
    for (n, b), v in exp.items():
        check(close(bars[b].get(n, ()), v) and len(bars[b][n]) == 3,
              f"{b} {n}: drawn {bars[b].get(n)}, results hold {v} ns")
    text = "\n".join(figures(s.out_ns)["kut"])
    check(re.search(r"set xlabel .*\bns\b", text) and "cycles" not in text,
          "kut --unit ns: the x axis is not in ns")


@case("the page tables the kvm-unit-tests view: a row per name, median (min..max), '-' for none")
def _(s):
    need(s, s.res)
    md = open(os.path.join(s.out, "report.md")).read()
    page = open(os.path.join(s.out, "index.html")).read()
    check("| x86/vmexit.c name | xapic baseline | xapic candidate | x2apic baseline | "
          "x2apic candidate |" in md, "report.md: no kvm-unit-tests table of four series")
    check("| x2apic_self_ipi_sti_nop | - | - |" in md, "report.md: no '-' for xapic's missing row")
    check("<td>x2apic_self_ipi_sti_nop</td><td>-</td>" in page, "index.html: no kut row with '-'")
    med, lo, hi = kut_expected(s.before)[("ipi_halt", "x2apic")]
    cell = f"{med:.0f} ({lo:.0f}..{hi:.0f})"
    check(f"| {cell} |" in md and f"<td>{cell}</td>" in page, f"no cell {cell!r} for ipi_halt")


@case("--pair xapic=x2apic: the A/B chart and table set xapic (baseline) against x2apic "
      "(candidate) within one set, with compare --pair's figures")
def _(s):
    need(s, s.res_pair)
    figs = figures(s.out_pair)
    check("ab" in figs, f"no A/B figure with --pair: {sorted(figs)}")
    want = "A/B: xapic (baseline) vs x2apic (candidate), x2apic-smp4"
    check(want in "\n".join(figs["ab"]), f"ab title lacks {want!r}")
    check(want in open(os.path.join(s.out_pair, "ab.svg")).read(), f"ab.svg lacks {want!r}")
    drawn = {m.group(1): float(m.group(2)) for m in re.finditer(
        r'^\d+ "([^"]*)" (\S+)', open(os.path.join(s.out_pair, "data", "ab.dat")).read(), re.M)}
    res = tool("compare", "--pair", "xapic=x2apic", s.two, "--format", "json")
    expect(res, 0)
    exp = {r["row"]: r["change_pct"] for r in json.loads(res[1])["rows"]
           if r["change_pct"] is not None}
    check(set(drawn) == set(exp), f"bars {sorted(drawn)}, compare --pair {sorted(exp)}")
    check(all(abs(drawn[k] - v) < 0.001 for k, v in exp.items()), "bars differ from compare")
    check("kvm-unit-tests/ipi_halt/mean/xapic=x2apic/none/n1" in drawn,
          f"no kvm-unit-tests row among {sorted(drawn)}")
    page = open(os.path.join(s.out_pair, "index.html")).read()
    for needle in ("A (baseline): ", "x2apic-smp4 [xapic]", "B (candidate): ",
                   "x2apic-smp4 [x2apic]", "<td>xapic=x2apic</td>"):
        check(needle in page, f"index.html lacks {needle!r}")
    check("xapic=x2apic" in open(os.path.join(s.out_pair, "report.md")).read(),
          "report.md has no pair rows")


@case("--pair refuses what it cannot compare: a backend the set lacks (exit 25), "
      "no X=Y or more than two sets (exit 2), and writes nothing")
def _(s):
    out = os.path.join(s.tmp, "refused")
    expect(tool("report", "--pair", "nope=x2apic", s.two, "--out", out), 25,
           "nothing to compare")
    expect(tool("report", "--pair", "xapic", s.two, "--out", out), 2, "--pair takes")
    expect(tool("report", "--pair", "xapic=x2apic", s.before, s.after, s.small, "--out", out),
           2, "give one configuration folder")
    check(not os.path.exists(out), "a refused report wrote files")


@case("PNG sizes: the SVG canvas, tall enough for every panel and A/B row")
def _(s):
    need(s, s.res)
    figs = figures(s.out)
    for name, lines in figs.items():
        svg, png = (os.path.join(s.out, f"{name}.{e}") for e in ("svg", "png"))
        check(svg_ok(svg) is None and png_ok(png) is None, f"{name}: bad SVG or PNG")
        w, h = png_size(png)
        check((w, h) == tuple(map(int, svg_size(svg))), f"{name}: PNG {w}x{h}, SVG "
              f"{svg_size(svg)}")
        layout = re.search(r"set multiplot layout (\d+),(\d+)", "\n".join(lines))
        if layout:
            check(h >= 300 * int(layout.group(1)), f"{name}: {h} px for {layout.group(1)} rows")
    rows = open(os.path.join(s.out, "data", "ab.dat")).read().count("\n")
    check(png_size(os.path.join(s.out, "ab.png"))[1] >= 14 * rows, f"ab.png too short for {rows}")


@case("a few curves stay in one panel; the page shows every plot")
def _(s):
    need(s, s.res1)
    figs = figures(s.out1)
    check("ab" not in figs, "A/B plot from one input")
    for name, lines in figs.items():
        if name.startswith("dist-"):
            text = "\n".join(lines)
            check("layout 1,1" in text, f"{name}: split though it has few curves")
    page = open(os.path.join(s.out1, "index.html")).read()
    for name in figs:
        check(f'src="{name}.svg"' in page, f"index.html does not show {name}")


def data_blocks(out, name):
    return open(os.path.join(out, "data", name + ".dat")).read().split("\n\n\n")


def block_rows(blocks, clause):
    """The data rows a plot clause draws, as lists of numbers."""
    block = blocks[int(re.search(r"\bindex (\d+)", clause).group(1))]
    return [[float(v) for v in row.split()] for row in block.splitlines() if row.strip()]


def results_records(folder):
    """[[result records] per boot] under folder."""
    out = []
    for root, _, files in sorted(os.walk(folder)):
        if "results.json" in files:
            recs = json.load(open(os.path.join(root, "results.json")))["records"]
            out.append([r for r in recs if r["record"] == "result"])
    return out


def title_text(lines):
    """Every title of a figure (multiplot, panels) as one line of words."""
    text = " ".join(m.group(1) for ln in lines
                    for m in [re.search(r'^set (?:multiplot layout \S+ )?title "(.*)"', ln)] if m)
    return re.sub(r"\s+", " ", text.replace("\\n", " "))


def caption(out, name):
    """The lines under a figure on the page (index.html's figcaption), as words."""
    page = open(os.path.join(out, "index.html")).read()
    m = re.search(r'<figure id="' + re.escape(name) + r'">.*?<figcaption>(.*?)</figcaption>',
                  page, re.S)
    check(m, f"index.html has no figure {name} with a caption")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", m.group(1)))).strip()


def said(out, name):
    """What a figure says of itself: its titles, then the caption under it."""
    return title_text(figures(out)[name]) + " " + caption(out, name)


def report_module(name):
    """host/ipibench/report/NAME.py."""
    return importlib.import_module("ipibench.report." + name)


@case("latency distributions are empirical CDFs: at every bucket edge the share of the "
      "pooled samples at or below it, 0 to 100%")
def _(s):
    need(s, s.res1)
    lines = figures(s.out1)["dist-single-round-trip"]
    blocks = data_blocks(s.out1, "dist-single-round-trip")
    check("set ylabel '% of samples at or below'" in lines, "y axis is not a cumulative share")
    drawn = {t: c for p in lines if p.startswith("plot ") for t, c in titled(p)}
    check(set(drawn) == {"x2apic", "xapic"}, f"curves {sorted(drawn)}")
    for backend, clause in drawn.items():
        check("with linespoints" in clause or "with lines" in clause,
              f"{backend}: not drawn as a line: {clause}")
        rows = block_rows(blocks, clause)
        xs, ys = [r[0] for r in rows], [r[1] for r in rows]
        check(xs == sorted(xs) and ys == sorted(ys), f"{backend}: CDF not monotone: {rows}")
        check(abs(ys[0]) < 1e-9 and abs(ys[-1] - 100) < 1e-3, f"{backend}: ends {ys[0]}, {ys[-1]}")
        pooled = {}
        for boot in results_records(s.small):
            for r in boot:
                if (r["bench"], r["metric"], r["backend"]) == ("single", "round-trip", backend):
                    for low, high, count in r["histogram"]:
                        pooled[high] = pooled.get(high, 0) + count
        total, cum = sum(pooled.values()), 0
        for high in sorted(pooled):
            cum += pooled[high]
            want = 100.0 * cum / total
            got = [y for x, y in zip(xs, ys) if abs(x - (high + 1)) < 1e-6]
            check(got and abs(got[0] - want) < 1e-3,
                  f"{backend}: at {high + 1} cycles the CDF is {got}, the histograms say {want}")


@case("a distribution of one distinct value is one marked point at 100%, not a spike")
def _(s):
    need(s, s.res_tcg)
    lines = figures(s.out_tcg)["dist-send-cost-send"]
    blocks = data_blocks(s.out_tcg, "dist-send-cost-send")
    drawn = {t: c for p in lines if p.startswith("plot ") for t, c in titled(p)}
    point = [(t, c) for t, c in drawn.items() if t.startswith("x2apic")]
    check(len(point) == 1, f"no x2apic curve among {sorted(drawn)}")
    title, clause = point[0]
    check(" with points " in clause, f"x2apic's one value not drawn as a marker: {clause}")
    check(block_rows(blocks, clause) == [[300.0, 100.0]],
          f"x2apic's marker at {block_rows(blocks, clause)}, every sample was 300 cycles")
    check("every sample 300 cycles" in title, f"legend {title!r} does not say its one value")
    other = drawn.get("xapic", "")
    check("with linespoints" in other and len(block_rows(blocks, other)) > 2,
          f"xapic's spread samples are not a CDF: {other}")


@case("matrix=1: a heatmap per backend, row = sender, column = target, each cell the median "
      "over boots of the pair's p50, '-' on the diagonal")
def _(s):
    need(s, s.res_mat)
    figs = figures(s.out_mat)
    check("matrix" in figs, f"no matrix figure: {sorted(figs)}")
    lines = figs["matrix"]
    blocks = data_blocks(s.out_mat, "matrix")
    want = {}
    for boot in results_records(s.mat):
        for r in boot:
            if (r["bench"], r["metric"]) == ("single", "round-trip") and r["status"] == "SUCCESS":
                want.setdefault(r["backend"], {}).setdefault(
                    (r["sender"], int(r["targets"])), []).append(r["cycles"]["p50"])
    panels = [re.search(r'set title "(.*)"', ln).group(1) for ln in lines
              if ln.startswith("set title ")]
    check(panels == ["x2apic", "xapic"], f"panels {panels}")
    plots = [ln for ln in lines if ln.startswith("plot ")]
    for backend, plot in zip(panels, plots):
        check("with image" in plot, f"{backend}: not a heatmap: {plot}")
        block = blocks[int(re.search(r"\bindex (\d+)", plot).group(1))]
        cells = {}
        for row in filter(str.strip, block.splitlines()):
            t, snd, z, label = row.split()
            cells[(int(snd), int(t))] = (z, label)
        check(len(cells) == 9, f"{backend}: {len(cells)} cells for 3 CPUs")
        for (snd, t), (z, label) in cells.items():
            if snd == t:
                check(z == "NaN" and label == "-", f"{backend}: diagonal {snd} is {z} {label}")
                continue
            vals = sorted(want[backend][(snd, t)])
            med = vals[len(vals) // 2]
            check(abs(float(z) - med) < 1e-6 and label == str(med),
                  f"{backend} {snd}->{t}: drawn {z} ({label}), the boots' median p50 is {med}")
    text = said(s.out_mat, "matrix")
    check("row = sender CPU, column = target CPU" in text and "median over 3 boots" in text,
          f"matrix title and caption lack what a row, a column and a cell are: {text}")


@case("every figure's title carries the accelerator, its trust warnings and the guest "
      "topology; its legends and titles use words, not record fields")
def _(s):
    need(s, s.res_tcg)
    figs = figures(s.out_tcg)
    check(len(figs) >= 4, f"figures {sorted(figs)}")
    for name, lines in figs.items():
        text = title_text(lines)
        for want in ("TCG: emulated, behaviour only", "no invariant TSC",
                     "8 CPUs: 2 sockets x 2 cores x 2 threads"):
            check(want in text, f"{name}: title lacks {want!r}: {text}")
        svg = re.sub(r"\s+", " ", " ".join(t[5] for t in svg_texts(
            os.path.join(s.out_tcg, name + ".svg"))))
        check("TCG: emulated, behaviour only" in svg, f"{name}.svg does not show the TCG warning")
    # The KVM sets of MANY: words for variants and target states, nothing like 'all X spin'.
    for name, lines in figures(s.out).items():
        text = title_text(lines)
        check(not re.search(r"\bspin\b|\ball \S+ (spin|self)\b", text),
              f"{name}: jargon in the title: {text}")
    scaling = figures(s.out)["scaling-broadcast-all-ack"]
    words = said(s.out, "scaling-broadcast-all-ack") + " " + " ".join(
        t for p in scaling if p.startswith("plot ") for t, _ in titled(p))
    for want in ("unicast loop", "set send", "shorthand", "spinning targets"):
        check(want in words, f"scaling-broadcast-all-ack: no {want!r} in {words[:300]}")
    m = report_module("what_ran")
    for spec, count, want in (("6,sockets=2,cores=3", 6, "6 CPUs: 2 sockets x 3 cores x 1 thread"),
                              ("4", 4, "4 CPUs (-smp 4)"),
                              ("8,threads=2", 8, "8 CPUs: 1 socket x 4 cores x 2 threads")):
        check(m.smp_words(spec, count) == want, f"-smp {spec}: {m.smp_words(spec, count)!r}")


@case("a series of one target count (the shorthand) is a marker on its backend's panel, "
      "not a panel of single points; coinciding curves are said to and drawn dashed")
def _(s):
    need(s, s.res_short)
    lines = figures(s.out_short)["scaling-broadcast-all-ack"]
    blocks = data_blocks(s.out_short, "scaling-broadcast-all-ack")
    plots = [ln for ln in lines if ln.startswith("plot ")]
    for p in plots:
        for title, c in titled(p):
            if "NaN" in c:
                continue
            check(len(block_rows(blocks, c)) > 1, f"{title!r} is a curve of one point")
    markers = [c for p in plots for c in clauses(p) if "with points" in c and "notitle" in c]
    check(len(markers) == 3, f"{len(markers)} shorthand markers, expected one per backend")
    for c in markers:
        check([r[0] for r in block_rows(blocks, c)] == [3.0], f"marker not at 3 targets: {c}")
    check(any(t == "shorthand (3 targets only)" for p in plots for t, _ in titled(p)),
          "the markers are not named in the legend")
    text = said(s.out_short, "scaling-broadcast-all-ack")
    check(re.search(r"coincide.*x2apic, unicast loop = x2apic-nmi, unicast loop", text),
          f"the coinciding x2apic and x2apic-nmi curves are not said to: {text}")
    nmi = [c for p in plots for t, c in titled(p) if t.startswith("x2apic-nmi")]
    check(nmi and all(" dt " in c for c in nmi), f"x2apic-nmi not dashed over x2apic: {nmi}")


@case("spread over boots: scaling error bars span min..max of the boots' p50; CDFs of "
      "several boots have the band the boots' CDFs span")
def _(s):
    need(s, s.res_short)
    lines = figures(s.out_short)["scaling-broadcast-all-ack"]
    blocks = data_blocks(s.out_short, "scaling-broadcast-all-ack")
    per = {}
    for boot in results_records(s.short):
        for r in boot:
            per.setdefault((r["backend"], r["variant"], r["ntargets"]), []).append(
                r["cycles"]["p50"])
    drawn = [(t, c) for p in lines if p.startswith("plot ") for t, c in titled(p)
             if "NaN" not in c]
    check(drawn, "no curves")
    for title, c in drawn:
        check("yerrorlines" in c and "using 1:2:3:4" in c, f"{title}: no error bars: {c}")
        backend, variant = title.split(", ")
        variant = {"unicast loop": "loop", "set send": "set"}[variant]
        for x, y, lo, hi in block_rows(blocks, c):
            vals = per[(backend, variant, round(x))]
            check(abs(lo - min(vals)) < 1e-6 and abs(hi - max(vals)) < 1e-6,
                  f"{title} at {round(x)}: bars {lo}..{hi}, the boots' p50 {sorted(vals)}")
    check("min..max of the boots' p50" in said(s.out_short, "scaling-broadcast-all-ack"),
          "the error bars are not said")
    dist = figures(s.out_short)["dist-broadcast-all-ack"]
    check(any("filledcurves" in c for p in dist if p.startswith("plot ") for c in clauses(p)),
          "no band of the boots' spread on the CDFs")


@case("PNG through pngcairo where gnuplot lists it, else through gnuplot's png terminal")
def _(s):
    need(s, s.res1)
    m = report_module("gnuplot")
    check(hasattr(m, "png_terminal"), "the report has no choice of PNG terminal")
    check(m.png_terminal("   png  PNG images\n   pngcairo  png terminal based on cairo\n") ==
          "pngcairo", "pngcairo not preferred")
    check(m.png_terminal("  png  PNG images using libgd\n  svg  W3C\n") == "png",
          "no fallback to png")
    check(m.png_terminal("  svg  W3C\n") is None, "a PNG terminal where none is listed")
    check(re.search(r"^set terminal pngcairo ", open(os.path.join(s.out1, "plots.gp")).read(),
                    re.M), "pngcairo listed here but not used")
    real = shutil.which("gnuplot")
    fake = os.path.join(s.tmp, "nocairo")
    os.makedirs(fake, exist_ok=True)
    with open(os.path.join(fake, "gnuplot"), "w") as f:
        f.write(f'#!/bin/sh\nif [ "$1" = "-e" ]; then "{real}" "$@" 2>&1 | grep -v pngcairo; '
                f'exit 0; fi\nexec "{real}" "$@"\n')
    os.chmod(os.path.join(fake, "gnuplot"), 0o755)
    out = os.path.join(s.tmp, "png-report")
    expect(run_cmd(TOOL + ["report", s.small, "--out", out],
                   env={"PATH": fake + os.pathsep + os.environ["PATH"]}), 0, "plots")
    gp = open(os.path.join(out, "plots.gp")).read()
    check(re.search(r"^set terminal png size ", gp, re.M) and "pngcairo" not in gp,
          "without pngcairo the plain png terminal is not used")
    for name in figures(out):
        check(png_ok(os.path.join(out, name + ".png")) is None, f"{name}.png: bad PNG")


def panels(lines):
    """[(panel title, plot line)] of a figure's panels."""
    out, ptitle = [], None
    for ln in lines:
        m = re.match(r'set title "(.*)"$', ln)
        if m:
            ptitle = m.group(1)
        elif ln.startswith("plot "):
            out.append((ptitle, ln))
    return out


@case("before and after: each baseline curve on its candidate's panel, the scaling panels on "
      "one y scale, the heatmaps side by side on one colour scale; one set keeps its own")
def _(s):
    need(s, s.res)
    figs = figures(s.out)
    for name in ("dist-self-send-to-handler", "dist-broadcast-all-ack",
                 "scaling-broadcast-all-ack"):
        for ptitle, p in panels(figs[name]):
            check(not re.search(r"before|after", ptitle or ""),
                  f"{name}: a panel of one side: {ptitle!r}")
            titles = [t for t, _ in titled(p)]
            for t in titles:
                role = t.rsplit(", ", 1)[-1]
                check(role in ("baseline", "candidate"), f"{name}: {t!r} names no side")
                other = t[:-len(role)] + ("candidate" if role == "baseline" else "baseline")
                check(other in titles, f"{name}: {t!r} without {other!r} on its panel")
        text = title_text(figs[name])
        check("baseline: before/x2apic-smp4" in text and "candidate: after/x2apic-smp4" in text,
              f"{name}: the title does not name the sides: {text}")
    scaling = figs["scaling-broadcast-all-ack"]
    ranges = [ln for ln in scaling if ln.startswith("set yrange")]
    top = max(v for b in data_blocks(s.out, "scaling-broadcast-all-ack") for row in
              b.splitlines() if row.strip() for v in map(float, row.split()[1:]))
    m = re.fullmatch(r"set yrange \[0:([\d.]+)\]", ranges[0])
    check(len(ranges) == 1 and m and float(m.group(1)) >= top and len(panels(scaling)) > 1,
          f"scaling: {ranges} for {len(panels(scaling))} panels, highest value {top}")
    check("set yrange [0:*]" in figures(s.out_short)["scaling-broadcast-all-ack"],
          "one set's scaling panels lost their own y range")
    check("set multiplot layout 1,1" in "\n".join(figs["kut"]),
          "kut: before and after on more than one panel")
    need(s, s.res_mat2)
    lines = figures(s.out_mat2)["matrix"]
    got = [t for t, _ in panels(lines)]
    want = [f"{b}, {role} ({side}/x2apic-smp3)" for b in ("x2apic", "xapic")
            for role, side in (("baseline", "matrix"), ("candidate", "matrix2"))]
    check(got == want and "set multiplot layout 2,2" in "\n".join(lines),
          f"heatmaps {got}, expected {want} in two columns")
    check(sum(ln.startswith("set cbrange") for ln in lines) == 1, "more than one colour scale")


def title_rows(lines):
    """The rows of a figure's own title (its multiplot title)."""
    m = re.search(r'^set multiplot layout \S+ title "(.*)"$', "\n".join(lines), re.M)
    check(m, "no figure title")
    return m.group(1).split("\\n")


@case("titles: at most two lines on every figure; the caption under it holds the rest, on "
      "the page and in report.md")
def _(s):
    m = report_module("gnuplot")
    check(m.split_title(["head", "x " * 150, "short"], 960) == (["head"], ["x " * 150, "short"]),
          f"a line that does not fit, and those after it: {m.split_title(['head', 'x ' * 150, 'short'], 960)}")
    check(m.split_title(["head", "two", "three"], 960) == (["head", "two"], ["three"]),
          "three short lines")
    rows, rest = m.split_title(["y" * 400, "two"], 960)
    check(len(rows) == 2 and rows[1].endswith(" ...") and rest == ["y" * 400, "two"],
          f"a head too long for two rows: {rows} {rest}")
    for out, res in s.reports:
        need(s, res)
        for name, lines in figures(out).items():
            rows = title_rows(lines)
            check(len(rows) <= 2, f"{os.path.basename(out)}/{name}: {len(rows)} title rows: {rows}")
    for name, lines in figures(s.out).items():
        cap = caption(s.out, name)
        # A comparison's second line names the sides: what ran goes under it.
        check("guest 4 CPUs" in cap and "guest 4 CPUs" not in title_text(lines),
              f"{name}: what ran is not in the caption alone: {cap}")
    md = open(os.path.join(s.out, "report.md")).read()
    check(re.search(r"\(dist-self-send-to-handler\.png\)\n\n(- .*\n)*- shaded: the range", md),
          "report.md: no caption list under the distribution")


@case("by default a report goes to RESULTS/reports/NAMES, never into an input's folder")
def _(s):
    m = report_module("inputs")
    name = m.report_name(["r/DATE-before/x2apic-smp4", "r/DATE-after/x2apic-smp4"])
    check(name == "DATE-before-x2apic-smp4-vs-DATE-after-x2apic-smp4", name)
    check(m.report_name(["r/DATE-matrix/x2apic-smp4"], ("xapic", "x2apic")) ==
          "DATE-matrix-x2apic-smp4-xapic-vs-x2apic", "one input with --pair")
    check(m.report_name(["a/same/x", "b/same/x"]) == "a-same-x-vs-b-same-x", "shared names")
    longs = [m.report_name([f"r/{c * 80}/x", "r/y"]) for c in "pq"]
    check(all(len(n) <= m.NAME_MAX for n in longs) and longs[0] != longs[1], f"long: {longs}")
    res = os.path.join(s.tmp, "results-root")
    check(m.default_out(["r/a", "r/b"], environ={"IPIBENCH_RESULTS": res}) ==
          os.path.join(res, "reports", "r-a-vs-r-b"), "not under IPIBENCH_RESULTS")
    try:
        m.default_out([s.tmp], environ={"IPIBENCH_RESULTS": res})
        raise Fail("a default folder within an input is taken")
    except ToolError as e:
        check(e.code == 2 and "--out" in e.message, e.message)
    before = sorted(os.path.join(d, f) for d, _, fs in os.walk(s.small) for f in fs)
    expect(tool("report", s.small, env={"IPIBENCH_RESULTS": res}), 0, "plots")
    out = os.path.join(res, "reports", m.report_name([s.small]))
    check(os.path.isfile(os.path.join(out, "index.html")), f"no page in {out}")
    after = sorted(os.path.join(d, f) for d, _, fs in os.walk(s.small) for f in fs)
    check(before == after, f"the input's folder changed: {sorted(set(after) - set(before))[:3]}")


# --- on the shared synthetic sets (fixtures.Sets)


def check_plots(out, names):
    for name in names:
        for ext, ok in (("svg", svg_ok), ("png", png_ok)):
            p = os.path.join(out, f"{name}.{ext}")
            check(os.path.isfile(p) and os.path.getsize(p) > 0, f"{p} missing or empty")
            why = ok(p)
            check(why is None, f"{p}: {why}")


@set_case("report: distributions, scaling and A/B plots as valid SVG and PNG, and the pages")
def _(s):
    if not shutil.which("gnuplot"):
        raise Fail("gnuplot missing (tools/deps.sh test installs gnuplot-nox)")
    out = os.path.join(s.tmp, "report")
    expect(tool("report", s.base, s.slow, "--out", out), 0, "plots")
    names = ["dist-single-round-trip", "dist-broadcast-all-ack", "scaling-broadcast-all-ack", "ab"]
    check_plots(out, names)
    page = open(os.path.join(out, "index.html")).read()
    for n in names:
        check(f'src="{n}.svg"' in page, f"index.html does not show {n}")
    check("<td>round-trip</td>" in page and "<td>slower</td>" in page,
          "comparison table missing from the page")
    md = open(os.path.join(out, "report.md")).read()
    check("![" in md and "| single | round-trip |" in md, "report.md")
    check(not [f for f in os.listdir(out) if f.startswith(".")], "temporaries left")
    out1 = os.path.join(s.tmp, "report1")
    expect(tool("report", s.base, "--out", out1), 0)
    check(not os.path.exists(os.path.join(out1, "ab.svg")), "A/B plot without two inputs")
    expect(tool("report", s.disjoint, s.base, "--out", os.path.join(s.tmp, "r3")), 0)
    expect(tool("report", os.path.join(s.tmp, "nope")), EX_MISSING)


# --- history --report (host/ipibench/history_plot.py), on test_history's series


HISTORY_FIG = "history-" + SLOW.replace("/", "-")


def panel_commands(lines):
    """[[commands]] of a history figure's panels: each starts at 'unset arrow'."""
    out = []
    for ln in lines:
        if ln == "unset arrow":
            out.append([])
        elif out:
            out[-1].append(ln)
    return out


def arrows(commands):
    """[(x, colour)] of a panel's vertical lines."""
    return [(float(m.group(1)), m.group(2)) for m in
            (re.match(r"set arrow from ([\d.]+),graph 0 .* lc rgb '([^']+)'", c)
             for c in commands) if m]


def slow_p50s(runs):
    """SLOW's p50 in each run of one boot, as its results.json holds it."""
    out = []
    for run in runs:
        recs = results_records(run)[0]
        out.append(next(r["cycles"]["p50"] for r in recs if
                        (r["bench"], r["metric"], r["variant"], r["backend"], r["target_state"],
                         r["ntargets"]) == SLOW_KEY))
    return out


@set_case("history --report: the row that changed drawn over the runs, the run's values and "
          "levels as the results hold them, each change a red line where it starts; the page "
          "lists the changes and links the figure; --report-all draws every row")
def _(s):
    if not shutil.which("gnuplot"):
        raise Fail("gnuplot missing (tools/deps.sh test installs gnuplot-nox)")
    runs = series(os.path.join(s.tmp, "history-plot"), 12, step_at=6, kernel_at=6,
                  exits=[1.0] * 9 + [2.0] * 3)
    out = os.path.join(s.tmp, "history-report")
    expect(tool("history", *runs, "--report", out), EX_REGRESSION,
           f"history: 1 figures (SVG and PNG) and {out}/index.html")
    figs = figures(out)
    check(list(figs) == [HISTORY_FIG], f"figures {sorted(figs)}, expected {HISTORY_FIG} alone")
    check_plots(out, [HISTORY_FIG])
    timing, exits = panel_commands(figs[HISTORY_FIG])
    red = "#" + report_module("ab").COLOURS["slower"][2:]
    check(arrows(timing) == [(6.5, red)] and arrows(exits) == [(9.5, red)],
          f"change lines: timing {arrows(timing)}, exits {arrows(exits)}; expected red at 6.5 "
          "(run06 the first slower) and 9.5 (run09 the first with 2 exits)")
    blocks = data_blocks(out, HISTORY_FIG)
    plot = next(c for c in timing if c.startswith("plot "))
    values = block_rows(blocks, next(c for c in clauses(plot) if "yerrorlines" in c))
    p50 = slow_p50s(runs)
    check([r[0] for r in values] == list(range(1, 13)) and
          all(abs(r[1] - v) < 1e-6 for r, v in zip(values, p50)),
          f"drawn {values}, the runs' p50 {p50}")
    levels = block_rows(blocks, next(c for c in clauses(plot) if "histeps" in c))
    lo, hi = sorted(p50[:6]), sorted(p50[6:])
    want = [(lo[2] + lo[3]) / 2] * 6 + [(hi[2] + hi[3]) / 2] * 6
    check(all(abs(r[1] - w) < 1e-6 for r, w in zip(levels, want)) and len(levels) == 12,
          f"levels {[r[1] for r in levels]}, the medians either side {want[0]}, {want[-1]}")
    check(len(title_rows(figs[HISTORY_FIG])) <= 2, "history title of more than two rows")
    bad = geometry_problems(os.path.join(out, HISTORY_FIG + ".svg"))
    check(not bad, f"{HISTORY_FIG}.svg: " + "; ".join(bad[:4]))
    cap = caption(out, HISTORY_FIG)
    check("timing" in cap and f"from {runs[6]}; on the host: host kernel:" in cap and
          "sender exits 1.00 -> 2.00 per iteration" in cap, f"caption: {cap}")
    page = open(os.path.join(out, "index.html")).read()
    check(f"<td>REGRESSION</td><td>{SLOW}</td><td>timing</td>" in page and
          f"<td>{runs[6]}</td><td>6.9.0</td>" in page and
          f'href="{HISTORY_FIG}.svg"' in page, "index.html: no change listed or figure linked")
    # The page opens with the verdict; the most severe change comes first
    # (a whole exit more weighs as +100%, the timing step +10%).
    check(page.index("Verdict: REGRESSION in 2 figures") < page.index("<h2>") and
          page.index("<td>sender exits</td>") < page.index("<td>timing</td>"),
          "index.html: the verdict not first, or the changes not by severity")
    md = open(os.path.join(out, "report.md")).read()
    check(f"| REGRESSION | {SLOW} | sender exits |" in md and f"]({HISTORY_FIG}.png)" in md and
          md.index("**Verdict: REGRESSION in 2 figures.**") < md.index("## "),
          "report.md: no verdict first, change listed or figure linked")
    every = os.path.join(s.tmp, "history-report-all")
    expect(tool("history", *runs, "--report", every, "--report-all"), EX_REGRESSION)
    check(len(figures(every)) == len(synth.ROWS),
          f"--report-all: {len(figures(every))} figures, {len(synth.ROWS)} rows")


@set_case("history --report: a step that dwarfs the baseline (ten times or more) draws the timing "
          "panel on a log axis, with 1-2-5 ticks and no scientific notation; a small one on a "
          "linear axis from 0")
def _(s):
    from ipibench import history_plot as HP
    small = [(1, 1000.0, 990.0, 1010.0), (2, 1100.0, 1090.0, 1110.0)]
    check(HP.y_axis(small, 1) == ["unset logscale y", "set ytics autofreq", "set yrange [0:*]"],
          f"{HP.y_axis(small, 1)}")
    big = [(1, 1000.0, 990.0, 1010.0), (2, 2.0e5, 1.9e5, 2.1e5)]
    cmds = HP.y_axis(big, 1e3)
    check(cmds[0] == "set logscale y" and cmds[1].startswith("set ytics (") and
          "e+" not in cmds[1] and cmds[2].startswith("set yrange [0.825:"), f"{cmds}")


@set_case("history --report: no gnuplot is exit 9 before any run is read; --report-all alone "
          "is exit 2; with --store, each series the runs were filed in")
def _(s):
    fake = os.path.join(s.tmp, "no-gnuplot")
    os.makedirs(fake, exist_ok=True)
    for tool_name in ("bash", "python3", "dirname"):
        os.symlink(shutil.which(tool_name), os.path.join(fake, tool_name))
    out = os.path.join(s.tmp, "history-nognuplot")
    expect(tool("history", "no-such-run-1", "no-such-run-2", "--report", out,
                env={"PATH": fake}), 9, "gnuplot is missing")
    check(not os.path.exists(out), "a page without gnuplot")
    expect(tool("history", s.base, s.same, "--report-all"), 2, "--report-all")
    if not shutil.which("gnuplot"):
        raise Fail("gnuplot missing (tools/deps.sh test installs gnuplot-nox)")

    def night(i, doc):
        doc["run"].update(started=f"2026-01-{i + 1:02d}T03:00:00Z", config="x2apic-smp2")
    runs = series(os.path.join(s.tmp, "history-plot-nights"), 4, exits=[1.0, 1.0, 2.0, 2.0],
                  edit=night)
    root, out = os.path.join(s.tmp, "history-plot-store"), os.path.join(s.tmp, "store-report")
    expect(tool("history", "--store", root, *runs, "--report", out), EX_REGRESSION)
    figs = figures(out)
    check(list(figs) == [HISTORY_FIG], f"figures {sorted(figs)}")
    check([a for p in panel_commands(figs[HISTORY_FIG]) for a in arrows(p)] ==
          [(2.5, "#" + report_module("ab").COLOURS["slower"][2:])], "the exit step of night 3")
    check(f"<h2>{synth.HOST_SERIES}/x2apic-smp2</h2>" in
          open(os.path.join(out, "index.html")).read(), "the series is not named on the page")


def main():
    # --case picks among both lists of cases.
    chosen = selected(CASES + SET_CASES)
    bad = 0
    if any(c in CASES for c in chosen):
        tmp = tempfile.mkdtemp(prefix="ipibench-report-")
        try:
            bad = run_cases([c for c in chosen if c in CASES], "report", Sets(tmp), select=False)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    bad += fixtures.run([c for c in chosen if c in SET_CASES], select=False)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

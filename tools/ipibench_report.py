# SPDX-License-Identifier: GPL-2.0-only
"""run.sh report: plots drawn by gnuplot (SVG and PNG) and a page that shows
them beside the tables (index.html, report.md). docs/host-tools.md, "report".

- latency distribution: for each benchmark and metric, one curve per backend
  (and variant, target state, configuration), the share of samples in each
  histogram bucket;
- scaling: for each benchmark measured at several target counts, the median
  p50 against the target count, one curve per backend;
- kvm-unit-tests view: for each x86/vmexit.c name the guest reports, one bar
  per backend (with two inputs, baseline and candidate side by side): the
  median over boots of the mean per iteration, min..max over boots as an
  error bar;
- A/B: with two inputs, the change of every compared row, coloured by the
  significance verdict, with its bootstrap confidence interval; with --pair
  X=Y, backend X's rows (baseline) against backend Y's (candidate), through
  the same comparison compare --pair prints.

Every curve is drawn: a figure with more than PANEL_MAX curves becomes small
multiples (one panel per backend, or per configuration and backend), and no
two curves of a panel share a colour or a marker. Tick values are chosen here
(1-2-5 steps on the log axes) and printed with a fixed format, the scale and
unit in the axis label; legends sit outside the graphs. Plots are written
under temporary names and renamed once gnuplot succeeded.
"""
import datetime
import html
import math
import os
import re
import shutil
import subprocess

import ipibench_results as R

COLOURS = {"slower": "0xc0392b", "faster": "0x27ae60", "other": "0x95a5a6"}
# Ten colours told apart on screen and paper (Tableau 10, yellow-green last)
# and ten marker shapes (gnuplot's filled and open point types).
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b",
           "#e377c2", "#17becf", "#7f7f7f", "#bcbd22")
# The pale partner of each (Tableau 20): a candidate's bar beside its baseline's.
PALE = ("#aec7e8", "#ff9896", "#98df8a", "#ffbb78", "#c5b0d5", "#c49c94",
        "#f7b6d2", "#9edae5", "#c7c7c7", "#dbdb8d")
MARKERS = (7, 5, 9, 11, 13, 6, 4, 8, 10, 12)
PANEL_MAX = 8                  # curves in one panel; more become small multiples
PANEL_W, PANEL_H = 640, 400    # pixels of one panel
MAX_BARS = 120                 # rows in the A/B chart (the largest changes)
BAR_PX = 16                    # pixels per A/B row: above the label font's height
KUT_PX = 11                    # pixels per bar of the kvm-unit-tests view
TAIL_SHARE = 1.0               # % of samples: the x axis ends where no curve
                               # holds more than this beyond it
FONT_SVG, FONT_PNG = 11, 10


def slug(*parts):
    return re.sub(r"[^a-zA-Z0-9]+", "-", "-".join(map(str, parts))).strip("-").lower()


def gp_str(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', "'") + '"'


def gp_lines(lines):
    """One gnuplot string of several lines (a title)."""
    return '"' + "\\n".join(str(t).replace("\\", "\\\\").replace('"', "'")
                            for t in lines) + '"'


class Plot:
    """lines: gnuplot commands that draw the whole figure on a fresh terminal
    of size (width, height) pixels; run once for SVG and once for PNG."""

    def __init__(self, name, title, lines, caption, size):
        self.name, self.title, self.lines, self.caption = name, title, lines, caption
        self.size = size


def load_sets(inputs):
    """[(name, boots)]: one per input, or one per configuration of a matrix
    (named INPUT/CONFIG)."""
    sets = []
    for path in inputs:
        boots = R.load_set(path)
        groups = R.split_by_config(boots)
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


# --- curves, panels and their styles

FIELDS = ("set", "backend", "variant", "state")


def curve(set_name, key, points):
    _, _, variant, backend, state, _ = key
    return {"f": {"set": set_name, "backend": str(backend), "state": str(state),
                  "variant": "" if variant in ("none", None) else str(variant)},
            "points": points}


def panels_of(curves):
    """(fields, [(panel title, [curve])]): one panel when the curves fit in
    one, else small multiples by the fields that give the fewest panels of at
    most PANEL_MAX curves (by backend, by variant, ...); if none does, by
    configuration and backend, each panel cut in even pieces."""
    best = None
    for by in ((), ("backend",), ("variant",), ("set",), ("set", "backend"),
               ("set", "variant"), ("backend", "variant")):
        groups = {}
        for c in curves:
            groups.setdefault(tuple(c["f"][k] for k in by), []).append(c)
        if max(len(g) for g in groups.values()) <= PANEL_MAX and \
                (best is None or len(groups) < len(best[1])):
            best = (by, groups)
    if best is None:
        by = ("set", "backend")
        groups = {}
        for c in curves:
            groups.setdefault(tuple(c["f"][k] for k in by), []).append(c)
        best = (by, groups)
    by, groups = best
    panels = []
    for values, cs in groups.items():
        title = " ".join(v for v in values if v)
        count = -(-len(cs) // PANEL_MAX)
        size = -(-len(cs) // count)
        for j in range(count):
            more = f" ({j + 1} of {count})" if count > 1 else ""
            panels.append((title + more, cs[j * size:(j + 1) * size]))
    return by, panels


def label_curves(curves, by):
    """Each curve's legend title: the fields that vary in the figure and are
    not the panel's; returns the fields common to every curve."""
    same = [k for k in FIELDS if len({c["f"][k] for c in curves}) == 1]
    shown = [k for k in FIELDS if k not in same and k not in by]
    for c in curves:
        c["label"] = " ".join(c["f"][k] for k in shown if c["f"][k]) or \
            " ".join(c["f"][k] for k in FIELDS if c["f"][k])
    return [curves[0]["f"][k] for k in same if curves[0]["f"][k]]


def style_curves(panels):
    """A colour and a marker per curve, never shared within a panel; the same
    legend title keeps its style across panels when the palette allows."""
    labels = list(dict.fromkeys(c["label"] for _, cs in panels for c in cs))
    shared = len(labels) <= len(PALETTE)
    for _, cs in panels:
        for i, c in enumerate(cs):
            n = labels.index(c["label"]) if shared else i
            c["style"] = f"lc rgb '{PALETTE[n]}' pt {MARKERS[n]}"


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


def figure(name, title_lines, panels, data_dir, common, per_panel=None):
    """Plot of panels [(title, [curve])]: the data file, the multiplot
    commands and the canvas size; common: settings shared by every panel."""
    blocks, n = [], 0
    plots = []
    for ptitle, cs in panels:
        clauses = []
        for c in cs:
            blocks.append("\n".join(f"{p[0]:.6g} {p[1]:.6g}" if p else "" for p in c["points"]))
            clauses.append(f"{gp_str('data/' + name + '.dat')} index {n} using 1:2 with "
                           f"linespoints {c['style']} ps 0.7 title {gp_str(c['label'])}")
            n += 1
        plots += [f"set title {gp_str(ptitle)}"] + (per_panel or []) + \
            ["plot " + ", ".join(clauses)]
    R.replace_file(os.path.join(data_dir, name + ".dat"), "\n\n\n".join(blocks) + "\n")
    cols = 1 if len(panels) == 1 else 2
    rows = -(-len(panels) // cols)
    width = 960 if cols == 1 else cols * PANEL_W
    height = (540 if rows == 1 and cols == 1 else rows * PANEL_H) + 18 * len(title_lines)
    lines = common + ["set key below height 1", "set grid",
                      f"set multiplot layout {rows},{cols} title {gp_lines(title_lines)}"] + \
        plots + ["unset multiplot"]
    return lines, (width, height)


def figure_title(head, curves, by, npanels):
    common = label_curves(curves, by)
    line = f"{len(curves)} curves"
    if npanels > 1:
        line += f" in {npanels} panels (by {', '.join(by)})"
    if common:
        line += ", all " + " ".join(common)
    return [head, line]


# --- the plots


def bucket_x(low, high):
    if low <= 0:
        return max(high, 1) / 2
    return (low * high) ** 0.5


def dist_points(histo):
    """(x, % of samples) per bucket of a pooled histogram; None where empty
    buckets lie between two (the line breaks there instead of spanning them)."""
    buckets = {}
    for low, high, count in histo:
        b = buckets.setdefault(low, [high, 0])
        b[1] += count
    total = sum(c for _, c in buckets.values())
    if total <= 0:
        return []
    points, prev = [], None
    for low, (high, count) in sorted(buckets.items()):
        if prev is not None and low > prev + 1:
            points.append(None)
        points.append((bucket_x(low, high), 100.0 * count / total))
        prev = high
    return points


def dist_range(curves, share):
    """(lo, hi, tail): the x range from the smallest bucket to where every
    curve holds share % of its samples, and the largest % of a curve beyond."""
    lo = min(p[0] for c in curves for p in c["points"] if p)
    hi = lo
    for c in curves:
        cum = 0.0
        for p in filter(None, c["points"]):
            cum += p[1]
            if cum >= share:
                hi = max(hi, p[0])
                break
    lo, hi = lo / 1.15, hi * 1.15
    tail = max(sum(p[1] for p in c["points"] if p and p[0] > hi) for c in curves)
    return lo, hi, tail


def dist_plots(sides, names, data_dir, unit):
    plots = []
    groups = {}
    for side in sides:
        for key in side.histos:
            groups.setdefault(key[:2], set()).add(key[5])
    for (bench, metric), ntargets in sorted(groups.items()):
        nmax = max(ntargets)
        curves = []
        for side, sname in zip(sides, names):
            for key in sorted(side.histos, key=R.row_order):
                if key[:2] == (bench, metric) and key[5] == nmax:
                    points = dist_points(side.histos[key])
                    if points:
                        curves.append(curve(sname, key, points))
        if not curves:
            continue
        lo, hi, tail = dist_range(curves, 100.0 - TAIL_SHARE)
        div, axis_unit = axis_scale(hi, unit)
        name = slug("dist", bench, metric)
        by, panels = panels_of(curves)
        label_curves(curves, by)
        style_curves(panels)
        title = figure_title(f"{bench} / {metric}: latency distribution, {nmax} target(s), "
                             "share of samples per histogram bucket", curves, by, len(panels))
        if tail > 0:
            title.append(f"x axis ends at {num(hi / div)} {axis_unit}; beyond it lie at "
                         f"most {tail:.2f}% of a curve's samples (the data under data/)")
        common = ["set logscale x 10", f"set xrange [{lo:.6g}:{hi:.6g}]",
                  gp_tics("x", log_ticks(lo, hi, div)),
                  f"set xlabel {gp_str(axis_unit + ', log scale')}",
                  "set ylabel '% of samples'", "set yrange [0:*]", "set format y '%g'"]
        lines, size = figure(name, title, panels, data_dir, common)
        cap = f"{bench} / {metric}: share of samples per histogram bucket, {len(curves)} curves"
        plots.append(Plot(name, f"{bench} / {metric} distribution", lines, cap, size))
    return plots


def int_ticks(lo, hi):
    step = max(1, math.ceil((hi - lo + 1) / 10))
    return [(str(n), n) for n in range(lo, hi + 1, step)]


def scaling_plots(sides, names, data_dir, unit):
    plots = []
    groups = {}
    for side, sname in zip(sides, names):
        for key, vals in side.values.items():
            if vals:
                groups.setdefault(key[:2], {}).setdefault((sname,) + key[2:5], {})[key[5]] = \
                    R.median(vals)
    for (bench, metric), series in sorted(groups.items()):
        counts = {n for pts in series.values() for n in pts if isinstance(n, int)}
        if len(counts) < 2:
            continue
        top = max(v for pts in series.values() for v in pts.values())
        div, axis_unit = axis_scale(top, unit)
        curves = []
        for s, pts in sorted(series.items(), key=lambda s: tuple(map(str, s[0]))):
            points = [(n, v / div) for n, v in sorted(pts.items()) if isinstance(n, int)]
            curves.append(curve(s[0], (None, None) + s[1:] + (None,), points))
        name = slug("scaling", bench, metric)
        by, panels = panels_of(curves)
        label_curves(curves, by)
        style_curves(panels)
        title = figure_title(f"{bench} / {metric}: median p50 against the number of targets",
                             curves, by, len(panels))
        common = ["set xlabel 'targets'", f"set ylabel {gp_str('median p50, ' + axis_unit)}",
                  f"set xrange [{min(counts) - 0.3}:{max(counts) + 0.3}]",
                  gp_tics("x", int_ticks(min(counts), max(counts))),
                  "set yrange [0:*]", "set format y '%g'"]
        lines, size = figure(name, title, panels, data_dir, common)
        plots.append(Plot(name, f"{bench} / {metric} scaling", lines,
                          f"{bench} / {metric}: median p50 against the number of targets, "
                          f"{len(curves)} curves", size))
    return plots


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
            values.setdefault(key, []).append(R.median(vs))
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
                rows.append(f"{y} {R.median(vals) / div:.6g} {min(vals) / div:.6g} "
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
    med = num(R.median(vals))
    return med if len(vals) == 1 else f"{med} ({num(min(vals))}..{num(max(vals))})"


def kut_view(sets, names, data_dir, unit):
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
    R.replace_file(os.path.join(data_dir, "kut.dat"), "\n\n\n".join(blocks) + "\n")
    lines, size = kut_canvas(kut_title(views), panels, plots_cmds, axis_unit)
    tables = [(ptitle, ["x86/vmexit.c name"] + [s["label"] for s in series],
               [[k] + [kut_cell(s["values"].get(k)) for s in series] for k in knames])
              for ptitle, knames, series in panels]
    cap = (f"kvm-unit-tests view: mean {axis_unit} per iteration of each x86/vmexit.c name, "
           "one bar per backend" + (", baseline and candidate side by side"
                                    if len(views) == 2 else "") +
           ", median over boots, min..max over boots as error bars")
    return [Plot("kut", "kvm-unit-tests view", lines, cap, size)], tables, notes


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
    """(commands, size): the panels in one or two columns, each tall enough
    for its bars and legend rows."""
    cols = 1 if len(panels) == 1 else 2
    rows = -(-len(panels) // cols)
    width = 1024 if cols == 1 else cols * PANEL_W
    height = max(kut_panel_height(n, s, width // cols) for _, n, s in panels) * rows + \
        18 * len(title)
    lines = ["set style fill solid 0.85 border -1", "set grid xtics", "set ytics nomirror scale 0",
             "set xrange [0:*]", "set format x '%g'",
             f"set xlabel {gp_str('mean per iteration, ' + axis_unit + ' (median over boots)')}",
             "set key below horizontal height 1",
             f"set multiplot layout {rows},{cols} title {gp_lines(title)}"] + \
        plots_cmds + ["unset multiplot"]
    return lines, (width, height)


def bar_plot(cmp, data_dir, names):
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
    R.replace_file(os.path.join(data_dir, "ab.dat"), "\n".join(out) + "\n")
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
                 + largest, f"baseline A: {a} ({len(cmp.sa.boots)} boots)",
                 f"candidate B: {b} ({len(cmp.sb.boots)} boots)"]
        xlabel = f"change of B against A, % of A ({cmp.unit} p50)"
        what = f"baseline A {a}, candidate B {b}"
    longest = max(len(r.name) for r in rows)
    lines = ["set style fill solid 0.7 border -1", f"set lmargin {longest + 3}",
             "set grid xtics", "set yzeroaxis lt -1", "set ytics nomirror scale 0",
             f"set yrange [-0.6:{len(rows) - 0.4}]", "set format x '%+g%%'",
             f"set xlabel {gp_str(xlabel)}",
             "set key below horizontal height 1", f"set title {gp_lines(title)}",
             "plot 'data/ab.dat' using 3:1:(($3<0)?$3:0):(($3<0)?0:$3):($1-0.35):($1+0.35):6"
             ":ytic(2) with boxxyerror lc rgb variable notitle, "
             "'' using 3:1:4:5 with xerrorbars lc rgb 'black' pt -1 title '95% CI', "
             f"NaN with boxes lc rgb '#{COLOURS['slower'][2:]}' title 'slower (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['faster'][2:]}' title 'faster (significant)', "
             f"NaN with boxes lc rgb '#{COLOURS['other'][2:]}' title 'not significant'"]
    return [Plot("ab", "A/B comparison" + (f": {what}" if cmp.pair else ""), lines,
                 f"change of each compared row, {what}, with its bootstrap 95% confidence "
                 "interval", (1024, 190 + BAR_PX * len(rows)))]


def run_gnuplot(out, plots):
    gnuplot = shutil.which("gnuplot")
    if not gnuplot:
        raise R.ToolError(R.EX_DEPS, "gnuplot is missing (Debian package gnuplot-nox; "
                          "tools/deps.sh report installs it)")
    script = ["set encoding utf8"]
    for p in plots:
        w, h = p.size
        for ext, term in (("svg", f"svg size {w},{h} dynamic noenhanced font 'sans,{FONT_SVG}' "
                                  "background 'white'"),
                          ("png", f"pngcairo size {w},{h} noenhanced font 'sans,{FONT_PNG}'")):
            script += ["reset", f"set terminal {term}",
                       f"set output {gp_str(f'.{p.name}.{ext}.tmp')}"] + p.lines + \
                ["unset output"]
    R.replace_file(os.path.join(out, "plots.gp"), "\n".join(script) + "\n")
    proc = subprocess.run([gnuplot, "plots.gp"], cwd=out, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise R.ToolError(1, "gnuplot failed: " + proc.stdout.strip()[-500:])
    for p in plots:
        for ext in ("svg", "png"):
            os.replace(os.path.join(out, f".{p.name}.{ext}.tmp"),
                       os.path.join(out, f"{p.name}.{ext}"))


def facts_lines(sets):
    out = []
    for name, boots in sets:
        h = boots[0].host
        kvm = " ".join(f"{k}={v}" for k, v in h.get("kvm_params", {}).items()) or "-"
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
        body += [f"<p><b>warning</b>: {e(w)}</p>" for w in cmp.after_x2apic_lines()]
        body += html_table(R.table_head(cmp), R.table_rows(cmp))
        body += [f"<p>{e(line)}</p>" for line in R.legend(cmp)]
    if kut_tables:
        body += ["<h2>kvm-unit-tests view</h2>", f"<p>{e(KUT_CAPTION.format(unit=unit))}</p>"]
        for ktitle, head, rows in kut_tables:
            body += ([f"<h3>{e(ktitle)}</h3>"] if ktitle else []) + html_table(head, rows)
    for p in plots:
        body += [f"<h2>{e(p.title)}</h2>", f'<p><img src="{p.name}.svg" alt="{e(p.caption)}">'
                 f'<br>{e(p.caption)} (<a href="{p.name}.png">PNG</a>)</p>']
    style = ("body{font-family:sans-serif;max-width:1100px;margin:auto}"
             "table{border-collapse:collapse;font-size:90%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{e(title)}</title><style>{style}</style></head><body>\n"
            + "\n".join(body) + "\n</body></html>\n")


def page_markdown(title, sets, cmp, plots, notes, kut_tables=(), unit="cycles"):
    lines = [f"# {title}", ""] + md_table(FACT_HEAD, facts_lines(sets))
    lines += [""] + [f"**{n}**\n" for n in notes]
    if cmp is not None:
        lines += ["## Comparison", "", R.format_markdown(cmp)]
    if kut_tables:
        lines += ["## kvm-unit-tests view", "", KUT_CAPTION.format(unit=unit) + ".", ""]
        for ktitle, head, rows in kut_tables:
            lines += ([f"### {ktitle}", ""] if ktitle else []) + md_table(head, rows) + [""]
    for p in plots:
        lines += [f"## {p.title}", "", f"![{p.caption}]({p.name}.png)", ""]
    return "\n".join(lines) + "\n"


def default_out(first):
    if os.path.isdir(first):
        return os.path.join(first, "report")
    return os.path.join(os.path.dirname(os.path.abspath(first)), "report")


def pair_comparison(sets, pair, alpha, unit):
    """report --pair X=Y: compare --pair's comparison, backend X of the first
    set against backend Y of the last (the same set when there is one)."""
    if len(sets) > 2:
        raise R.ToolError(R.EX_USAGE, f"--pair compares within one set or across "
                          f"two, not {len(sets)} ({', '.join(n for n, _ in sets[:4])}"
                          f"{', ...' if len(sets) > 4 else ''}): give one configuration folder")
    (a_name, a_boots), (b_name, b_boots) = sets[0], sets[-1]
    cmp = R.Comparison(f"{a_name} [{pair[0]}]", a_boots, f"{b_name} [{pair[1]}]", b_boots,
                       alpha, unit, pair)
    err = cmp.overlap_error()
    if err:
        raise err
    return cmp


def report(a):
    sets = load_sets(a.inputs)
    sides = [R.Side(name, boots, a.unit) for name, boots in sets]
    if not any(s.keys() for s in sides):
        raise R.ToolError(R.EX_NO_OVERLAP, "nothing to plot: no result records in "
                          + ", ".join(a.inputs))
    cmp, notes = None, []
    pair = getattr(a, "pair", None)
    if pair:
        cmp = pair_comparison(sets, pair, a.alpha, a.unit)
    elif len(sets) == 2:
        cmp = R.Comparison(sets[0][0], sets[0][1], sets[1][0], sets[1][1], a.alpha, a.unit)
        err = cmp.overlap_error()
        if err:
            notes.append(err.message)
            cmp = None
    out = a.out or default_out(a.inputs[0])
    data = os.path.join(out, "data")
    os.makedirs(data, exist_ok=True)
    names = display_names([s.name for s in sides])
    plots = dist_plots(sides, names, data, a.unit) + scaling_plots(sides, names, data, a.unit)
    if not any(p.name.startswith("scaling") for p in plots):
        notes.append("no scaling curve: no benchmark was measured at more than one target count")
    kut_plots, kut_tables, kut_notes = kut_view(sets, names, data, a.unit)
    plots += kut_plots
    notes += kut_notes
    if cmp is not None:
        plots += bar_plot(cmp, data, (names[0], names[-1]))
    run_gnuplot(out, plots)
    R.replace_file(os.path.join(out, "index.html"),
                   page_html(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    R.replace_file(os.path.join(out, "report.md"),
                   page_markdown(a.title, sets, cmp, plots, notes, kut_tables, a.unit))
    print(f"report: {len(plots)} plots (SVG and PNG) and {os.path.join(out, 'index.html')}")
    return 0

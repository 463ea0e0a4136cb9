# SPDX-License-Identifier: GPL-2.0-only
"""Latency distributions: for each benchmark and metric, one empirical CDF
per backend (and variant, target state, configuration), pooled over boots,
with the band the boots' own CDFs span; a distribution of one distinct
value is one marked point."""
from ipibench.compare.model import row_key, row_order
from ipibench.report.curves import (curve, interp, label_curves, mark_coinciding, pair_up,
                                    panels_of, style_curves)
from ipibench.report.figure import figure, figure_title
from ipibench.report.gnuplot import axis_scale, gp_str, gp_tics, log_ticks, num, Plot, slug
from ipibench.report.what_ran import context_lines, env_cpus, tsc_khz
from ipibench.report.words import metric_head, targets_words


TAIL_SHARE = 1.0               # % of samples: the x axis ends where every
                               # curve holds all but this much below it


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


def dist_plots(sets, names, data_dir, unit, context, roles=None):
    """A figure per benchmark and metric: the CDF of each of its rows at the
    largest target count it was measured at, one curve per set and row."""
    data = [dist_data(boots, unit) for _, boots in sets]
    cpus = max((c for c in (env_cpus(b) for _, b in sets) if c), default=None)
    groups = {}
    for d in data:
        for key in d:
            groups.setdefault(key[:2], set()).add(key[5])
    plots = []
    for (bench, metric), ntargets in sorted(groups.items()):
        nmax = max((n for n in ntargets if isinstance(n, int)), default=None)
        curves, pairs = dist_curves(data, names, (bench, metric), nmax)
        if not curves:
            continue
        where = targets_words(bench, nmax, cpus)
        plots.append(dist_plot((bench, metric), where, curves, pairs, names, data_dir, unit,
                               context, roles))
    return plots


def dist_curves(data, names, bench_metric, nmax):
    """(curves, {set name: sender/target pairs pooled}): the CDF of each row
    of bench_metric at nmax targets, set by set in row order; pairs where a
    row pooled more than one (matrix=1)."""
    curves, pairs = [], {}
    for d, sname in zip(data, names):
        for key in sorted(d, key=row_order):
            if key[:2] == bench_metric and key[5] == nmax:
                c = cdf_curve(sname, key, d[key])
                if c:
                    curves.append(c)
                    if len(d[key]["pairs"]) > 1:
                        pairs[sname] = max(pairs.get(sname, 0), len(d[key]["pairs"]))
    return curves, pairs


def dist_plot(bench_metric, where, curves, pairs, names, data_dir, unit, context, roles):
    """The distribution figure of one benchmark and metric; where: its
    target count in words."""
    bench, metric = bench_metric
    lo, hi, tail = dist_range(curves, 100.0 - TAIL_SHARE)
    div, axis_unit = axis_scale(hi, unit)
    name = slug("dist", bench, metric)
    by, panels = panels_of(pair_up(curves, roles))
    label_curves(curves, by)
    style_curves(panels)
    head = metric_head(bench, metric)
    title = figure_title(f"{head}{', ' + where if where else ''}: latency distribution "
                         "(empirical CDF, pooled over boots)", curves, by, len(panels),
                         context, roles=roles)
    for c in curves:
        if c["kind"] == "point":
            c["label"] += f": every sample {num(c['value'] / div)} {axis_unit}"
    title += dist_notes(curves, pairs, f"{num(hi / div)} {axis_unit}", tail)
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
    return Plot(name, f"{bench} {metric}: distribution", lines, cap, size, notes)


def dist_notes(curves, pairs, end, tail):
    """The title's lines on what the figure draws: the boots' band, a curve
    of one value, matrix=1's pooled pairs, and the share of the samples
    beyond the x axis's end (end: where it ends, in words)."""
    notes = []
    banded = max((c.get("boots", 1) for c in curves), default=1)
    if banded > 1:
        notes.append(f"shaded: the range the boots' own CDFs span (min..max over up to "
                     f"{banded} boots)")
    if any(c["kind"] == "point" for c in curves):
        notes.append("a single marker: every sample of that curve had one value")
    for sname, n in pairs.items():
        notes.append(f"{sname}: its {n} sender/target pairs (matrix=1) pooled")
    if tail > 0.005:
        notes.append(f"x axis ends at {end}; beyond it lie at "
                     f"most {tail:.2f}% of a curve's samples (the data under data/)")
    return notes

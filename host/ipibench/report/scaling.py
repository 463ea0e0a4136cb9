# SPDX-License-Identifier: GPL-2.0-only
"""Scaling: for each benchmark measured at several target counts, the
median p50 against the target count, one curve per backend, min..max over
boots as error bars; a series measured at one count only (broadcast's
shorthand) is a marker on the panels of the curves of its backend."""
import math

from ipibench.report.curves import (curve, label_curves, mark_coinciding, pair_up, PALETTE,
                                    panels_of, style_curves)
from ipibench.report.figure import figure, figure_title
from ipibench.report.gnuplot import axis_scale, gp_str, gp_tics, Plot, slug
from ipibench.report.what_ran import context_lines
from ipibench.report.words import metric_head, state_words, variant_words
from ipibench.results.stats import median


# A series of one point drawn on another panel: shapes no curve uses (star,
# cross, plus, pentagon), one per such series of a figure.
MARKER_ALT = (3, 2, 1, 15)


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
    """A figure per benchmark and metric measured at two target counts or
    more: a curve per set and series (variant, backend, target state)."""
    groups = {}
    for side, sname in zip(sides, names):
        for key, vals in side.values.items():
            if vals:
                groups.setdefault(key[:2], {}).setdefault((sname,) + key[2:5], {})[key[5]] = \
                    vals
    plots = []
    for (bench, metric), series in sorted(groups.items()):
        counts = {n for pts in series.values() for n in pts if isinstance(n, int)}
        if len(counts) < 2:
            continue
        plots.append(scaling_plot((bench, metric), series, counts, names, data_dir, unit,
                                  context, roles))
    return plots


def scaling_curves(series, div, spread):
    """A curve per series {(set, variant, backend, state): {targets: [p50 per
    boot]}}: the median p50 at each target count, with min..max over boots
    as error bars when a count has more than one boot (spread)."""
    curves = []
    for s, pts in sorted(series.items(), key=lambda s: tuple(map(str, s[0]))):
        points = [(n, median(v) / div, min(v) / div, max(v) / div)
                  for n, v in sorted(pts.items()) if isinstance(n, int)]
        if spread < 2:
            points = [p[:2] for p in points]
        curves.append(curve(s[0], (None, None) + s[1:] + (None,), points,
                            "err" if spread > 1 else "line"))
    return curves


def scaling_plot(bench_metric, series, counts, names, data_dir, unit, context, roles):
    """The scaling figure of one benchmark and metric; counts: its target counts."""
    bench, metric = bench_metric
    top = max(max(v) for pts in series.values() for v in pts.values())
    div, axis_unit = axis_scale(top, unit)
    spread = max(len(v) for pts in series.values() for v in pts.values())
    curves = pair_up(scaling_curves(series, div, spread), roles)
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
    return Plot(name, f"{bench} {metric}: scaling", lines,
                f"{head}: median p50 against the number of targets, "
                f"{len(curves)} curves; {context_lines(names, context)[0]}", size, notes)

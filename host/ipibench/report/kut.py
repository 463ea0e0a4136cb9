# SPDX-License-Identifier: GPL-2.0-only
"""The kvm-unit-tests view (docs/results.md, "kut"): for each
x86/vmexit.c name the guest reports, one bar per backend (with two inputs,
baseline and candidate side by side): the median over boots of the mean
per iteration, min..max over boots as an error bar; and its tables."""
import os

from ipibench.report.curves import PALETTE
from ipibench.report.figure import PANEL_W
from ipibench.report.gnuplot import axis_scale, gp_lines, gp_str, gp_tics, num, Plot, split_title
from ipibench.report.what_ran import context_lines, context_title, tsc_khz
from ipibench.results.stats import median
from ipibench.write import replace_file


# The pale partner of each (Tableau 20): a candidate's bar beside its baseline's.
PALE = ("#aec7e8", "#ff9896", "#98df8a", "#ffbb78", "#c5b0d5", "#c49c94",
        "#f7b6d2", "#9edae5", "#c7c7c7", "#dbdb8d")
KUT_PX = 11                    # pixels per bar of the kvm-unit-tests view
KUT_CAPTION = ("x86/vmexit.c names, mean {unit} per iteration: the median over boots, "
               "min..max over boots in brackets; '-': that backend has no such figure")


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

# SPDX-License-Identifier: GPL-2.0-only
"""A figure of panels of curves as gnuplot commands: each curve's plot
clauses (a band of its boots' spread under it), the data file, the
multiplot and its canvas, and the title's lines, most telling first (the
title keeps two rows, the caption under the figure the rest)."""
import os

from ipibench.report.curves import label_curves
from ipibench.report.gnuplot import data_rows, gp_lines, gp_str, split_title
from ipibench.report.what_ran import context_title
from ipibench.report.words import FIELD_WORDS
from ipibench.write import replace_file


PANEL_W, PANEL_H = 640, 450    # pixels of one panel


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

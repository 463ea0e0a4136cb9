# SPDX-License-Identifier: GPL-2.0-only
"""The A/B chart: with two inputs, the change of every compared row,
coloured by the significance verdict, with its bootstrap confidence
interval; with --pair X=Y, backend X's rows (baseline) against backend
Y's (candidate), through the same comparison compare --pair prints."""
import os

from ipibench.report.gnuplot import gp_lines, gp_str, Plot, split_title
from ipibench.report.what_ran import context_lines, context_title
from ipibench.write import replace_file


# The verdicts' colours (gnuplot's 0xRRGGBB): the A/B bars' and history's.
COLOURS = {"slower": "0xc0392b", "faster": "0x27ae60", "other": "0x95a5a6"}
MAX_BARS = 120                 # rows in the A/B chart (the largest changes)
BAR_PX = 16                    # pixels per A/B row: above the label font's height


def bar_plot(cmp, data_dir, names, context=None):
    """Horizontal bars, one row per compared row, its name beside it."""
    rows = sorted(cmp.compared, key=lambda r: -abs(r.change))
    total = len(rows)
    rows = sorted(rows[:MAX_BARS], key=lambda r: r.name, reverse=True)
    if not rows:
        return []
    ab_data(rows, data_dir)
    title, xlabel, what = ab_words(cmp, names, len(rows), total)
    said, detail = context_title(list(dict.fromkeys(names)), context or {})
    # The title centres over the canvas (a multiplot's), not over the bars
    # right of the names' margin: two rows of the canvas's width hold more.
    title, notes = split_title(title + said + detail, 1004)
    return [Plot("ab", "A/B comparison" + (f": {what}" if cmp.pair else ""),
                 ab_commands(title, xlabel, rows),
                 f"change of each compared row, {what}, with its bootstrap 95% confidence "
                 "interval; " + "; ".join(context_lines(list(dict.fromkeys(names)),
                                                        context or {})),
                 (1024, 154 + 18 * len(title) + BAR_PX * len(rows)), notes)]


def ab_data(rows, data_dir):
    """data/ab.dat: a line per row, 'index name change ci-low ci-high colour'."""
    out = []
    for i, r in enumerate(rows):
        lo, hi = r.ci if r.ci else (r.change, r.change)
        colour = COLOURS[r.verdict] if r.verdict in COLOURS else COLOURS["other"]
        out.append(f"{i} {gp_str(r.name)} {r.change:.3f} {lo:.3f} {hi:.3f} {colour}")
    replace_file(os.path.join(data_dir, "ab.dat"), "\n".join(out) + "\n")


def ab_words(cmp, names, shown, total):
    """(title lines, x axis label, the sides in words): which side is the
    baseline and which the candidate, by set or with --pair by backend;
    shown of total rows drawn."""
    a, b = names
    largest = f", the {shown} largest of {total}" if total > shown else ""
    if cmp.pair:
        x, y = cmp.pair
        head = f"A/B: {x} (baseline) vs {y} (candidate), {a}" if a == b else \
            f"A/B: {x} of {a} (baseline) vs {y} of {b} (candidate)"
        boots = f"{len(cmp.sa.boots)} boots" if a == b else \
            f"{len(cmp.sa.boots)} and {len(cmp.sb.boots)} boots"
        title = [head, f"each row's p50 ({cmp.unit}): change of {y} against {x}, "
                 f"{boots}{largest}"]
        return (title, f"change of {y} against {x}, % of {x} ({cmp.unit} p50)",
                f"{x} (baseline) vs {y} (candidate)")
    title = [f"A/B: change of each row's p50 ({cmp.unit}), candidate B against baseline A"
             + largest, f"baseline A: {a} ({len(cmp.sa.boots)} boots); "
             f"candidate B: {b} ({len(cmp.sb.boots)} boots)"]
    return (title, f"change of B against A, % of A ({cmp.unit} p50)",
            f"baseline A {a}, candidate B {b}")


def ab_commands(title, xlabel, rows):
    """The chart's commands: a bar per row coloured by its verdict, its
    confidence interval over it, its name in the left margin."""
    longest = max(len(r.name) for r in rows)
    return ["set style fill solid 0.7 border -1", f"set lmargin {longest + 3}",
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

# SPDX-License-Identifier: GPL-2.0-only
"""matrix=1: every sender/target pair of single's round trip, a heatmap
per configuration and backend, row = sender, column = target; in a
comparison the baseline's and the candidate's side by side."""
import collections
import os

from ipibench.report.curves import ROLE_RANK
from ipibench.report.gnuplot import axis_scale, gp_lines, gp_str, gp_tics, num, Plot, split_title
from ipibench.report.what_ran import context_lines, context_title, env_cpus, socket_size
from ipibench.report.words import metric_head
from ipibench.results.stats import median
from ipibench.write import replace_file


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


# One heatmap: its set (display name) and backend, its n CPUs, its cells
# {(sender, target): [the pair's p50, one per boot]}, its set's boots, CPUs
# per socket (None: no socket lines) and its role in a comparison.
Heatmap = collections.namedtuple("Heatmap", "set backend n pairs boots per_socket role",
                                 defaults=(None,))


def matrix_panels(sets, names, unit):
    """[Heatmap] of every set and backend with matrix=1's round trips."""
    panels = []
    for (_, boots), sname in zip(sets, names):
        for backend, pairs in matrix_cells(boots, unit).items():
            n = max([env_cpus(boots) or 0] + [max(p) + 1 for p in pairs])
            panels.append(Heatmap(sname, backend, n, pairs, len(boots), socket_size(boots, n)))
    return panels


def matrix_order(panels, roles):
    """The heatmaps of a comparison in pairs, a row each: the baseline's on
    the left, its candidate's on the right (None: a gap where a side lacks
    it; two heatmaps cannot be drawn as one), each panel with its role; the
    others after them."""
    if roles is None:
        return list(panels)
    pairs, rest = {}, []
    for p in panels:
        role = roles.role({"set": p.set, "backend": p.backend})
        if role is None:
            rest.append(p)
            continue
        two = pairs.setdefault(None if roles.pair else p.backend, [None, None])
        two[ROLE_RANK[role]] = p._replace(role=role)
    return [p for two in pairs.values() for p in two] + rest


def matrix_plots(sets, names, data_dir, unit, context, roles=None):
    """A heatmap per configuration and backend: row = sender, column =
    target, each cell the median over boots of that pair's round-trip p50,
    '-' on the diagonal (a CPU does not send to itself)."""
    panels = matrix_panels(sets, names, unit)
    if not panels:
        return []
    vals = [median(v) for p in panels for v in p.pairs.values()]
    div, axis_unit = axis_scale(max(vals), unit)
    lo, hi = min(vals) / div, max(vals) / div
    if hi <= lo:
        lo, hi = lo * 0.99, hi * 1.01 + 1e-9
    slots = matrix_order(panels, roles)
    cmds, widest = matrix_commands(slots, div, len({p.set for p in panels}) > 1, data_dir)
    title = matrix_title(panels, slots, widest, context, roles)
    lines, size, notes = matrix_canvas(title, slots, cmds, (lo, hi), axis_unit)
    cap = (f"matrix=1: round-trip p50 of every sender/target pair, {len(panels)} "
           f"heatmap{'' if len(panels) == 1 else 's'}; {context_lines(names, context)[0]}")
    return [Plot("matrix", "single round trip, every pair (matrix=1)", lines, cap, size, notes)]


def matrix_commands(slots, div, several, data_dir):
    """(the panels' plot commands, the widest spread over boots of a pair's
    p50, max/min - 1): a heatmap per slot, a gap per None; its cells go to
    data/matrix.dat. several: whether the heatmaps come from several sets."""
    blocks, cmds, widest = [], [], 0.0
    for slot in slots:
        if slot is None:
            cmds.append("set multiplot next")
            continue
        block, spread = heatmap_cells(slot, div)
        widest = max(widest, spread)
        blocks.append(block)
        cmds += heatmap_commands(slot, f"{gp_str('data/matrix.dat')} index {len(blocks) - 1}",
                                 several)
    replace_file(os.path.join(data_dir, "matrix.dat"), "\n\n\n".join(blocks) + "\n")
    return cmds, widest


def heatmap_cells(h, div):
    """(the data block of heatmap h: 'target sender value label' per cell,
    a blank line after each sender; the widest spread of a pair's p50 over
    boots): NaN with '-' on the diagonal, 'n/a' where a pair has no figure."""
    rows, widest = [], 0.0
    for s in range(h.n):
        for t in range(h.n):
            v = h.pairs.get((s, t))
            if s == t:
                rows.append(f"{t} {s} NaN -")
            elif not v:
                rows.append(f"{t} {s} NaN n/a")
            else:
                rows.append(f"{t} {s} {median(v) / div:.6g} {num(median(v) / div)}")
                widest = max(widest, max(v) / min(v) - 1 if min(v) > 0 else 0)
        rows.append("")
    return "\n".join(rows).rstrip("\n"), widest


def heatmap_commands(h, src, several):
    """The commands of heatmap h's panel, its cells read from src: socket
    boundaries as black lines, its title (its role in a comparison), axes
    of CPU numbers, the image and each cell's label."""
    n = h.n
    ticks = [(str(c), c) for c in range(n)]
    cmds = ["unset arrow"]
    for edge in range(h.per_socket or n, n, h.per_socket or n):
        cmds += [f"set arrow from {edge - 0.5},-0.5 to {edge - 0.5},{n - 0.5} nohead front "
                 "lw 2.5 lc rgb 'black'",
                 f"set arrow from -0.5,{edge - 0.5} to {n - 0.5},{edge - 0.5} nohead front "
                 "lw 2.5 lc rgb 'black'"]
    ptitle = f"{h.set}: {h.backend}" if several else h.backend
    if h.role:
        ptitle = f"{h.backend}, {h.role}" + (f" ({h.set})" if several else "")
    return cmds + [f"set title {gp_str(ptitle)}",
                   f"set xrange [-0.5:{n - 0.5}]", f"set yrange [{n - 0.5}:-0.5]",
                   gp_tics("x", ticks), gp_tics("y", ticks),
                   f"plot {src} using 1:2:3 with image notitle, "
                   f"{src} using 1:2:4 with labels font ',{9 if n > 6 else 10}' notitle"]


def matrix_title(panels, slots, widest, context, roles):
    """The figure's lines: what it is, which side is which in a comparison,
    what ran, what a row, a column and a cell are, the spread over boots and
    the socket lines."""
    boots = max(p.boots for p in panels)
    said, detail = context_title([p.set for p in panels], context)
    sides = [f"left: the baseline, {roles.side('baseline')}; right: the candidate, "
             f"{roles.side('candidate')}"] \
        if roles and any(s and s.role for s in slots) else []
    title = [metric_head(*MATRIX_ROW[:2]) + ", matrix=1: every sender/target pair"] + sides + \
        said + ["row = sender CPU, column = target CPU; cell: the pair's p50" +
                (f", median over {boots} boots" if boots > 1 else "") +
                "; '-': a CPU does not send to itself; one colour scale for all"] + detail
    if boots > 1:
        title.append(f"spread over boots: a pair's p50 varied by at most {100 * widest:.1f}% "
                     "(max/min)")
    if any(p.per_socket for p in panels):
        title.append("black lines: socket boundaries (QEMU numbers CPUs socket by socket)")
    return title


def matrix_canvas(title, slots, cmds, colour_range, axis_unit):
    """(commands, size, the title lines left for the caption): the slots in
    one or two columns of square panels, one colour scale (colour_range: its
    lowest and highest value) for all."""
    cols = 1 if len(slots) == 1 else 2
    rows = -(-len(slots) // cols)
    side = 640 if cols == 1 else 520
    width = cols * side
    title, notes = split_title(title, width - 20)
    height = rows * (side - 40) + 18 * len(title)
    lo, hi = colour_range
    lines = ["set key off", "set size ratio -1", "set tics scale 0",
             f"set xlabel {gp_str('target CPU; cells: round-trip p50, ' + axis_unit)}",
             "set ylabel 'sender CPU'",
             "set palette defined (0 '#fff7bc', 0.5 '#fe9929', 1 '#cc4c02')",
             f"set cbrange [{lo:.6g}:{hi:.6g}]", "set format cb '%g'",
             "set object 1 rect from graph 0,0 to graph 1,1 behind fc rgb '#e4e4e4' "
             "fs solid noborder",
             f"set multiplot layout {rows},{cols} title {gp_lines(title)}"] + \
        cmds + ["unset multiplot"]
    return lines, (width, height), notes

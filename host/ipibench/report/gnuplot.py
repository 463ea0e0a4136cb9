# SPDX-License-Identifier: GPL-2.0-only
"""The language report's figures are written in, and the program that draws
them: gnuplot's strings, titles cut to two rows (split_title), tick marks
and scales, a figure (Plot), and running gnuplot once for every figure's
SVG and PNG (pngcairo, or gnuplot's plain png terminal where cairo is
missing), written under temporary names and renamed once gnuplot
succeeded. history_plot.py draws with the same."""
import math
import os
import re
import shutil
import subprocess

from ipibench.exit_codes import EX_DEPS, EX_TOOL_FAILED, ToolError
from ipibench.write import replace_file


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

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
drawn dashed over the one they hide and named in the caption. Tick values
are chosen by the report, not by gnuplot (1-2-5 steps on the log axes), and
printed with a fixed format, the scale and unit in the axis label; legends
sit outside the graphs. Plots are written under temporary names and renamed
once gnuplot succeeded.

One module a job, the command first, the figures' parts last:

  command.py       the command: the inputs, the comparison, every figure,
                   gnuplot and the page (report)
  inputs.py        the saved runs it reads, the names that tell them apart,
                   the default folder (RESULTS/reports/NAME)
  distribution.py  the latency distributions (empirical CDFs)
  scaling.py       median p50 against the target count
  matrix.py        matrix=1's heatmaps
  kut.py           the kvm-unit-tests view, its figure and tables
  ab.py            the A/B chart, and the verdicts' colours
  page.py          index.html and report.md
  figure.py        a figure of panels of curves as gnuplot commands, its title
  curves.py        curves: roles in a comparison, panels, labels, styles,
                   those that coincide
  what_ran.py      what ran, in words: accelerator, trust warnings, guest
                   topology
  words.py         record fields in words
  gnuplot.py       gnuplot's strings, titles, ticks and scales, a Plot, and
                   running gnuplot

history_plot.py draws and pages with gnuplot.py's, page.py's and words.py's
parts."""

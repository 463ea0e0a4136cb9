# SPDX-License-Identifier: GPL-2.0-only
"""ipibench's host application: everything run.sh does, as `python3 -m ipibench`
(run.sh puts host/ on PYTHONPATH). One folder a job, in layers, lowest first
(tools/check_imports.py enforces them: a module imports from its own layer
and those below):

  base         exit_codes.py (every exit code), jobs.py (child processes and
               signals), write.py (files that appear whole), presets.py (the
               named configurations, presets.conf), record_lines.py (the one
               reader of the guest's record lines), command_line.py (what
               every parser stands on)
  kvmhost/     the KVM host: its facts, module parameters, the trace (tracefs
               writes it, trace_read.py reads it, trace.py gives each record
               its exits; exit_labels.py, apicv.py and wake.py judge them),
               statistics, pinning and perf
  results/     records checked against the schema, results files, a saved
               boot, the statistics, change points, a history's store
  compare/     the A/B model, correctness, compare and gate, their formats,
               history (change points over a series of runs)
  readers      report/ (plots and a page), history_plot.py (history's
               figures over the runs), readers.py (compare, gate, report and
               history on the command line), lab/ (LAVA: lava.py its command
               line, jobs.py, cases.py and log_import.py its three jobs)
  boot/        running a boot: QEMU's command line, the accelerator, what
               run.sh prints of the console (console.py, progress.py,
               summary.py, headline.py, outcome.py, tap.py, wording.py),
               one boot (run.py), saving it (save.py), the matrix, the A/B
               over a KVM module parameter; options.py, their options
  cli.py       the subcommands and run.sh's one parser; __main__.py

The KVM lane's runtime, which --accel kvm-in-tcg runs, is host/lane/.

Python 3, standard library only, not C: json is the parser the Python
project maintains, every Debian and Ubuntu ships it, and python3 is a build
dependency anyway (results/validate.py, which the boot tests share, so both
judge records by one set of rules). The rest is there too: exact integers
for the rank tests, xml.etree for JUnit, socket for QMP,
os.sched_setaffinity. None of it runs inside a timed region.

New host logic goes into a module of its own, and keeps two rules:
- a boot takes its attachments as --perf-kvm does: kvmhost/pin_perf.py's
  PausedStart attaches them while the guest is paused, and detaches and
  saves them after QEMU ended;
- a driver that reloads modules runs its boots in-process, as matrix does,
  so its restore runs in the process that gets the signal."""
import os

# The checkout this package runs from (host/ipibench/ -> the repository).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# SPDX-License-Identifier: GPL-2.0-only
"""ipibench's host application: everything run.sh does, as `python3 -m ipibench`
(run.sh puts host/ on PYTHONPATH). One folder a job:

  cli.py, options.py  the command line: subcommands and their options
  boot/        running a boot: QEMU's command line, the accelerator, the
               console, one boot (run.py), the matrix and the A/B over a
               KVM module parameter
  kvmhost/     the KVM host: its facts, module parameters, trace (tracefs
               and the trace's reader), statistics, pinning and perf
  results/     the guest's records (one reader), results files, saved
               boots, saving a run, the statistics
  compare/     the A/B model, compare and gate, and their formats
  report.py    plots and a page
  lab/         the lab: LAVA jobs, and the kvm-in-tcg lane's runtime
  presets.py   the named configurations (presets.conf)
  jobs.py      child processes and signals; exit_codes.py, every exit code

Imports go downwards in that list's spirit: results/ and exit_codes.py import
nothing above them, the command line imports everything."""
import os

# The checkout this package runs from (host/ipibench/ -> the repository).
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# SPDX-License-Identifier: GPL-2.0-only
"""Running a boot: QEMU's command line (qemu.py), the accelerator (accel.py),
--append held against the guest's keys (guest_keys.py), one boot (run.py)
and saving it (save.py), the matrix (matrix.py) and the A/B over a KVM
module parameter (ab.py). What run.sh prints of the console: its progress
as the boot runs (console.py; the lines' text, progress.py), the summary
under it (summary.py; its table, headline.py; what the end means and
run.sh's last line, outcome.py), the suite's TAP lines read (tap.py) and
the words they share (wording.py)."""

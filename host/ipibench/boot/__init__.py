# SPDX-License-Identifier: GPL-2.0-only
"""Running a boot: QEMU's command line (qemu.py), the accelerator (accel.py),
--append held against the guest's keys (guest_keys.py), the console
(console.py), one boot (run.py) and saving it (save.py), the matrix
(matrix.py) and the A/B over a KVM module parameter (ab.py)."""

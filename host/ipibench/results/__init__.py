# SPDX-License-Identifier: GPL-2.0-only
"""Results: the guest's records (records.py reads them, validate.py checks
them), results files (files.py), a saved boot (saved.py), saving a run
(save.py) and the statistics (stats.py)."""

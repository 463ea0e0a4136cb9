# SPDX-License-Identifier: GPL-2.0-only
"""Results: the guest's records checked against the schema (records.py,
with validate.py's checkers), results files (files.py), a saved boot
(saved.py), the statistics (stats.py) and change points over a history of
runs (changepoints.py)."""

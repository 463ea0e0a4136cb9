# SPDX-License-Identifier: GPL-2.0-only
"""Comparing result sets: the model (model.py), correctness (correctness.py),
`compare` (compare.py), `gate` (gate.py) and their formats (formats.py)."""

# SPDX-License-Identifier: GPL-2.0-only
"""The lab: LAVA jobs and results (lava.py)."""

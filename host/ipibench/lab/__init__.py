# SPDX-License-Identifier: GPL-2.0-only
"""The lab: LAVA jobs and results. lava.py is `./run.sh lava`'s command
line; jobs.py writes the YAML a lab runs, cases.py reports a results
directory as test cases, log_import.py reads a job's log back into one, and
protocol.py holds what they and the guest share."""

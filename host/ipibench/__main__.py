# SPDX-License-Identifier: GPL-2.0-only
"""`python3 -m ipibench`: what run.sh execs (docs/host-tools.md)."""
import sys

from ipibench.cli import main

sys.exit(main(sys.argv[1:]))

#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# run.sh: the one host entry point. `run` (the default) builds the guest if
# needed, boots it under QEMU (KVM when /dev/kvm is usable, TCG otherwise,
# unless the configuration needs KVM: exit 31), streams the console, saves
# it with the results and the host's facts under results/, and exits with a
# status decoded from the guest's. `matrix` boots named configurations
# several times; `compare`, `gate` and `report` read what runs saved;
# `list` names the configurations.
# See `./run.sh --help`, docs/host-tools.md and docs/exit-codes.md.
#
# All of that is Python, the ipibench package under host/ (`python3 -m
# ipibench`; its map is host/ipibench/__init__.py, its tests are under
# tests/host/). This file only makes sure python3 is there, the one
# dependency the others cannot be installed without, and then execs it:
# run.sh's PID stays the one that answers signals. PYTHONSAFEPATH keeps the
# caller's directory off the module path (Python 3.11 and later), so a file
# named like one of the package's modules there cannot stand in for it.
# -S: the package needs nothing but the standard library, so no site
# packages (nor their .pth files: one that imports certifi took a quarter
# of every start under pyenv; the tests start run.sh over a thousand times).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

missing_python() {
	echo "run.sh: python3 is missing (tools/deps.sh build installs it)" >&2
	exit 9
}

# One compound command that ends in exec or exit: bash has parsed all of it
# before it runs, so editing this file under a running instance cannot derail it.
{
	if ! command -v python3 >/dev/null 2>&1; then
		case "${1-}" in compare | gate | report) missing_python ;; esac
		# As root it installs python3 with the rest; otherwise it prints the
		# command to run (exit 9, a missing dependency).
		"$here/tools/deps.sh" build || exit 9
		command -v python3 >/dev/null 2>&1 || missing_python
	fi
	# Under sudo, no bytecode in the user's checkout that only root could
	# remove (the rest root makes is handed back: host/ipibench/owner.py).
	if [ "$EUID" = 0 ] && [ -n "${SUDO_UID-}" ]; then export PYTHONDONTWRITEBYTECODE=1; fi
	PYTHONPATH="$here/host${PYTHONPATH:+:$PYTHONPATH}" PYTHONSAFEPATH=1 exec python3 -S -m ipibench "$@"
}

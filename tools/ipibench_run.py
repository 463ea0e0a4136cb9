#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""run.sh's subcommands, behind the bash wrapper that makes sure python3 is
there (docs/host-tools.md, "Where the host logic lives"):

  [run]          one boot (ipibench_boot)
  matrix         configurations x -smp values x N boots (ipibench_matrix)
  compare, gate, report  the readers of saved results (ipibench.py)
  list           the named configurations (tools/presets.conf)
  ab             A/B over a KVM module parameter (ipibench_ab)

Usage: ./run.sh --help; exit codes: docs/exit-codes.md."""
import argparse
import os
import signal
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import ipibench  # noqa: E402
import ipibench_ab  # noqa: E402
import ipibench_boot as B  # noqa: E402
import ipibench_matrix  # noqa: E402
import ipibench_results as R  # noqa: E402
from ipibench_jobs import Jobs, say  # noqa: E402
from ipibench_options import USAGE, USAGE_LIST  # noqa: E402


def cmd_list(args, env):
    arg = args[0] if args else ""
    if arg in ("-h", "--help"):
        sys.stdout.write(USAGE_LIST)
        return 0
    if arg not in ("", "--names"):
        sys.stderr.write(USAGE_LIST)
        say(f"run.sh: list: unknown option '{arg}'")
        return R.EX_USAGE
    try:
        if arg == "--names":
            for name in R.load_presets(env.presets):
                print(name)
            return 0
        return ipibench.cmd_presets(argparse.Namespace(conf=env.presets, name=None))
    except R.ToolError as e:
        say(f"run.sh: {e.message}")
        return e.code


def _raise_interrupt(_signum, _frame):
    raise KeyboardInterrupt


def cmd_tool(args, env):
    """compare, gate, report: tools/ipibench.py (its --help describes each),
    run where run.sh was called from. A signal ends them with exit 11."""
    if args[0] == "report" and args[1:2] not in (["--help"], ["-h"]):
        if subprocess.call(["tools/deps.sh", "report"]) != 0:
            return R.EX_DEPS
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupt)
    os.chdir(env.caller_dir)
    return ipibench.main(args)


def caller_dir():
    try:
        return os.getcwd()
    except OSError:  # the caller's directory was removed: as the shell saw it
        return os.environ.get("PWD") or REPO


def main(argv):
    env = B.Env(REPO, caller_dir(), os.environ)
    os.chdir(REPO)
    sub = argv[0] if argv else ""
    if sub in ("compare", "gate", "report"):
        return cmd_tool(argv, env)
    jobs = Jobs()
    jobs.install()
    if sub == "run":
        return B.run(argv[1:], env, jobs)
    if sub == "matrix":
        return ipibench_matrix.run(argv[1:], env, jobs)
    if sub == "list":
        return cmd_list(argv[1:], env)
    if sub == "ab":
        return ipibench_ab.run(argv[1:], env, jobs)
    if sub in ("-h", "--help", "help"):
        sys.stdout.write(USAGE)
        return 0
    return B.run(argv, env, jobs)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

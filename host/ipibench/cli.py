# SPDX-License-Identifier: GPL-2.0-only
"""`python3 -m ipibench`, behind run.sh (which makes sure python3 is there):
its subcommands and where each lives (docs/host-tools.md):

  [run]          one boot (boot/run.py)
  matrix         configurations x -smp values x N boots (boot/matrix.py)
  ab             A/B over a KVM module parameter (boot/ab.py)
  list           the named configurations (presets.py, presets.conf)
  compare, gate, report, history  the readers of saved results (readers.py)
  validate       a console log's records against docs/results.md (results/records.py)
  lava           LAVA jobs and results (lab/lava.py)

Usage: ./run.sh --help; exit codes: docs/exit-codes.md."""
import os
import signal
import subprocess
import sys

from ipibench import readers, REPO
from ipibench.boot import ab, matrix
from ipibench.boot import run as B
from ipibench.boot import xen_lane as X
from ipibench.exit_codes import EX_DEPS, ToolError
from ipibench.jobs import Jobs, say
from ipibench.lab import lava
from ipibench import options
from ipibench.options import parse_list, USAGE_LIST, UsageError
from ipibench.presets import load_presets, print_presets
from ipibench.results import records

# The subcommands that read what runs saved: they run where run.sh was
# called from, and need no jobs of their own. Each declares its arguments
# in its own room (parser() puts them under run.sh's).
READERS = {"compare": readers.main, "gate": readers.main, "report": readers.main,
           "history": readers.main,
           "validate": lambda argv: records.main(argv[1:]),
           "lava": lambda argv: lava.main(argv[1:])}


def parser():
    """run.sh's one parser: the subcommands that boot (options.parser()) and
    the readers, validate and lava, added once."""
    top = options.parser()
    if "compare" not in top.commands:
        top.commands.update(readers.add_readers(top.subcommands))
        top.commands["validate"] = records.add_validate(top.subcommands)
        top.commands["lava"] = lava.add_lava(top.subcommands)
    return top


def cmd_list(args, env):
    """`./run.sh list [--names]`."""
    try:
        names = parse_list(args)
    except UsageError as e:
        return B.usage_error(e)
    if names is None:
        sys.stdout.write(USAGE_LIST)
        return 0
    try:
        if names:
            for name in load_presets(env.presets):
                print(name)
            return 0
        return print_presets(env.presets) or X.print_xen_presets()
    except ToolError as e:
        say(f"run.sh: {e.message}")
        return e.code


def _raise_interrupt(_signum, _frame):
    raise KeyboardInterrupt


def cmd_reader(args, env):
    """A reader (READERS), run where run.sh was called from. A signal ends
    it with exit 11."""
    if args[0] == "report" and args[1:2] not in (["--help"], ["-h"]):
        if subprocess.call(["tools/deps.sh", "report"]) != 0:
            return EX_DEPS
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupt)
    os.chdir(env.caller_dir)
    return READERS[args[0]](args)


def caller_dir():
    try:
        return os.getcwd()
    except OSError:  # the caller's directory was removed: as the shell saw it
        return os.environ.get("PWD") or REPO


def main(argv):
    env = B.Env(REPO, caller_dir(), os.environ)
    os.chdir(REPO)
    sub = argv[0] if argv else ""
    if sub in READERS:
        return cmd_reader(argv, env)
    jobs = Jobs()
    jobs.install()
    if sub == "run":
        return B.run(argv[1:], env, jobs)
    if sub == "matrix":
        return matrix.run(argv[1:], env, jobs)
    if sub == "list":
        return cmd_list(argv[1:], env)
    if sub == "ab":
        return ab.run(argv[1:], env, jobs)
    if sub in ("-h", "--help", "help"):
        sys.stdout.write(parser().format_help())
        return 0
    return B.run(argv, env, jobs)


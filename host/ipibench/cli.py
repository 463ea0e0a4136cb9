# SPDX-License-Identifier: GPL-2.0-only
"""`python3 -m ipibench`, behind run.sh (which makes sure python3 is there):
its subcommands and where each lives (the map of the rest:
host/ipibench/__init__.py):

  [run]          one boot (boot/run.py)
  matrix         configurations x -smp values x N boots (boot/matrix.py)
  ab             A/B over a KVM module parameter (boot/ab.py)
  list           the named configurations (presets.py, presets.conf)
  compare, gate, report, history  the readers of saved results (readers.py)
  validate       a console log's records against docs/record-fields.md (results/records.py)
  model          a saved --exits run against its host class's predictions (model_table.py)
  lava           LAVA jobs and results (lab/lava.py)

Usage: ./run.sh --help; exit codes: docs/exit-codes.md."""
import os
import signal
import subprocess
import sys

from ipibench import REPO
from ipibench.exit_codes import EX_DEPS, ToolError
from ipibench.jobs import Jobs, say

# Each subcommand imports its own room when it runs, not every room at
# every start: the tests start run.sh over a thousand times, and a reader
# needs none of the boot's modules (nor a boot the readers' plots).


def _readers(argv):
    from ipibench import readers
    return readers.main(argv)


def _validate(argv):
    from ipibench.results import records
    return records.main(argv[1:])


def _model(argv):
    from ipibench import model_table
    return model_table.main(argv[1:])


def _lava(argv):
    from ipibench.lab import lava
    return lava.main(argv[1:])


# The subcommands that read what runs saved: they run where run.sh was
# called from, and need no jobs of their own. Each declares its arguments
# in its own room (parser() puts them under run.sh's).
READERS = {"compare": _readers, "gate": _readers, "report": _readers, "history": _readers,
           "validate": _validate, "model": _model, "lava": _lava}


def parser():
    """run.sh's one parser: the subcommands that boot (options.parser()) and
    the readers, validate and lava, added once."""
    from ipibench import model_table, options, readers
    from ipibench.lab import lava
    from ipibench.results import records
    top = options.parser()
    if "compare" not in top.commands:
        top.commands.update(readers.add_readers(top.subcommands))
        top.commands["validate"] = records.add_validate(top.subcommands)
        top.commands["model"] = model_table.add_model(top.subcommands)
        top.commands["lava"] = lava.add_lava(top.subcommands)
    return top


def cmd_list(args, env):
    """`./run.sh list [--names]`."""
    from ipibench.boot import run as B
    from ipibench.boot import xen_lane as X
    from ipibench.options import parse_list, USAGE_LIST, UsageError
    from ipibench.presets import load_presets, print_presets
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


def cmd_reader(args, caller):
    """A reader (READERS), run where run.sh was called from (caller). A
    signal ends it with exit 11."""
    if args[0] == "report" and args[1:2] not in (["--help"], ["-h"]):
        if subprocess.call(["tools/deps.sh", "report"]) != 0:
            return EX_DEPS
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, _raise_interrupt)
    os.chdir(caller)
    return READERS[args[0]](args)


def caller_dir():
    try:
        return os.getcwd()
    except OSError:  # the caller's directory was removed: as the shell saw it
        return os.environ.get("PWD") or REPO


def main(argv):
    caller = caller_dir()
    os.chdir(REPO)
    sub = argv[0] if argv else ""
    if sub in READERS:
        return cmd_reader(argv, caller)
    from ipibench.boot import ab, matrix
    from ipibench.boot import run as B
    env = B.Env(REPO, caller, os.environ)
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


# SPDX-License-Identifier: GPL-2.0-only
"""`python3 -m ipibench`: what run.sh execs (docs/host-tools.md)."""
import os
import sys

from ipibench import REPO
from ipibench.cli import main
from ipibench.owner import hand_back


class Unread:
    """Standard output or error, which the reader may leave (`| head -1`).
    A write or flush that finds it gone (BrokenPipeError) points the stream
    at /dev/null, as the recipe of Python's signal module documentation
    does, and the command goes on: a boot still saves its results, and
    every subcommand still exits with its own code (docs/exit-codes.md),
    with no traceback."""

    def __init__(self, stream):
        self._stream = stream
        self.gone = False

    def write(self, text):
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._gone()
            return len(text)

    def flush(self):
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._gone()
            self._stream.flush()  # what was kept for the pipe, into /dev/null

    def _gone(self):
        self.gone = True
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, self._stream.fileno())
        os.close(devnull)

    def __getattr__(self, name):
        return getattr(self._stream, name)


# None where the file descriptor was closed (>&-): print() then writes nothing.
if sys.stdout is not None:
    sys.stdout = Unread(sys.stdout)
if sys.stderr is not None:
    sys.stderr = Unread(sys.stderr)
try:
    code = main(sys.argv[1:])
except BrokenPipeError:
    # Only a reader that left ends quietly: a broken pipe of anything else
    # (QEMU's QMP socket of a QEMU that died) is a failure, with its
    # traceback, never a quiet 0.
    if not any(getattr(s, "gone", False) for s in (sys.stdout, sys.stderr)):
        raise
    code = 0
finally:
    # Under sudo: the build, the lane's cache and the results go back to
    # the checkout's user (host/ipibench/owner.py).
    hand_back([REPO, os.environ.get("IPIBENCH_RESULTS", "")], os.environ)
sys.exit(code)

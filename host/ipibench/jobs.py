# SPDX-License-Identifier: GPL-2.0-only
"""run.sh's process control: the signals it answers and the one job in
flight (docs/host-tools.md, "An interrupted run").

Ctrl-C (SIGINT), SIGTERM and SIGHUP stop the job in flight: it is sent
SIGTERM (for a boot that is timeout(1), which passes it on to QEMU and kills
QEMU 5 s later if it is still there: `timeout -k`), and a second signal kills
the job and its children by PID at once. The run then ends with exit 11 once
the job has really ended. Jobs start with SIGINT ignored, as a shell's
background jobs do, so that a Ctrl-C at the terminal reaches them only
through run.sh.

Every other way a command ends is an exit_codes.ToolError: an exit code
from docs/exit-codes.md and one line for stderr (none when its message is
None), which the command prints after "run.sh: ".
"""
import os
import signal
import subprocess
import sys
import time

from ipibench import machine
from ipibench.exit_codes import EX_INTERRUPTED  # noqa: F401

SIGNALS = {signal.SIGINT: "SIGINT", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class Interrupted(Exception):
    """A signal stopped the run; seconds: how long its boot had run."""

    def __init__(self, seconds="0"):
        super().__init__(seconds)
        self.seconds = seconds


def say(text):
    """One message of run.sh's own on stderr, in order with the jobs' output."""
    sys.stdout.flush()
    print(text, file=sys.stderr, flush=True)


def exit_status(returncode):
    """A Popen returncode as a shell reports it: 128 + N for death by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def elapsed(start_ns):
    """Seconds since start_ns (time.monotonic_ns) with 3 decimals, as text."""
    ms = (time.monotonic_ns() - start_ns) // 1000000
    return f"{ms // 1000}.{ms % 1000:03d}"


def _children(pid):
    out = []
    for d in os.listdir(machine.process("")):
        if not d.isdigit():
            continue
        try:
            with open(machine.process(d, "stat")) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def _kill(pid, sig):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _ignore_sigint():
    signal.signal(signal.SIGINT, signal.SIG_IGN)


class Jobs:
    """The signal state of one run.sh process and the job it waits for."""

    def __init__(self):
        self.interrupted = None  # the name of the first signal, once one came
        self.job = None  # the Popen in flight

    def install(self):
        for sig in SIGNALS:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum, _frame):
        job = self.job
        if self.interrupted and job is not None:
            for child in _children(job.pid):
                _kill(child, signal.SIGKILL)
            _kill(job.pid, signal.SIGKILL)
        self.interrupted = SIGNALS.get(signum, f"signal {signum}")
        if job is not None:
            _kill(job.pid, signal.SIGTERM)

    def check(self, seconds="0"):
        """After a signal: raise Interrupted (the caller marks its log)."""
        if self.interrupted:
            raise Interrupted(seconds)

    def start(self, argv, **popen):
        """Start argv as the job in flight (none may start after a signal)."""
        self.check()
        sys.stdout.flush()
        sys.stderr.flush()
        self.job = subprocess.Popen(argv, preexec_fn=_ignore_sigint, **popen)
        if self.interrupted:  # a signal between check() and here
            _kill(self.job.pid, signal.SIGTERM)
        return self.job

    def wait(self):
        """Wait for the job in flight to end (signals do not cut this short:
        the handler only signals the job); its exit status as a shell's."""
        job = self.job
        try:
            return exit_status(job.wait())
        finally:
            self.job = None

    def run(self, argv, **popen):
        """Run argv as the job in flight: its exit status, 11 after a signal."""
        self.start(argv, **popen)
        rc = self.wait()
        return EX_INTERRUPTED if self.interrupted else rc

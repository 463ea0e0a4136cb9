#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""run.sh into a pipe whose reader went away (`./run.sh list | head -1`):
what it writes there goes to /dev/null and the command goes on, so every
subcommand ends without a traceback and with its own exit code
(__main__.py, docs/exit-codes.md): 0 for a listing, 20 for a gate that
found a regression, a boot's own code after it saved its results.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import subprocess
import sys

from harness import REPO, check, registry
import synth
from fixtures import RUN, SLOW_KEY, main


CASES, case = registry()


def into_closed_pipe(argv, env=None, both=False):
    """(exit status, stderr) of argv with its standard output (both: and its
    standard error, as 2>&1 has it) on a pipe whose reader is already gone:
    every write there fails (EPIPE), as when head -1 goes first. (A real
    head -1 mostly reads these outputs, under 8 KiB and written at once at
    the exit, before it goes: a case that could not fail.)"""
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run(argv, stdout=w, stderr=w if both else subprocess.PIPE, cwd=REPO,
                           text=True, errors="replace", env=dict(os.environ, **(env or {})),
                           timeout=60)
    finally:
        os.close(w)
    return p.returncode, p.stderr


@case("run.sh into a closed pipe: no traceback, each subcommand's own exit code: 0 for list, "
      "the help texts and compare, 20 for a gate's regression, a boot's own (2>&1 too)")
def _(s):
    base, slow = (synth.make_set(os.path.join(s.tmp, f"pipe-{n}"), seed=n, scale=scale)
                  for n, scale in ((1, None), (3, {SLOW_KEY: 1.2})))
    for args, code in ((["list"], 0), (["--help"], 0), (["run", "--help"], 0),
                       (["validate", "--help"], 0), (["compare", base, slow], 0),
                       (["gate", "--baseline", base, slow], 20)):
        rc, err = into_closed_pipe([RUN, *args])
        check(rc == code and "Traceback" not in err and (code or err == ""),
              f"{' '.join(args)}: exit {rc}, expected {code}; stderr {err[-500:]!r}")
    boot = [RUN, "--accel", "tcg", "--no-save", "--append", "plan=boot"]
    rc, err = into_closed_pipe(boot, s.fake.env("exit:71"))
    check(rc == 4 and "Traceback" not in err and "run.sh: FAILURE (QEMU exit 71)" in err,
          f"a boot: exit {rc}, stderr {err[-500:]!r}")
    rc, _ = into_closed_pipe(boot, s.fake.env("exit:71"), both=True)
    check(rc == 4, f"a boot, 2>&1: exit {rc}")


if __name__ == "__main__":
    sys.exit(main(CASES))

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The host tests on every fixture host (tests/host/hosts.py), at the cost of
those that read one.

tests/run's tools group runs every host test once, on the suite's default
fixture host, with IPIBENCH_HOST_LOG_DIR set: each case's reads through the
seam (host/ipibench/machine.py), its own and those of every run.sh it
starts, land in a file of its own, and the folder's index says how to run
the case again. A case that read nothing of that host cannot depend on it:
its verdict is the same on any host. Each case that did read it runs here
again on the other fixture hosts, its TAP line marked "(on HOST)":

- a case that took at most CHEAP seconds, on every other host;
- a longer one (a TCG boot, most of them), within the suite's budget, on
  one other host: the next in turn, so that the long cases are spread over
  all of them (the seconds a case took are LOG.secs, harness.case_ends).
  --all runs them on every other host too (make check-hosts).

usage: on_hosts.py [--all] LOG_DIR [HOST...]  (names from hosts.py --list;
       default: every one but hosts.DEFAULT, the suite's own)
Exit status: 1 when a case failed on some host, 2 for bad usage, else 0."""
import os
import subprocess
import sys
import tempfile

import hosts

CHEAP = 1.0


def lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError:
        return []


def reading_cases(log_dir, root):
    """[(command, name, seconds)] of the cases whose log shows a read of the
    host at root, in the order they first ran (command: script and files)."""
    out = {}
    for line in lines(os.path.join(log_dir, "index.tsv")):
        key, name, *command = line.split("\t")
        if not any(r.split("\t", 1)[0] == root for r in lines(os.path.join(log_dir, key))):
            continue
        secs = (lines(os.path.join(log_dir, key + ".secs")) or ["0"])[0]
        out.setdefault((tuple(command), name), float(secs))
    return [(c, n, t) for (c, n), t in out.items()]


def plan(cases, others, every):
    """{host: {command: [names]}}: each case on the hosts it runs on."""
    out, turn = {h: {} for h in others}, 0
    for command, name, secs in cases:
        if every or secs <= CHEAP:
            on = others
        else:
            on, turn = [others[turn % len(others)]], turn + 1
        for h in on:
            out[h].setdefault(command, []).append(name)
    return out


def main(argv):
    every = argv[:1] == ["--all"]
    argv = argv[1:] if every else argv
    if not argv or any(h not in hosts.HOSTS for h in argv[1:]):
        print(__doc__.rsplit("usage:", 1)[1].strip(), file=sys.stderr)
        return 2
    log_dir = argv[0]
    others = argv[1:] or [h for h in hosts.HOSTS if h != hosts.DEFAULT]
    cases = reading_cases(log_dir, os.environ.get("IPIBENCH_HOST_ROOT", "/"))
    cheap = sum(t <= CHEAP for _, _, t in cases)
    print(f"# on_hosts: {len(cases)} host tests read the host: "
          f"{len(cases) if every else cheap} again on each of {' '.join(others)}"
          + ("" if every else f", {len(cases) - cheap} longer ones on one of them each"))
    bad = 0
    with tempfile.TemporaryDirectory(prefix="ipibench-hosts-") as where:
        for host, todo in plan(cases, others, every).items():
            env = dict(os.environ, IPIBENCH_HOST_ROOT=hosts.make(where, host),
                       IPIBENCH_TEST_HOST=host)
            env.pop("IPIBENCH_HOST_LOG_DIR", None)
            env.pop("IPIBENCH_HOST_LOG", None)
            for (script, *files), names in todo.items():
                argv = [sys.executable, script, *files]
                for n in names:
                    argv += ["--case-exact", n]
                sys.stdout.flush()
                bad |= subprocess.run(argv, env=env).returncode != 0
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

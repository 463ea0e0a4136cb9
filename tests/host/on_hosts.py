#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The host tests on every fixture host (tests/host/hosts.py), within the
suite's budget.

tests/run's tools and tools-run groups each make every fixture host under
IPIBENCH_HOSTS_DIR and run each case of tests/host on one of them, picked by its name
(harness.case_host): the cases spread over all six. With
IPIBENCH_HOST_LOG_DIR, each case's reads through the seam
(host/ipibench/machine.py), its own and those of every run.sh it starts,
land in a file of its own, and the folder's index says which host it ran
on and how to run it again. A case that read nothing of its host cannot
depend on it; nor can one that read only the snapshot of host facts a
results folder keeps (machine.snapshot), read on every host by
tests/host/test_machine.py. A case whose reads were all its own, in the test's process
(the seam's functions called in place), runs here again on the five other
hosts, its TAP line marked "(on HOST)". One whose host was read by a
run.sh it started (a boot, most of them under TCG) ran on its own host
only, which keeps the suite within its budget; --all runs those on every
host too. The rule is the log's, never a timing: the same cases run again
on every machine.

usage: on_hosts.py [--all] LOG_DIR
Exit status: 1 when a case failed on some host, 2 for bad usage, else 0."""
import os
import subprocess
import sys

import hosts


def lines(path):
    try:
        with open(path, encoding="utf-8") as f:
            return f.read().splitlines()
    except OSError:
        return []


def reading_cases(log_dir, hosts_dir):
    """[(command, name, host, own)] of the cases whose log shows a read of
    the fixture host they ran on, in the order they ran (command: the
    script and its files; own: every such read was the test process's)."""
    out = {}
    for line in lines(os.path.join(log_dir, "index.tsv")):
        key, name, host, pid, *command = line.split("\t")
        root = os.path.join(hosts_dir, host)
        reads = [r.split("\t") for r in lines(os.path.join(log_dir, key))]
        readers = {r[2] if len(r) > 2 else "" for r in reads if r[0] == root}
        # A snapshot's reads (host_facts(), which test_machine.py reads on
        # every host) are carried into results, never acted on: they
        # alone make no case depend on its host.
        acted = [r for r in reads if r[0] == root and r[3:] != ["snapshot"]]
        if host and acted:
            out.setdefault((tuple(command), name), (host, readers == {pid}))
    return [(c, n, h, own) for (c, n), (h, own) in out.items()]


def plan(cases, every):
    """{host: {command: [names]}}: where each case runs again."""
    out = {h: {} for h in sorted(hosts.HOSTS)}
    for command, name, ran_on, own in cases:
        if every or own:
            for h in out:
                if h != ran_on:
                    out[h].setdefault(command, []).append(name)
    return out


def main(argv):
    every = argv[:1] == ["--all"]
    argv = argv[1:] if every else argv
    hosts_dir = os.environ.get("IPIBENCH_HOSTS_DIR")
    if len(argv) != 1 or not hosts_dir:
        print(__doc__.rsplit("usage:", 1)[1].strip() + "\n(IPIBENCH_HOSTS_DIR names the hosts)",
              file=sys.stderr)
        return 2
    cases = reading_cases(argv[0], hosts_dir)
    again = sum(every or own for *_, own in cases)
    print(f"# on_hosts: {len(cases)} host tests read their fixture host; {again} run again on "
          f"each other one, {len(cases) - again} whose run.sh read it only on their own")
    bad = 0
    for host, todo in plan(cases, every).items():
        env = dict(os.environ, IPIBENCH_HOST_ROOT=os.path.join(hosts_dir, host),
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

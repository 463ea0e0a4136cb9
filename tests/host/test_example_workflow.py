#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The example CI workflow (.github/workflows/example.yml), read without a
YAML library: an exits job of matrix --exits with a plan subset, then gate
--exits per configuration, where timing cannot fail; it alone runs on pull
requests.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import re
import shlex
import subprocess
import sys

from harness import REPO, check, registry
from fixtures import main

from ipibench import readers
from ipibench import options as O
from ipibench.boot import matrix as M
from ipibench.results.stats import MIN_BOOTS


CASES, case = registry()


# --- the example workflow (.github/workflows/example.yml), read without a
# YAML library: its jobs are the two-space keys under jobs:, a step's
# script is the block under `run: |`.


WORKFLOW = os.path.join(REPO, ".github", "workflows", "example.yml")
NIGHTLY = os.path.join(REPO, ".github", "workflows", "nightly.yml")


def workflow_job(text, job):
    """The lines of one job (after its key, up to the next job)."""
    lines = text.splitlines()
    start = lines.index(f"  {job}:")
    end = next((i for i in range(start + 1, len(lines)) if re.match(r"  \S", lines[i])),
               len(lines))
    return lines[start + 1:end]


def job_env(lines):
    """The job's env: mapping (one KEY: value a line, quotes dropped)."""
    env, inside = {}, False
    for line in lines:
        if line == "    env:":
            inside = True
        elif inside and re.match(r"      [A-Z_]+: ", line):
            key, value = line.strip().split(": ", 1)
            env[key] = value.strip('"')
        elif inside and not line.startswith("      #"):
            inside = False
    return env


def job_scripts(lines):
    """Each step's `run: |` script, as text."""
    out, i = [], 0
    while i < len(lines):
        m = re.match(r"( +)run: \|$", lines[i])
        i += 1
        if not m:
            continue
        body = []
        while i < len(lines) and (not lines[i].strip() or
                                  len(lines[i]) - len(lines[i].lstrip()) > len(m.group(1))):
            body.append(lines[i].strip())
            i += 1
        out.append("\n".join(body))
    return out


def run_sh_commands(script, env):
    """The ./run.sh commands of a script: (subcommand, arguments), with the
    job's variables put in and a line's continuation joined."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        if "./run.sh " not in line:
            continue
        line = line.split(" || ", 1)[0].split(" >", 1)[0]
        line = re.sub(r"\$\{?([A-Z_]+)\}?", lambda m: env.get(m.group(1), m.group(1)), line)
        words = shlex.split(line)
        words = words[words.index("./run.sh") + 1:]
        out.append((words[0], words[1:]))
    return out


def job_commands(job):
    """A job's step scripts, each one bash can parse (its ${{ }} expressions
    stood for by a word), and their ./run.sh commands with the job's env."""
    scripts = job_scripts(job)
    for script in scripts:
        p = subprocess.run(["bash", "-n"], input=re.sub(r"\$\{\{[^}]*\}\}", "x", script),
                           text=True, capture_output=True)
        check(p.returncode == 0, f"bash -n: {p.stderr}: {script}")
    env = job_env(job)
    return scripts, [c for script in scripts for c in run_sh_commands(script, env)]


@case("the example workflow: an exits job of matrix --exits with a plan subset, then gate --exits "
      "per configuration; timing cannot fail there; it alone runs on pull requests")
def _(_s):
    text = open(WORKFLOW).read()
    on = text.split("\non:\n", 1)[1].split("\njobs:\n", 1)[0]
    check("\n  pull_request:" in on, f"on: {on}")
    check("    if: github.event_name != 'pull_request'" in workflow_job(text, "gate"),
          "the timing gate would run on pull requests")
    job = workflow_job(text, "exits")
    check(not any(line.startswith("    if:") for line in job), "the exits job is conditional")
    scripts, cmds = job_commands(job)
    matrices = [args for sub, args in cmds if sub == "matrix"]
    gates = [args for sub, args in cmds if sub == "gate"]
    check(len(matrices) == 2 and len(gates) == 1, f"{cmds}")
    labels = []
    for args in matrices:
        o = O.parse_matrix(args)
        each = O.parse_run(M.boot_argv("x", "2", "c", "/d", False, o.passed), "/")
        check(each.exits and each.accel == "kvm", f"{args}: not --exits under KVM")
        check(int(o.boots) < MIN_BOOTS, f"{args}: {o.boots} boots a side: a timing row "
              f"could be significant (the rank test reaches p < 0.05 from {MIN_BOOTS})")
        check(re.search(r"(^| )bench=", each.append), f"{args}: no plan subset")
        labels.append(o.label)
    check(labels == ["base", "cand"], f"labels {labels}")
    check([a for a in matrices[0] if a != "base"] == [a for a in matrices[1] if a != "cand"],
          f"base and candidate booted alike: {matrices}")
    a = readers.parser().parse_args(["gate"] + gates[0])
    check(a.exits and a.baseline and a.tap and a.junit, f"{gates[0]}")


@case("the nightly workflow: on self-hosted runners, a timing matrix and an exits matrix, both "
      "filed and judged by history --store with its verdict in the job summary; no gate of a "
      "night against the night before (it cries wolf over 220 rows); history's 20 is the job's")
def _(s):
    text = open(NIGHTLY).read()
    check("  schedule:\n" in text.split("\njobs:\n")[0], "not scheduled")
    job = workflow_job(text, "nightly")
    check(any("runs-on: [self-hosted," in line for line in job), "not on a self-hosted runner")
    scripts, cmds = job_commands(job)
    matrices = [O.parse_matrix(args) for sub, args in cmds if sub == "matrix"]
    runs = [O.parse_run(M.boot_argv("x", "2", "c", "/d", False, o.passed), "/")
            for o in matrices]
    check([r.exits for r in runs] == [False, True] and all(r.accel == "kvm" for r in runs),
          "not a timing matrix then an exits matrix under KVM")
    check(int(matrices[0].boots) >= MIN_BOOTS, f"{matrices[0].boots} timing boots a night")
    history = [readers.parser().parse_args(["history"] + args) for sub, args in cmds
               if sub == "history"]
    check(len(history) == 1 and history[0].store == "/var/lib/ipibench/history" and
          history[0].runs == ["TIMING", "EXITS"] and
          history[0].summary == "GITHUB_STEP_SUMMARY", f"{cmds}")
    check(not any("./run.sh gate" in sc for sc in scripts),
          "a gate of a night against the night before")
    head = text.split("\njobs:\n")[0]
    check("concurrency:" in head and "cancel-in-progress: false" in head, "no concurrency group")
    check("ref: ${{ vars.IPIBENCH_REF" in text, "ipibench's version not pinned")
    check(history[0].report == "verdicts/report", "the plots are not drawn")
    check(any('sudo chown -R "$(id -u):$(id -g)" "$GITHUB_WORKSPACE"' in sc for sc in scripts),
          "root-owned files left in the checkout")
    check(any("gh issue create" in sc for sc in scripts), "nobody is told of a regression")
    prune = next(sc for sc in scripts if "KEEP_NIGHTS" in sc)
    import tempfile
    hist = tempfile.mkdtemp(dir=s.tmp)
    series_dir = os.path.join(hist, "h", "c")
    for n in range(5):
        os.makedirs(os.path.join(series_dir, f"2026-01-0{n + 1}T030000Z"))
    os.makedirs(os.path.join(series_dir, "2026-01-09T030000Z.partial"))
    subprocess.run(["bash", "-c", prune], check=True,
                   env=dict(os.environ, HISTORY=hist, KEEP_NIGHTS="3"))
    check(sorted(os.listdir(series_dir)) == ["2026-01-03T030000Z", "2026-01-04T030000Z",
                                             "2026-01-05T030000Z", "2026-01-09T030000Z.partial"],
          f"pruned to {sorted(os.listdir(series_dir))}")
    verdict = next(sc for sc in scripts if "HISTORY_STATUS" in sc and 'exit "$status"' in sc)

    def status(matrix, history):
        return subprocess.run(["bash", "-c", verdict], text=True, capture_output=True,
                              env=dict(os.environ, MATRIX_STATUS=matrix,
                                       HISTORY_STATUS=history)).returncode
    check(status("0", "0") == 0 and status("0", "20") == 20 and status("4", "20") == 20 and
          status("4", "0") == 4 and status("0", "30") == 30,
          "the verdict: 20 first, then the matrices', then history's")


if __name__ == "__main__":
    sys.exit(main(CASES))

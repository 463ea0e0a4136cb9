#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Mutation fuzzer for the host tools' readers (host/ipibench/results/).

usage: tests/fuzz/fuzz_tools.py TARGET [--seconds N] [--seed N] [--artifacts DIR]
       tests/fuzz/fuzz_tools.py TARGET --replay FILE...

Targets, each fed files it did not write:
  results  load_results_file (a results.json), then what compare, gate and
           report do with the boot it returns
  console  load_console_log (a bare console log, or what `save` reads), then
           the same
  presets  load_presets and print_presets (host/ipibench/presets.conf,
           the file run.sh reads)
  kvm-trace  host/ipibench/kvmhost/trace_read.py and trace.py on a KVM ftrace
           capture (run.sh --exits): parse, attribute to the records of a
           captured console log, the table; it must never raise (seeds:
           tests/fixtures/traces)

Inputs are mutated seeds: the synthetic runs of tests/host/synth.py (their
results.json and console.log), host/ipibench/presets.conf, and any files in
tests/fuzz/corpus/TARGET/. Mutations: bit flips, interesting bytes, deleted,
repeated and duplicated ranges, truncation, splices of two seeds, and for
JSON a value swapped for one of another type. The random seed is fixed, so a
run is repeatable up to where its time budget ends it.

Every input must either load or raise ToolError with a code docs/exit-codes.md
gives the reader (22-24 for results and logs, 26 for presets). Another
exception, or an input taking over PER_INPUT_S, fails the run: the input is
saved as ARTIFACTS/crash-SHA1 and the exit status is 1. The last line reads
"TARGET: N runs in S s".
"""
import argparse
import contextlib
import hashlib
import io
import json
import os
import random
import signal
import sys
import tempfile
import time
import traceback
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "host"))
sys.path.insert(0, os.path.join(ROOT, "tests", "host"))

from ipibench.compare.correctness import correctness_failures  # noqa: E402
from ipibench.compare.formats import format_json, format_markdown, format_text  # noqa: E402
from ipibench.compare.model import Comparison  # noqa: E402
from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_PRESET, EX_SCHEMA  # noqa: E402
from ipibench.exit_codes import ToolError  # noqa: E402
from ipibench.kvmhost import trace as kvm_trace, trace_read  # noqa: E402
from ipibench.presets import HOST, load_presets, print_presets  # noqa: E402
from ipibench.report.distribution import cdf_curve, dist_data  # noqa: E402
from ipibench.report.matrix import matrix_cells  # noqa: E402
from ipibench.report.page import facts_lines  # noqa: E402
from ipibench.report.what_ran import set_context  # noqa: E402
from ipibench.results.files import (load_console_log, load_results_file,  # noqa: E402
                                    split_by_config)

PER_INPUT_S = 5  # far above any real input: a slower one counts as a hang
MAX_INPUT = 256 * 1024  # mutants are cut to this, so the runs stay fast

FILE_NAMES = {"results": "results.json", "console": "console.log", "presets": "presets.conf",
              "kvm-trace": "kvm-trace.txt"}
TRACES = os.path.join(ROOT, "tests", "fixtures", "traces")
CODES = {"results": {EX_MISSING, EX_MALFORMED, EX_SCHEMA},
         "console": {EX_MISSING, EX_MALFORMED, EX_SCHEMA},
         "presets": {EX_PRESET}, "kvm-trace": set()}

INTERESTING = [b"\0", b"\xff", b"\x80", b'"', b"\\", b"[", b"]", b"{", b"}", b",", b":",
               b"\n", b"\r", b"|", b"#", b" ", b"0", b"9", b"-", b".", b"e"]
TOKENS = [b"null", b"true", b"NaN", b"-Infinity", b"1e999", b"-1", b"0.5", b"[]", b"{}",
          b'"\\ud800"', b"\xc3\x28", b'{"record":', b"1" * 5000, b"-" + b"9" * 4400,
          b"SUCCESS", b"FAILURE", b"schema", b"| | | |", b"\t", b"\xe2\x80\xa8"]
VALUES = [None, True, False, 0, -1, 1, 2 ** 64, 1.5, "", "x", "SUCCESS", "FAILURE", [], {},
          [0], [[0, 0, 0]], {"p50": 1}, ["SUCCESS"], {"record": "end"}, 10 ** 300]


class Hang(BaseException):
    """Raised from SIGALRM; a BaseException, so no 'except Exception' swallows it."""


class Broken(Exception):
    """The reader broke its contract on one input."""


def on_alarm(signum, frame):
    raise Hang(f"no answer within {PER_INPUT_S} s")


# --- seeds


def synth_seeds(target):
    """results.json and console.log of synthetic runs (tests/host/synth.py)."""
    import synth

    def with_failure(i, recs):
        recs[3].update(status="FAILURE", reason="lost IPI")
        for k in ("cycles", "ns", "samples", "unit", "dryrun_cycles", "histogram"):
            recs[3].pop(k, None)

    out = []
    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()), \
            contextlib.redirect_stderr(io.StringIO()):
        synth.make_set(os.path.join(tmp, "a"), boots=1, samples=12, seed=1)
        synth.make_set(os.path.join(tmp, "b"), boots=1, samples=12, seed=2, cpus=2,
                       mutate=with_failure, status="FAILURE")
        for side in ("a", "b"):
            with open(os.path.join(tmp, side, "boot1", FILE_NAMES[target]), "rb") as f:
                out.append(f.read())
    return out


def load_seeds(target):
    seeds = []
    if target == "presets":
        with open(os.path.join(ROOT, "host", "ipibench", "presets.conf"), "rb") as f:
            seeds.append(f.read())
    elif target == "kvm-trace":
        for name in sorted(os.listdir(TRACES)):
            if name.endswith(".trace"):
                with open(os.path.join(TRACES, name), "rb") as f:
                    seeds.append(f.read()[:MAX_INPUT])
    else:
        seeds += synth_seeds(target)
    extra = os.path.join(HERE, "corpus", target)
    if os.path.isdir(extra):
        for name in sorted(os.listdir(extra)):
            with open(os.path.join(extra, name), "rb") as f:
                seeds.append(f.read())
    return seeds


# --- mutations


def span(rng, data):
    """A random [a, b) inside data (maybe empty)."""
    a = rng.randrange(len(data) + 1)
    return a, min(len(data), a + rng.choice((1, 2, 4, 8, 64, 1024)))


def mutate_bytes(rng, data, seeds):
    data = bytearray(data)
    op = rng.randrange(9)
    if not data:
        op = 6
    if op == 0:  # bit flips
        for _ in range(rng.randint(1, 4)):
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
    elif op == 1:  # an interesting byte
        data[rng.randrange(len(data))] = rng.choice(INTERESTING)[0]
    elif op == 2:  # delete a range
        a, b = span(rng, data)
        del data[a:b]
    elif op == 3:  # duplicate a range somewhere
        a, b = span(rng, data)
        i = rng.randrange(len(data) + 1)
        data[i:i] = data[a:b]
    elif op == 4:  # a run of one byte (nesting, long numbers, long names)
        i = rng.randrange(len(data) + 1)
        c = rng.choice(INTERESTING + [bytes([data[rng.randrange(len(data))]])])
        data[i:i] = c * rng.choice((2, 16, 300, 1100, 5000))
    elif op == 5:  # truncate
        del data[rng.randrange(len(data) + 1):]
    elif op == 6:  # insert a token
        i = rng.randrange(len(data) + 1)
        data[i:i] = rng.choice(TOKENS + INTERESTING)
    elif op == 7:  # splice with another seed
        other = rng.choice(seeds)
        data = data[:rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1):]
    else:  # swap two lines
        lines = bytes(data).split(b"\n")
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[i], lines[j] = lines[j], lines[i]
        data = bytearray(b"\n".join(lines))
    return bytes(data)


def json_nodes(doc):
    """Every (container, key) pair of a parsed JSON document."""
    if isinstance(doc, dict):
        items = list(doc.items())
    elif isinstance(doc, list):
        items = list(enumerate(doc))
    else:
        items = []
    for k, v in items:
        yield doc, k
        yield from json_nodes(v)


def mutate_json(rng, doc):
    """Changes one value of a parsed document: another type, dropped, or copied."""
    nodes = list(json_nodes(doc))
    if not nodes:
        return VALUES[rng.randrange(len(VALUES))]
    parent, key = rng.choice(nodes)
    op = rng.randrange(4)
    if op == 0 and isinstance(parent, dict):
        del parent[key]
    elif op == 1 and isinstance(parent, list):
        parent.insert(key, parent[key])
    else:
        parent[key] = rng.choice(VALUES)
    return doc


def mutate_structured(rng, data, target):
    """A JSON-aware mutation: of the whole file (results) or of one record line (console)."""
    if target == "results":
        try:
            return json.dumps(mutate_json(rng, json.loads(data))).encode()
        except (ValueError, RecursionError):
            return None
    lines = data.split(b"\n")
    recs = [i for i, line in enumerate(lines) if line.startswith(b'{"record":')]
    if not recs:
        return None
    i = rng.choice(recs)
    try:
        rec = json.loads(lines[i])
    except (ValueError, RecursionError):
        return None
    lines[i] = json.dumps(mutate_json(rng, rec), separators=(",", ":")).encode()
    return b"\n".join(lines)


def mutant(rng, seeds, target):
    data = rng.choice(seeds)
    for _ in range(rng.choice((1, 1, 2, 3, 6))):
        if target != "presets" and rng.random() < 0.3:
            data = mutate_structured(rng, data, target) or mutate_bytes(rng, data, seeds)
        else:
            data = mutate_bytes(rng, data, seeds)
    return data[:MAX_INPUT]


# --- what must hold for one input


def use_boot(boot):
    """What compare, gate and report do with a loaded boot: none of it may raise."""
    correctness_failures(boot)
    split_by_config([boot])
    facts_lines([("a", [boot])])
    set_context([boot])
    for unit in ("cycles", "ns"):
        cmp = Comparison("a", [boot], "b", [boot], unit=unit)
        cmp.overlap_error()
        format_text(cmp)
        format_markdown(cmp)
        format_json(cmp)
        for data in dist_data([boot], unit).values():
            cdf_curve("a", ("b", "m", "v", "x", "spin", 1), data)
        matrix_cells([boot], unit)


def use_presets(path):
    """`./run.sh list`'s printing of every configuration and of one."""
    presets = load_presets(path)
    with contextlib.redirect_stdout(io.StringIO()):
        print_presets(path)
        for name in list(presets)[:2]:
            print_presets(path, name)
    for name, p in presets.items():
        # smp: a vCPU count, or HOST (scaled to the host, presets.host_vcpus).
        smp_ok = p["smp"] == HOST or (isinstance(p["smp"], int) and p["smp"] > 0)
        if not (smp_ok and not any(c.isspace() for c in p["cpu"] + name)):
            raise Broken(f"preset {name!r} accepted with {p!r}")


def use_trace(path):
    with open(path, errors="replace") as f:
        trace = trace_read.parse(f)
    with open(os.path.join(TRACES, "svm-apic.log")) as f:
        recs = kvm_trace.attach(trace, kvm_trace.records(f))
    json.dumps(kvm_trace.summary(trace))
    kvm_trace.table(recs, kvm_trace.summary(trace))


def run_one(target, path, data):
    """Raises Broken (with the traceback) when the reader breaks its contract."""
    with open(path, "wb") as f:
        f.write(data)
    signal.setitimer(signal.ITIMER_REAL, PER_INPUT_S)
    try:
        if target == "results":
            use_boot(load_results_file(path))
        elif target == "console":
            use_boot(load_console_log(path))
        elif target == "kvm-trace":
            use_trace(path)
        else:
            use_presets(path)
    except ToolError as e:
        if e.code not in CODES[target]:
            raise Broken(f"ToolError with code {e.code}, not one of {sorted(CODES[target])}: "
                         f"{e.message}")
    except (Exception, Hang):
        raise Broken(traceback.format_exc())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


def save_artifact(folder, data):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "crash-" + hashlib.sha1(data).hexdigest())
    with open(path, "wb") as f:
        f.write(data)
    return path


def fuzz(a, path):
    seeds = load_seeds(a.target)
    rng = random.Random(a.seed)
    runs, start = 0, time.monotonic()
    todo = list(seeds)  # the seeds themselves first
    while todo or time.monotonic() - start < a.seconds:
        data = todo.pop(0) if todo else mutant(rng, seeds, a.target)
        try:
            run_one(a.target, path, data)
        except Broken as e:
            where = save_artifact(a.artifacts, data)
            print(f"{a.target}: input {runs + 1} broke the reader (saved as {where}):\n{e}",
                  file=sys.stderr)
            return 1
        runs += 1
    took = time.monotonic() - start
    print(f"{a.target}: {runs} runs in {took:.1f} s ({runs / max(took, 1e-9):.0f}/s), "
          f"{len(seeds)} seeds")
    return 0


def replay(a, path):
    for name in a.replay:
        with open(name, "rb") as f:
            data = f.read()
        try:
            run_one(a.target, path, data)
        except Broken as e:
            print(f"{a.target}: {name} broke the reader:\n{e}", file=sys.stderr)
            return 1
    print(f"{a.target}: {len(a.replay)} inputs replayed")
    return 0


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", choices=sorted(FILE_NAMES))
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--artifacts", default=os.path.join(ROOT, "build", "fuzz", "artifacts"))
    p.add_argument("--replay", nargs="+", metavar="FILE")
    a = p.parse_args(argv)
    a.artifacts = os.path.join(a.artifacts, a.target)
    signal.signal(signal.SIGALRM, on_alarm)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, FILE_NAMES[a.target])
        return replay(a, path) if a.replay else fuzz(a, path)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

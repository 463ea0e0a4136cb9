# SPDX-License-Identifier: GPL-2.0-only
"""A history's store: result folders filed as HOST/CONFIGURATION/START under
one root, so that a series is a folder and `./run.sh history` takes its
children (docs/host-tools.md, "The nightly loop").

- HOST names the CPU generation: host.cpu_model, else host.host_type (a lab
  import names the device's), as a slug. Two generations never share a
  series.
- CONFIGURATION is the run's configuration (a matrix's folder name, a run's
  label), with `-exits` when its boots were traced (run.sh --exits): their
  timings are instrumented, so they make a series of their own.
- START is the run's earliest run.started, made safe for a file name, so a
  listing of the series is in time order. A run without one (a LAVA import
  of the qemu device type before imports kept it) takes the time it is
  stored.

The boots are copied, never moved: the store is what a nightly job keeps,
the results folder is what it ran. A run already in the store (the same
results.json files) is left as it is: a job's step run twice must not
count one night twice. Another run that started in the same second gets
START.2."""
import os
import re
import shutil
import time

from ipibench.exit_codes import EX_SAVE, ToolError
from ipibench.results.files import load_set


def slug(text):
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-") or "unknown"


def host_type(boot):
    """The boot's host type as history groups runs: its CPU model, else the
    type a lab import named, else unknown."""
    return str(boot.host.get("cpu_model") or boot.host.get("host_type") or "an unknown host")


def series_name(boot):
    """HOST/CONFIGURATION of a boot."""
    config = boot.config() + ("-exits" if boot.run.get("exits") else "")
    return os.path.join(slug(host_type(boot)), slug(config))


def start_stamp(boots, now=None):
    """The earliest run.started of the boots, as a folder name."""
    starts = sorted(str(b.run["started"]) for b in boots if b.run.get("started"))
    when = starts[0] if starts else time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    return re.sub(r"[^0-9A-Za-z.-]+", "-", when.replace(":", "")).strip("-")


def boot_folder(boot):
    """The folder that holds a boot's results.json (its console, trace and
    reads beside it), or its console log file."""
    return os.path.dirname(boot.path) if boot.path.endswith("results.json") else boot.path


def contents(boots):
    """What tells one run from another: its results.json files' bytes."""
    out = []
    for b in boots:
        if b.path.endswith("results.json"):
            with open(b.path, "rb") as f:
                out.append(f.read())
    return sorted(out)


def free_name(where, boots):
    """where, or where.N when another run started in the same second; None
    when this very run is there already."""
    for n in range(1, 100):
        name = where if n == 1 else f"{where}.{n}"
        if not os.path.exists(name):
            return name
        try:
            there = load_set(name)
        except ToolError:
            continue
        if contents(there) == contents(boots):
            return None
    raise ToolError(EX_SAVE, f"cannot store a run under {where}: 99 runs started that second")


def store(root, path):
    """Files every configuration of the results folder `path` under root:
    [(series folder, stored folder or None when it was there already)]."""
    groups = {}
    for b in load_set(path):
        groups.setdefault(series_name(b), []).append(b)
    out = []
    for name, boots in groups.items():
        series = os.path.join(root, name)
        where = free_name(os.path.join(series, start_stamp(boots)), boots)
        if where is None:
            out.append((series, None))
            continue
        taken = set()
        try:
            os.makedirs(where + ".partial", exist_ok=True)
            for b in boots:
                src = boot_folder(b)
                name = os.path.basename(src.rstrip("/")) or "boot"
                n, base = 2, name
                while name in taken:
                    name, n = f"{base}-{n}", n + 1
                taken.add(name)
                dst = os.path.join(where + ".partial", name)
                if os.path.isdir(src):
                    shutil.copytree(src, dst, symlinks=True)
                else:
                    shutil.copy2(src, dst)
            # Whole or not at all: history must never read a half-copied night.
            os.rename(where + ".partial", where)
        except OSError as e:
            raise ToolError(EX_SAVE, f"cannot store {path} under {series}: {e.strerror or e}")
        out.append((series, where))
    return out


def series_runs(series):
    """The runs of a series folder, oldest first (their names are starts)."""
    return [os.path.join(series, d) for d in sorted(os.listdir(series))
            if os.path.isdir(os.path.join(series, d)) and not d.endswith(".partial")]

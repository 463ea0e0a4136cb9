# SPDX-License-Identifier: GPL-2.0-only
"""A history's store: result folders filed as HOST/CONFIGURATION/START under
one root, so that a series is a folder and `./run.sh history` takes its
children (docs/nightly.md).

- HOST names the CPU generation: host.cpu_model, else host.host_type (a lab
  import names the device's), as a slug. Two generations never share a
  series.
- CONFIGURATION is the run's configuration (a matrix's folder name, a run's
  label), with `-exits` when its boots were traced (run.sh --exits): their
  timings are instrumented, so they make a series of their own.
- START is the run's earliest run.started, made safe for a file name, so a
  listing of the series is in time order. A run without one is refused, as
  is one whose host type is unknown. Each series folder keeps the names it
  was made for (.series), so two that fold to one folder name never mix.

The boots are copied, never moved: the store is what a nightly job keeps,
the results folder is what it ran. A run already in the store (the same
results.json files) is left as it is: a job's step run twice must not
count one night twice. Another run that started in the same second gets
START.2."""
import os
import re
import shutil

from ipibench.exit_codes import (EX_INTERRUPTED, EX_MALFORMED, EX_PARTIAL, EX_SAVE, EX_USAGE,
                                 ToolError)
from ipibench.results.files import load_set
from ipibench.write import folder_name


def slug(text):
    return re.sub(r"[^a-z0-9.]+", "-", str(text).lower()).strip("-") or "unknown"


def host_type(boot):
    """The boot's host type as history groups runs: its CPU model, else the
    type a lab import named, else unknown."""
    return str(boot.host.get("cpu_model") or boot.host.get("host_type") or "an unknown host")


def series_name(boot):
    """HOST/CONFIGURATION of a boot. Each is a value of its results.json
    (host.cpu_model or host.host_type, run.config or label), checked as
    written and as folded (write.folder_name): a file imported from a lab
    log or a CI artifact can say anything (EX_MALFORMED)."""
    host, config = host_type(boot), boot.config()
    where = f"{boot.path}:"
    for text, what in ((host, "host type"), (config, "configuration")):
        folder_name(text, f"{where} {what}", EX_MALFORMED)
        folder_name(slug(text), f"{where} {what} {text!r}, as a folder", EX_MALFORMED)
    return os.path.join(slug(host), slug(config + ("-exits" if boot.run.get("exits") else "")))


def start_stamp(boots, path):
    """The earliest run.started of the boots, as a folder name. A run with
    no start is refused: history orders a series by run.started, and a
    series some of whose runs have none cannot be ordered at all."""
    starts = sorted(str(b.run["started"]) for b in boots if b.run.get("started"))
    if len(starts) < len(boots):
        raise ToolError(EX_USAGE, f"{path}: a boot has no run.started ({next(b.path for b in boots if not b.run.get('started'))}): its place in a history is unknown; import lab logs with ./run.sh lava import, which keeps the log's first time")
    stamp = re.sub(r"[^0-9A-Za-z.-]+", "-", starts[0].replace(":", "")).strip("-")
    return folder_name(stamp, f"{path}: run.started {starts[0]!r}, as a folder", EX_MALFORMED)


SERIES_MARK = ".series"  # a series folder's own names, before slug() folded them


def mark_of(boot):
    """The series mark's text: the host type and the configuration a series
    holds, as its boots name them."""
    return f"host type: {host_type(boot)}\nconfiguration: {boot.config()}" \
           f"{' (traced)' if boot.run.get('exits') else ''}\n"


def check_claim(series, boot):
    """Refuses a boot whose series folder was made for other names (two
    names that fold to one folder never share a series)."""
    mark = os.path.join(series, SERIES_MARK)
    if os.path.exists(mark):
        with open(mark, encoding="utf-8") as f:
            there = f.read()
        if there != mark_of(boot):
            theirs, ours = (t.strip().replace("\n", "; ") for t in (there, mark_of(boot)))
            raise ToolError(EX_USAGE, f"{series} holds another series ({theirs}) than {boot.path} ({ours}): their names fold to one folder")


def check_whole(boots, path):
    """Refuses a partial night: a matrix configuration with fewer boots
    than the matrix planned (run.matrix), or one a signal stopped (exit 11).
    Stored, it would set a level from one boot of five."""
    said = [b.run["matrix"] if isinstance(b.run.get("matrix"), dict) else {}
            for b in boots]
    planned = max([m["boots"] for m in said if isinstance(m.get("boots"), int)] + [0])
    whole = [b for b in boots if b.run.get("exit") != EX_INTERRUPTED]
    if planned and len(whole) < planned:
        raise ToolError(EX_PARTIAL, f"{path}: a partial night: {len(whole)} of the {planned} "
                        f"boots of {boots[0].config()} ran whole (the matrix was interrupted?): "
                        "not stored, so that it sets no level; run the night again")


def check_alike(boots, path):
    """Refuses boots filed as one run that a history could not take as one:
    another configuration or instrumentation under the same name."""
    first = boots[0]
    for b in boots[1:]:
        if b.configuration() != first.configuration() or b.timing_facts() != first.timing_facts():
            raise ToolError(EX_USAGE, f"{path}: {first.path} and {b.path} share the configuration name {first.config()!r} but not the configuration or instrumentation: give them their own labels")


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
        if not (b.host.get("cpu_model") or b.host.get("host_type")):
            raise ToolError(EX_USAGE, f"{b.path}: no host type (host.cpu_model): runs of unknown hosts would share one series; import lab logs with ./run.sh lava import --host-type NAME")
        groups.setdefault(series_name(b), []).append(b)
    # Every check before the first copy: a folder is stored whole or not at all.
    stamps = {}
    for name, boots in groups.items():
        check_whole(boots, path)
        check_alike(boots, path)
        check_claim(os.path.join(root, name), boots[0])
        stamps[name] = start_stamp(boots, path)
    out = []
    for name, boots in groups.items():
        series = os.path.join(root, name)
        try:
            os.makedirs(series, exist_ok=True)
            if not os.path.exists(os.path.join(series, SERIES_MARK)):
                with open(os.path.join(series, SERIES_MARK), "w", encoding="utf-8") as f:
                    f.write(mark_of(boots[0]))
        except OSError as e:
            raise ToolError(EX_SAVE, f"cannot store {path} under {series}: {e.strerror or e}")
        where = free_name(os.path.join(series, stamps[name]), boots)
        if where is None:
            out.append((series, None))
            continue
        taken = set()
        try:
            # A copy an earlier store left half-done (killed) is thrown away.
            shutil.rmtree(where + ".partial", ignore_errors=True)
            os.makedirs(where + ".partial")
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

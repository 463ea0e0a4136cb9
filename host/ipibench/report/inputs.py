# SPDX-License-Identifier: GPL-2.0-only
"""What a report reads and where it writes: the saved runs (one set per
input, or per configuration of a matrix), the short names that tell them
apart, and the default folder, RESULTS/reports/NAME."""
import hashlib
import os
import re

from ipibench import REPO
from ipibench.exit_codes import EX_USAGE, ToolError
from ipibench.results.files import load_set, split_by_config


def load_sets(inputs):
    """[(name, boots)]: one per input, or one per configuration of a matrix
    (named INPUT/CONFIG)."""
    sets = []
    for path in inputs:
        boots = load_set(path)
        groups = split_by_config(boots)
        base = path.rstrip("/") or path
        if len(groups) > 1:
            sets += [(os.path.join(base, str(c)), b) for c, b in groups.items()]
        else:
            sets.append((base, boots))
    return sets


def display_names(names):
    """The shortest trailing path parts that tell the sets apart: 'xapic-smp4'
    beside 'x2apic-smp4', but 'DATE-before/x2apic-smp4' beside
    'DATE-after/x2apic-smp4'."""
    parts = [[p for p in os.path.normpath(n).split(os.sep) if p] or [n] for n in names]
    short = names
    for k in range(1, max(len(p) for p in parts) + 1):
        short = ["/".join(p[-k:]) for p in parts]
        if len(set(short)) == len(short):
            return short
    return [f"{s} #{i + 1}" for i, s in enumerate(short)]


NAME_MAX = 100                 # characters of a default report folder's name


def report_name(inputs, pair=None):
    """The default folder's name, from the inputs' trailing folder names (two
    at least, as many as tell them apart): 'DATE-before-x2apic-smp4-vs-DATE-
    after-x2apic-smp4'; a long one is cut, a digest of it keeps it apart."""
    paths = [os.path.abspath(p) for p in inputs]
    parts = [[x for x in (os.path.dirname(p) if os.path.isfile(p) else p).split(os.sep) if x]
             for p in paths]
    short = []
    for k in range(2, max(len(p) for p in parts) + 2):
        short = ["-".join(p[-k:]) for p in parts]
        if len(set(short)) == len(short):
            break
    name = ("-vs-" if len(short) == 2 else "-and-").join(short)
    if pair:
        name += f"-{pair[0]}-vs-{pair[1]}"
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "report"
    if len(name) > NAME_MAX:
        digest = hashlib.sha1(name.encode()).hexdigest()[:8]
        name = name[:NAME_MAX - 9].rstrip("-.") + "-" + digest
    return name


def within(path, folder):
    path, folder = os.path.realpath(path), os.path.realpath(folder)
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def default_out(inputs, pair=None, environ=None):
    """RESULTS/reports/NAME: under the results root (IPIBENCH_RESULTS, else
    the checkout's results/, where run.sh saves), never in an input's folder:
    that holds what a run saved, and a comparison's report belongs to both
    sides, not to the first. Running it again replaces it. Usage (exit 2)
    when that folder lies within an input."""
    environ = os.environ if environ is None else environ
    root = os.path.abspath(environ.get("IPIBENCH_RESULTS") or os.path.join(REPO, "results"))
    out = os.path.join(root, "reports", report_name(inputs, pair))
    inside = [i for i in inputs if os.path.isdir(i) and within(out, i)]
    if inside:
        raise ToolError(EX_USAGE, f"the default folder {out} lies within the input {inside[0]}: give --out DIR")
    return out

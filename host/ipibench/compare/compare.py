# SPDX-License-Identifier: GPL-2.0-only
"""`./run.sh compare`: two result sets (or one backend against another with
--pair) as one table."""
import sys

from ipibench.compare.formats import compare_verdict, FORMATS
from ipibench.compare.model import Comparison, ROW_FILTERS
from ipibench.exit_codes import EX_USAGE, ToolError
from ipibench.results.files import load_set
from ipibench.write import replace_file


def load_side(path):
    boots = load_set(path)
    return path.rstrip("/") or path, boots


def parse_pair(text):
    """compare --pair X=Y -> (X, Y)."""
    if text is None:
        return None
    x, _, y = text.partition("=")
    if not x or not y:
        raise ToolError(EX_USAGE,
                        f"--pair takes BACKEND_A=BACKEND_B (e.g. xapic=x2apic), not '{text}'")
    return x, y


def make_comparison(a_path, b_path, alpha, unit, pair=None):
    """b_path None (with --pair): both backends from the one set a_path."""
    a_name, a_boots = load_side(a_path)
    b_name, b_boots = load_side(b_path) if b_path else (a_name, a_boots)
    if pair:
        a_name, b_name = f"{a_name} [{pair[0]}]", f"{b_name} [{pair[1]}]"
    elif a_name == b_name:
        a_name, b_name = "A:" + a_name, "B:" + b_name
    return Comparison(a_name, a_boots, b_name, b_boots, alpha, unit, pair)


def emit(text, out):
    if out in (None, "-"):
        sys.stdout.write(text)
    else:
        replace_file(out, text)


def cmd_compare(a):
    """`./run.sh compare`, its arguments as its parser read them."""
    return compare_sets(a.a, a.b, parse_pair(a.pair), alpha=a.alpha, unit=a.unit,
                        fmt=a.format, output=a.output,
                        keep={name: getattr(a, name) for name in ROW_FILTERS}, every=a.all)


def compare_sets(a_path, b_path, pair=None, alpha=0.05, unit="cycles", fmt="text",
                 output=None, keep=None, every=False):
    """The comparison table of two result sets (or of one, with pair), written
    to output (None: standard output), its verdict line last; keep: {filter:
    "a,b"} of the rows to keep (compare's --bench, --metric ...); every: list
    the rows without a figure on either side too. 0, or a ToolError."""
    if b_path is None and not pair:
        raise ToolError(EX_USAGE, "compare takes two result sets, or one with --pair X=Y")
    cmp = make_comparison(a_path, b_path, alpha, unit, pair)
    err = cmp.overlap_error()
    if err:
        raise err
    cmp.keep_rows({name: [v for v in ((keep or {}).get(name) or "").split(",") if v]
                   for name in ROW_FILTERS})
    # A format that lists every row (JSON): its verdict line says so.
    emit(FORMATS[fmt].write(cmp, every, closing=compare_verdict(cmp, every or FORMATS[fmt].every)),
         output)
    if cmp.reasons:
        print("compare: NOT COMPARABLE: " + "; ".join(cmp.reasons), file=sys.stderr)
    if cmp.timing_reasons:
        print("compare: TIMINGS NOT COMPARABLE (exits per iteration still compare): "
              + "; ".join(cmp.timing_reasons), file=sys.stderr)
    return 0

# SPDX-License-Identifier: GPL-2.0-only
"""The readers of saved results, `./run.sh compare|gate|report` (docs/comparing.md):
their arguments (add_readers, part of run.sh's one parser) and their
dispatch. They run in the caller's directory; each error is one line on
stderr and an exit code from docs/exit-codes.md."""
import sys

from ipibench.command_line import Parser, PROG
from ipibench.compare.compare import cmd_compare, parse_pair
from ipibench.compare.formats import FORMATS, GATE_FORMATS
from ipibench.compare.gate import cmd_gate
from ipibench.history_plot import cmd_history_report
from ipibench.exit_codes import EX_INTERRUPTED, ToolError
from ipibench.report.command import report
from ipibench.results.changepoints import ALPHA

EXIT_TABLE = """exit status: 0 done; 2 usage; 20 regression; 21 correctness failure;
22 results missing; 23 malformed or truncated; 24 unknown schema or format
version; 25 nothing in common to compare; 30 environments not comparable;
36 gate --exits: a side's exits diverge from its host class's model
(docs/exit-codes.md)."""


def cmd_report(a):
    a.pair = parse_pair(a.pair)
    return report(a)


def add_readers(sub):
    """compare, gate, report and history, added to run.sh's subcommands, in
    that order: {name: parser}. Their parsers keep argparse's own -h and
    errors (usage, message, exit 2)."""
    return {"compare": add_compare(sub), "gate": add_gate(sub), "report": add_report(sub),
            "history": add_history(sub)}


def add_compare(sub):
    """`./run.sh compare`: its parser."""
    c = sub.add_parser("compare", prog="./run.sh compare",
                       help="A/B table: medians, change, significance (--pair X=Y: backend "
                       "X against backend Y)",
                       description="Compare two result sets: one row per benchmark x metric x "
                       "variant x backend x target state x target count, with the medians of "
                       "the per-boot p50s of A and B, the change of B against A, and a "
                       "Mann-Whitney U test over the per-boot medians; with --pair, one "
                       "backend's rows against another's.",
                       epilog="A and B are results.json files, run directories or folders "
                       "searched for results.json (a matrix configuration: every boot).\n"
                       + EXIT_TABLE)
    c.add_argument("a")
    c.add_argument("b", nargs="?", help="the second set (optional with --pair: A's own)")
    c.add_argument("--pair", metavar="X=Y",
                   help="backend against backend: A's backend X rows against B's backend Y "
                        "rows (B defaults to A), e.g. --pair xapic=x2apic")
    c.add_argument("--format", choices=tuple(FORMATS), default="text")
    c.add_argument("--output", "-o", help="write here instead of standard output")
    c.add_argument("--alpha", type=float, default=0.05, help="significance level (0.05)")
    c.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    c.add_argument("--all", action="store_true",
                   help="also list the rows without a figure on either side (by default "
                        "one line counts them)")
    for name, what in (("bench", "benchmarks (single,self)"), ("metric", "metrics (one-way)"),
                       ("variant", "variants (sti-nop)"),
                       ("backend", "backends (x2apic; with --pair: X=Y)"),
                       ("targets", "target counts (1,3)")):
        c.add_argument("--" + name, metavar="LIST",
                       help=f"only the rows of these {what}: exact names, comma-separated; "
                            "a name no row has is exit 2")
    return c


def add_gate(sub):
    """`./run.sh gate`: its parser."""
    g = sub.add_parser("gate", prog="./run.sh gate",
                       help="fail on a regression or an incorrect run (TAP, JUnit)",
                       description="Fail when the candidate is incorrect or when any row's "
                       "median (p50) is significantly slower than the baseline's by more "
                       "than the threshold.",
                       epilog="Correctness failures (FAILURE records, a correctness suite with "
                       "failures, a guest status other than SUCCESS or SKIP, invalid records) "
                       "always fail the gate.\n" + EXIT_TABLE)
    g.add_argument("candidate")
    g.add_argument("--baseline", required=True)
    g.add_argument("--threshold", default="5%", help="allowed slowdown, e.g. 5%% (default)")
    g.add_argument("--alpha", type=float, default=0.05)
    g.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    g.add_argument("--tap", help="write TAP here ('-': standard output)")
    g.add_argument("--junit", help="write JUnit XML here")
    g.add_argument("--format", choices=GATE_FORMATS, default="text")
    g.add_argument("--exits", action="store_true",
                   help="also fail on an exit reason whose rate rose past a count test "
                        "(both sides need run.sh --exits), and on a side "
                        "whose exits diverge from its host class's model (36)")
    return g


def add_report(sub):
    """`./run.sh report`: its parser."""
    r = sub.add_parser("report", prog="./run.sh report",
                       help="plots (SVG, PNG) and an HTML/Markdown page",
                       description="Plots (gnuplot, SVG and PNG) and a page (index.html, "
                       "report.md): latency distributions per backend, the scaling curve "
                       "against target count, the kvm-unit-tests view (a bar per backend "
                       "and x86/vmexit.c name), and with two inputs, or with --pair, the "
                       "A/B comparison and its bar chart.",
                       epilog="exit status: 0 written; 2 usage (--pair over more than two "
                       "sets); 9 gnuplot missing; 22-25 as compare.")
    r.add_argument("inputs", nargs="+")
    r.add_argument("--pair", metavar="X=Y",
                   help="the A/B part sets backend X (baseline) against backend Y "
                        "(candidate), as compare --pair: within one set, or the first "
                        "input's X against the second's Y")
    r.add_argument("--out", "-o", help="folder for the page and plots (default: "
                   "RESULTS/reports/NAMES: the results root, as run.sh saves under it, and "
                   "the inputs' folder names)")
    r.add_argument("--title", default="ipibench report")
    r.add_argument("--alpha", type=float, default=0.05)
    r.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    return r


def add_history(sub):
    """`./run.sh history`: its parser."""
    h = sub.add_parser("history", prog="./run.sh history",
                       help="change points over a series of runs: when a figure moved, and "
                       "what changed on the host",
                       description="Change points of every figure over a series of runs of "
                       "one configuration\n(results folders; ordered by their start, grouped by "
                       "host type): the newest\nnight against its level and E-Divisive means "
                       "for timings, every step\nbeyond 0.05 for exits per iteration (a "
                       "regression: a count test); each\nchange with its size, its interval and what "
                       "differs in the host's facts\neither side (docs/nightly.md, "
                       "\"history\").",
                       epilog="exit status: 0 no figure regressed; 2 usage; 20 a figure "
                       "regressed within the window (slower beyond --threshold, or more "
                       "exits); 22-24 as compare; 28 --store or --summary cannot be "
                       "written; 30 the newest run cannot be judged (it starts a new "
                       "series, or its trace lost events) (docs/exit-codes.md).")
    h.add_argument("runs", nargs="*", metavar="RUN", help="a results folder of the series "
                   "(with --store: a results folder to add to the store: a run, a matrix, a "
                   "lab import)")
    h.add_argument("--store", metavar="ROOT",
                   help="first copy each configuration of each RUN into ROOT/HOST/"
                   "CONFIGURATION/START, then judge every series it added to; without "
                   "RUN, judge every series in ROOT")
    h.add_argument("--summary", metavar="FILE",
                   help="append the verdict as Markdown (a line a series, each regression) "
                   "to FILE, e.g. $GITHUB_STEP_SUMMARY")
    h.add_argument("--threshold", default="5%",
                   help="a slowdown beyond this within the window fails (5%%)")
    h.add_argument("--alpha", type=float, default=ALPHA,
                   help="the permutation test's level (0.01: a nightly verdict must not cry "
                   "wolf)")
    h.add_argument("--window", type=int, default=10, metavar="N",
                   help="judge the changes of the newest N runs: the level now against the "
                   "lowest level they saw (10)")
    h.add_argument("--unit", choices=("cycles", "ns"), default="cycles")
    h.add_argument("--tap", help="write TAP here ('-': standard output)")
    h.add_argument("--junit", help="write JUnit XML here")
    h.add_argument("--report", metavar="DIR",
                   help="also draw each row that changed over the runs, its change points "
                   "marked, on a page (index.html, report.md) that lists the changes (gnuplot)")
    h.add_argument("--report-all", action="store_true",
                   help="with --report: draw every row, not only those that changed")
    return h


def parser():
    """The readers' part of run.sh's parser, standing alone (for main)."""
    p = Parser(prog=PROG)
    p.commands = add_readers(p.add_subparsers(dest="cmd", required=True))
    return p


COMMANDS = {"compare": cmd_compare, "gate": cmd_gate, "report": cmd_report,
            "history": cmd_history_report}


def main(argv):
    p = parser()
    a, rest = p.parse_known_args(argv)
    if rest:
        # Said by the subcommand's parser, which knows its own options.
        p.commands[a.cmd].error(f"unrecognized arguments: {' '.join(rest)}")
    try:
        return COMMANDS[a.cmd](a)
    except ToolError as e:
        print(f"{a.cmd}: {e.message}", file=sys.stderr)
        return e.code
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return EX_INTERRUPTED

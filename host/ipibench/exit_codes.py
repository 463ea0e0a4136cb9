# SPDX-License-Identifier: GPL-2.0-only
"""Every exit code of run.sh and its subcommands, in one place: the table of
docs/exit-codes.md. The guest's statuses arrive through QEMU's exit status
(qemu.GUEST maps them); the rest are the host's own."""

# A boot (./run.sh [run]): the guest's status, or what stopped it.
EX_OK = 0
EX_USAGE = 2          # a bad option or value
EX_ERROR = 3          # guest ERROR: the environment broke
EX_FAILURE = 4        # guest FAILURE: an IPI lost, duplicated or misrouted
EX_CRASH = 5          # guest CRASH: an unexpected exception
EX_BADCMD = 6         # guest BAD-CMDLINE
EX_TIMEOUT = 7        # --timeout ran out
EX_QEMU = 8           # QEMU failed to start, reset without a status, or was killed
EX_DEPS = 9           # a dependency is missing
EX_BUILD = 10         # the build failed
EX_INTERRUPTED = 11   # Ctrl-C or another signal

# The subcommands (compare, gate, report, ab, ...).
EX_REGRESSION = 20    # gate, history: a figure or an exit row regressed
EX_CORRECTNESS = 21   # gate: the candidate failed a correctness check
EX_MISSING = 22       # a results file is missing
EX_MALFORMED = 23     # a results file is malformed
EX_SCHEMA = 24        # a results file has another schema
EX_NO_OVERLAP = 25    # compare/gate: no row in common
EX_PRESET = 26        # an unknown configuration
EX_QEMU_OLD = 27      # QEMU older than 8.1
EX_SAVE = 28          # the results could not be saved
EX_UNAVAILABLE = 29   # --pin, --perf-kvm or --exits cannot work here
EX_INCOMPARABLE = 30  # compare/gate: the sides are not comparable
EX_NEEDS_KVM = 31     # KVM asked for or needed, and not usable here
EX_APICV_INHIBITED = 32  # --require-apicv: a record ran without APIC virtualization
EX_MODPARAM = 33      # ab: a module parameter could not be set
EX_SAME_SIDES = 34    # ab: the module granted neither side what set them apart
# A guest SKIP that measured and checked nothing (console.ran_nothing):
# never a pass, whatever could not run.
EX_NOTHING_RAN = 35
EX_MODEL_DIVERGES = 36  # model: a record's exits diverge from its host class's predictions
EX_PARTIAL = 37       # history --store: a partial night (an interrupted matrix), not stored


class ToolError(Exception):
    """One clear message and the documented exit code that goes with it."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code
        self.message = message

# SPDX-License-Identifier: GPL-2.0-only
"""Every exit code of run.sh and its subcommands, in one place: the
constants the code raises, and beside them what each means (MEANINGS) and
the messages that come with them (MESSAGES), from which
tools/doc_reference.py writes docs/exit-codes.md. The guest's statuses
arrive through QEMU's exit status (boot/qemu.py's GUEST maps them); the
rest are the host's own."""
from typing import NamedTuple

# A boot (./run.sh [run]): the guest's status, or what stopped it.
EX_OK = 0
EX_TOOL_FAILED = 1    # report: gnuplot itself failed
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
# A guest SKIP that measured and checked nothing (boot/outcome.ran_nothing):
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


class Meaning(NamedTuple):
    """One exit code as a reader needs it: who exits with it, what it means
    in a line, what to look at, and the whole story where a line is short
    of it (Markdown, one table cell each)."""
    code: int
    commands: str
    summary: str
    look: str
    detail: str = ""


class Message(NamedTuple):
    """A line a run ends with, or one it prints on its way (code None: the
    run goes on and exits as its guest's status says)."""
    text: str
    code: object
    meaning: str


# Every subcommand shares 2, 9 and 11; matrix passes a boot's own code on.
MEANINGS = (
    Meaning(EX_OK, "every", "guest SUCCESS, or SKIP with something asked for that ran; "
            "a subcommand that found nothing wrong",
            "the summary: each SKIP names the CPUID bit or `-cpu` flag it lacked"),
    Meaning(EX_TOOL_FAILED, "report", "gnuplot itself failed", "gnuplot's message, printed"),
    Meaning(EX_USAGE, "every", "a usage error: an unknown option, an option without its value, "
            "a bad value (a `--memory` below what the guest needs included), or a token of "
            "`--append` the guest would refuse, found before QEMU starts "
            "([command-line.md](command-line.md))", "the message, which names the word"),
    Meaning(EX_ERROR, "run, matrix, ab", "guest ERROR: our code or the environment broke (an AP "
            "missed its start deadline, a barrier timed out, the stall watchdog fired)",
            "`smp: CPU N (APIC ID A) did not come up ...`, a `watchdog:` line"),
    Meaning(EX_FAILURE, "run, matrix, ab", "guest FAILURE: the system under test misbehaved: an "
            "IPI lost, duplicated or misrouted, a hypercall refused",
            "`not ok` lines and `bench: FAILURE: ...`, which name backend, sender and target"),
    Meaning(EX_CRASH, "run, matrix, ab", "guest CRASH: an unexpected exception",
            "the register dump: CPU, APIC ID, RIP, CR2, and what was running"),
    Meaning(EX_BADCMD, "run, matrix, ab", "guest BAD-CMDLINE: the guest refused its command line",
            "the line before, which names the token and what is accepted"),
    Meaning(EX_TIMEOUT, "run, matrix, ab", "timeout: the guest did not finish within `--timeout` "
            "(QEMU killed)", "run.sh's last line: the unit the guest was in, or its last console "
            "line"),
    Meaning(EX_QEMU, "run, matrix, ab", "QEMU failed to start (exit 1), exited without a status "
            "(0: a reset or triple fault), was killed by a signal, or returned an unknown code",
            "run.sh's last line; for a QEMU that did not start, QEMU's own message, printed last"),
    Meaning(EX_DEPS, "every", "a dependency is missing and could not be installed (`python3`, "
            "which run.sh itself runs on, included; gnuplot for `report`), or `--accel xen` "
            "on a host that is no Xen dom0 with `xl`, root and a device model of QEMU 8.0 or "
            "later",
            "the command to run, printed"),
    Meaning(EX_BUILD, "run, matrix, ab", "the build failed", "make's output, printed whole"),
    Meaning(EX_INTERRUPTED, "every", "interrupted: Ctrl-C, SIGTERM or SIGHUP",
            "the incomplete log, named"),
    Meaning(EX_REGRESSION, "gate, history", "a regression: a figure got slower, or an exit "
            "reason rose", "`gate: FAIL: ...` lines", detail=(
                "gate: a row's median is significantly slower than the baseline's by more than "
                "`--threshold` (only where the timings are comparable), or, with `--exits`, a "
                "row with exit data on both sides has an exit reason that rose by half an exit a "
                "target an iteration or more, or by more than 0.1 beyond chance (a count test "
                "over the exits and iterations summed over boots, Holm over the row's exit "
                "reasons at 0.01; [nightly.md](nightly.md)): a planted exit a send (+1.00) always fails, "
                "3 PV-EOI fallbacks in 50 iterations (+0.06) never, however many boots; a "
                "smaller rise is reported with its exit reason, never failed. Exits decide 20 "
                "whatever the timings: a figure withheld for timing (a one-way SKIP) keeps its "
                "sampling's exits, a row one side does not have is listed (`gate: listed: ROW: "
                "not judged: ...`) and judged by nothing, and an exit regression is 20 even where "
                "other rows or the timings are not comparable (30). history: a row got slower "
                "than `--threshold`, or gained exits per iteration, within the newest "
                "`--window` runs ([nightly.md](nightly.md))")),
    Meaning(EX_CORRECTNESS, "gate", "the candidate is not correct, whatever the timing",
            "`gate: FAIL: correctness: ...`", detail=(
                "a FAILURE record, a correctness suite with failures, a guest status other than "
                "SUCCESS or SKIP, no `end` record, or invalid record lines")),
    Meaning(EX_MISSING, "compare, gate, report, history", "a results file or directory is "
            "missing or unreadable, or a run directory has no `results.json` (the run was "
            "interrupted)", "the message, which names the file"),
    Meaning(EX_MALFORMED, "compare, gate, report, history, lava import", "a results file is "
            "malformed or truncated: not JSON, not an ipibench results file, a record that "
            "breaks [results.md](results.md)", "the message, which names file, line and column",
            detail=(
                "history `--store`: also a value that becomes a folder of the store (host type, "
                "configuration, start) that is empty, `.`, `..`, starts with a dot or holds a "
                "separator, refused before anything is written (lava import's `--host-type` and "
                "`--label` likewise: 2)")),
    Meaning(EX_SCHEMA, "compare, gate, report, history", "an unknown results-format version or "
            "record schema version", "the message, which names the record and its schema"),
    Meaning(EX_NO_OVERLAP, "compare, gate, report", "nothing to compare: A and B "
            "(baseline and candidate) share no benchmark row, or there are no result records "
            "to plot", "the message, which lists each side's rows"),
    Meaning(EX_PRESET, "run, matrix, list", "an unknown configuration name, or "
            "host/ipibench/presets.conf is malformed", "`./run.sh list`"),
    Meaning(EX_QEMU_OLD, "run, matrix", "QEMU too old (8.1 or later needed), or its version "
            "cannot be told", "the message: install a newer QEMU or set `QEMU=`"),
    Meaning(EX_SAVE, "run, matrix, history", "the results could not be saved",
            "the message, which says why and where else to save", detail=(
                "cannot create the directory, `--results-dir` exists, cannot write; history: "
                "`--store` cannot copy a run into its store, or `--summary` cannot be appended "
                "to. The message says why (`run.sh: cannot create DIR: Permission denied; "
                "IPIBENCH_RESULTS=DIR keeps them elsewhere, --no-save keeps nothing`); a "
                "directory that cannot be made stops the run before QEMU starts")),
    Meaning(EX_UNAVAILABLE, "run, matrix, ab", "`--pin`, `--perf-kvm` or `--exits` unavailable "
            "where KVM itself is usable", "the message, which names what is missing", detail=(
                "on a hardware KVM: no QMP answer, fewer host CPUs than vCPUs, no perf or no kvm "
                "tracepoints, no tracefs with KVM's events (`--exits`); or asked under an "
                "accelerator that is not KVM (`--accel tcg` or `tcg-single`; `--exits`: not KVM "
                "nor the lane; under `--accel xen`, another xentrace running on the host). "
                "`--accel kvm` where KVM is not usable is 31")),
    Meaning(EX_INCOMPARABLE, "gate, history", "baseline and candidate are not comparable",
            "`gate: timings not comparable: ...`, `gate: exits not comparable: ...`", detail=(
                "a fact that changes a figure differs: the hypervisor, CPU count, TSC source, "
                "accelerator, `-cpu`, machine, preset, guest command line or warning set "
                "([comparing.md](comparing.md), \"When two sides are not comparable\"); or a "
                "row of an xAPIC-mode backend "
                "was measured after x2APIC mode on AVIC without x2AVIC, where KVM emulates every "
                "xAPIC access ([comparing.md](comparing.md), \"After x2APIC\"); or their timings "
                "are not comparable and no exit row regressed: the timed-region instrumentation "
                "differs (`markers=1`, the host's KVM trace of `--exits`, `--perf-kvm`, "
                "`host_stats=1`: each adds work inside or around every timed region); or, with "
                "`--exits` and no row with more exits: a row both sides ran that only one side "
                "traced, a side whose trace lost events or was cut short, no row with exit "
                "data on both sides, or a baseline that diverges from its host class's model "
                "(the candidate's is 36). compare prints the same (`NOT COMPARABLE`, `TIMINGS NOT "
                "COMPARABLE`) but exits 0. history: the newest run starts a new series (its "
                "configuration or instrumentation differs from the run before it), or its trace "
                "lost events, so that night cannot be judged "
                "([nightly.md](nightly.md))")),
    Meaning(EX_NEEDS_KVM, "run, matrix, ab", "KVM asked for (`--accel kvm`) or needed (`--exits`, "
            "`--pin`, `--perf-kvm`, or a flag only KVM offers) and not usable here",
            "run.sh's last line: the reason, and the ways on: `--accel kvm-in-tcg --preset "
            "NAME`, or `--allow-fallback` to accept TCG", detail=(
                "One code on every kind of host, never the usage error 2. `--accel kvm` (with "
                "or without `--exits`, `--pin`, `--perf-kvm`) where `/dev/kvm` is missing, not a "
                "character device, or not accessible (the system's words: `Permission denied`, "
                "`No such device` without a KVM module); `--accel kvm` with `--exits`, `--pin` "
                "or `--perf-kvm` on a software KVM (PVM, module `kvm_pvm`), where exit counts and "
                "vCPU placement measure PVM's software path and are never a source of figures "
                "(plain `--accel kvm` still boots there, its figures marked `kvm-software`); "
                "under `--accel auto` (the default), `--exits`, `--pin` or `--perf-kvm` where no "
                "KVM is usable for the same reasons (they read this host's KVM itself); under "
                "`--accel auto`, a preset or `--cpu` with a flag only KVM offers (`hv-*`, "
                "`kvm-pv-*`, not turned off) where `/dev/kvm` is missing, not usable, a software "
                "KVM, or refuses the vCPU model: under TCG every backend such a flag adds would "
                "SKIP and the run pass having tested none of it. Run it under real KVM nested in "
                "TCG (`--accel kvm-in-tcg --preset NAME`), or accept TCG knowingly for the flags "
                "(`--allow-fallback`, or `--accel tcg`). A matrix checks every preset before its "
                "first boot, ab before it changes the module parameter")),
    Meaning(EX_APICV_INHIBITED, "run", "`--require-apicv` (with `--exits`): APICv/AVIC was off or "
            "inhibited while a record was measured, so the accelerated path was not measured",
            "the exits table's last line, which names the module parameter and the inhibits "
            "(`DISABLED`, `PIT_REINJ`) and when they were set"),
    Meaning(EX_MODPARAM, "ab", "the module parameter cannot be set here, and nothing was "
            "changed", "the message, which says why (and lists the parameters there are)",
            detail=(
                "a module other than `kvm`, `kvm_amd`, `kvm_intel`, a parameter name that is not "
                "a plain identifier, an unknown parameter (the message lists those "
                "`/sys/module/MODULE/parameters` shows), a value not of the parameter's type "
                "(bool or integer, told from its current value) or a parameter of neither type, "
                "not root, the module not loaded, or, for a parameter read at load time, the "
                "module built in or `/dev/kvm` held by another process (a reload would pull KVM "
                "from under its VMs: the message names the PID); also a write or module reload "
                "that failed, after which the original value is put back")),
    Meaning(EX_SAME_SIDES, "ab", "nothing to compare: side B ran (or would run) with the value "
            "side A ran with, read back from the module",
            "`ab: both sides ran with kvm_amd.avic=N: nothing to compare (A asked 0, B asked 1)`",
            detail=(
                "after `asked 1, got N: the CPU has no AVIC`. The A B B A order stops after side "
                "B's first boot (the lane says what it granted only then), or before it, side B "
                "not booted at all, when its value is known first (the host's read-back, or B "
                "asks what the lane gave A); no compare table. A failing boot's code comes "
                "first")),
    Meaning(EX_NOTHING_RAN, "run, matrix, ab", "guest SKIP, and nothing that was asked for ran: "
            "every check and every benchmark SKIPped", "run.sh's last line: `nothing that was "
            "asked for ran: REASON`", detail=(
                "No `result` or `norov` record has status SUCCESS (the harness's own `dry-run` "
                "and the `exit-ref` reference exits, which every benchmark plan measures first, "
                "count only when `bench=` names them) and no check passed (no TAP `ok` line "
                "without `# SKIP`, the `check` record's `passed` 0): e.g. `--append "
                "backends=hv-ipi` under `--accel tcg`, or on a KVM without the `hv-*` flags. "
                "results.json keeps the guest's status, SKIP; `gate` and `compare` read the "
                "status as before. `plan=boot` asks for nothing measured and ends SUCCESS: exit "
                "0. A matrix boot with 35 is a failing boot (the matrix goes on, and exits with "
                "the first failing code)")),
    Meaning(EX_MODEL_DIVERGES, "model, gate", "a saved `--exits` run has a record whose exits "
            "diverge from what its host class predicts", "a `diverges:` line per record (gate: "
            "`gate: FAIL: model:`)", detail=(
                "The class's predictions are host/ipibench/kvmhost/host-model.conf's: sender, "
                "doorbell misses, targets or the targets' EOI, off by 0.5 per iteration or more "
                "(under that, the load's; a halted target's wake is a note, never a divergence). "
                "gate `--exits` judges a boot of either side anew against the model as it is "
                "now, after its regression check (more exits per iteration than the baseline is "
                "20 first); a baseline that diverges makes gate refuse the pair (30). A record "
                "the class has no line for, or that the model leaves out for a stated reason, is "
                "not modelled, never a divergence")),
    Meaning(EX_PARTIAL, "history", "`--store` refused a partial night", "`a partial night: N of "
            "the M boots ...`", detail=(
                "a matrix configuration with fewer whole boots than the matrix planned "
                "(`run.matrix` in each boot's results.json), or a boot a signal stopped (exit "
                "11). Stored, one boot of five would set a series' level; nothing of that run is "
                "stored, the other runs given are stored and judged, and a regression elsewhere "
                "is still 20")),
)

# The lines a reader meets, the run's last ones first where a run ends.
MESSAGES = (
    Message("`ipibench: bad command line: unknown key 'K' in 'K=V' (keys: ...)`", EX_BADCMD,
            "a key the guest does not know; `help=1` lists them"),
    Message("`ipibench: bad command line: bad number in 'K=V' (accepted: A..B, ...)`", EX_BADCMD,
            "not a number, or out of range"),
    Message("`run.sh: --append: unknown key 'plna' in 'plna=check' (did you mean plan?)`",
            EX_USAGE, "the same mistakes, found by run.sh before QEMU starts, in the guest's "
            "words (`unknown choice`, `unknown item`, `number out of range`, `bad boolean`, "
            "`duplicate key`, `is not key=value` ...), with the key or name a typo most likely "
            "meant; against the keys of the guest just built (`build/guest-keys.json`); "
            "without that file nothing is checked"),
    Message("`ipibench: bad command line: sender=9 names no CPU: CPUs 0-3 are online`",
            EX_BADCMD, "`sender=`, `target=` or `debug_cpu=` names a CPU the machine does not "
            "have; checked after bring-up, so the line comes after the `smp:` lines. A CPU the "
            "firmware listed that did not come up is not online: `CPUs 0-2 are online (3 of 4 "
            "listed)`. With `debug=skip-sipi`, `debug_cpu=` is held against the listed CPUs "
            "(`the machine lists CPUs 0-3`), since that CPU stays down on purpose. Nothing was "
            "measured"),
    Message("`smp: CPU N (APIC ID A) did not come up within T ms: left out`", EX_ERROR,
            "an AP missed its start deadline; it was parked with INIT and the run goes on "
            "without it"),
    Message("`CPU N (APIC ID A): exception #XX ...`", EX_CRASH,
            "an unexpected exception; registers follow"),
    Message("`watchdog: CPU N (APIC ID A) made no progress for T ms (bound B ms: ...): backend "
            "..., benchmark ..., phase ...[, latest hypercall ...], RIP ...`", EX_ERROR,
            "the stall watchdog ([watchdog.md](watchdog.md)): CPU N stayed in a watched phase "
            "longer than its bound; another CPU took its registers by NMI, printed below, and "
            "ended the run. The latest hypercall is the one its buffers hold, which may have "
            "returned"),
    Message("`watchdog: ... RIP unknown: no NMI taken within N ms: stuck in an instruction that "
            "does not retire, e.g. a hypercall that never returns`", EX_ERROR,
            "the same, but the stalled CPU did not even take an NMI: it sits inside one "
            "instruction (a VMMCALL the hypervisor never completes)"),
    Message("`watchdog: 1 CPU: no other CPU can watch it, so nothing is watched; run.sh's "
            "--timeout is the bound`", EX_TIMEOUT,
            "one vCPU: no stall watchdog; a hang ends at run.sh's timeout"),
    Message("`ipibench: FAILURE: nested NMI on CPU N (APIC ID A): an NMI was delivered while "
            "this CPU was still in its NMI handler, before that handler's IRET ...`", EX_FAILURE,
            "a second NMI came in before the first one's IRET (NMIs stay blocked until then, "
            "SDM vol. 3A 6.7.1): the hypervisor delivered an NMI it should have held, or an "
            "exception's IRET inside the NMI handler unblocked NMIs; its frame overwrote the "
            "first's on the NMI stack, so the run ends at once. `debug=nested-nmi` plants one"),
    Message("`debug: stall needs another CPU to watch CPU N (M online): not armed`", EX_ERROR,
            "`debug=stall` on one CPU: nothing stalls"),
    Message("`run.sh: this host's /dev/kvm is PVM (module kvm_pvm: ...); using TCG; --accel kvm "
            "uses it anyway, every figure then marked kvm-software`", None,
            "`--accel auto` on a host whose KVM is software virtualization: its figures would "
            "measure that software"),
    Message("`run.sh: /dev/kvm cannot run -cpu host here (...); using TCG`", None,
            "the host's KVM refused the vCPU model; timings are then emulated. Only for a model "
            "that needs nothing KVM alone offers (the `x2apic` and `xapic` presets); otherwise "
            "31"),
    Message("`run.sh: preset hv-xmm needs KVM, the only accelerator that offers "
            "hv-relaxed,...,hv-xmm-input, but /dev/kvm cannot run -cpu host,... here (...)`, "
            "then the ways on", EX_NEEDS_KVM,
            "`-cpu MODEL,...` in place of `preset NAME` for `--cpu` flags; `but /dev/kvm is "
            "missing (No such file or directory)` (or `is not a character device`, `is not "
            "accessible`) without a usable one"),
    Message("`run.sh: --accel kvm: KVM is not usable here: /dev/kvm is missing (No such file or "
            "directory); the KVM lane runs real KVM nested in TCG on any host: --accel "
            "kvm-in-tcg`", EX_NEEDS_KVM,
            "or `is not a character device (it is a regular file)`, `is not accessible "
            "(Permission denied)` (not in its group), `is not accessible (No such device: no "
            "KVM module behind it; ...)`"),
    Message("`run.sh: --accel kvm with --exits: this host's /dev/kvm is PVM (module kvm_pvm: "
            "...): ...`", EX_NEEDS_KVM,
            "`--exits`, `--pin` or `--perf-kvm` (those given are named) under `--accel kvm` on "
            "a software KVM"),
    Message("`run.sh: warning: /dev/kvm cannot run -cpu ... here (...); running preset hv under "
            "TCG as --allow-fallback asks: only KVM offers ..., so every backend these add will "
            "SKIP`", None, "the run goes on under TCG, as asked"),
    Message("`run.sh: done, nothing failed (guest status SKIP, exit 0)`, then `run.sh: results: "
            "DIR`", EX_OK, "nothing failed and something asked for ran; some backends, checks "
            "or figures could not run here (the summary's `skipped:` and `withheld:` lines say "
            "which and why, `why SKIP` why that is normal here). `done, everything passed "
            "(guest status SUCCESS, exit 0)` when nothing SKIPped"),
    Message("`run.sh: nothing that was asked for ran: no Hyper-V interface: ... (guest status "
            "SKIP, exit 35)`, then `run.sh: results: DIR`", EX_NOTHING_RAN,
            "the reasons (each once, the first two in full, `and N more (console.log)` after), "
            "and the summary's `why exit 35` line"),
    Message("`run.sh: built the guest: 60 CC, 12 NASM, 2 GEN, 1 LD, 2 OBJCOPY (make V=1 shows "
            "each command)`", None, "the build, one line for all of make's steps (none when up "
            "to date); a failed build shows all of make's output instead and exits 10"),
    Message("`run.sh: QEMU-KILLED (signal N) (QEMU exit E)`", EX_QEMU,
            "something outside killed QEMU (OOM killer, kill)"),
    Message("`run.sh: QEMU-FAILED (QEMU could not start or load the image) (QEMU exit 1)`, then "
            "QEMU's own line", EX_QEMU, "QEMU refused its command line or could not load the "
            "image; its own message is repeated as run.sh's last line (also after "
            "`QEMU-UNKNOWN (exit N)`)"),
    Message("`run.sh: TIMEOUT (QEMU exit 124) after S s; last progress: [12/40] x2apic "
            "broadcast ... 290 s`", EX_TIMEOUT, "the unit (or the suite's label) the guest was "
            "in, or `the guest's last line: '...'` when it was in neither (stuck in bring-up)"),
    Message("`run.sh: --memory 1 (1 MiB) is below what the guest needs at -smp 4: 3 MiB (--memory "
            "3M or more; the default is 256M)`", EX_USAGE, "refused before anything is built "
            "(such a VM would hang without a word until the timeout); the minimum grows with "
            "`-smp`"),
    Message("`run.sh: --append: debug=corrupt-vpset (debug=all plants it too) is refused under "
            "--accel xen: ... (XSA-475); ...`", EX_USAGE, "a real Xen host's Xen may be older "
            "than 4.17.6, whose VP-set code these calls could make corrupt its memory; the "
            "lane's own Xen is fixed"),
    Message("`run.sh: --memory takes a size as QEMU's -m does (256M, 1G, 1.5G; a plain number is "
            "MiB), not 'X'`", EX_USAGE, "a size QEMU would not take"),
    Message("`run.sh: interrupted by SIGINT; incomplete log: DIR/console.log`", EX_INTERRUPTED,
            "QEMU stopped, the log ends with `run.sh: INCOMPLETE: ...`, no results saved"),
    Message("`run.sh: unknown configuration 'X' (in host/ipibench/presets.conf: ...)`", EX_PRESET,
            "`--preset` or `matrix --presets` names no configuration"),
    Message("`run.sh: QEMU 7.2 (/usr/bin/qemu-system-x86_64) is too old: ...`", EX_QEMU_OLD,
            "install 8.1 or later (tools/deps.sh's `build`) or set `QEMU=`"),
    Message("`run.sh: --pin needs KVM (accel is tcg): ...`", EX_UNAVAILABLE,
            "`--pin` and `--perf-kvm` work on a KVM host only"),
    Message("`compare: DIR: the run saved no results.json (interrupted or failed before its end; "
            "...)`", EX_MISSING, "a run directory of an interrupted run"),
    Message("`compare: FILE: malformed or truncated results file: ... at line L column C`",
            EX_MALFORMED, "not JSON, or cut short"),
    Message("`compare: FILE: record N ('result') has schema S; these tools read schema 1 only`",
            EX_SCHEMA, "written by another version of ipibench"),
    Message("`compare: nothing to compare: A and B share no benchmark row (A: ...; B: ...)`",
            EX_NO_OVERLAP, "no row in common"),
    Message("`gate: FAIL: bench/metric/variant/backend/state/nK: slower than the baseline by X% "
            "> P%: ...`", EX_REGRESSION, "a regression"),
    Message("`gate: FAIL: correctness: DIR/results.json: FAILURE: single on x2apic: ...`",
            EX_CORRECTNESS, "the candidate misbehaved"),
)

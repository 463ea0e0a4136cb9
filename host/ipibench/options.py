# SPDX-License-Identifier: GPL-2.0-only
"""run.sh's command line: one argparse parser for every subcommand
(parser()), each subcommand's --help generated from it, and the parsing
and checks of `run`'s, `matrix`'s and `ab`'s options.

Pure code (no process, no file): each parse_* takes the argument list and
returns what it asked for, or raises UsageError with the message and exit
code 2 (docs/exit-codes.md). tests/host/test_options.py holds its cases."""
import argparse
import os
import re

from ipibench.boot.qemu import MACHINES
from ipibench.command_line import help_hint, Parser, PROG, read_options, UsageError

ACCELS = ("kvm", "tcg", "tcg-single", "kvm-in-tcg", "xen-in-tcg", "xen", "auto")
# The accelerators that boot a Xen preset under Xen: the lane's, and a real
# dom0's (host/lane/xen-lane.sh --dom0).
XEN_ACCELS = ("xen-in-tcg", "xen")


def add_help(p):
    p.add_argument("-h", "--help", action="store_true", help="this text")


def _digits(text):
    return bool(text) and all("0" <= c <= "9" for c in text)


def _count(text):
    """A positive whole number (bash's check let 00 through; this does not)."""
    return _digits(text) and text.strip("0") != ""


# --- run

# Options that take a value the run cannot do without (an empty one is an
# error), and the flags, each with the attribute it sets.
RUN_VALUES = {"--preset": "preset", "--smp": "smp", "--cpu": "cpu", "--machine": "machine",
              "--memory": "memory", "--accel": "accel", "--timeout": "timeout",
              "--label": "label", "--results-dir": "results_dir",
              "--module-param": "module_param"}
RUN_FLAGS = {"--iso": ("iso", True), "--pvh": ("pvh", True), "--perf-kvm": ("perf_kvm", True),
             "--exits": ("exits", True),
             "--host-stats": ("host_stats", True), "--no-host-stats": ("host_stats", False),
             "--require-apicv": ("require_apicv", True),
             "--allow-fallback": ("allow_fallback", True), "--no-save": ("save", False),
             "--dry-run": ("dry_run", True),
             # How much of the console: the last one given wins (ab adds --quiet).
             "--quiet": ("console", "quiet"), "--verbose": ("console", "verbose")}

# Each run option's placeholder and help, in the order --help lists them.
RUN_HELP = (
    ("--preset", "NAME", "a named configuration of host/ipibench/presets.conf (./run.sh "
     "list): its -cpu flags, -smp and QEMU arguments"),
    ("--smp", "SPEC", "QEMU -smp value (default: the preset's, else 4), e.g. 8 or "
     "6,sockets=2,cores=3"),
    ("--cpu", "MODEL[,F]", "QEMU -cpu value (default: host under KVM, max under TCG); with "
     "--preset, the base model its flags are appended to"),
    ("--machine", "M", "pc, q35, microvm or microvm-noacpi (default q35). microvm is QEMU's "
     "microvm as microVM monitors present one: no 8259, PIT or RTC (pic=off,pit=off,rtc=off), "
     "booted through PVH (build/ipibench.elf); microvm-noacpi adds acpi=off: CPUs from the "
     "Intel MP table"),
    ("--memory", "SIZE", "guest RAM as QEMU's -m takes it: 256M, 1G, a plain number is MiB "
     "(default 256M; at least what the guest needs: 3M at -smp 4)"),
    ("--append", "ARGS", "kernel command line, e.g. 'plan=check' (help=1 lists keys)"),
    ("--accel", "A", "kvm, tcg, tcg-single, kvm-in-tcg, xen-in-tcg, xen or auto (default auto: kvm when "
     "/dev/kvm can run the vCPU model, else tcg-single, except for a model with hv-* or "
     "kvm-pv-* flags: exit 31). tcg is QEMU's multi-threaded TCG (vCPUs really in parallel, "
     "but spinning vCPUs starve each other on a small host); tcg-single runs them in turn in "
     "one thread, much faster here. kvm-in-tcg boots the preset (default x2apic) under real "
     "KVM nested inside a TCG VM, the KVM lane: for machines without /dev/kvm, to exercise "
     "the Hyper-V and KVM PV paths; timings are then doubly emulated. xen-in-tcg boots a Xen "
     "preset (xen-presets.conf, default xen-pvh) under Xen nested inside a TCG VM, the Xen "
     "lane (docs/xen.md): Xen's vlapic and its viridian Hyper-V interface. xen runs an HVM "
     "Xen preset (default xen-viridian) on this host's Xen, from its dom0 (root), as the "
     "lane's dom0 runs it"),
    ("--allow-fallback", None, "with --accel auto, run a preset or -cpu flags that need KVM "
     "(hv-*, kvm-pv-*) under TCG when KVM cannot: each backend they add SKIPs"),
    ("--timeout", "S", "seconds before the boot is killed (default 300)"),
    ("--iso", None, "boot the GRUB ISO (build/ipibench.iso) instead of -kernel"),
    ("--pvh", None, "boot build/ipibench.elf through its PVH entry rather than the multiboot "
     "image (on microvm always)"),
    ("--label", "NAME", "name of the results directory (default: preset, accel, machine, "
     "smp)"),
    ("--results-dir", "DIR", "save into DIR exactly (must not exist; matrix uses it)"),
    ("--pin", "[=CPUS]", "KVM only: pin vCPU i to the i-th host CPU of CPUS (default: the "
     "CPUs run.sh may use, one a core, never CPU 0's core), QEMU's other threads to the rest, "
     "before the guest starts; recorded"),
    ("--perf-kvm", None, "KVM only: record `perf kvm stat` during the boot and attach the "
     "VM-exit breakdown to the results"),
    ("--exits", None, "exit accounting: the guest marks each sampling (markers=1) and the "
     "host traces KVM's events (--accel kvm: this host's tracefs, as root; kvm-in-tcg: the "
     "lane's outer VM); prints and saves exits per measured iteration for every record, "
     "sender and targets apart (docs/exits.md)"),
    ("--host-stats", None, "single-halt: the guest waits at each pass's edges while the host "
     "reads the target vCPU's KVM statistics (QMP query-stats), and each record says how its "
     "halts ended (on by default under --accel kvm, except microvm)"),
    ("--no-host-stats", None, "no host reads, under --accel kvm too"),
    ("--require-apicv", None, "exit 32 when APICv/AVIC was off in the module or inhibited "
     "for this VM while any record was measured (needs --exits)"),
    ("--module-param", "M.P=V", "kvm-in-tcg only: load the lane's KVM module M with P=V and "
     "report what it granted (on a KVM host: ./run.sh ab)"),
    ("--verbose", None, "stream the whole guest console as it comes (records included)"),
    ("--quiet", None, "print nothing but the final line"),
    ("--no-save", None, "do not keep anything under results/"),
    ("--dry-run", None, "boot nothing: print what would run (the QEMU command line; under "
     "kvm-in-tcg the lane's command and its frame, under xen-in-tcg the lane's command and "
     "the frame's xl.cfg) after the same checks and build a run makes, then exit 0"),
)

RUN_DESCRIPTION = """\
Boots ipibench once and prints what a person reads: the boot facts, one
progress line per unit of the plan ("[12/40] x2apic broadcast ... 3.1 s"),
failures and skips with their reasons, and a summary of the headline figures
(--verbose: the whole guest console instead). Unless --no-save, it lands in
results/<UTC date>-<label>/: console.log (all of the console), results.json
(the guest's records and the host's facts) and summary.txt."""

RUN_EPILOG = """\
environment: QEMU=/path/to/qemu-system-x86_64 boots another QEMU build;
IPIBENCH_RESULTS=DIR puts results/ elsewhere.

exit status: 0 success (guest SUCCESS or SKIP), 2 usage, 3 guest ERROR,
4 guest FAILURE, 5 guest CRASH, 6 bad kernel command line, 7 timeout,
8 QEMU failed, died without a status or was killed by a signal, 9 missing
dependency, 10 build failed, 11 interrupted, 26 unknown configuration,
27 QEMU too old, 28 results could not be saved, 29 --pin, --perf-kvm or --exits
unavailable here, 31 KVM asked for (--accel kvm) or needed (hv-*, kvm-pv-*
flags) and not usable here: no /dev/kvm, not accessible, refusing the model,
or a software KVM (PVM) for --pin, --perf-kvm, --exits,
32 --require-apicv and a record ran without APICv/AVIC, 35 guest SKIP and
nothing that was asked for ran (every check and benchmark SKIPped)."""


def add_run(sub):
    p = sub.add_parser("run", prog=f"{PROG} [run]", usage=f"{PROG} [run] [options]",
                       prefix="", description=RUN_DESCRIPTION, epilog=RUN_EPILOG,
                       help="boot one configuration (the default)")
    for opt, meta, text in RUN_HELP:
        if opt == "--pin":
            p.add_argument("--pin", nargs="?", const="", metavar="=CPUS", help=text)
        elif opt == "--append":
            p.add_argument(opt, metavar=meta, help=text)
        elif opt in RUN_VALUES:
            p.add_argument(opt, dest=RUN_VALUES[opt], metavar=meta, help=text)
        else:
            dest, value = RUN_FLAGS[opt]
            p.add_argument(opt, dest=dest, action="store_const", const=value, help=text)
    p.add_argument("qemu_args", nargs="*", metavar="-- ARGS...",
                   help="everything after -- goes to QEMU as it is (e.g. -device ...)")
    add_help(p)
    p.lenient = frozenset({"--append"})  # empty, or missing at the end: the guest's defaults
    p.joined = frozenset({"--pin"})
    return p


class RunOptions:
    """What `./run.sh [run]` was asked (defaults as its help text says);
    asked(name): whether --machine or --memory was given (the Xen lane
    refuses the one and sizes its domain by the other)."""

    DEFAULTS = {"machine": "q35", "memory": "256M"}

    def __init__(self):
        self.preset = self.smp = self.cpu = self.append = self.label = ""
        self.accel, self.timeout = "auto", "300"
        self._given = {}
        self.results_dir = ""  # --results-dir, made absolute
        self.pin = None  # None: no --pin; "": the CPUs run.sh may use; else a CPU list
        self.iso = self.pvh = self.perf_kvm = self.allow_fallback = self.help = False
        self.console = "progress"  # or "quiet", "verbose": the last of those options wins
        self.exits = self.require_apicv = False
        self.host_stats = None  # None: on under --accel kvm (Boot.compose); else as asked
        self.module_param = ""
        self.save = True
        self.dry_run = False  # --dry-run: Boot.run prints the command and boots nothing
        self.qemu_args = []  # after --

    def __getattr__(self, name):  # machine, memory: as given, else the default
        if name in RunOptions.DEFAULTS:
            return self._given.get(name, RunOptions.DEFAULTS[name])
        raise AttributeError(name)

    def __setattr__(self, name, value):
        if name in RunOptions.DEFAULTS:
            self._given[name] = value
        else:
            super().__setattr__(name, value)

    def asked(self, name):
        return name in self._given

    @property
    def quiet(self):
        return self.console == "quiet"

    @property
    def verbose(self):
        return self.console == "verbose"


def parse_run(argv, caller_dir):
    """`run`'s options -> RunOptions; paths are taken relative to caller_dir."""
    o = RunOptions()
    asked_help, o.qemu_args, _ = read_options(parser().commands["run"], argv, o)
    if asked_help:
        o.help = True
        return o
    if o.results_dir:
        o.results_dir = os.path.join(caller_dir, o.results_dir)
    check_run(o)
    return o


def check_run(o):
    if o.smp:  # as matrix checks it: a value QEMU would refuse costs no boot
        smp_topology(o.smp, "")
    if o.machine not in MACHINES:
        raise UsageError(f"--machine takes pc, q35, microvm or microvm-noacpi, not '{o.machine}'")
    if o.iso and o.pvh:
        raise UsageError("--iso boots the ISO's multiboot image; --pvh needs -kernel")
    if o.host_stats and o.machine.startswith("microvm"):
        raise UsageError("--host-stats answers the guest on COM2, which microvm does not have: use --machine pc or q35")
    if o.iso and o.machine.startswith("microvm"):
        raise UsageError("--iso boots from a CD drive, which microvm has none of: --machine pc or q35")
    if not _digits(o.timeout):
        raise UsageError(f"--timeout takes whole seconds, not '{o.timeout}'")
    if memory_mib(o.memory) is None:
        raise UsageError(f"--memory takes a size as QEMU's -m does (256M, 1G, 1.5G; a plain number is MiB), not '{o.memory}'")
    if o.iso and o.append:
        raise UsageError("--iso boots with the ISO's own command line; --append needs -kernel")
    if o.module_param and o.accel != "kvm-in-tcg":
        raise UsageError("--module-param sets the lane's KVM (--accel kvm-in-tcg); a host's KVM module is set by ./run.sh ab")
    if o.accel in XEN_ACCELS and o.host_stats:
        raise UsageError("--host-stats reads KVM's statistics; Xen has none")
    if o.accel in XEN_ACCELS and o.iso:
        raise UsageError(f"--iso: under --accel {o.accel} xl boots the image itself (PVH, or through the device model's -kernel for an HVM guest)")
    if o.accel in XEN_ACCELS:
        check_xen(o)
    if o.require_apicv and not o.exits:
        raise UsageError("--require-apicv reads the KVM trace: it needs --exits")
    if o.accel not in ACCELS:
        raise UsageError(f"--accel takes kvm, tcg, tcg-single, kvm-in-tcg, xen-in-tcg, xen or auto, not '{o.accel}'")


def check_xen(o):
    """What the Xen lane can honour: the domain's vCPUs (--smp, a count)
    and memory (--memory) go into its xl.cfg; the machine is the preset's
    type (PVH or HVM), and Xen, not run.sh, places the vCPUs."""
    if o.asked("machine"):
        raise UsageError(f"--machine: under --accel {o.accel} the Xen preset's type (pvh or "
                         "hvm) is the machine; ./run.sh list names them")
    for flag, name in ((o.pin is not None, "--pin"), (o.perf_kvm, "--perf-kvm")):
        if flag:
            raise UsageError(f"{name}: under --accel {o.accel} Xen places and runs the vCPUs "
                             "(xl.cfg's cpus= would pin them); run.sh reads nothing of them")
    if o.smp and not _digits(o.smp):
        raise UsageError(f"--smp: the Xen lane takes a vCPU count, not '{o.smp}' (xl.cfg's "
                         "vcpus has no topology)")
    if o.accel == "xen" and plants_corrupt_vpset(o.append):
        raise UsageError("--append: debug=corrupt-vpset (debug=all plants it too) is refused "
                         "under --accel xen: on a Xen before 4.17.6 its malformed VP sets may "
                         "corrupt this host's Xen's memory (XSA-475); --accel xen-in-tcg runs "
                         "it on the lane's own, fixed Xen")


def plants_corrupt_vpset(append):
    """Whether a command line's debug= word plants corrupt-vpset, by name or
    as debug=all (xen-lane.sh --dom0 refuses the same)."""
    for word in append.split():
        key, _, value = word.partition("=")
        if key == "debug" and (value == "all" or "corrupt-vpset" in value.split(",")):
            return True
    return False


# What the guest needs (measured under TCG with the default plan: the least
# -m at which it still ends with a status, bisected in KiB): 1841 KiB on one
# CPU; from two CPUs on, 2340 KiB plus 36 KiB a CPU (the image to 1.6 MiB, then
# per CPU its stacks, IDT and per-CPU area; the multi-CPU benchmarks' sample
# buffers), 4642 KiB at 64 CPUs. 128 KiB on top for the image to grow; under
# KVM the Hyper-V and KVM PV backends add tables of n x n entries, which the
# guest reports itself ("out of memory", status ERROR) if they do not fit.
# Below the image's own size the VM hangs before its first line: hence the
# refusal (docs/exit-codes.md).
MEM_ONE_CPU_KIB, MEM_BASE_KIB, MEM_PER_CPU_KIB, MEM_MARGIN_KIB = 1841, 2340, 36, 128
SIZE_UNITS = {"": 1 << 20, "B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40,
              "P": 1 << 50, "E": 1 << 60}


def memory_mib(text):
    """QEMU's -m value in MiB (a float), or None when QEMU's syntax is not
    met: [size=]N[.F][B|K|M|G|T|P|E], any case, a plain number is MiB; the
    slots= and maxmem= that may follow do not change the boot RAM."""
    first = text.split(",", 1)[0]
    if first.startswith("size="):
        first = first[len("size="):]
    m = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([bBkKmMgGtTpPeE]?)", first)
    if not m:
        return None
    return float(m.group(1)) * SIZE_UNITS[m.group(2).upper()] / (1 << 20)


def smp_cpus(spec):
    """The vCPUs online at boot of a -smp value (its first number, or cpus=,
    else the product of its topology); 1 when it cannot be told: the least,
    so a minimum derived from it is never too high."""
    fields = spec.split(",")
    if _count(fields[0]):
        return int(fields[0])
    kv = dict(f.split("=", 1) for f in fields if "=" in f)
    if _count(kv.get("cpus", "")):
        return int(kv["cpus"])
    n = 1
    for k in ("sockets", "dies", "clusters", "cores", "threads"):
        if _count(kv.get(k, "")):
            n *= int(kv[k])
    return n


def memory_minimum_mib(cpus):
    """The least whole MiB the guest needs on cpus vCPUs."""
    kib = (MEM_ONE_CPU_KIB if cpus <= 1 else MEM_BASE_KIB + MEM_PER_CPU_KIB * cpus) + \
        MEM_MARGIN_KIB
    return -(-kib // 1024)


def check_memory(memory, smp):
    """A UsageError (exit 2) when --memory is below what the guest needs at -smp smp."""
    mib, cpus = memory_mib(memory), smp_cpus(smp)
    need = memory_minimum_mib(cpus)
    if mib is not None and mib < need:
        got = f"{mib:g} MiB" if mib >= 1 else f"{mib * 1024:g} KiB"
        raise UsageError(f"--memory {memory} ({got}) is below what the guest needs at -smp {smp}: {need} MiB (--memory {need}M or more; the default is 256M)")


def split_list(text):
    """A comma-separated list as bash's `IFS=, read -a` splits it: a last empty
    field is dropped, the others are kept (and refused by their checks)."""
    parts = text.split(",")
    if parts[-1] == "":
        parts.pop()
    return parts


# QEMU's -smp keys on x86 (clusters, books and drawers are other targets'),
# the topology ones in the order of the hierarchy, with their letter in a
# configuration folder's name.
SMP_TOPOLOGY = (("sockets", "s"), ("dies", "d"), ("modules", "m"), ("cores", "c"),
                ("threads", "t"))
SMP_KEYS = ("cpus", "maxcpus") + tuple(k for k, _ in SMP_TOPOLOGY)


def _positive(text):
    """A positive whole number as QEMU's -smp takes it: no sign, no leading 0."""
    return _count(text) and text[0] != "0"


def smp_topology(spec, who="matrix: "):
    """One -smp value -> {key: int} with cpus and maxcpus filled in as QEMU
    fills them (maxcpus: given, else cpus, else the topology's product; cpus:
    given, else maxcpus); UsageError when QEMU would refuse it or it is not
    one value. The product of the topology keys given must be maxcpus when
    sockets, cores and threads are all given, else divide it (QEMU computes
    the missing one; dies and modules default to 1)."""
    where = f"{who}--smp '{spec}'"
    got = {}
    for i, field in enumerate(spec.split(",")):
        key, eq, value = field.partition("=")
        if not eq:
            if i > 0:
                raise UsageError(f"{where}: '{field}' is not key=value (only the first field may be a bare count; separate -smp values with ';')")
            key, value = "cpus", field
        if key not in SMP_KEYS:
            raise UsageError(f"{where}: unknown key '{key}' (x86 takes {', '.join(SMP_KEYS)})")
        if key in got:
            raise UsageError(f"{where}: {key} given twice")
        if not _positive(value):
            raise UsageError(f"{where}: {key} takes a positive count, not '{value}'")
        got[key] = int(value)
    product = 1
    for key, _ in SMP_TOPOLOGY:
        product *= got.get(key, 1)
    maxcpus = got.get("maxcpus", got.get("cpus", product))
    cpus = got.get("cpus", maxcpus)
    full = all(k in got for k in ("sockets", "cores", "threads"))
    given = [f"{k} {got[k]}" for k, _ in SMP_TOPOLOGY if k in got]
    factors = " x ".join(given) + (f" = {product}" if len(given) > 1 else "")
    if full and product != maxcpus:
        raise UsageError(f"{where}: {factors} CPUs, but maxcpus is {maxcpus} (QEMU needs the product of the topology to be maxcpus, which is the count unless maxcpus= says otherwise)")
    if maxcpus % product:
        raise UsageError(f"{where}: {factors} does not divide maxcpus {maxcpus} (QEMU fills in the missing level as maxcpus / {product})")
    if cpus > maxcpus:
        raise UsageError(f"{where}: {cpus} CPUs at boot, above maxcpus {maxcpus}")
    return dict(got, cpus=cpus, maxcpus=maxcpus)


def smp_folder(spec):
    """The part of a configuration folder's name a -smp value gives: smp8 for
    a count (as before), smp8-s2c2t2 for a topology, -max16 for maxcpus."""
    t = smp_topology(spec)
    levels = "".join(f"{letter}{t[k]}" for k, letter in SMP_TOPOLOGY if k in t)
    return "-".join([f"smp{t['cpus']}"] + ([levels] if levels else []) +
                    ([f"max{t['maxcpus']}"] if t["maxcpus"] != t["cpus"] else []))


def split_smp(text):
    """matrix's --smp -> its -smp values. With a ';' every item is one -smp
    value (a last empty one dropped); without, digits and commas are a list
    of counts (the old form, split as split_list), anything else is one -smp
    value. Each is checked (smp_topology); two that name one folder are
    refused."""
    if ";" in text:
        items = text.split(";")
        if items[-1] == "":
            items.pop()
    elif all(c in "0123456789," for c in text):
        items = split_list(text)
        for s in items:
            if not _count(s):
                raise UsageError(f"matrix: --smp takes vCPU counts, not '{s}'")
    else:
        items = [text]
    seen = {}
    for s in items:
        if not s:
            raise UsageError(f"matrix: --smp '{text}': an empty -smp value between ';'")
        name = smp_folder(s)
        if name in seen:
            raise UsageError(f"matrix: --smp '{text}': '{seen[name]}' and '{s}' are both {name}")
        seen[name] = s
    return items


# --- matrix

MATRIX_DESCRIPTION = """\
Boots every named configuration at every -smp value, each --boots times, one
after the other. Each boot is a full run saved under
results/<UTC date>-<label>/<preset>-smp<N>[-<topology>]/boot<i>/; summary.txt
beside them lists the boots. Compare two backends within a configuration with
  ./run.sh compare --pair xapic=x2apic DIR/x2apic-smp2
and two configurations with the same -smp with
  ./run.sh compare DIR/x2apic-smp2 DIR/kvm-pv-smp2"""

PASSED = "run's (./run.sh run --help), passed to every boot"

MATRIX_EPILOG = """\
Run's options are checked before the first boot: a preset that needs KVM it
cannot have (under --accel auto), --accel kvm where KVM is not usable, --pin,
--perf-kvm or --exits that cannot work here.

exit status: 0 every boot succeeded; otherwise the run exit code of the first
boot that did not (3..8, 32), or at once 2, 9, 10, 11, 26, 27, 28, 29 or 31."""


class PassOn(argparse.Action):
    """An option of run that matrix passes to every boot as it was written
    (and keeps, for --accel, --machine and --allow-fallback)."""

    def __call__(self, p, ns, value, option):
        if self.nargs == 0:
            words = [option]
        elif option == "--pin":
            words = [f"--pin={value}" if value else "--pin"]
        else:
            words = [option, value]
        ns.passed = ns.passed + words
        if self.dest != "passed":
            setattr(ns, self.dest, True if self.nargs == 0 else value)


def add_matrix(sub):
    p = sub.add_parser("matrix", prog=f"{PROG} matrix", prefix="matrix: ",
                       usage=f"{PROG} matrix --presets NAME[,NAME...] [options]",
                       description=MATRIX_DESCRIPTION, epilog=MATRIX_EPILOG,
                       help="boot configurations x -smp values x N boots")
    p.add_argument("--presets", metavar="LIST",
                   help="configurations (./run.sh list), comma-separated")
    p.add_argument("--smp", dest="smps", metavar="LIST",
                   help="-smp values (default: each preset's own): vCPU counts separated by "
                   "commas (2,4,8), or QEMU -smp values separated by ';' "
                   "('4;8,sockets=2,cores=2,threads=2'): with a ';' every item is one -smp "
                   "value; without, a list of digits and commas is counts and anything else "
                   "one -smp value. Topology keys: cpus, maxcpus, sockets, dies, modules, "
                   "cores, threads; their product must be maxcpus (default: the count). "
                   "Folder: x2apic-smp8-s2c2t2. Not with --accel kvm-in-tcg (the lane boots "
                   "each preset's own)")
    p.add_argument("--boots", metavar="N", help="boots of each configuration (default 5; the "
                   "rank test needs 4 or more a side to reach p < 0.05)")
    p.add_argument("--label", metavar="NAME", help="name of the matrix directory (default "
                   "matrix)")
    meta = {opt: meta for opt, meta, _ in RUN_HELP}
    for opt in ("--accel", "--machine"):
        p.add_argument(opt, action=PassOn, metavar=meta[opt], help=PASSED)
    for opt in ("--append", "--memory", "--timeout"):
        p.add_argument(opt, action=PassOn, dest="passed", metavar=meta[opt], help=PASSED)
    p.add_argument("--allow-fallback", action=PassOn, nargs=0, help=PASSED)
    p.add_argument("--pin", action=PassOn, dest="passed", nargs="?", const="",
                   metavar="=CPUS", help=PASSED)
    for opt in ("--perf-kvm", "--pvh", "--exits", "--require-apicv"):
        p.add_argument(opt, action=PassOn, dest="passed", nargs=0, help=PASSED)
    p.add_argument("--no-pin", dest="pin_default", action="store_const", const=None,
                   help="leave the vCPUs to the host's scheduler: under --accel kvm (or auto "
                   "that chose it) every boot pins vCPU i to the i-th host CPU run.sh may "
                   "use, one a core, never CPU 0's core, as --pin, when there are enough "
                   "of them (else it says why not); "
                   "every boot's results.json says which (run.pin)")
    p.add_argument("--verbose", action="store_true",
                   help="stream every boot's whole console (default: one line per boot)")
    add_help(p)
    p.lenient = frozenset({"--append", "--memory", "--timeout"})  # each boot's run judges them
    p.joined = frozenset({"--pin"})
    return p


class MatrixOptions(argparse.Namespace):
    def __init__(self):
        super().__init__(presets="", smps="", boots="5", label="matrix", accel="auto",
                         machine="q35", allow_fallback=False, verbose=False, help=False,
                         pin_default=True,  # pinned under KVM (pin_perf.pin_plan)
                         passed=[],  # options every boot gets
                         names=[], counts=[])


def check_pin(o, prefix):
    """matrix's and ab's --no-pin against a --pin they pass on to each boot."""
    if o.pin_default is None and any(a == "--pin" or a.startswith("--pin=") for a in o.passed):
        raise UsageError(f"{prefix}--pin and --no-pin: give one")


def parse_matrix(argv):
    """`matrix`'s options -> MatrixOptions (names and -smp values split)."""
    p, o = parser().commands["matrix"], MatrixOptions()
    asked_help, _, _ = read_options(p, argv, o, stop_at_dashes=False)
    if asked_help:
        o.help = True
        return o
    if not o.presets:
        raise UsageError("matrix: --presets is required", hint=help_hint("matrix"))
    check_pin(o, "matrix: ")
    if not _count(o.boots):
        raise UsageError(f"matrix: --boots takes a positive count, not '{o.boots}'")
    o.names = split_list(o.presets)
    o.counts = split_smp(o.smps) if o.smps else []
    if o.counts and o.accel == "kvm-in-tcg":
        raise UsageError("matrix: --accel kvm-in-tcg boots each preset at its own -smp (the lane takes it from host/ipibench/presets.conf): drop --smp")
    return o


# --- ab

AB_DESCRIPTION = """\
A/B over a KVM module parameter: boots one configuration --boots times with
MODULE.PARAM=A and --boots times with =B, the sides interleaved A B B A A B
B A ... ("ab: order ..."; kept in summary.txt and each boot's results.json),
and prints the compare table, B against A (timings; with --exits also exits
per iteration). Each switch reads the parameter back and says what the
module granted ("asked avic=1, got N: the CPU has no AVIC"). Under --accel
kvm-in-tcg the lane's KVM is loaded with the value; otherwise this host's
module is set (written, or reloaded for parameters read at load time: its
sysfs file is read-only) before each switch of side and put back afterwards,
also after a failed boot or Ctrl-C. Under KVM the vCPUs are pinned, as by
matrix."""

AB_EPILOG = """\
Every other option goes to each boot (./run.sh run --help): --preset, --smp,
--append, --accel, --exits, --timeout, ...

exit status: 0 both sides booted, 2 usage, 33 the parameter cannot be set here
(unknown parameter: the message lists those that exist; a value not of its
type; not root; module not loaded or built in; /dev/kvm held by another
process; nothing was changed), 34 side B was granted what side A got ("ab:
both sides ran with kvm_amd.avic=N: nothing to compare": the order stops
after side B's first boot, or before it when its value is known before),
26, 29 or 31 before anything is changed when no boot could run (./run.sh run
--help), else the first failing boot's run exit code."""


def add_ab(sub):
    p = sub.add_parser("ab", prog=f"{PROG} ab", prefix="ab: ",
                       usage=f"{PROG} ab --module-param MODULE.PARAM=A,B [options] "
                       "[run options]", description=AB_DESCRIPTION, epilog=AB_EPILOG,
                       help="A/B over a KVM module parameter (avic, apicv...)")
    p.add_argument("--module-param", dest="spec", metavar="M.P=A,B",
                   help="any bool or integer parameter of kvm, kvm_amd or kvm_intel that "
                   "/sys/module shows (kvm_amd.avic, kvm_amd.vnmi, kvm_intel.enable_apicv, "
                   "kvm.halt_poll_ns, ...)")
    p.add_argument("--boots", metavar="N", help="boots a side (default 3)")
    p.add_argument("--label", metavar="NAME", help="name of the results directory (default ab)")
    p.add_argument("--no-pin", dest="pin_default", action="store_const", const=None,
                   help="leave the vCPUs unpinned under KVM (./run.sh matrix --help)")
    add_help(p)
    return p


class AbOptions(argparse.Namespace):
    def __init__(self):
        super().__init__(spec="", boots="3", label="ab", help=False, passed=[],
                         pin_default=True)  # pinned under KVM (pin_perf.pin_plan)


def parse_ab(argv):
    """`ab`'s options -> AbOptions; the others (passed) go to each boot."""
    p, o = parser().commands["ab"], AbOptions()
    asked_help, _, o.passed = read_options(p, argv, o, stop_at_dashes=False, unknown_ok=True)
    if asked_help:
        o.help = True
        return o
    if not o.spec:
        raise UsageError("ab: --module-param MODULE.PARAM=A,B is required", hint=help_hint("ab"))
    check_pin(o, "ab: ")
    if not o.boots.isdigit() or int(o.boots) < 1:
        raise UsageError(f"ab: --boots takes a count, not '{o.boots}'")
    return o


# --- list, and the one parser


def add_list(sub):
    p = sub.add_parser("list", prog=f"{PROG} list", prefix="list: ",
                       help="the named configurations (host/ipibench/presets.conf)",
                       description="Lists the named configurations of host/ipibench/presets.conf\n"
                       "with the QEMU options each adds.")
    p.add_argument("--names", action="store_true", help="print the names only")
    add_help(p)
    return p


TOP_DESCRIPTION = """\
Boots ipibench and reads what it saved. Results land in results/<UTC
date>-<label>/ (console.log, results.json, summary.txt); docs/host-tools.md
describes the files, docs/comparing.md the statistics."""

TOP_EPILOG = """\
Without a subcommand, run. `./run.sh SUBCOMMAND --help` gives the options of
each; exit codes: docs/exit-codes.md."""


def parse_list(argv):
    """`list`'s options -> whether --names was given; None for --help."""
    # Only the first argument is read, as it always was.
    o = argparse.Namespace(names=False)
    first = argv[:1] if argv and argv[0] else []
    asked_help, _, _ = read_options(parser().commands["list"], first, o)
    return None if asked_help else o.names


def parser():
    """run.sh's parser, a subparser per subcommand, with the subcommands that
    boot declared here (run, matrix, ab, list); cli.parser() adds the readers
    of saved results, which sit below this layer. Built once, on first use."""
    global _PARSER
    if _PARSER is None:
        top = Parser(prog=PROG, prefix="", usage=f"{PROG} [SUBCOMMAND] [options]",
                     description=TOP_DESCRIPTION, epilog=TOP_EPILOG)
        top.subcommands = top.add_subparsers(dest="cmd", metavar="SUBCOMMAND",
                                             parser_class=Parser)
        top.commands = {"run": add_run(top.subcommands), "matrix": add_matrix(top.subcommands),
                        "ab": add_ab(top.subcommands), "list": add_list(top.subcommands)}
        _PARSER = top
    return _PARSER


_PARSER = None


# The help texts of the subcommands that boot, generated from the parser.
USAGE_RUN, USAGE_MATRIX, USAGE_AB, USAGE_LIST = (parser().commands[name].format_help()
                                                 for name in ("run", "matrix", "ab", "list"))

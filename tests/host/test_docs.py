#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Every command the README and the docs show runs here, as written, so an
example that no longer works fails CI.

The commands are read from the documents themselves: every line of a ```sh
block, every indented code line, and every inline `code` span that starts
like a command (./run.sh, make, tests/..., tools/...py, host/...sh, qemu-system-x86_64).
Each must have an entry in COMMANDS below, and each entry must still be in
the documents: a new example without an entry, or an entry whose example
is gone, fails the test.

What an entry may change, and only that:
- placeholders: DATE (the date the matrix just saved under), results/ (the
  test's own IPIBENCH_RESULTS), /tmp/lane (a folder of the test's own),
  IMG and CPU (FILL below), and `sudo`,
  dropped (the commands run as whoever runs the tests);
- durations: fuzzing seconds shortened to 1, make bench's boots to 1 and
  its plan to one benchmark without the suite, a matrix's 5 boots to 2;
- on a host without hardware KVM (none here: /dev/kvm is PVM-flavoured or
  absent), a raw QEMU line's `-accel kvm -cpu host` becomes `-accel
  tcg,thread=single -cpu max` (the flags after it kept), and a command that needs a KVM host
  must end in its documented refusal, exit code and message;
- synopses (an inline span with a placeholder such as NAME, X=Y or
  `A [B]`) are not run: every option they name must be in the command's own
  --help, so a renamed option still fails here;
- the test suite itself (tests/run, make test) is not run from inside
  itself: its --list, or make's dry run, proves the command exists; so
  for make fuzz, whose dry run must be tests/fuzz/run.sh, which the fuzz
  group runs on every target (a pass of it here took 20 s and proved
  nothing more).
Commands that need the KVM lane run when host/lane/prepare.sh can
prepare it, and are SKIPped with its reason otherwise. Where this tests/run
booted the kvm-lane group's one outer boot, which runs the frame of the
README's run.sh hv-xmm command as run.sh composes it
(tests/kvm-lane/lane-test.sh, docs_frames), that command runs as written
with tests/kvm-lane/replay-lane.sh handing it the frame in lane.sh's place
(run.sh's IPIBENCH_LANE): its arguments parsed, its frame composed by
lane.sh itself (--dry-run) and checked against the boot's, its results
saved and judged. A lane.sh command boots for real: lane.sh's --presets
path, which run.sh --accel kvm-in-tcg takes, end to end."""
import glob
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from harness import REPO, Fail, check, run_cmd, selected


HERE = os.path.dirname(os.path.abspath(__file__))

# docs/cli-reference.md is run.sh's --help, generated and checked apart
# (tools/cli_reference.py --check): not examples.
DOCS = ["README.md", *sorted(p for p in glob.glob(os.path.join(REPO, "docs", "*.md"))
                             if not p.endswith("cli-reference.md")),
        "host/lane/README.md"]
STARTS = re.compile(r"^(sudo )?(\./run\.sh|\./tests/run|tests/run|make|qemu-system-x86_64|lava-run"
                    r"|(tools|tests|host)/\S+\.(sh|py))(\s|$)")
# Placeholders filled with a value of the kind they stand for.
FILL = {"IMG": "build/ipibench.elf32", "CPU": "host,hv-ipi,kvm-pv-ipi=off"}
GUEST_OK = {65, 67}  # QEMU's exit for a guest SUCCESS, SKIP (docs/exit-codes.md)


def logical_lines(text):
    """(line number, text) of a block's lines, backslash continuations joined."""
    out, acc, first = [], "", None
    for no, line in text:
        if first is None:
            first = no
        if line.rstrip().endswith("\\"):
            acc += line.rstrip()[:-1] + " "
            continue
        out.append((first, acc + line))
        acc, first = "", None
    return out


def normal(line):
    """A command line as one canonical string: shell words, comments gone."""
    return " ".join(shlex.quote(w) for w in shlex.split(line, comments=True))


def extract():
    """[(file:line, canonical command, kind)]: kind 'block' or 'inline'."""
    found = []
    for rel in DOCS:
        path = os.path.join(REPO, rel)
        rel = os.path.relpath(path, REPO)
        lines = open(path).read().split("\n")
        fence, block, prev_blank = None, [], True
        for no, line in enumerate(lines, 1):
            if line.startswith("```"):
                if fence is None:
                    fence, block = line[3:].strip(), []
                    continue
                is_sh = fence in ("sh", "bash")
                for at, cmd in logical_lines(block):
                    body = cmd.strip()
                    if not body or body.startswith("#"):
                        continue
                    if STARTS.match(body):
                        found.append((f"{rel}:{at}", normal(body), "block"))
                    elif is_sh:
                        found.append((f"{rel}:{at}", body, "not a command"))
                fence = None
                continue
            if fence is not None:
                block.append((no, line))
                continue
            if prev_blank and line.startswith("    ") and STARTS.match(line.strip()):
                found.append((f"{rel}:{no}", normal(line.strip()), "block"))
            for span in re.findall(r"`([^`\n]+)`", line):
                # A bare file name (`tools/deps.sh`) names a file, not a command.
                if STARTS.match(span) and (" " in span.strip() or span.startswith("./")
                                           or span == "make"):
                    found.append((f"{rel}:{no}", span.strip(), "inline"))
            prev_blank = not line.strip() or (prev_blank and line.startswith("    "))
    return found


class Ctx:
    def __init__(self, tmp):
        self.tmp = tmp
        self.results = os.path.join(tmp, "results")
        self.env = {"IPIBENCH_RESULTS": self.results}
        self.lane_why = None  # None: not asked yet; "": ready
        self.hw_kvm = hardware_kvm()
        self.ran = {}

    def lane(self):
        if self.lane_why is None:
            rc, out, err = run_cmd(["host/lane/prepare.sh"], timeout=600)
            self.lane_why = "" if rc == 0 else (out + err).strip().split("\n")[-1]
        return self.lane_why

    def date_dir(self, label):
        """results/DATE-label as the matrix saved it."""
        dirs = sorted(glob.glob(os.path.join(self.results, f"*-{label}")))
        check(dirs, f"no matrix saved under {self.results} with label {label}")
        return dirs[-1]


def hardware_kvm():
    """Whether /dev/kvm is a hardware KVM that runs `-cpu host` (not the PVM
    flavour, which does not virtualize RDTSC and hangs KVM PV calls)."""
    from ipibench.boot import accel
    kvm = accel.HostKvm(shutil.which("qemu-system-x86_64") or "qemu-system-x86_64")
    return kvm.usable() and not kvm.software() and kvm.probe("host", "q35") is None


def argv_of(cmd, ctx):
    """The words of a documented command with its placeholders filled."""
    words = shlex.split(cmd)
    if words[0] == "sudo":
        words = words[1:]
    filled = []
    for w in words:
        for label in ("before", "after", "matrix", "nightly-exits", "nightly"):
            stem = f"results/DATE-{label}"
            if w == stem or w.startswith(stem + "/"):
                # The docs' DATE-matrix names a matrix saved with the default
                # label; the test's one such matrix is the README's 'before'.
                got = ctx.date_dir("before" if label == "matrix" else label)
                w = got + w[len(stem):]
                break
        # The docs' scratch folders: the test's own, so two runs never share one.
        filled.append(ctx.tmp + w[len("/tmp"):]
                      if w.startswith(("/tmp/lane", "/tmp/lava", "/tmp/nightly"))
                      else FILL.get(w, w))
    return filled


def run(argv, ctx, codes=(0,), needles=(), timeout=900, env=None):
    """argv's output, once it exited in codes with every needle in it; a
    command shown in two spellings (sudo ./run.sh, ./run.sh) runs once.
    env: added to the test's own environment."""
    key = tuple(argv)
    if key not in ctx.ran:
        ctx.ran[key] = run_cmd(argv, env=dict(ctx.env, **(env or {})), timeout=timeout)
    rc, out, err = ctx.ran[key]
    text = out + err
    check(rc in codes, f"`{shlex.join(argv)}` exited {rc}, expected {'/'.join(map(str, codes))}:\n"
          + "\n".join(text.strip().split("\n")[-12:]))
    for n in needles:
        check(re.search(n, text, re.M), f"`{shlex.join(argv)}`: output lacks /{n}/")
    return text


# What each kind of entry does with the command (see the module's text).
def as_written(codes=(0,), needles=(), then=None):
    def go(cmd, ctx):
        run(argv_of(cmd, ctx), ctx, codes, needles)
        if then:
            then(cmd, ctx)
    return go


LANE_BOOT = os.path.join(REPO, "build", "kvm-lane", "out", "lane")


def lane_boot():
    """The kvm-lane group's outer boot when this tests/run booted it (its
    test-run file names the run, IPIBENCH_TEST_RUN), else None."""
    want = os.environ.get("IPIBENCH_TEST_RUN")
    try:
        with open(os.path.join(LANE_BOOT, "test-run")) as f:
            got = f.readline().rstrip("\n")
    except OSError:
        return None
    return LANE_BOOT if want and got == want else None


def in_lane(codes=(0,), needles=(), judge=()):
    """In the KVM lane; judge: frames that tests/kvm-lane/judge.py must pass,
    as the kvm-lane group judges its own (that group leaves these presets'
    suites to these commands): of lane.sh's --out folder, or the preset of
    the results folder run.sh says it saved. With this run's kvm-lane boot,
    its frame stands for the command's own outer boot (the module's text)."""
    def go(cmd, ctx):
        why = ctx.lane()
        if why:
            return f"SKIP the KVM lane cannot be prepared here: {why}"
        argv, env = argv_of(cmd, ctx), None
        boot = lane_boot() if judge and argv[0] == "./run.sh" else None
        if boot:
            env = {"KVM_LANE_REPLAY": boot, "IPIBENCH_LANE": "tests/kvm-lane/replay-lane.sh"}
        text = run(argv, ctx, codes, needles, env=env)
        if judge:
            if "--out" in argv:
                where = argv[argv.index("--out") + 1]
            else:
                saved = re.findall(r"^run\.sh: results: (\S+)$", text, re.M)
                check(saved, f"`{shlex.join(argv)}` names no results folder")
                where = os.path.join(REPO, saved[-1])
            rc, out, err = run_cmd([sys.executable, "tests/kvm-lane/judge.py", where, *judge])
            check(rc == 0, f"judge.py {' '.join(judge)}:\n{out}{err}")
            if "--out" not in argv:
                planted_faults_fail(where, judge[0], ctx)
    return go


def by_group(script):
    """A command a test group runs as written (the Xen lane's, whose outer
    boot that group pays for once): its text is in that group's script."""
    def go(cmd, ctx):
        with open(os.path.join(REPO, script)) as f:
            text = f.read()
        check(cmd in text, f"`{cmd}` is not run by {script} as written")
    return go


def planted_faults_fail(where, preset, ctx):
    """judge.py on a run.sh results folder can fail: the same console with
    every check of a backend its preset must run marked SKIP, or with a
    FAILURE end record,
    must each be judged not ok (no boot: copies of the console)."""
    text = open(os.path.join(where, "console.log"), errors="replace").read()
    skipped = re.sub(r"^(ok \d+ - kvm-pv-ipi: .*)$", r"\1 # SKIP planted", text, flags=re.M)
    failed = re.sub(r'("record":"end",.*"status":")[A-Z-]+"', r'\1FAILURE"', text)
    for name, planted, want in (("skip", skipped, "backend kvm-pv-ipi skipped: planted"),
                                ("failure", failed, "inner QEMU exit 71")):
        check(planted != text, f"planted {name}: nothing to change in {where}/console.log")
        d = os.path.join(ctx.tmp, f"planted-{name}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "console.log"), "w").write(planted)
        rc, out, err = run_cmd([sys.executable, "tests/kvm-lane/judge.py", d, preset])
        check(rc == 1 and want in out, f"judge.py on a planted {name}: exit {rc}\n{out}{err}")


# The refusal of `--accel kvm` on a host without a KVM it can use (exit 31):
# /dev/kvm missing, not a device, not accessible, or a
# software KVM (PVM) for --exits.
NO_KVM = (r"^run\.sh: --accel kvm( with --exits)?: .* is (missing|not a character device|"
          r"not accessible|PVM) \(",)


def kvm_host(refused, needles):
    """Needs a KVM host (and root): where there is none, the documented
    refusal; where there is one, not run by the tests (it reloads modules
    or traces the host's KVM), only by a person."""
    def go(cmd, ctx):
        if ctx.hw_kvm:
            return "SKIP needs this host's own KVM, which the tests leave alone"
        run(argv_of(cmd, ctx), ctx, (refused,), needles)
    return go


def raw_qemu(cmd, ctx):
    """A raw QEMU line for KVM: under TCG where there is no hardware KVM."""
    argv = argv_of(cmd, ctx)
    if not ctx.hw_kvm:
        for i, w in enumerate(argv[:-1]):
            if w == "-accel" and argv[i + 1] == "kvm":
                # One thread: multi-threaded TCG's spinning vCPUs starve each
                # other on a 2-core host (run.sh's tcg-single, for the same reason).
                argv[i + 1] = "tcg,thread=single"
            if w == "-cpu" and argv[i + 1].split(",")[0] == "host":
                argv[i + 1] = "max" + argv[i + 1][len("host"):]
    rc, out, err = run_cmd(["timeout", "300", *argv], timeout=320)
    check(rc in GUEST_OK, f"`{shlex.join(argv)}` exited {rc}: "
          + "\n".join((out + err).strip().split("\n")[-8:]))


def shortened(add=(), then=None, before=None, **subst):
    """As written, with durations shortened: words replaced or added; before,
    a command that makes what it needs (a no-op where the suite's other
    groups have made it, so that --only docs holds alone)."""
    def go(cmd, ctx):
        if before:
            run(before, ctx)
        run([subst.get(w, w) for w in argv_of(cmd, ctx)] + list(add), ctx)
        if then:
            then(cmd, ctx, subst)
    return go


def the_suite(check_argv, *needles):
    def go(cmd, ctx):
        run(check_argv, ctx, (0,), needles)
    return go


def synopsis(help_argv):
    """A synopsis: every option it names is in help_argv's output."""
    def go(cmd, ctx):
        text = run(help_argv, ctx)
        for opt in re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", cmd):
            check(re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", text),
                  f"`{cmd}`: {opt} is not in `{shlex.join(help_argv)}`")
    return go


def lava_run(cmd, ctx):
    """lava-run as written, its log (standard error) into the file after `2>`:
    LAVA's dispatcher, which needs root (its scratch space is /var/lib/lava)."""
    if not shutil.which("lava-run"):
        return "SKIP no lava-run (tools/deps.sh test installs lava-dispatcher)"
    if os.geteuid() != 0:
        return "SKIP lava-run needs root"
    argv = argv_of(cmd, ctx)
    at = argv.index("2>")
    os.makedirs(os.path.dirname(argv[at + 1]), exist_ok=True)
    with open(argv[at + 1], "w") as log:
        p = subprocess.run(argv[:at], cwd=REPO, stdout=subprocess.PIPE, stderr=log, text=True,
                           timeout=600)
    with open(argv[at + 1]) as log:
        text = log.read()
    check(p.returncode == 0 and re.search(r'"case": "job", "definition": "lava", "result": '
                                          r'"pass"', text),
          f"`{shlex.join(argv)}` exited {p.returncode}; its log: {argv[at + 1]}")


def after_lava(*logs, needles=()):
    """As written, once lava-run wrote these logs (SKIPped with it)."""
    def go(cmd, ctx):
        for log in logs:
            if not os.path.exists(ctx.tmp + log[len("/tmp"):]):
                return f"SKIP needs {log}, which lava-run writes above"
        run(argv_of(cmd, ctx), ctx, needles=needles)
    return go


def matrix_then_after(cmd, ctx, subst):
    """The README's comment: '... then the same with --label after'."""
    run([subst.get(w, w) for w in argv_of(cmd.replace("--label before", "--label after"), ctx)],
        ctx)


def two_nights(cmd, ctx):
    """The nightly loop's matrix, shortened (one boot, the send cost only),
    run twice: two nights. The first night's folder is renamed DATE-nightly-0,
    so that DATE-nightly names the second."""
    argv = [{"5": "1"}.get(w, w) for w in argv_of(cmd, ctx)]
    argv += ["--append", "plan=bench bench=send-cost"]
    for night in (1, 2):
        rc, out, err = run_cmd(argv, env=ctx.env, timeout=900)
        check(rc == 0, f"night {night}: `{shlex.join(argv)}` exited {rc}:\n"
              + "\n".join((out + err).strip().split("\n")[-12:]))
        if night == 1:
            first = ctx.date_dir("nightly")
            os.rename(first, first + "-0")


def stored_nights(cmd, ctx):
    """history --store of the two nights, in their order: the first is
    stored and judged by nothing, the second judged as a series of two;
    both verdicts are appended to the summary."""
    argv = argv_of(cmd, ctx)
    nights = sorted(glob.glob(os.path.join(ctx.results, "*-nightly-0")))
    check(len(nights) == 1, f"the first night: {nights}")
    first = [nights[0] if w == ctx.date_dir("nightly") else w for w in argv]
    run(first, ctx, needles=(r"nothing to judge yet$",))
    run(argv, ctx, needles=(r"^history: 2 runs on ", r"none regressed$"))
    summary = argv[argv.index("--summary") + 1]
    text = open(summary).read()
    check(text.count("**history: ") == 2, f"{summary}: {text}")


def after_exits_matrix(cmd, ctx):
    """Needs the exits matrix above, which needs a KVM host."""
    if not glob.glob(os.path.join(ctx.results, "*-nightly-exits")):
        return "SKIP needs the exits matrix above, which needs a KVM host"
    run(argv_of(cmd, ctx), ctx, codes=(0,))


# run.sh's words for a boot that ended with exit 0 (docs/host-tools.md, "What run.sh prints").
DONE = r"^run\.sh: done, .* \(guest status (SUCCESS|SKIP), exit 0\)$"
DONE_SUCCESS = r"^run\.sh: done, everything passed \(guest status SUCCESS, exit 0\)$"
DONE_SKIP = r"^run\.sh: done, nothing failed \(guest status SKIP, exit 0\)$"

COMMANDS = {
    # README: the two commands.
    "./run.sh": as_written(needles=(DONE,)),
    # README: booting it yourself.
    "make": as_written(),
    "make iso": as_written(),
    "./run.sh --help": as_written(needles=("^usage: ./run.sh ",)),
    "./run.sh run --help": as_written(needles=("^  --preset NAME ",)),
    "./run.sh --smp 8 --machine pc --cpu max,-x2apic --append plan=boot":
        as_written(needles=(DONE_SUCCESS,)),
    "./run.sh --smp 6,sockets=2,cores=3 --append help=1": as_written(needles=("^plan +default",)),
    "qemu-system-x86_64 -accel kvm -cpu host -smp 4 -m 256M -nodefaults -display none -serial "
    "stdio -device isa-debug-exit,iobase=0xf4,iosize=0x04 -kernel build/ipibench.elf32 "
    "-append plan=default": raw_qemu,
    # README: microvm (no 8259, PIT or RTC) through PVH, with ACPI and with an MP table only.
    "./run.sh --machine microvm": as_written(needles=(DONE,)),
    "./run.sh --machine microvm-noacpi --smp 2 --append plan=check":
        as_written(needles=(DONE_SKIP,)),
    "qemu-system-x86_64 -M microvm,pic=off,pit=off,rtc=off -accel kvm -cpu host -smp 4 -m 256M "
    "-nodefaults -display none -serial stdio -device isa-debug-exit,iobase=0xf4,iosize=0x04 "
    "-kernel build/ipibench.elf -append plan=default": raw_qemu,
    # docs/paravirt.md and host/lane/README.md: the lane (the kvm-lane group
    # runs every other preset's suite; kvm-pv's here, hv-xmm's in the README's
    # run.sh line below, each booted once).
    "host/lane/lane.sh --image build/ipibench.elf32 --presets kvm-pv --append "
    "plan=check --out /tmp/lane": in_lane(needles=(r"kvm-pv +6[57] ",), judge=("kvm-pv",)),
    "sudo ./run.sh ab --module-param kvm_amd.avic=0,1 --preset xapic --smp 4 --boots 5 --append "
    "bench=send-cost,single,single-halt,broadcast":
        kvm_host(33, (r"^run\.sh: ab: kvm_amd\.avic: .*nothing was changed",)),
    # docs/exits-and-apicv.md: the AVIC broadcast report's two ab runs.
    "sudo ./run.sh ab --module-param kvm_amd.avic=0,1 --preset avic-report-xapic --boots 5 "
    "--append bench=broadcast":
        kvm_host(33, (r"^run\.sh: ab: kvm_amd\.avic: .*nothing was changed",)),
    "sudo ./run.sh ab --module-param kvm_amd.avic=0,1 --preset avic-report-x2apic --boots 5 "
    "--append bench=broadcast":
        kvm_host(33, (r"^run\.sh: ab: kvm_amd\.avic: .*nothing was changed",)),
    "sudo ./run.sh matrix --presets x2apic,kvm-pv --boots 1 --accel kvm --exits --label base "
    "--append bench=send-cost,single,self": kvm_host(31, NO_KVM),
    "./run.sh gate --exits --baseline BASE CANDIDATE": synopsis(["./run.sh", "gate", "--help"]),
    "./run.sh history --tap history.tap nightly/epyc-7702/x2apic-smp4/*":
        synopsis(["./run.sh", "history", "--help"]),
    "sudo ./run.sh --exits --accel kvm --preset x2apic":
        kvm_host(31, NO_KVM),
    "./run.sh --preset NAME": synopsis(["./run.sh", "run", "--help"]),
    "./run.sh --accel kvm-in-tcg --preset NAME": synopsis(["./run.sh", "run", "--help"]),
    # docs/xen.md: the xen-lane group runs it (one outer boot a run).
    "./run.sh --accel xen-in-tcg --preset xen-viridian --append 'plan=check skip=tpr-hold'":
        by_group("tests/xen-lane/lane-test.sh"),
    "./run.sh --accel xen-in-tcg --preset NAME": synopsis(["./run.sh", "run", "--help"]),
    # README: host tools.
    "./run.sh list": as_written(needles=("^x2apic ",)),
    "./run.sh run --preset x2apic --smp 4": as_written(),
    "./run.sh --accel kvm-in-tcg --preset hv-xmm --append plan=check":
        in_lane(needles=(DONE,), judge=("hv-xmm",)),
    # One boot a side: the README's compare, gate and report over them run as
    # written (gate then says that no timing row could fail); how they judge
    # several boots is test_compare's and test_compare_cli's, on synthetic sets.
    "./run.sh matrix --presets xapic,x2apic --smp 4 --boots 5 --label before":
        shortened(then=matrix_then_after, **{"5": "1"}),
    "./run.sh compare --pair xapic=x2apic results/DATE-before/x2apic-smp4":
        as_written(needles=(r"xapic=x2apic",)),
    "./run.sh compare results/DATE-before/x2apic-smp4 results/DATE-after/x2apic-smp4":
        as_written(),
    # 20: TCG's timings move with host load, so a 5% regression may be seen.
    "./run.sh gate --baseline results/DATE-before/x2apic-smp4 --threshold 5 "
    "results/DATE-after/x2apic-smp4": as_written(codes=(0, 20)),
    "./run.sh report results/DATE-before/x2apic-smp4 results/DATE-after/x2apic-smp4":
        as_written(),
    # README: tests and benchmarks of the harness.
    "./tests/run": the_suite(["tests/run", "--list"], "^kvm-lane$", "^unit$"),
    "./tests/run --only tools --slowest 10": the_suite(["tests/run", "--help"], "--slowest N"),
    "make test": the_suite(["make", "-n", "test"], r"^\./tests/run$"),
    "make lint": the_suite(["make", "-n", "lint"], r"tools/lint\.sh$"),
    "make fuzz": the_suite(["make", "-n", "fuzz"], r"^\./tests/fuzz/run\.sh --seconds 60$"),
    "make fuzz FUZZ_SECONDS=600": the_suite(["make", "-n", "fuzz", "FUZZ_SECONDS=600"],
                                            r"^\./tests/fuzz/run\.sh --seconds 600$"),
    "tests/fuzz/run.sh --only madt --seconds 600":
        shortened(before=["make", "-s", "build/fuzz/fuzz_madt"], **{"600": "1"}),
    "make bench": shortened(add=["BENCH_BOOTS=1", "ICOUNT_BOOTS=1", "BENCH_APPEND=plan=bench bench=send-cost"]),
    "make bench-boot": shortened(add=["BENCH_BOOTS=1"]),
    # docs/host-tools.md
    # Its folders per preset and -smp, each boot's send cost only.
    "./run.sh matrix --presets xapic,x2apic --smp 2,4 --boots 5 --label avic-on":
        shortened(add=["--append", "plan=bench bench=send-cost"], **{"5": "1"}),
    "./run.sh matrix --presets x2apic --smp '2;4,sockets=2,cores=2' --boots 1 --append plan=boot":
        as_written(needles=(r"^matrix: \[1\] x2apic-smp2 boot 1: exit 0 ",
                            r"^matrix: \[2\] x2apic-smp4-s2c2 boot 1: exit 0 ")),
    "sudo ./run.sh matrix --exits --accel kvm --presets x2apic,kvm-pv --boots 1 --append "
    "'plan=bench bench=send-cost,single,self'": kvm_host(31, NO_KVM),
    "./run.sh gate --exits --baseline BASE/x2apic-smp2 CAND/x2apic-smp2":
        synopsis(["./run.sh", "gate", "--help"]),
    "./run.sh compare --pair xapic=x2apic results/DATE-matrix/x2apic-smp4":
        as_written(needles=(r"xapic=x2apic",)),
    "./run.sh compare --pair X=Y A [B]": synopsis(["./run.sh", "compare", "--help"]),
    "./run.sh run --preset NAME": synopsis(["./run.sh", "run", "--help"]),
    "./run.sh --exits --accel kvm-in-tcg --preset NAME": synopsis(["./run.sh", "run", "--help"]),
    "host/lane/lane.sh --exits": synopsis(["host/lane/lane.sh", "--help"]),
    "host/lane/lane.sh --jobs FILE": synopsis(["host/lane/lane.sh", "--help"]),
    "./run.sh ab --module-param MODULE.PARAM=A,B [--boots N] [run options]":
        synopsis(["./run.sh", "ab", "--help"]),
    "./run.sh report --pair xapic=x2apic results/DATE-matrix/x2apic-smp4": as_written(),
    # The nightly loop: two nights under TCG (the exits night needs a KVM host).
    "./run.sh matrix --presets x2apic --boots 5 --label nightly": two_nights,
    "./run.sh history --store /tmp/nightly results/DATE-nightly --summary /tmp/nightly.md":
        stored_nights,
    "sudo ./run.sh matrix --exits --accel kvm --presets x2apic --boots 1 --label nightly-exits "
    "--append 'plan=bench bench=send-cost,single,self'": kvm_host(31, NO_KVM),
    "./run.sh history --store /tmp/nightly results/DATE-nightly-exits --summary "
    "/tmp/nightly.md": after_exits_matrix,
    "tools/deps.sh build": as_written(),
    "tools/deps.sh report": as_written(),
    # docs/lab.md
    "./run.sh lava job --kernel-url https://storage.example.org/ipibench/BUILD/"
    "ipibench.elf32 --preset x2apic --output /tmp/lava/x2apic.yaml": as_written(),
    "./run.sh lava dut-test --repo https://git.example.org/ipibench.git --preset x2apic "
    "--module-param kvm_amd.avic=0,1 --output /tmp/lava/dut-test.yaml": as_written(),
    "./run.sh lava job --kernel-url build/ipibench.elf32 --accel tcg-single --append "
    "'backends=x2apic bench=send-cost,single' --output /tmp/lava/job.yaml": as_written(),
    "./run.sh lava device /tmp/lava/job.yaml --output /tmp/lava/device.yaml":
        as_written(),
    "sudo lava-run --job-id ipibench-a --output-dir /tmp/lava/out --device /tmp/lava/device.yaml "
    "/tmp/lava/job.yaml 2> /tmp/lava/a.log": lava_run,
    # A second after ipibench-a at least: the nightly store below files each
    # log's import by its start, to the second, and these two stand for two nights.
    "sudo lava-run --job-id ipibench-b --output-dir /tmp/lava/out --device /tmp/lava/device.yaml "
    "/tmp/lava/job.yaml 2> /tmp/lava/b.log": lambda cmd, ctx: time.sleep(1) or lava_run(cmd, ctx),
    "./run.sh lava import /tmp/lava/a.log /tmp/lava/a":
        after_lava("/tmp/lava/a.log", needles=(r"records from the guest's console$",)),
    "./run.sh lava import /tmp/lava/b.log /tmp/lava/b": after_lava("/tmp/lava/b.log"),
    "./run.sh compare /tmp/lava/a /tmp/lava/b":
        after_lava("/tmp/lava/a.log", "/tmp/lava/b.log", needles=(r"^single +round-trip ",)),
    "./run.sh --accel tcg-single --smp 2 --append 'lava=1 backends=x2apic bench=send-cost,single' "
    "--results-dir /tmp/lava/local": as_written(needles=(DONE_SUCCESS,)),
    "./run.sh compare /tmp/lava/local /tmp/lava/a":
        after_lava("/tmp/lava/a.log", needles=(r"^send-cost +send ",)),
    "./run.sh lava report /tmp/lava/local --dry-run --no-embed":
        as_written(needles=(r"^lava-test-case ipibench_status --result pass$",
                            r"^lava-test-case x2apic_send_cost_p50_cycles --result pass "
                            r"--measurement \d+ --units cycles$")),
    # docs/lab.md: nightly, into a history (lava-run's two logs stand for two nights).
    "./run.sh history --store ROOT DIR": synopsis(["./run.sh", "history", "--help"]),
    "./run.sh lava job --kernel-url https://storage.example.org/ipibench/BUILD/ipibench.elf32 "
    "--preset x2apic --tags epyc-7702 --output /tmp/lava/nightly-x2apic.yaml": as_written(),
    "./run.sh lava dut-test --repo https://git.example.org/ipibench.git --preset x2apic "
    "--boots 5 --exits --output /tmp/lava/nightly-dut-test.yaml": as_written(),
    "./run.sh lava import /tmp/lava/a.log /tmp/lava/night-1 --host-type epyc-7702":
        after_lava("/tmp/lava/a.log", needles=(r"records from the guest's console$",)),
    "./run.sh history --store /tmp/lava/history /tmp/lava/night-1":
        after_lava("/tmp/lava/a.log", needles=(r"^history: .*night-1 as .*epyc-7702/"
                                               r"tcg-single-q35-smp2/",
                                               r"nothing to judge yet$")),
    "./run.sh lava import /tmp/lava/b.log /tmp/lava/night-2 --host-type epyc-7702":
        after_lava("/tmp/lava/b.log"),
    "./run.sh history --store /tmp/lava/history /tmp/lava/night-2":
        after_lava("/tmp/lava/a.log", "/tmp/lava/b.log",
                   needles=(r"^history: 2 runs on epyc-7702", r"none regressed$")),
    "tests/run --only lava": the_suite(["tests/run", "--list"], "^lava$"),
    "tools/deps.sh test": as_written(),
    # docs/results.md
    "./run.sh validate LOG": synopsis(["./run.sh", "validate", "--help"]),
    # docs/exits-and-apicv.md
    "./run.sh model --class x2avic": as_written(needles=("| x2apic | send-cost | send | none |",
                                                         "4d1d7942e36a")),
    "./run.sh model results/DATE-LABEL/BOOT": synopsis(["./run.sh", "model", "--help"]),
    # docs/hyperv-abi.md
    "qemu-system-x86_64 -accel kvm -machine q35 -smp 4 -m 512M -nodefaults -display none -cpu "
    "host,hv-vpindex,hv-vapic,hv-ipi,hv-tlbflush,hv-tlbflush-ext,hv-xmm-input,hv-time,"
    "hv-frequencies,hv-relaxed -serial stdio -device isa-debug-exit,iobase=0xf4,iosize=0x04 "
    "-kernel build/ipibench.elf32": raw_qemu,
    # host/lane/README.md
    "qemu-system-x86_64 -accel kvm": synopsis(["qemu-system-x86_64", "-help"]),
    "host/lane/prepare.sh": in_lane(),
}


def canon(cmd):
    """The one spelling of a command the table and the documents share."""
    try:
        return normal(cmd)
    except ValueError:
        return cmd.strip()


def main():
    known = {canon(k): v for k, v in COMMANDS.items()}
    todo, bad, problems = {}, 0, []
    for where, cmd, kind in extract():
        if kind == "not a command":
            problems.append(f"not ok - docs: {where}: `{cmd}` in a sh block is not a command "
                            "(mark the block as text, or teach this test the program)")
        elif canon(cmd) not in known:
            problems.append(f"not ok - docs: {where}: `{cmd}` has no entry in "
                            "tests/host/test_docs.py")
        else:
            todo.setdefault(canon(cmd), where)  # shown twice, run once
    for key in known:
        if key not in todo:
            problems.append(f"not ok - docs: the entry `{key}` names an example no document "
                            "shows any more")
    # --table checks the documents against the table and runs nothing (what
    # an editor of the docs runs first); --case TEXT runs the commands that
    # hold TEXT, --list names them all (harness.selected); the documents and
    # the table are checked only when every command runs.
    if "--table" in sys.argv[1:]:
        for line in problems:
            print(line)
        print(f"{len(todo)} documented commands, {len(problems)} problems")
        return 1 if problems else 0
    chosen = selected(list(todo.items()))
    if len(chosen) == len(todo):
        for line in problems:
            print(line)
        bad += len(problems)
    ctx = Ctx(tempfile.mkdtemp(prefix="ipibench-docs-"))
    try:
        for key, where in chosen:  # in document order: the matrix before its compare
            t0 = time.monotonic()
            try:
                skip = known[key](key, ctx)
                took = f" ({time.monotonic() - t0:.1f} s)"
                print(f"ok - docs: {where}: {key}" + (f" # {skip}" if skip else took))
            except (Fail, subprocess.TimeoutExpired) as e:
                bad += 1
                print(f"not ok - docs: {where}: {key}")
                for line in str(e).split("\n"):
                    print(f"#   {line}")
            sys.stdout.flush()
    finally:
        shutil.rmtree(ctx.tmp, ignore_errors=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

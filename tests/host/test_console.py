#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""What run.sh prints of a console (boot/console.py, progress.py; the
summary: summary.py, headline.py, outcome.py, tap.py), from made-up consoles:
the boot facts and a progress line per unit and per suite label, the unit
in flight redrawn on a terminal, where a boot cut short was, SKIP reasons
grouped; the summary (headline figures, warnings, correctness, what the
run proved, why it SKIPped) within 80 columns.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import sys

from harness import check, registry
from fixtures import HV, main, rec, res

from ipibench.boot import console as C
from ipibench.boot import outcome as O
from ipibench.boot import run as B
from ipibench.boot import summary as S
from ipibench.boot import tap as T


CASES, case = registry()


# One-way figures the TSCs cannot time (bench/point.c): withheld, not SKIPped.
SKEW = "one-way not reported: TSC skew bound 650 cycles (CPU 0 to CPU 1) is not under a tenth " \
    "of the p50 {}"


# A console as the guest prints it: bring-up, the suite (a failure, SKIPs),
# five units (a failure, partial SKIPs, withheld one-way figures, two
# refused backends), the view.
CONSOLE = [
    "ipibench test", "smp: CPU 0 APIC ID 0 online (BSP)", "smp: CPU 1 APIC ID 1 online",
    "smp: 2 of 2 CPUs online", "check: delivery correctness on 2 CPUs",
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    "ok 1 - xapic: switch all 2 CPUs to xapic mode, no test vector left",
    "not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it", "#   and more",
    "ok 3 - xapic: sends from an AP # SKIP one CPU",
    f"ok 4 - hv-icr: every check # SKIP {HV}",
    f"ok 5 - hv-ipi: every check # SKIP {HV}",
    "1..5", "check: 1 passed, 1 failed, 3 skipped",
    rec("check", backend="all", passed=1, failed=1, skipped=3),
    "bench         metric          variant          backend        cpus         p50 cyc",
    rec("phase", index=1, of=5, backend="none", bench="dry-run"),
    "dry-run       loop            none             none           0>none            26",
    res("none", "dry-run", "loop", p50=26),
    rec("phase", index=2, of=5, backend="xapic", bench="single"),
    "apic: all 2 CPUs in xapic mode, backend xapic (dest=physical)",
    res("xapic", "single", "round-trip", p50=4000),
    res("xapic", "single", "one-way", "SKIP", SKEW.format(2910)),
    "bench: FAILURE: single on xapic: CPU 1 lost it",
    res("xapic", "single", "round-trip", "FAILURE", "CPU 1 lost it"),
    res("xapic", "single", "all", "ERROR", "the harness broke"),
    rec("phase", index=3, of=5, backend="xapic", bench="single-halt"),
    res("xapic", "single-halt", "round-trip", p50=5000),
    res("xapic", "single-halt", "one-way", "SKIP", SKEW.format(3520)),
    res("xapic", "single-halt", "hv-path", "SKIP", HV),
    rec("phase", index=4, of=5, backend="hv-icr", bench="all"),
    res("hv-icr", "single", "-", "SKIP", HV),
    res("hv-icr", "single-halt", "-", "SKIP", HV),
    rec("phase", index=5, of=5, backend="hv-ipi", bench="all"),
    res("hv-ipi", "single", "-", "SKIP", HV),
    "view: kvm-unit-tests x86/vmexit.c names, cycles per iteration (mean)",
    "test        xapic", "ipi_halt     5000", "note: ipi_halt here is CPU 0 -> CPU 1",
    rec("end", status="FAILURE", results=9), "ipibench: status FAILURE",
]


# What a person reads of it, a line each 10 ms.
SHOWN = f"""ipibench test
smp: 2 of 2 CPUs online
not ok 2 - xapic: CPU 0 -> CPU 1, vector 0x43: lost it
#   and more
check xapic: 1 passed, 1 FAILED, 1 skipped (one CPU) ... 0.06 s
check hv-icr, hv-ipi ... SKIP: {HV}
[1/5] dry-run ... 0.03 s
bench: FAILURE: single on xapic: CPU 1 lost it
[2/5] xapic single ... 0.07 s, 1 FAILURE, 1 ERROR; 1 one-way figure withheld (TSC skew)
    withheld: TSC skew bound 650 cycles (CPU 0 to CPU 1) is not under a tenth of the p50 2910
    ERROR: single all: the harness broke
[3/5] xapic single-halt ... 0.04 s, 1 of 2 SKIP: no Hyper-V interface (see above); 1 one-way \
figure withheld (TSC skew)
[4-5/5] hv-icr, hv-ipi ... SKIP: no Hyper-V interface (see above)
ipibench: status FAILURE
"""


def follow(lines, tty=False, step=0.01, upto=None):
    """A Console fed lines[:upto] step seconds apart: (it, what it wrote)."""
    out = []
    c = C.Console(out.append, tty)
    for i, line in enumerate(lines[:upto]):
        c.line(line, i * step)
        c.tick(i * step + step / 2)
    return c, out


def on_screen(text):
    """What a terminal shows of text: each line as its last redraw left it."""
    return "\n".join(line.rsplit("\r\033[K", 1)[-1] for line in text.split("\n"))


@case("run.sh console: the boot facts, a progress line per unit and per suite label, not the rest")
def _(_s):
    c, out = follow(CONSOLE)
    c.finish(len(CONSOLE) * 0.01)
    got = "".join(out)
    check(got == SHOWN, f"printed:\n{got}")
    check("\r" not in got and c.phases == 5, "carriage returns, or phases miscounted")
    # A failure the console already showed is not repeated; a SKIP's reason is
    # said in full once, then by its head; withheld one-way figures are counted
    # apart from the SKIPs, their cause said once, whatever its figures.
    check(got.count("CPU 1 lost it") == 1 and got.count(HV) == 1 and "p50 3520" not in got,
          got)
    # Without times (the lane's log, read afterwards) the same lines, untimed.
    out = []
    C.replay("\n".join(CONSOLE), out.append).finish()
    untimed = SHOWN
    for t in (" 0.06 s", " 0.03 s", " 0.04 s,", " 0.07 s,"):
        untimed = untimed.replace(t, "")
    check("".join(out) == untimed, "".join(out))
    # Whole SKIPs of one cause share a line only when they come together.
    _, out = follow(CONSOLE, step=0.2)
    check("[4/5] hv-icr ... SKIP: no Hyper-V interface (see above)\n[5/5] hv-ipi ... SKIP: no "
          "Hyper-V interface (see above)\n" in "".join(out), "".join(out))


@case("run.sh console on a terminal: the unit in flight redrawn in place, the same lines left")
def _(_s):
    c, out = follow(CONSOLE, tty=True)
    c.finish(len(CONSOLE) * 0.01)
    got = "".join(out)
    check("\r\033[K[2/5] xapic single ... " in got and "check xapic: 1 passed so far ..." in got,
          f"no redraw: {got!r}")
    check(on_screen(got) == SHOWN, f"on screen:\n{on_screen(got)}")
    # Redraws come a few times a second, not with every console line.
    many = ["check: delivery correctness on 2 CPUs"] + \
        [f"ok {i} - xapic: CPU 0 -> CPU 1, vector {i}" for i in range(1, 1001)]
    _, out = follow(many, tty=True, step=0.001)
    check("".join(out).count("\r") < 10, f"{''.join(out).count(chr(13))} redraws")


@case("run.sh console: a boot cut short says where it was (timeout's message)")
def _(_s):
    c, out = follow(CONSOLE, upto=22)  # inside [2/5] xapic single, opened at 0.19 s
    check(c.last_progress(3.29) == "last progress: [2/5] xapic single ... 3.1 s",
          c.last_progress(3.29))
    c.finish(3.29, "TIMEOUT")
    check("".join(out).endswith("[2/5] xapic single ... 3.1 s, stopped: TIMEOUT\n"),
          "".join(out))
    c, _ = follow(CONSOLE, upto=8)  # in the suite
    check(c.last_progress() == "last progress: check xapic: 1 passed so far ...",
          c.last_progress())
    c, _ = follow(CONSOLE[:3] + ["qemu-system-x86_64: terminating on signal 15 from pid 9"])
    check(c.last_progress() == "the guest's last line: 'smp: CPU 1 APIC ID 1 online'",
          c.last_progress())
    check(C.Console().last_progress() == "the guest printed nothing", "empty console")
    log = "ipibench test\nqemu-system-x86_64: -device x: 'x' is not a valid device model name\n"
    check(B.qemu_own_line(log, "qemu-system-x86_64") ==
          "qemu-system-x86_64: -device x: 'x' is not a valid device model name", "QEMU's line")
    check(B.qemu_own_line("timeout: failed to run command 'q'\n", "/x/q") ==
          "timeout: failed to run command 'q'", "the last line otherwise")


SUMMARY_RECORDS = [
    {"record": "env", "cpus": {"count": 4}, "tsc": {"khz": 2000000, "source": "CPUID 0x15"},
     "hypervisor": {"vendor": "KVMKVMKVM"}, "harness_cycles": 30,
     "trust": {"warnings": [{"id": "rdtsc-exits", "text": "RDTSC exits"}]}},
    {"record": "check", "backend": "all", "passed": 90, "failed": 1, "skipped": 2},
] + [json.loads(r) for r in (
    res("x2apic", "self", "send-to-handler", p50=1500, variant="sti-nop"),
    res("x2apic", "self", "send-to-handler", p50=1400, variant="icr-sti-nop"),
    res("x2apic", "send-cost", "send", p50=416),
    res("x2apic", "single", "round-trip", p50=2600),
    res("x2apic", "single-halt", "round-trip", p50=2700),
    res("x2apic", "broadcast", "all-ack", p50=9000, variant="loop", n=3),
    res("x2apic", "broadcast", "all-ack", p50=6000, variant="shorthand", n=3),
    res("x2apic", "broadcast", "all-ack", p50=3000, variant="shorthand", n=1),
    res("x2apic", "flush", "crossover-pages", p50=7000, variant="8p", n=3),
    res("x2apic", "flush", "crossover-pages", p50=7000, variant="1p", n=1),
    res("hv-ipi", "send-cost", "send", p50=900),
    res("hv-ipi", "single", "round-trip", "FAILURE", "CPU 3 lost it"),
    res("hv-ipi", "flush", "crossover-pages", "SKIP", "native stays cheaper", n=3),
    res("kvm-pv-ipi", "single", "-", "SKIP", "no KVM PV interface"),
    res("hv-icr", "single", "-", "SKIP", HV),
    res("hv-vapic", "single", "-", "SKIP", "no Hyper-V interface"),
)] + [{"record": "end", "status": "FAILURE", "results": 16}]


@case("run.sh summary: headline p50s in cycles and ns, warnings, correctness, in 80 columns")
def _(_s):
    lines = S.summary(SUMMARY_RECORDS, {"warnings": [{"id": "vcpus", "text": "more vCPUs"},
                                                     {"id": "x", "text": "RDTSC exits"}]},
                      ["xapic: CPU 0 -> CPU 1: lost it"])
    text = "\n".join(lines)
    row = lambda *cells: "".join(f"{c:>10}" for c in cells)  # noqa: E731
    for want in ("summary: FAILURE; 4 CPUs, hypervisor KVMKVMKVM, TSC 2000000 kHz (CPUID 0x15), "
                 "harness 30 cycles".split("; ")[0], "warning: RDTSC exits", "warning: more vCPUs",
                 "x2apic         cyc" + row(1500, 416, 2600, 2700, 6000, "8p"),
                 "               ns " + row(750, 208, 1300, 1350, 3000),
                 "hv-ipi         cyc" + row("-", 900, "FAIL", "-", "-", "never"),
                 "skipped: kvm-pv-ipi: no KVM PV interface",
                 "skipped: hv-icr: no Hyper-V interface: QEMU TCG",
                 "skipped: hv-vapic: no Hyper-V interface",
                 "correctness: check all: 90 passed, 1 failed, 2 skipped; benchmark records: 10 "
                 "SUCCESS, 4 SKIP, 1 FAILURE".split("; ")[0],
                 "FAILURE: single round-trip on hv-ipi: CPU 3 lost it",
                 "not ok: xapic: CPU 0 -> CPU 1: lost it"):
        check(want in text, f"summary lacks {want!r}:\n{text}")
    check(text.count("RDTSC exits") == 1, "a warning twice")
    check(all(len(line) < C.WIDTH for line in lines) and len(lines) < 30,
          f"{len(lines)} lines, widest {max(map(len, lines))}")
    # No warnings field anywhere (older guests, no results.json): none printed.
    plain = [r for r in SUMMARY_RECORDS if r["record"] != "env"] + [{"record": "env"}]
    check(not any(line.startswith("warning:") for line in S.summary(plain)), "warning")
    check(S.warnings_of({"warnings": ["a", {"id": "b"}, 3]}, {"trust": {"warnings": "x"}})
          == ["a", "b"], "warnings_of")
    # A condition guest and host both saw is said once, in the guest's words.
    check(S.warnings_of({"trust": {"warnings": [{"id": "tcg", "text": "TCG (guest)"}]}},
                        {"warnings": [{"id": "tcg", "text": "TCG (host)"}]}) == ["TCG (guest)"],
          "one condition twice")
    check(S.summary(SUMMARY_RECORDS, {"accel": "kvm"})[0].startswith(
        "summary: FAILURE; 4 CPUs, accel kvm, TSC"), "accel")
    many = S.summary([{"record": "result", "backend": "x", "bench": "single", "status": "ERROR",
                       "reason": f"r{i}"} for i in range(9)], most_failures=5)
    check(many[-2] == "... 4 more in console.log" and many[-1].startswith("proved: "),
          "\n".join(many[-2:]))


@case("run.sh summary of a TCG run that SKIPs: each condition once, what it proved, why, next")
def _(_s):
    tsc = "no invariant TSC (CPUID 0x80000007 EDX[8]) and no kvmclock TSC-stable flag"
    env = {"record": "env", "cpus": {"count": 4}, "tsc": {"khz": 2000000, "source": "PIT"},
           "trust": {"warnings": [{"id": "tcg", "text": "QEMU TCG emulates every instruction: "
                                   "only behaviour counts"}, {"id": "tsc-unstable", "text": tsc}]}}
    kvm = "no KVM PV interface: QEMU TCG has none; boot with -accel kvm and kvm-pv-ipi=on"
    records = [env, {"record": "check", "backend": "all", "passed": 48, "failed": 0,
                     "skipped": 2}] + [json.loads(r) for r in (
        res("x2apic", "single", "round-trip", p50=2600),
        res("x2apic", "single", "one-way", "SKIP", SKEW.format(2600)),
        res("x2apic", "single-halt", "one-way", "SKIP", SKEW.format(2900)),
        res("xapic-nmi", "send-cost", "send", p50=500),
        res("xapic-nmi", "single", "round-trip", "SKIP", "an NMI takes no EOI: nothing to order"),
        res("hv-icr", "single", "-", "SKIP", HV), res("hv-ipi", "single", "-", "SKIP", HV),
        res("kvm-pv-ipi", "single", "-", "SKIP", kvm))] + [{"record": "end", "status": "SKIP"}]
    suite = T.suite_labels("ok 1 - x2apic: self on CPU 0, vector 0x41\n"
                           "ok 2 - xapic-nmi: CPU 0 -> CPU 1, NMI\n"
                           "ok 3 - x2apic (again): CPU 0 -> set {0,2-3}, vector 0x42\n"
                           f"ok 4 - hv-icr: every check # SKIP {HV}\n")
    check(suite == {"x2apic": {"delivery": [2, 0, 0, [], 0]},
                    "xapic-nmi": {"delivery": [1, 0, 0, [], 0]},
                    "hv-icr": {"backend": [0, 0, 1, [HV], 0]}}, f"{suite}")
    lines = S.summary(records, {"accel": "tcg-single", "warnings": [
        {"id": "tcg", "text": "QEMU TCG: every instruction emulated"}]}, said={HV},
        suite=suite, saved=True)
    text = "\n".join(lines)
    flat = " ".join(line.strip() for line in lines)
    for want in ("summary: finished, status SKIP (see the end); 4 CPUs, accel tcg-single",
                 f"warning: {tsc}",
                 "skipped: hv-icr, hv-ipi: no Hyper-V interface (see above)",
                 f"skipped: kvm-pv-ipi: {kvm}",
                 "withheld: 2 one-way figures (TSC skew: TSC skew bound 650 cycles",
                 "benchmark records: 2 SUCCESS, 4 SKIP",
                 "proved: on 2 backends every IPI of 3 delivery checks reached exactly the CPUs "
                 "it was sent to, once each; 1 backend SKIPped every check (above); figures are "
                 "emulated (QEMU TCG emulates every instruction): behaviour only, not speed",
                 "why SKIP, exit 0: nothing failed; what could not run is the normal outcome here "
                 "(reasons above): 3 backends under TCG; 3 figures in this configuration",
                 "next: on a KVM host, ./run.sh --accel kvm --preset hv (or kvm-pv; ./run.sh "
                 "list); here, KVM nested in TCG: ./run.sh --accel kvm-in-tcg --preset hv",
                 "./run.sh report DIR (plots), ./run.sh compare DIR OTHER"):
        check(want in flat, f"summary lacks {want!r}:\n{text}")
    # Each condition once: TCG in the closing words alone (the guest's warning
    # and the host's are one), the TSC's warning, the Hyper-V reason by its head.
    check(flat.count("emulate") == 2 and flat.count("invariant TSC") == 1 and HV not in flat and
          "SKIP; " not in flat, text)
    check(all(len(line) < C.WIDTH for line in lines), f"widest {max(map(len, lines))}")
    # The withheld figures' cause, once the console said it, by its name alone.
    again = S.summary(records, said={HV, "withheld: TSC skew"}, suite=suite)
    check("withheld: 2 one-way figures (TSC skew, see above)" in again and
          "--no-save kept none" in " ".join(again), "\n".join(again))
    # Not TCG: no TCG words, and its skips are this configuration's, not TCG's.
    kvm_run = [dict(env, trust={})] + records[1:]
    text = " ".join(line.strip() for line in S.summary(kvm_run, {"accel": "kvm"}, suite=suite))
    check("under TCG" not in text and "emulated" not in text and "(reasons above): 3 backends "
          "and 3 figures in this configuration" in text, text)
    # Not TCG and nothing skipped: no TCG words, no SKIP line; SUCCESS.
    ok = [dict(env, trust={})] + records[1:3] + [{"record": "end", "status": "SUCCESS"}]
    text = "\n".join(S.summary(ok, {"accel": "kvm"}, suite=suite))
    check("emulated" not in text and "why SKIP" not in text and "summary: finished, status "
          "SUCCESS" in text and "--accel kvm " not in text, text)
    # A failing check: the proof says so, by kind; no next steps for a run that failed.
    bad = [env, {"record": "check", "backend": "all", "passed": 47, "failed": 1, "skipped": 0},
           {"record": "end", "status": "FAILURE"}]
    text = " ".join(line.strip() for line in S.summary(bad, suite={"x2apic": {
        "delivery": [40, 0, 0, []], "wake": [7, 1, 0, []]}}))
    check("proved: 1 of 48 checks FAILED (1 wake-from-HLT), on x2apic (the not ok lines above "
          "say how)" in text and "next:" not in text and "summary: FAILURE;" in text, text)
    # run.sh's last line: an exit 0 in words, the rest as decoded.
    check(O.closing("SKIP", 0, 67) == "done, nothing failed (guest status SKIP, exit 0)",
          O.closing("SKIP", 0, 67))
    check(O.closing("SUCCESS", 0, 65).endswith("(guest status SUCCESS, exit 0)") and
          O.closing("FAILURE", 4, 71) == "FAILURE (QEMU exit 71)" and
          O.closing("SUCCESS", 32, 65) == "SUCCESS (QEMU exit 65)" and
          O.closing("ERROR", 3, 69, qemu=False) == "ERROR (exit 3)", "closing")


# The suite on one CPU as suite/delivery.c names its lines: every cross-CPU
# check SKIPs; then the Hyper-V flush checks, which send no IPI.
ONE_CPU_SUITE = "\n".join([
    "ok 1 - xapic: switch all 1 CPUs to xapic mode, no test vector left",
    "ok 2 - xapic: self on CPU 0, vector 0x41", "ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42",
    "ok 4 - xapic: CPU 0 -> all-but-self, vector 0x43",
    "ok 5 - xapic: CPU 0 -> all-including-self, vector 0x44",
    "ok 6 - xapic: CPU 0 -> set {0}, vector 0x45", "ok 7 - xapic: sends from an AP # SKIP one CPU",
    "ok 8 - xapic: TPR 0x60 holds vector 0x65 on CPU 0 (self-IPI on CPU 0) until TPR drops",
    "ok 9 - xapic: IF=0 holds vector 0x46 on CPU 0 (self-IPI on CPU 0) until STI",
    "ok 10 - xapic: CPU 0 wakes CPU 0 from HLT after 2000 us idle, 5 times, none lost or late "
    "# SKIP one CPU",
    "ok 11 - x2apic-nmi: switch all 1 CPUs to x2apic mode, no test vector left",
    "ok 12 - x2apic-nmi: self on CPU 0, NMI",
    "ok 13 - x2apic-nmi: an NMI sent to itself by CPU 0 is taken through IF=0",
    "ok 14 - x2apic-nmi: an NMI held while in the handler # SKIP one CPU",
    f"ok 15 - hv-icr: every check # SKIP {HV}",
    "ok 16 - hv-flush: HvCallFlushVirtualAddressSpace (slow), CPU 0 -> CPUs {0}",
    "ok 17 - hv-flush: HvCallFlushVirtualAddressList (slow), 2 pages, CPU 0 -> CPUs {0}",
    "ok 18 - hv-flush-xmm: HvCallFlushVirtualAddressSpace (XMM-fast), CPU 0 -> CPUs {0}",
])


@case("run.sh summary proved: delivery checks counted apart, flush labels no backend, "
      "backends checked in part named")
def _(_s):
    suite = T.suite_labels(ONE_CPU_SUITE)
    check({b: {k: n[:3] for k, n in v.items()} for b, v in suite.items()} == {
        "xapic": {"switch": [1, 0, 0], "delivery": [5, 0, 1], "masking": [2, 0, 0],
                  "wake": [0, 0, 1]},
        "x2apic-nmi": {"switch": [1, 0, 0], "delivery": [1, 0, 0], "nmi": [1, 0, 1]},
        "hv-icr": {"backend": [0, 0, 1]}, "hv-flush": {"flush": [2, 0, 0]},
        "hv-flush-xmm": {"flush": [1, 0, 0]}}, f"{suite}")
    text = O.proved(suite, [], False)
    check(text == "proved: on 2 backends every IPI of 6 delivery checks reached exactly the "
          "CPUs it was sent to, once each; also passed: 2 mode-switch, 2 TPR/IF=0 masking, 1 "
          "NMI masking checks; 3 flush checks passed (hv-flush, hv-flush-xmm: each "
          "flush completed, and no target read through a stale translation after it); "
          "xapic: 8 passed, 2 skipped (one CPU); "
          "x2apic-nmi: 3 passed, 1 skipped (one CPU); 1 backend SKIPped every check (above)",
          text)
    # A flush whose TLB effect went unseen (no target held the old
    # translation before it, as under Xen or nested KVM, whose VM entries
    # may empty the TLB): it passed, but proved nothing of the flush.
    name = "hv-flush: HvCallFlushVirtualAddressSpace (slow), CPU 0 -> CPUs {0}"
    unseen = T.suite_labels(ONE_CPU_SUITE.replace(
        f"ok 16 - {name}", f"check: {name}: the TLB effect went unseen: no target still held "
        f"the old translation before the flush\nok 16 - {name}"))
    check(unseen["hv-flush"] == {"flush": [2, 0, 0, [], 1]}, f"{unseen['hv-flush']}")
    text = O.proved(unseen, [], False)
    check("; 2 flush checks passed (hv-flush, hv-flush-xmm: each flush completed, and no target "
          "read through a stale translation after it); 1 flush check unproven (hv-flush: each "
          "flush completed, but no target still held the old translation before it, so its TLB "
          "effect went unseen); " in text, text)
    # A failed flush check is a failure, whatever came before it.
    failed = T.suite_labels(ONE_CPU_SUITE.replace(
        f"ok 16 - {name}", f"check: {name}: the TLB effect went unseen: no target\n"
        f"not ok 16 - {name}: status 0x5"))
    check(failed["hv-flush"] == {"flush": [1, 1, 0, [], 0]}, f"{failed['hv-flush']}")
    # A failure says of which kind; the check record alone (no TAP lines) claims no more
    # than that every check it ran passed.
    bad = T.suite_labels(ONE_CPU_SUITE.replace("ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42",
                                               "not ok 3 - xapic: CPU 0 -> CPU 0, vector 0x42: "
                                               "CPU 0 counted it twice"))
    check(O.proved(bad, [], False) == "proved: 1 of 14 checks FAILED (1 delivery), on xapic "
          "(the not ok lines above say how)", O.proved(bad, [], False))
    check(O.proved({}, [{"record": "check", "passed": 9, "failed": 0}], False) ==
          "proved: passed every correctness check it ran (9 checks: delivery, TPR/IF=0 "
          "masking, wake from HLT, mode switch)", O.proved({}, [{"passed": 9}], False))
    # Why SKIP: TCG named only for the skips that are TCG's.
    why = O.why_skip({}, [], [], True, suite)
    check(why == "why SKIP, exit 0: nothing failed; what could not run is the normal outcome "
          "here (reasons above): 1 backend under TCG; 3 checks in this configuration", why)
    one = {b: v for b, v in suite.items() if b != "hv-icr"}
    check("under TCG" not in O.why_skip({}, [], [], True, one), O.why_skip({}, [], [], True, one))


@case("run.sh console and summary: SKIP reasons grouped by the whole reason, a repeat of "
      "the same one shortened, another detail said in full")
def _(_s):
    # Of one head and one shape (its figures aside), but two different bits.
    vapic = "no Hyper-V feature: CPUID 0x40000003 EAX[4] is 0"
    ipi = "no Hyper-V feature: CPUID 0x40000003 EAX[11] is 0"
    lines = [rec("phase", index=1, of=3, backend="hv-icr", bench="single"),
             res("hv-icr", "single", "round-trip", p50=10),
             res("hv-icr", "single", "hv-path", "SKIP", vapic),
             rec("phase", index=2, of=3, backend="hv-ipi", bench="single"),
             res("hv-ipi", "single", "round-trip", p50=10),
             res("hv-ipi", "single", "hv-path", "SKIP", ipi),
             rec("phase", index=3, of=3, backend="hv-icr", bench="send-cost"),
             res("hv-icr", "send-cost", "send", p50=10),
             res("hv-icr", "send-cost", "hv-path", "SKIP", vapic),
             rec("end", status="SKIP", results=6)]
    c, out = follow(lines)
    c.finish(1)
    got = "".join(out)
    check(f"    SKIP: {vapic}\n" in got and f"    SKIP: {ipi}\n" in got and
          "[3/3] hv-icr send-cost ... 0.03 s, 1 of 2 SKIP: no Hyper-V feature (see above)"
          in got, got)
    # The summary: one line per reason, a reason said before by its head.
    kvm = "no KVM PV interface: kvm-pv-ipi is off in -cpu"
    recs = [json.loads(res(b, "single", "-", "SKIP", why)) for b, why in
            (("hv-icr", vapic), ("hv-ipi", ipi), ("hv-ipi-ex", ipi), ("kvm-pv-ipi", kvm))]
    flat = " ".join(x.strip() for x in S.summary(recs, said={vapic}))
    check("skipped: hv-icr: no Hyper-V feature (see above)" in flat and
          f"skipped: hv-ipi, hv-ipi-ex: {ipi}" in flat and f"skipped: kvm-pv-ipi: {kvm}" in
          flat, flat)


@case("run.sh console: trust warnings and a SKIP or SUCCESS status left to the summary; "
      "QEMU's topoext warning explained")
def _(_s):
    ht = ("qemu-system-x86_64: warning: This family of AMD CPU doesn't support "
          "hyperthreading(2). Please configure -smp options properly or try enabling topoext "
          "feature.")
    _, out = follow([ht, "ipibench test", "warning: tcg: QEMU TCG emulates every instruction",
                     "warning: tsc-unstable: no invariant TSC", "ipibench: status SKIP",
                     "ipibench: status SUCCESS", "ipibench: status FAILURE"])
    lines = "".join(out).splitlines()
    check(lines[:3] == [ht, C.QEMU_HT_WHY, "ipibench test"] and
          lines[3:] == ["ipibench: status FAILURE"], f"{lines}")
    check("+topoext to -cpu" in C.QEMU_HT_WHY, C.QEMU_HT_WHY)


if __name__ == "__main__":
    sys.exit(main(CASES))

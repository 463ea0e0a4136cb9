#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The guest's command-line keys as the build writes them
(tools/guest_keys.py, build/guest-keys.json) and --append held against them
before a boot (boot/guest_keys.py): the file says what the guest's help=1
says, every key and value the guest lists passes, and what lib/cmdline.c
refuses is refused in its words, with the name a typo meant. The end to
end case (no QEMU started) is test_boot_run.py's.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import json
import os
import re
import subprocess
import sys

from harness import REPO, check, registry, run_cmd
from fixtures import RUN, main, raises, write

from ipibench.boot import guest_keys as G


CASES, case = registry()

ELF = os.path.join(REPO, "build", "ipibench.linked.elf")
# The spec table of tests/unit/test_cmdline.c, which holds lib/cmdline.c's
# own cases: the same inputs must get the same verdicts here.
UNIT = {k["key"]: k for k in (
    {"key": "plan", "type": "enum", "choices": ["check", "quick", "full"]},
    {"key": "backends", "type": "list",
     "choices": ["xapic", "x2apic", "hv-slow", "hv-fast", "kvm-pv"]},
    {"key": "iters", "type": "uint", "min": 1, "max": 1000000},
    {"key": "help", "type": "bool"},
    {"key": "tag", "type": "string", "min": 2, "max": 8},
    {"key": "seed", "type": "uint", "min": 0, "max": (1 << 64) - 1},
    {"key": "note", "type": "string", "min": 0, "max": 0},
)}


def built_keys():
    keys = G.load()
    check(keys, f"no {G.KEYS_FILE}: make writes it")
    return keys


def one_valid(spec, i):
    """A value of a key the guest takes, in one of its number forms."""
    kind = spec["type"]
    if kind == "uint":
        forms = [str(spec["max"]), hex(spec["min"]),
                 "1k" if spec["min"] <= 1000 <= spec["max"] else str(spec["min"])]
        return forms[i % 3]
    if kind == "bool":
        return G.BOOL_WORDS[i % len(G.BOOL_WORDS)]
    if kind == "enum":
        return spec["choices"][-1]
    if kind == "list":
        return ",".join(dict.fromkeys([spec["choices"][0], spec["choices"][-1]]))
    return "x" * max(spec["min"], 1)


def guest_help(line):
    """The help=1 lines of a boot of line through run.sh (its own check
    first): {key: (value column, help)}."""
    rc, out, err = run_cmd([RUN, "--accel", "tcg-single", "--smp", "1", "--no-save", "--verbose",
                            "--append", line], {"IPIBENCH_PREPARED": "1"}, 60)
    check(rc == 0 and "ipibench: status SUCCESS" in out, f"exit {rc}: {(out + err)[-600:]}")
    rows = {}
    for text in out.split("ipibench: command-line keys", 1)[-1].splitlines()[1:]:
        cols = re.split(r" {2,}", text.rstrip(), maxsplit=2)
        if len(cols) == 3:
            rows[cols[0]] = (cols[1], cols[2])
    return rows


def guest_refusal(line):
    """The guest's own words on a line it refuses (no run.sh: QEMU itself)."""
    p = subprocess.run(["qemu-system-x86_64", "-accel", "tcg", "-M", "q35", "-cpu", "max",
                        "-smp", "1", "-m", "64M", "-nodefaults", "-display", "none", "-serial",
                        "stdio", "-device", "isa-debug-exit,iobase=0xf4,iosize=0x04",
                        "-no-reboot", "-kernel", "build/ipibench.elf32", "-append", line],
                       cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=60)
    m = re.search(r"^ipibench: bad command line: (.*)$", p.stdout, re.M)
    check(p.returncode == 75 and m, f"QEMU exit {p.returncode}, not BAD-CMDLINE: {p.stdout[-400:]}")
    return m.group(1)


@case("guest keys: the build's file is what tools/guest_keys.py reads from the image and what "
      "the guest's help=1 prints; every key at a valid value boots; a refusal in its words")
def _(s):
    keys = built_keys()
    out = os.path.join(s.tmp, "guest-keys.json")
    rc, _, err = run_cmd([sys.executable, "tools/guest_keys.py", ELF, out])
    check(rc == 0 and json.load(open(out))["keys"] == list(keys.values()),
          f"exit {rc}, not the build's file: {err[-300:]}")
    line = " ".join(["help=1"] + [f"{k}={one_valid(spec, i)}"
                                  for i, (k, spec) in enumerate(keys.items()) if k != "help"])
    check(G.problem(line, keys) is None, f"{line}: {G.problem(line, keys)}")
    rows = guest_help(line)
    want = {k: (G.shown(spec), spec["help"]) for k, spec in keys.items()}
    check(rows == want, "help=1 and the file differ: " + "; ".join(
        f"{k}: guest {rows.get(k)}, file {want.get(k)}" for k in sorted(set(rows) | set(want))
        if rows.get(k) != want.get(k)))
    # The host's words are the guest's, with the name a typo meant added.
    host = G.problem("plan=chek", keys)
    check(re.sub(r"did you mean check\?; ", "", host) == "--append: " + guest_refusal("plan=chek"),
          f"run.sh: {host}")


@case("guest keys: every key the guest lists passes, at each bound, choice and word")
def _(_s):
    keys = built_keys()
    for k, spec in keys.items():
        kind = spec["type"]
        values = {"uint": lambda: [str(spec["min"]), str(spec["max"]), hex(spec["max"])],
                  "bool": lambda: list(G.BOOL_WORDS),
                  "enum": lambda: list(spec["choices"]),
                  "list": lambda: list(spec["choices"]) + [",".join(spec["choices"]), "all"],
                  }.get(kind, lambda: ["x" * max(spec["min"], 1)])()
        for v in values:
            check(G.problem(f"{k}={v}", keys) is None, f"{k}={v}: {G.problem(f'{k}={v}', keys)}")


@case("guest keys: lib/cmdline.c's own cases (tests/unit/test_cmdline.c) get its verdicts")
def _(_s):
    good = ["plan=check iters=10k backends=xapic,x2apic", "iters=1", "iters=1000000",
            "iters=007", "iters=0xf4240", "iters=0X1F", "iters=0xABcd", "iters=1M", "iters=0x10k",
            "iters=999k", "seed=0", "seed=18446744073709551615", "seed=0xffffffffffffffff",
            "seed=0x00000000000000000000ff", "seed=18446744073709551k", "seed=18446744073709M",
            "plan=quick", "backends=all", "backends=hv-fast,hv-slow,x2apic,kvm-pv,xapic",
            "tag=ab note=a=b,c", "tag=12345678", "tag=\u00e9", "\tplan=full\n\riters=5  help=on"]
    good += [f"help={w}" for w in G.BOOL_WORDS]
    for line in good:
        check(G.problem(line, UNIT) is None, f"{line!r}: {G.problem(line, UNIT)}")
    said = {
        "iters=12x": "bad number in 'iters=12x' (accepted: 1..1000000, decimal or 0x hex, "
                     "suffix k or M)",
        "iters=0": "number out of range in 'iters=0' (accepted: 1..1000000, decimal or 0x hex, "
                   "suffix k or M)",
        "iters=2M": "number out of range in 'iters=2M'",
        "seed=18446744073709551616": "number too large in",
        "seed=0x10000000000000000": "number too large in",
        "seed=18446744073709552k": "number too large in",
        "seed=99999999999999999999999999x": "bad number in",
        "help=maybe": "bad boolean in 'help=maybe' (accepted: 0/1, on/off, yes/no, true/false)",
        "help=ON": "bad boolean in 'help=ON'",
        "help=": "empty value in 'help='",
        "plan=fast": "'plan=fast': unknown choice 'fast' (accepted: check, quick, full)",
        "plan=check,full": "unknown choice 'check,full'",
        "plan=all": "unknown choice 'all'",
        "backends=xapic,foo": "'backends=xapic,foo': unknown item 'foo' (accepted: xapic, "
                              "x2apic, hv-slow, hv-fast, kvm-pv, comma-separated, or all)",
        "backends=xapic,,x2apic": "'backends=xapic,,x2apic': empty item (accepted: xapic, ",
        "backends=xapic,": "empty item",
        "backends=xapic,x2apic,xapic": "duplicate item 'xapic'",
        "backends=xapic,all": "'all' must stand alone",
        "backends=ALL": "unknown item 'ALL'",
        "tag=123456789": "text length out of range in 'tag=123456789' (accepted: text of 2..8 "
                         "bytes)",
        "note=": "empty value in 'note=' (accepted: any text)",
        "tag=\u00e9\u00e9\u00e9\u00e9\u00e9": "text length out of range",  # 10 bytes, 5 letters
        "itres=5": "unknown key 'itres' in 'itres=5' (did you mean iters?)",
        "zzz=5": "unknown key 'zzz' in 'zzz=5' (keys: plan, backends, iters, help, tag, seed, "
                 "note)",
        "iters=5 plan=full iters=5": "duplicate key 'iters' in 'iters=5'",
        "plan=full stray": "'stray' is not key=value (keys: plan, backends, iters, help, tag, "
                           "seed, note)",
        "iters =5": "'iters' is not key=value (did you mean iters=...?)",
        "=5": "unknown key '' in '=5'",
        "plan=check\vhelp=1": "unknown choice 'check\vhelp=1'",  # \v is no separator
        "tag=" + "x" * 50: "in 'tag=" + "x" * 36 + "...'",  # cut at 40, as the guest cuts
    }
    for iters in ("0x", "k", "M", "-1", "+1", "1kk", "1K", "1.5k", "0xg1", "1k0", "1m", "x10",
                  "0x-1", "1e3", "kM", "1_000", "\u0661"):
        said[f"iters={iters}"] = f"bad number in 'iters={iters}'"
    for line, words in said.items():
        why = G.problem(line, UNIT)
        check(why and why.startswith("--append: ") and words in why and "\n" not in why,
              f"{line!r}: {why!r}, expected {words!r}")
    check("did you mean quick?" in G.problem("plan=quik", UNIT) and
          "did you mean hv-fast?" in G.problem("backends=hv-fats", UNIT), "near names")


@case("guest keys: no keys file (nothing built) or an unreadable one: nothing checked; else "
      "the first refusal is a usage error (exit 2)")
def _(s):
    G.check_append("plna=check", os.path.join(s.tmp, "none.json"))
    bad = write(os.path.join(s.tmp, "bad.json"), "{\"keys\": [")
    G.check_append("plna=check", bad)
    G.check_append("plna=check", write(os.path.join(s.tmp, "odd.json"), "[1, 2]"))
    keys = write(os.path.join(s.tmp, "keys.json"), json.dumps({"keys": list(UNIT.values())}))
    G.check_append("plan=quick iters=5", keys)
    G.check_append("", keys)
    msg = raises(2, G.check_append, "plan=quick plna=check", keys)
    check(msg == "--append: unknown key 'plna' in 'plna=check' (did you mean plan?)", msg)



@case("registry lists: a backend the Backends table of docs/timed-regions.md lacks, one it "
      "names that is no backend, rows out of order, an unknown name in the lane judge, a KVM "
      "preset paravirt.md lacks and a Xen preset xen.md lacks each fail the build's check")
def _(s):
    sys.path.insert(0, os.path.join(REPO, "tools"))
    import registry_lists as RL
    backends = RL.registry(os.path.join(REPO, "build", "guest-keys.json"))
    check(RL.problems(backends) == [], f"the tree's lists disagree: {RL.problems(backends)}")
    with open(RL.REGIONS) as f:
        page = f.read()
    first, second = backends[0], backends[1]
    row = next(line for line in page.splitlines() if line.startswith(f"| `{first}` |"))
    plants = {"missing": page.replace(row + "\n", ""),
              "unknown": page.replace(row, row.replace(f"`{first}`", "`x9apic`")),
              "order": page.replace(row + "\n", "").replace(
                  next(line for line in page.splitlines() if line.startswith(f"| `{second}` |")),
                  next(line for line in page.splitlines()
                       if line.startswith(f"| `{second}` |")) + "\n" + row)}
    want = {"missing": f"has no row `{first}`", "unknown": "`x9apic` is no registered backend",
            "order": "not in the registry's order"}
    saved = RL.REGIONS
    try:
        for name, text in plants.items():
            RL.REGIONS = write(os.path.join(s.tmp, f"regions-{name}.md"), text)
            found = RL.problems(backends)
            check(any(want[name] in line for line in found), f"{name}: {found}")
    finally:
        RL.REGIONS = saved
    lacking = sorted(RL.judged_backends())[0]  # as if the registry lost it
    found = RL.problems([b for b in backends if b != lacking])
    check(any(f"MUST_RUN names `{lacking}`" in line for line in found), f"judge: {found}")
    for attr, drop, needle in (("PARAVIRT", "| `hv-vapic` |", "has no row `hv-vapic`"),
                               ("XEN", "| `xen-pvh` |", "must list xen-pvh, xen-viridian")):
        saved = getattr(RL, attr)
        with open(saved) as f:
            page = "".join(line for line in f if not line.startswith(drop))
        try:
            setattr(RL, attr, write(os.path.join(s.tmp, f"{attr}.md"), page))
            found = RL.problems(backends)
            check(any(needle in line for line in found), f"{attr}: {found}")
        finally:
            setattr(RL, attr, saved)


if __name__ == "__main__":
    sys.exit(main(CASES))

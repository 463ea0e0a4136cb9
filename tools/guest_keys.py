#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the guest's command-line keys as JSON (build/guest-keys.json, a
Makefile step), for run.sh to check --append against before it boots
(host/ipibench/boot/guest_keys.py).

The keys are read from the linked kernel itself, not from a list kept by
hand: the option groups that OPTION_GROUP puts between
__option_groups_start and __option_groups_end (include/options.h), each
group's struct opt_spec table (lib/cmdline.h), and the names the spec
tables point to. So the file says what the built guest parses, and cannot
drift from the C source. The layouts of those structs come from the
compiler, from the headers, as kernel/asm-offsets.c gives nasm its own.

Two choice lists are empty in the image and filled at boot by their
group's prepare(): backends= from the .ipi_backends registry (ipi/core.c)
and bench= from .bench_registry (harness/runner.c). They are read from
those registries, in the order the guest puts them in (help=1's order). A
choice list of another kind that is empty in the image stops the step:
this script must then learn where its names come from. The benchmarks'
registry is also written whole, each name with its summary, for the
record reference (tools/doc_reference.py, docs/record-fields.md).

usage: tools/guest_keys.py [--cc CC] ELF OUT"""
import json
import os
import re
import struct
import subprocess
import sys

# What the script reads of the C layouts: NAME -> a constant expression.
LAYOUT = {
    "spec_size": "sizeof(struct opt_spec)",
    "spec_key": "offsetof(struct opt_spec, key)",
    "spec_type": "offsetof(struct opt_spec, type)",
    "spec_type_size": "sizeof(((struct opt_spec *)0)->type)",
    "spec_min": "offsetof(struct opt_spec, min)",
    "spec_max": "offsetof(struct opt_spec, max)",
    "spec_bound_size": "sizeof(((struct opt_spec *)0)->min)",
    "spec_choices": "offsetof(struct opt_spec, choices)",
    "spec_help": "offsetof(struct opt_spec, help)",
    "group_order": "offsetof(struct option_group, order)",
    "group_order_size": "sizeof(((struct option_group *)0)->order)",
    "group_specs": "offsetof(struct option_group, specs)",
    "group_n": "offsetof(struct option_group, n)",
    "group_n_size": "sizeof(((struct option_group *)0)->n)",
    "backend_order": "offsetof(struct ipi_backend, order)",
    "backend_order_size": "sizeof(((struct ipi_backend *)0)->order)",
    "backend_ops": "offsetof(struct ipi_backend, ops)",
    "ops_name": "offsetof(struct ipi_ops, name)",
    "bench_name": "offsetof(struct bench, name)",
    "bench_summary": "offsetof(struct bench, summary)",
    "pointer_size": "sizeof(void *)",
    "OPT_UINT": "OPT_UINT",
    "OPT_BOOL": "OPT_BOOL",
    "OPT_ENUM": "OPT_ENUM",
    "OPT_LIST": "OPT_LIST",
    "OPT_STRING": "OPT_STRING",
}
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the headers' -I
HEADERS = ("stddef.h", "include/options.h", "include/ipi.h", "include/bench.h")
TYPE_WORDS = {"OPT_UINT": "uint", "OPT_BOOL": "bool", "OPT_ENUM": "enum", "OPT_LIST": "list",
              "OPT_STRING": "string"}

# The choice lists prepare() fills at boot, by the array's symbol: the
# registry section whose entries name them.
FILLED_AT_BOOT = {"backend_names": "ipi_backends", "bench_names": "bench_registry"}


class Fail(Exception):
    pass


def layout(cc):
    """LAYOUT's values as the compiler cc (a command, its flags included)
    lays the structs out, by the markers "->NAME VALUE" in its assembly
    (kernel/asm-offsets.c's way)."""
    lines = [f'#include "{h}"' if "/" in h else f"#include <{h}>" for h in HEADERS]
    lines += ["void guest_keys_layout(void);", "void guest_keys_layout(void)", "{"]
    lines += [f'\tasm volatile("\\n->{name} %0" : : "i"({expr}));'
              for name, expr in LAYOUT.items()]
    lines.append("}")
    p = subprocess.run([*cc.split(), "-std=gnu11", "-ffreestanding", "-I", ROOT, "-S", "-x", "c",
                        "-o", "-", "-"], input="\n".join(lines) + "\n", stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        raise Fail(f"{cc} could not lay out the option structs:\n{p.stderr}")
    got = {m.group(1): int(m.group(2))
           for m in re.finditer(r"^->(\w+) \$?(-?\d+)", p.stdout, re.M)}
    missing = sorted(set(LAYOUT) - set(got))
    if missing:
        raise Fail(f"{cc} gave no value for {', '.join(missing)}")
    return got


class Elf:
    """The sections and symbols of a little-endian ELF64 image, and reads of
    its memory by address (zeros in .bss, as the guest finds it at boot)."""

    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:6] != b"\x7fELF\x02\x01":
            raise Fail(f"{path}: not a little-endian ELF64 image")
        shoff, = struct.unpack_from("<Q", self.data, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", self.data, 0x3a)
        self.sections = [struct.unpack_from("<IIQQQQIIQQ", self.data, shoff + i * shentsize)
                         for i in range(shnum)]
        self.symbols = self._symbols()
        if not self.symbols:
            raise Fail(f"{path}: no symbol table")

    def _symbols(self):
        out = {}
        for _, kind, _, _, off, size, link, _, _, entsize in self.sections:
            if kind != 2:  # SHT_SYMTAB
                continue
            strtab = self.sections[link][4]
            for at in range(off, off + size, entsize):
                name, _, _, _, value, length = struct.unpack_from("<IBBHQQ", self.data, at)
                end = self.data.index(b"\0", strtab + name)
                out[self.data[strtab + name:end].decode()] = (value, length)
        return out

    def symbol(self, name):
        if name not in self.symbols:
            raise Fail(f"no symbol {name} in the image")
        return self.symbols[name][0]

    def name_at(self, addr):
        """A data symbol that starts at addr, or None."""
        return next((n for n, (v, size) in self.symbols.items() if v == addr and size), None)

    def read(self, addr, n):
        for _, kind, flags, start, off, size, _, _, _, _ in self.sections:
            if flags & 2 and start <= addr and addr + n <= start + size:  # SHF_ALLOC
                return bytes(n) if kind == 8 else self.data[off + addr - start:
                                                            off + addr - start + n]  # NOBITS
        raise Fail(f"address {addr:#x} is in no section of the image")

    def uint(self, addr, size):
        return int.from_bytes(self.read(addr, size), "little")

    def text(self, addr):
        """The NUL-terminated string at addr."""
        out = bytearray()
        while True:
            chunk = self.read(addr + len(out), 1)
            if chunk == b"\0":
                return out.decode()
            out += chunk


def pointers(elf, start, end, size):
    """The pointers of a linker section, by its start and end symbols."""
    a, b = elf.symbol(start), elf.symbol(end)
    return [elf.uint(p, size) for p in range(a, b, size)]


def registry_names(elf, L, registry):
    """The names a registry section gives a choice list, in the guest's
    order: backends by order key, then name (ipi/core.c); benchmarks by name
    (harness/runner.c)."""
    if registry == "bench_registry":
        return [b["name"] for b in benchmarks(elf, L)]
    ptr = L["pointer_size"]
    entries = pointers(elf, f"__{registry}_start", f"__{registry}_end", ptr)
    named = [(elf.uint(e + L["backend_order"], L["backend_order_size"]),
              elf.text(elf.uint(elf.uint(e + L["backend_ops"], ptr) + L["ops_name"], ptr)))
             for e in entries]
    return [name for _, name in sorted(named)]


def benchmarks(elf, L):
    """Every benchmark of the registry as {name, summary}, by name."""
    ptr = L["pointer_size"]
    entries = pointers(elf, "__bench_registry_start", "__bench_registry_end", ptr)
    found = [{"name": elf.text(elf.uint(e + L["bench_name"], ptr)),
              "summary": elf.text(elf.uint(e + L["bench_summary"], ptr))} for e in entries]
    return sorted(found, key=lambda b: b["name"])


def choices(elf, L, key, addr):
    """The NULL-terminated names at addr; those of the registry behind a list
    prepare() fills at boot."""
    ptr, out = L["pointer_size"], []
    while elf.uint(addr + len(out) * ptr, ptr):
        out.append(elf.text(elf.uint(addr + len(out) * ptr, ptr)))
    if out:
        return out
    array = elf.name_at(addr)
    if array not in FILLED_AT_BOOT:
        raise Fail(f"the choices of {key}= ({array or hex(addr)}) are empty in the image and filled at boot from somewhere tools/guest_keys.py does not know: teach it (FILLED_AT_BOOT)")
    return registry_names(elf, L, FILLED_AT_BOOT[array])


def spec(elf, L, addr, types):
    """One struct opt_spec as a JSON object."""
    ptr = L["pointer_size"]
    key = elf.text(elf.uint(addr + L["spec_key"], ptr))
    kind = types.get(elf.uint(addr + L["spec_type"], L["spec_type_size"]))
    if kind is None:
        raise Fail(f"key {key}: a type this script does not know")
    out = {"key": key, "type": kind}
    if kind in ("uint", "string"):
        out["min"] = elf.uint(addr + L["spec_min"], L["spec_bound_size"])
        out["max"] = elf.uint(addr + L["spec_max"], L["spec_bound_size"])
    if kind in ("enum", "list"):
        out["choices"] = choices(elf, L, key, elf.uint(addr + L["spec_choices"], ptr))
    help_at = elf.uint(addr + L["spec_help"], ptr)
    out["help"] = elf.text(help_at) if help_at else ""
    return out


def keys(elf, L):
    """Every key, groups in their `order` as options_collect() sorts them
    (stable: link order among equals), each group's specs in its order."""
    ptr = L["pointer_size"]
    types = {L[c]: word for c, word in TYPE_WORDS.items()}
    groups = []
    for g in pointers(elf, "__option_groups_start", "__option_groups_end", ptr):
        groups.append((elf.uint(g + L["group_order"], L["group_order_size"]),
                       elf.uint(g + L["group_specs"], ptr),
                       elf.uint(g + L["group_n"], L["group_n_size"])))
    out = []
    for _, specs, n in sorted(groups, key=lambda g: g[0]):
        out += [spec(elf, L, specs + i * L["spec_size"], types) for i in range(n)]
    return out


def write(path, doc):
    """Beside, then renamed into place: a run.sh that reads it while make runs
    sees the old file or the new one."""
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


def main(argv):
    cc = "gcc"
    if argv[:1] == ["--cc"] and len(argv) > 1:
        cc, argv = argv[1], argv[2:]
    if len(argv) != 2:
        print("usage: tools/guest_keys.py [--cc CC] ELF OUT", file=sys.stderr)
        return 2
    try:
        elf, L = Elf(argv[0]), layout(cc)
        found, benches = keys(elf, L), benchmarks(elf, L)
    except (Fail, OSError) as e:
        print(f"tools/guest_keys.py: {e}", file=sys.stderr)
        return 1
    write(argv[1], {"about": f"the guest's command-line keys, read from {argv[0]} by tools/guest_keys.py (make); run.sh checks --append against them", "keys": found, "benchmarks": benches})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

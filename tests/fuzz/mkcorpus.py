#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes the seed corpora of the libFuzzer targets into tests/fuzz/corpus/.

usage: tests/fuzz/mkcorpus.py

The seeds come from the project's real inputs: the MADTs captured from QEMU
(tests/fixtures/madt, copied as they are), memory images that place those
tables behind an RSDP and an RSDT or XSDT laid out as ACPI 6.5 5.2.5-5.2.8
says (for the acpi target, after its control byte), command lines like those
of the boot tests, CPU-set texts, and programs of JSON writer calls in the
encoding tests/fuzz/fuzz_json.c reads (a record like the kernel's, every
escape, the nesting limit, tiny buffers, a few misuses). A few hand-built MADTs
add what QEMU does not emit: the Local APIC Address Override (5.2.12.8), Online
Capable entries (ACPI 6.3) and x2APIC IDs above 255. The mptable target gets the
MP configuration tables captured from SeaBIOS and qboot (tests/fixtures/mptable),
each as it is and behind a floating pointer in a memory image, plus hand-built
tables and a default configuration (MP 1.4 sections 4-5). The output is
deterministic; rerun this after changing a fixture and commit the result.

The Python targets (results, console, presets) need no files here:
tests/fuzz/fuzz_tools.py builds their seeds at run time from
tests/host/synth.py and host/ipibench/presets.conf."""
import os
import struct
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
FIXTURES = os.path.join(ROOT, "tests", "fixtures", "madt")
MP_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "mptable")
CORPUS = os.path.join(HERE, "corpus")

IMAGE_BASE = 0xE0000  # the physical address fuzz_acpi.c maps its image at
CTL_FIX_AND_COPY = 0x03  # fuzz_acpi.c: fix checksums, map into exact copies
MP_IMAGE_BASE = 0xF0000  # fuzz_mptable.c's image base; its control byte reads as fuzz_acpi.c's

CMDLINES = [
    "/boot/ipibench.elf plan=check iters=10k backends=xapic,x2apic",
    "plan=default",
    "plan=bench bench=single,self backends=x2apic iters=0x100 warmup=5 budget=2",
    "plan=boot debug=skip-sipi debug_cpu=2 ap_timeout=200",
    "plan=check debug=swallow-ipi,double-ipi target=3 matrix=yes deadline=10000",
    "help=1",
    "backends=all bench=all init_delay=0 halt_gap=50M",
    "seed=18446744073709551615 tag=abcd note=a=b,c",
    "/ipibench.elf\tplan=boot\r\nmatrix=off  help=false",
    "itres=5 ap_timeout=12x",
]

# fuzz_json.c's calls, in its op-byte order
JSON_OPS = ["obj", "end", "arr", "aend", "u64", "i64", "str", "strn", "bool", "null", "hex",
            "fixed"]

CPUSETS = ["0", "none", "0-3,5", "1023", "0-1023", "1,3,5-7,100-200", "0-0,2-2", "7,6"]


def checksum_fix(buf, at, length=None):
    """Sets byte `at` so that buf[:length] (all of it by default) sums to zero modulo 256."""
    length = len(buf) if length is None else length
    buf[at] = 0
    buf[at] = (-sum(buf[:length])) & 0xFF
    return buf


def acpi_header(sig, length, revision=1):
    """The 36-byte System Description Table Header (5.2.6), checksum left 0."""
    return bytearray(struct.pack("<4sIBB6s8sI4sI", sig, length, revision, 0, b"FUZZ  ",
                                 b"IPIBENCH", 1, b"IPIB", 1))


def madt(entries, lapic=0xFEE00000, flags=1):
    body = b"".join(entries)
    t = acpi_header(b"APIC", 44 + len(body), 5) + struct.pack("<II", lapic, flags) + body
    return bytes(checksum_fix(t, 9))


def lapic(uid, apic_id, flags):
    return struct.pack("<BBBBI", 0, 8, uid, apic_id, flags)


def x2apic(apic_id, flags, uid):
    return struct.pack("<BBHIII", 9, 16, 0, apic_id, flags, uid)


def hand_built_madts():
    """What QEMU's SeaBIOS tables lack (tests/fixtures/madt/README.md)."""
    override = struct.pack("<BBHQ", 5, 12, 0, 0xFED00000)
    return {
        "x2apic-online-capable.bin": madt([lapic(0, 0, 1), x2apic(300, 1, 300),
                                           x2apic(0xFFFFFFFE, 2, 7), x2apic(301, 0, 8)]),
        "override-duplicates.bin": madt([override, lapic(0, 0, 1), lapic(1, 1, 1),
                                         x2apic(1, 1, 9), lapic(2, 0, 1), lapic(3, 5, 2)]),
    }


def image(table, xsdt):
    """RSDP at 0, root table at 48, a dummy FACP then the MADT behind it."""
    root_at, entry = 48, 8 if xsdt else 4
    facp_at = root_at + 36 + 2 * entry
    madt_at = facp_at + 36
    facp = bytes(checksum_fix(acpi_header(b"FACP", 36), 9))
    fmt = "<QQ" if xsdt else "<II"
    root = acpi_header(b"XSDT" if xsdt else b"RSDT", 36 + 2 * entry)
    root += struct.pack(fmt, IMAGE_BASE + facp_at, IMAGE_BASE + madt_at)
    checksum_fix(root, 9)
    if xsdt:
        rsdp = bytearray(struct.pack("<8sB6sBIIQB3s", b"RSD PTR ", 0, b"FUZZ  ", 2, 0, 36,
                                     IMAGE_BASE + root_at, 0, b"\0\0\0"))
        checksum_fix(rsdp, 8, 20)  # 5.2.5.3: the ACPI 1.0 part, then the whole
        checksum_fix(rsdp, 32)
    else:
        rsdp = bytearray(struct.pack("<8sB6sBI", b"RSD PTR ", 0, b"FUZZ  ", 0,
                                     IMAGE_BASE + root_at))
        checksum_fix(rsdp, 8)
    mem = bytes(rsdp).ljust(root_at, b"\0") + bytes(root) + facp + table
    return bytes([CTL_FIX_AND_COPY]) + mem


def mp_fps(table_phys, feature1=0, rev=4):
    """The MP Floating Pointer Structure (MP 1.4 4.1): one paragraph, checksum at byte 10."""
    fps = bytearray(struct.pack("<4sIBBBBB3s", b"_MP_", table_phys, 1, rev, 0, feature1, 0,
                                b"\0\0\0"))
    return bytes(checksum_fix(fps, 10))


def mp_table(entries, rev=4, lapic=0xFEE00000, extended=b""):
    """An MP Configuration Table (4.2): header, base entries, then any extended bytes."""
    body = b"".join(entries)
    hdr = struct.pack("<4sHBB8s12sIHHIHBB", b"PCMP", 44 + len(body), rev, 0, b"FUZZ    ",
                      b"IPIBENCH    ", 0, 0, len(entries), lapic, len(extended),
                      (-sum(extended)) & 0xFF, 0)
    return bytes(checksum_fix(bytearray(hdr + body), 7, 44 + len(body))) + extended


def mp_cpu(apic_id, flags):
    """A processor entry (4.3.1): APIC version 0x14, family 6, flags bit 0 EN, bit 1 BP."""
    return struct.pack("<BBBBII8s", 0, apic_id, 0x14, flags, 0x60FB1, 0, b"")


def mp_image(table):
    """fuzz_mptable.c's input: control byte, floating pointer at 0xF0000, table behind it."""
    return bytes([CTL_FIX_AND_COPY]) + mp_fps(MP_IMAGE_BASE + 16) + table


def mptable_seeds():
    seeds = {}
    for name in sorted(os.listdir(MP_FIXTURES)):
        if name.endswith("-table.bin"):
            with open(os.path.join(MP_FIXTURES, name), "rb") as f:
                table = f.read()
            shape = name[:-len("-table.bin")] + ".bin"
            seeds["table-" + shape] = bytes([0]) + table
            seeds["image-" + shape] = mp_image(table)
    others = [struct.pack("<BB6s", 1, 0, b"ISA   "),  # bus, I/O APIC, I/O and local interrupt
              struct.pack("<BBBBI", 2, 2, 0x11, 1, 0xFEC00000),
              struct.pack("<BBHBBBB", 3, 0, 0, 0, 0, 2, 2),
              struct.pack("<BBHBBBB", 4, 3, 0, 0, 0, 0xFF, 1)]
    seeds["image-two-bsp-disabled-dup.bin"] = mp_image(mp_table(
        [mp_cpu(0, 3), mp_cpu(1, 2), mp_cpu(2, 1), mp_cpu(0, 1), mp_cpu(3, 0)] + others, rev=1))
    seeds["image-extended.bin"] = mp_image(mp_table(
        [mp_cpu(0, 3), mp_cpu(1, 1)] + others, extended=bytes([128, 20]) + bytes(18)))
    seeds["image-default-5.bin"] = bytes([CTL_FIX_AND_COPY]) + mp_fps(0, feature1=5)
    return seeds


def json_cap(cap):
    """fuzz_json.c's first bytes: cap 0..8, 9 for a NULL buffer, or up to 511 in two bytes."""
    return bytes([cap]) if cap <= 9 else bytes([0x80 | cap >> 2, cap & 3])


def json_call(op, key=None, value=None, key_mode=None):
    """One call: key None lets the target pick ("k" in objects, NULL elsewhere),
    key bytes are read from the input; value is an int, bytes, or None (s == NULL)."""
    mode = key_mode if key_mode is not None else (0 if key is None else 3)
    out = bytearray()
    width = 0
    if isinstance(value, int):
        bits = [8 << w for w in range(4)]  # the target sign-extends i64 operands
        width = next(w for w, b in enumerate(bits)
                     if (-(1 << b - 1) <= value < 1 << b - 1 if op == "i64" else value < 1 << b))
        out += (value & ((1 << (8 << width)) - 1)).to_bytes(1 << width, "big")
    elif isinstance(value, bytes):
        out = bytearray([len(value)]) + value
    elif op in ("str", "strn"):
        out = bytearray([0xFF])
    head = bytes([JSON_OPS.index(op) | mode << 4 | width << 6])
    return head + (bytes([len(key)]) + key if mode in (1, 3) else b"") + bytes(out)


def json_program(cap, calls):
    return json_cap(cap) + b"".join(json_call(*c) for c in calls)


def json_programs():
    record = [("obj",), ("str", b"kind", b"result"), ("str", b"bench", b"single"),
              ("u64", b"cpus", 4), ("u64", b"min", 120), ("i64", b"delta", -5),
              ("fixed", b"mean_us", 1234), ("bool", b"ok", 1), ("hex", b"flags", 0x1F),
              ("arr", b"samples"), ("u64", None, 1), ("u64", None, 300), ("aend",),
              ("str", b"note", None), ("null", b"skip"), ("obj", b"sub"), ("end",), ("end",)]
    escapes = [("obj",), ("str", b'q"b\\n\n', b"\x01\x08\t\n\x0b\x0c\r\x1f \x7f\x80\xff\"\\"),
               ("strn", b"nul", b"a\x00b\x00"), ("strn", b"", b""), ("end",)]
    extremes = [("obj",), ("u64", None, (1 << 64) - 1), ("i64", None, -(1 << 63)),
                ("i64", None, (1 << 63) - 1), ("fixed", None, (1 << 64) - 1), ("fixed", None, 5),
                ("hex", None, 0), ("hex", None, (1 << 64) - 1), ("end",)]
    deepest = [("obj",)] + [("arr",)] * 14 + [("aend",)] * 14 + [("end",)]
    return {
        "record": json_program(300, record),
        "record-cap-60": json_program(60, record),
        "escapes": json_program(200, escapes),
        "extremes": json_program(511, extremes),
        "nest-15": json_program(64, deepest),
        "nest-16": json_program(64, deepest[:15] + [("obj",), ("end",)] + deepest[15:]),
        "empty-cap-2": json_program(2, [("obj",), ("end",)]),
        "empty-cap-3": json_program(3, [("obj",), ("end",)]),
        "empty-null-buf": json_program(9, [("obj",), ("end",)]),
        "two-objects": json_program(64, [("obj",), ("end",), ("obj",), ("end",)]),
        "key-in-array": json_program(64, [("obj",), ("arr", b"a"), ("u64", b"x", 1),
                                          ("aend",), ("end",)]),
        "no-key": json_program(64, [("obj",), ("u64", None, 1, 2), ("end",)]),  # key mode 2: NULL
        "unclosed": json_program(64, [("obj",), ("arr", b"a")]),
    }


def write(target, name, data):
    d = os.path.join(CORPUS, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data.encode() if isinstance(data, str) else data)


def main():
    for i, line in enumerate(CMDLINES):
        write("cmdline", f"line-{i:02d}", line)
    for i, text in enumerate(CPUSETS):
        write("cpuset", f"set-{i:02d}", text)
    for name, prog in json_programs().items():
        write("json", name, prog)
    tables = {}
    for name in sorted(os.listdir(FIXTURES)):
        if name.endswith(".bin") and "-rsd" not in name:
            with open(os.path.join(FIXTURES, name), "rb") as f:
                tables[name] = f.read()
    tables.update(hand_built_madts())
    for name, table in tables.items():
        write("madt", name, table)
    for name in ("pc-smp4.bin", "q35-smp6-s2c3.bin", "x2apic-online-capable.bin"):
        write("acpi", "rsdt-" + name, image(tables[name], xsdt=False))
        write("acpi", "xsdt-" + name, image(tables[name], xsdt=True))
    for name, seed in mptable_seeds().items():
        write("mptable", name, seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""The kernel images as loaders read them: build/ipibench.elf32's multiboot
header gives load addresses (the a.out kludge, boot/multiboot.asm) that
must say what the ELF's own segments say, since QEMU's -kernel and GRUB
then load the file by those addresses alone; build/ipibench.elf (PVH) has
no multiboot header left.
One TAP line per case, "ok - tools: ..."; problems follow on '#' lines."""
import os
import struct

from harness import REPO, check, registry
from fixtures import main

CASES, case = registry()

MAGIC = 0x1BADB002
AOUT_KLUDGE = 1 << 16


def header(data):
    """(offset, the 8 words) of the first valid multiboot header in the
    first 8 KiB (Multiboot 0.6.96, 3.1.1), or None."""
    for off in range(0, min(len(data), 8192) - 32 + 1, 4):
        words = struct.unpack_from("<8I", data, off)
        if words[0] == MAGIC and (words[0] + words[1] + words[2]) & 0xFFFFFFFF == 0:
            return off, words
    return None


def segments(data):
    """(entry, [(offset, vaddr, filesz, memsz)] of the PT_LOAD segments) of an ELF32."""
    check(data[:4] == b"\x7fELF" and data[4] == 1, "not an ELF32")
    entry, phoff = struct.unpack_from("<II", data, 24)
    phentsize, phnum = struct.unpack_from("<HH", data, 42)
    out = []
    for i in range(phnum):
        p_type, p_off, p_vaddr, _, p_filesz, p_memsz = struct.unpack_from(
            "<6I", data, phoff + i * phentsize)
        if p_type == 1:
            out.append((p_off, p_vaddr, p_filesz, p_memsz))
    return entry, out


@case("image: the multiboot header's load addresses are the ELF's own: the file's bytes "
      "from the header's offset load as one run, bss to its end, entry at _start")
def _(_s):
    with open(os.path.join(REPO, "build", "ipibench.elf32"), "rb") as f:
        data = f.read()
    found = header(data)
    check(found, "no multiboot header in the first 8 KiB")
    off, (_, flags, _, header_addr, load_addr, load_end, bss_end, entry_addr) = found
    check(flags & AOUT_KLUDGE, f"flags {flags:#x}: no load addresses (bit 16)")
    entry, loads = segments(data)
    first, last = loads[0], loads[-1]
    check(load_addr == first[1] and entry_addr == entry,
          f"load_addr {load_addr:#x}, entry {entry_addr:#x}; the ELF: {first[1]:#x}, {entry:#x}")
    # What a loader reads: the file from (header offset - (header_addr -
    # load_addr)) for load_end - load_addr bytes, to load_addr.
    start = off - (header_addr - load_addr)
    for p_off, p_vaddr, p_filesz, _ in loads:
        check(start + (p_vaddr - load_addr) == p_off and
              data[p_off:p_off + p_filesz] ==
              data[start + p_vaddr - load_addr:start + p_vaddr - load_addr + p_filesz],
              f"segment at {p_vaddr:#x} is at file offset {p_off:#x}, not where the header "
              f"puts it ({start + p_vaddr - load_addr:#x})")
    check(load_end == last[1] + last[2] and bss_end == last[1] + last[3],
          f"load_end {load_end:#x}, bss_end {bss_end:#x}; the ELF's last segment "
          f"{last[1]:#x} + {last[2]:#x} file, {last[3]:#x} memory")


@case("image: the PVH image has no multiboot header (QEMU would refuse the ELF64)")
def _(_s):
    with open(os.path.join(REPO, "build", "ipibench.elf"), "rb") as f:
        data = f.read(8192)
    check(header(data) is None, "a multiboot header left in build/ipibench.elf")


if __name__ == "__main__":
    main(CASES)

# SPDX-License-Identifier: GPL-2.0-only
"""A LAVA job's log back into a results directory that `./run.sh compare`
and `./run.sh history` read (`./run.sh lava import`): the guest's console
from a qemu-device job (started at the log's first entry, on the host type
the lab names), or the results.json of each boot a DUT job embedded
(lab/cases.py, embed())."""
import base64
import datetime
import gzip
import json
import os
import re
import shlex

from ipibench.exit_codes import EX_MALFORMED, EX_MISSING, EX_SAVE, EX_USAGE, ToolError
from ipibench.lab.protocol import EMBED_BEGIN, EMBED_END
from ipibench.results.files import dump_results, RESULTS_FORMAT, RESULTS_VERSION
from ipibench.results.records import parse_console
from ipibench.write import folder_name, write_new



def _yaml_string(s):
    """A YAML double-quoted scalar's escapes JSON lacks, as JSON ones."""
    named = {"0": "\\u0000", "a": "\\u0007", "e": "\\u001b", "v": "\\u000b", "N": "\\u0085",
             "_": "\\u00a0", "L": "\\u2028", "P": "\\u2029", " ": " ", "/": "/"}

    def one(m):
        c = m.group(1)
        if c in named:
            return named[c]
        if c[0] == "x":
            return "\\u00" + c[1:]
        if c[0] == "U":
            return chr(int(c[1:], 16)).encode("unicode_escape").decode()
        return m.group(0)
    return re.sub(r"\\(x[0-9a-fA-F]{2}|U[0-9a-fA-F]{8}|[0aevN_LP /]|.)", one, s)


def log_entries(text):
    """The {dt, lvl, msg} entries of a LAVA log: lava-run's standard output
    (one JSON object a line) or a server's output.yaml (`lavacli jobs logs
    --raw`: one flow mapping a line, "- " first)."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("- "):
            line = line[2:]
        if not line.startswith("{"):
            continue
        try:
            e = json.loads(line)
        except ValueError:
            # YAML's own spellings: a tag before a quoted scalar (lava-run
            # writes a float measurement as `! "1381.0"`), its escapes.
            try:
                e = json.loads(_yaml_string(re.sub(r'(?<=[:,\[{] )!!?[A-Za-z]* (?=")', "",
                                                   line)))
            except ValueError:
                continue
        if isinstance(e, dict):
            out.append(e)
    return out


def console_of(entries):
    """The DUT's console as LAVA logged it: a line has each '"' escaped
    (lava_dispatcher/shell.py, ShellLogger) and no carriage returns. What
    comes after the last monitor's end (the guest's status line) is logged
    at level feedback, as the dispatcher drains the connection."""
    return "\n".join(str(e.get("msg", "")).replace('\\"', '"') for e in entries
                     if e.get("lvl") in ("target", "feedback")) + "\n"


def embedded(console):
    """{name: results.json bytes} that report embedded in a console."""
    out, lines = {}, console.splitlines()
    for i, line in enumerate(lines):
        m = re.match(re.escape(EMBED_BEGIN) + r" (\S+) (\d+)$", line.strip())
        if not m:
            continue
        data = []
        for more in lines[i + 1:]:
            if more.strip() == EMBED_END:
                break
            data.append(more.strip())
        blob = "".join(data)
        if len(blob) == int(m.group(2)):
            out[m.group(1)] = gzip.decompress(base64.b64decode(blob))
    return out


def host_of(entries):
    """What the log says of the worker's QEMU: its command line and version."""
    host = {}
    for e in entries:
        msg = e.get("msg")
        if not isinstance(msg, str):
            continue
        if msg.startswith("Boot command: "):
            argv = shlex.split(msg[len("Boot command: "):])
            host["qemu_cmdline"] = argv
            host["qemu_binary"] = argv[0] if argv else ""
            for i, w in enumerate(argv[:-1]):
                if w == "-accel":
                    acc = argv[i + 1].split(",")[0]
                    host["accel"] = "tcg-single" if "thread=single" in argv[i + 1] else acc
                if w == "-enable-kvm":
                    host["accel"] = "kvm"
        m = re.match(r"qemu-system-\S+, installed at version: ([^\s,]+)", msg)
        if m:
            host["qemu_version"] = m.group(1)
        m = re.match(r"lava-dispatcher, installed at version: ([^\s,]+)", msg)
        if m:
            host["lava_dispatcher"] = m.group(1)
    return host


def started_of(entries):
    """run.started of a job's log: the time of its first entry that has one
    (`dt`, which lava-run and a server write in UTC, ISO 8601 without a
    zone), written as run.sh writes a boot's start (boot/run.py, utc_now),
    so that history orders imported jobs as it orders runs; None without."""
    for e in entries:
        try:
            t = datetime.datetime.fromisoformat(str(e.get("dt")))
        except ValueError:
            continue
        if t.tzinfo is not None:
            t = t.astimezone(datetime.timezone.utc)
        return t.strftime("%Y-%m-%dT%H:%M:%SZ")
    return None


def label_of(preset, host):
    """The label run.sh gives a boot of the same configuration (boot/qemu.py,
    default_label: preset, accel, machine, -smp), read from the job's QEMU
    command line: the same every night, so a series of imports is one
    configuration; None when the log names no accelerator."""
    argv = host.get("qemu_cmdline") or []
    if not host.get("accel"):
        return None
    value = {w: argv[i + 1] for i, w in enumerate(argv[:-1]) if w in ("-machine", "-M", "-smp")}
    machine = (value.get("-machine") or value.get("-M") or "pc").split(",")[0]
    label = f"{preset + '-' if preset else ''}{host['accel']}-{machine}-smp{value.get('-smp', '1')}"
    label = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
    return label[1:] if label.startswith(".") else label


def with_host_type(data, host_type):
    """A DUT's results.json with host.host_type set (import --host-type)."""
    try:
        doc = json.loads(data)
        doc["host"]["host_type"] = host_type
        return dump_results(doc)
    except (ValueError, TypeError, KeyError):
        raise ToolError(EX_MALFORMED, "an embedded results.json is not a results document")




def cmd_import(a):
    # --host-type and --label become a history store's folder names.
    for value, what in ((a.host_type, "--host-type"), (a.label, "--label")):
        if value is not None:
            folder_name(value, what, EX_USAGE)
    entries, console = read_log(a.log)
    blobs = embedded(console)
    try:
        os.makedirs(a.out, exist_ok=True)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot create {a.out}: {e.strerror}")
    if blobs:
        write_embedded(a, blobs)
        return 0
    return import_console(a, entries, console)


def read_log(path):
    """(its entries, the guest's console) of a LAVA job's log."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        entries = [e for e in log_entries(text) if "lvl" in e]
    except OSError as e:
        raise ToolError(EX_MISSING, f"{path}: cannot read: {e.strerror}")
    # No log entries: the text is a console itself (a DUT test shell's output).
    return entries, (console_of(entries) if entries else text.replace("\r", ""))


def write_embedded(a, blobs):
    """Each results.json a DUT embedded, as the DUT saved it, run.started
    and all: one folder a boot."""
    for name, data in blobs.items():
        where = a.out if len(blobs) == 1 else os.path.join(a.out, folder_name(
            re.sub(r"[^\w.-]", "_", name), f"{a.log}: the embedded results' name",
            EX_MALFORMED))
        os.makedirs(where, exist_ok=True)
        text = data.decode("utf-8")
        write_new(os.path.join(where, "results.json"),
                  with_host_type(text, a.host_type) if a.host_type else text)
        print(f"run.sh lava: {where}/results.json: the DUT's results ({name})")


def import_console(a, entries, console):
    """A qemu-device job's console: its records, and what the log says of
    the worker's QEMU, as a results directory."""
    records, problems = parse_console(console)
    if not records:
        raise ToolError(EX_MISSING, f"{a.log}: no ipibench records and no embedded results in this log (a LAVA job log: lava-run's output, or `lavacli jobs logs --raw`)")
    host = host_of(entries)
    if a.host_type:
        host["host_type"] = a.host_type
    label = a.label or label_of(a.preset, host) or os.path.basename(os.path.abspath(a.out))
    host["warnings"] = [{"id": "tcg", "text": "QEMU TCG: every instruction emulated; only "
                         "behaviour counts"}] if str(host.get("accel", "")).startswith("tcg") \
        else []
    m = re.findall(r"^ipibench: status (\S+)", console, re.M)
    run = {"label": label, "config": label, "preset": a.preset, "status": m[-1] if m else None,
           "console": "console.log", "source": "lava", "lava_job": a.job}
    started = started_of(entries)
    if started:
        run["started"] = started
    doc = {"format": RESULTS_FORMAT, "version": RESULTS_VERSION, "host": host, "run": run,
           "problems": problems, "records": records}
    write_new(os.path.join(a.out, "console.log"), console)
    write_new(os.path.join(a.out, "results.json"), dump_results(doc))
    print(f"run.sh lava: {a.out}/results.json: {len(records)} records from the guest's console")
    return 0

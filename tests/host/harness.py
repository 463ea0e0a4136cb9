# SPDX-License-Identifier: GPL-2.0-only
"""What the host-tool test files share: a case registry per file, the
failure a case raises, running a command and checking its exit and output,
and the checks that a plot is a real SVG or PNG. What is more than that
(the context a case is handed, the stand-ins several files boot against)
is fixtures.py's.

Importing it puts host/ on sys.path, where run.sh finds the ipibench
package (run.sh sets PYTHONPATH), so a test file imports harness before
ipibench."""
import hashlib
import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib


class Fail(Exception):
    pass


def check(cond, what):
    if not cond:
        raise Fail(what)


REPO = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HOST = os.path.join(REPO, "host")
if HOST not in sys.path:
    sys.path.insert(0, HOST)
# The host application as a user runs it, for its subcommands run as commands.
IPIBENCH = [os.path.join(REPO, "run.sh")]


def run_cmd(argv, env=None, timeout=None):
    """(exit status, stdout, stderr) of argv run in the repository root, with
    env added to this process's environment."""
    p = subprocess.run([str(a) for a in argv], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, errors="replace", cwd=REPO,
                       env=dict(os.environ, **(env or {})), timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def call(fn, *args, env=None, **kw):
    """(exit status, stdout, stderr) of fn(*args, **kw) run in this process, as
    run_cmd gives them for a command: its return value (None: 0), or a
    ToolError's code with its message on stderr as run.sh prints it; env is
    added to os.environ meanwhile."""
    import contextlib
    import io

    from ipibench.exit_codes import ToolError
    saved = {k: os.environ.get(k) for k in env or {}}
    os.environ.update(env or {})
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = fn(*args, **kw) or 0
            except ToolError as e:
                print(f"run.sh: {e.message}", file=sys.stderr)
                rc = e.code
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return rc, out.getvalue(), err.getvalue()


def expect(res, code, *needles):
    """res (as run_cmd returns it) exited code and its output holds every needle."""
    rc, out, err = res
    check(rc == code, f"exit {rc}, expected {code}; stderr: {err.strip()[-400:]}")
    for n in needles:
        check(n in out + err, f"output lacks {n!r}: {(out + err).strip()[-400:]}")
    return res


def registry():
    """A list of (name, fn) and the decorator that fills it: one per test
    file, so that importing another file never adds its cases."""
    cases = []

    def case(name):
        def reg(fn):
            cases.append((name, fn))
            return fn
        return reg
    return cases, case


def selected(cases, argv=None):
    """The cases a test file's command line asks for: every one, or with
    `--case TEXT` (more than once: any of them) those whose name holds TEXT,
    with `--case-exact NAME` the one so named (tests/host/on_hosts.py);
    `--list` prints every name and exits 0. A TEXT that names no case exits 2:
    a run that tests nothing must not pass."""
    argv = sys.argv[1:] if argv is None else argv
    if "--list" in argv:
        for name, _ in cases:
            print(name)
        sys.exit(0)
    wanted = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--case"]
    exact = [argv[i + 1] for i, a in enumerate(argv[:-1]) if a == "--case-exact"]
    if not wanted and not exact:
        return list(cases)
    picked = [(n, f) for n, f in cases if any(w in n for w in wanted) or n in exact]
    if not picked:
        print(f"no case named like {' or '.join(map(repr, wanted + exact))} (--list names them)",
              file=sys.stderr)
        sys.exit(2)
    return picked


def host_log(group, name, host):
    """Where a case's reads of the host go (the seam's IPIBENCH_HOST_LOG),
    under IPIBENCH_HOST_LOG_DIR with a line in its index that says which
    fixture host it ran on and how to run it again (tests/host/on_hosts.py);
    None without the folder."""
    where = os.environ.get("IPIBENCH_HOST_LOG_DIR")
    if not where:
        return None
    key = hashlib.sha1(f"{sys.argv[0]}\0{group}\0{name}".encode()).hexdigest()[:16]
    files = [a for a in sys.argv[1:] if not a.startswith("--")]
    with open(os.path.join(where, "index.tsv"), "a") as f:
        f.write("\t".join([key, name, host, str(os.getpid()), os.path.abspath(sys.argv[0]),
                           *files]) + "\n")
    return os.path.join(where, key)


def case_host(name):
    """The fixture host a case runs on under tests/run's tools and tools-run groups: with
    IPIBENCH_HOSTS_DIR (every host of tests/host/hosts.py made there), one
    of them by the case's name, so that the cases spread over all of them
    and each always meets the same one; IPIBENCH_TEST_HOST names it on
    on_hosts.py's second runs. None outside the group."""
    import hosts
    if os.environ.get("IPIBENCH_TEST_HOST"):
        return os.environ["IPIBENCH_TEST_HOST"]
    if not os.environ.get("IPIBENCH_HOSTS_DIR"):
        return None
    names = sorted(hosts.HOSTS)
    host = names[int(hashlib.sha1(name.encode()).hexdigest(), 16) % len(names)]
    os.environ["IPIBENCH_HOST_ROOT"] = os.path.join(os.environ["IPIBENCH_HOSTS_DIR"], host)
    return host


def case_begins(group, name):
    """Before a case runs: its fixture host (case_host) and its reads of it
    logged (host_log); what its TAP line adds to its name, " (on HOST)"."""
    host = case_host(name)
    log = host_log(group, name, host or "")
    if log:
        os.environ["IPIBENCH_HOST_LOG"] = log
    return f" (on {host})" if host else ""


def run_cases(cases, group, ctx=None, also=(), select=True):
    """Runs each (name, fn) as fn(ctx), printing a TAP line "ok - GROUP: name"
    or "not ok - ..." with the reason on '#' lines; the count of failures.
    also: exceptions besides Fail that count as a failed case. select: pick
    the cases by the command line first (selected()); False where the caller
    did, over all of its cases."""
    bad = 0
    for name, fn in (selected(cases) if select else cases):
        on = case_begins(group, name)
        try:
            fn(ctx)
            print(f"ok - {group}: {name}{on}")
        except (Fail, *also) as e:
            bad += 1
            print(f"not ok - {group}: {name}{on}")
            for line in str(e).splitlines():
                print(f"#   {line}")
        sys.stdout.flush()
    return bad


def png_ok(path):
    """None for a well-formed PNG larger than 100x100, else why not."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return "no PNG signature"
    pos, kinds = 8, []
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        if zlib.crc32(kind + body) != crc:
            return f"bad CRC in {kind}"
        kinds.append(kind)
        pos += 12 + n
    if kinds[0] != b"IHDR" or kinds[-1] != b"IEND" or b"IDAT" not in kinds:
        return f"chunks {kinds}"
    w, h = struct.unpack(">II", kinds and data[16:24])
    return None if w > 100 and h > 100 else f"size {w}x{h}"


def svg_ok(path):
    """None for an SVG document with some content, else why not."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        return f"not XML: {e}"
    if not root.tag.endswith("svg") or len(list(root.iter())) < 20:
        return f"root {root.tag}, {len(list(root.iter()))} elements"
    return None


def stand_in_tracefs(root):
    """A tracefs with three of KVM's events and the control files."""
    for e in ("kvm_exit", "kvm_pio", "kvm_msr"):
        os.makedirs(os.path.join(root, "events/kvm", e))
        for name, v in (("enable", "0"), ("filter", "none")):
            with open(os.path.join(root, "events/kvm", e, name), "w") as fh:
                fh.write(v)
    for name in ("trace", "set_event_pid", "tracing_on", "buffer_size_kb"):
        open(os.path.join(root, name), "w").close()
    return root

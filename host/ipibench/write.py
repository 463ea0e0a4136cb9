# SPDX-License-Identifier: GPL-2.0-only
"""Writing files so that one only ever appears whole: a results file never
replaces another (write_new), a derived file (a plot, a page) may
(replace_file)."""
import os
import sys

from ipibench.exit_codes import EX_SAVE, ToolError


def write_new(path, text):
    """Write text to path through a temporary name in the same directory.

    The final name is created by link(), which fails if it exists, so a run
    can never overwrite an earlier file; a crash leaves only the hidden
    temporary, never a half file under the final name."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder or ".", f".{name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        try:
            os.link(tmp, path)
        except FileExistsError:
            raise ToolError(EX_SAVE, f"{path} already exists: results are never overwritten")
        except OSError:
            # A file system without hard links: rename, after making sure
            # nothing is there (the run's directory is its own, see run.sh).
            if os.path.lexists(path):
                raise ToolError(EX_SAVE, f"{path} already exists: results are never overwritten")
            os.rename(tmp, path)
    except OSError as e:
        raise ToolError(EX_SAVE, f"cannot write {path}: {e.strerror}")
    finally:
        if os.path.lexists(tmp):
            os.unlink(tmp)


def replace_file(path, data):
    """Derived files (report pages and plots) may be regenerated: write then rename."""
    folder, name = os.path.split(path)
    tmp = os.path.join(folder or ".", f".{name}.tmp-{os.getpid()}")
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(tmp, mode) as f:
        f.write(data)
    os.replace(tmp, path)


def write_outputs(outputs, who):
    """Writes each (path, text) of a verdict's side outputs (TAP, JUnit, a
    page): a path that cannot be written is said on its own line and
    returned, never raised, so that the verdict's exit code survives it
    (the caller exits EX_SAVE only where the verdict itself is 0)."""
    failed = []
    for path, text in outputs:
        try:
            replace_file(path, text)
        except OSError as e:
            print(f"{who}: cannot write {path}: {e.strerror or e}", file=sys.stderr)
            failed.append(path)
    return failed


def folder_name(text, what, code):
    """text as one folder name, or a ToolError with code naming what it is
    and why: a value read from a record or an option that becomes a path
    component must never name the folder itself, its parent, a hidden file
    or another folder (empty, '.', '..', a leading dot, a separator)."""
    name = str(text if text is not None else "")
    if not name.strip() or name in (".", "..") or name.startswith(".") or \
            any(c in name for c in ("/", "\\", "\0")):
        raise ToolError(code, f"{what} {name!r} cannot name a folder: empty, '.', '..', a "
                        "leading dot or a path separator would put it outside its place")
    return name

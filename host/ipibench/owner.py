# SPDX-License-Identifier: GPL-2.0-only
"""What a run under sudo made, handed back to the user who ran sudo.

`sudo ./run.sh --exits` (KVM's tracefs needs root) builds the guest, fills
the lane's cache and saves results as root, inside a checkout the user owns:
without this, the next `make` or `git clean` as that user fails on files it
cannot remove (issue 47; nightly.yml's exits matrix runs so). At exit, every
file under the checkout and the results root that is root's and was made or
changed since this process began becomes SUDO_UID:SUDO_GID's, as the files
around it are. Only when the process is root through sudo, and only under
a folder the sudo user owns: a checkout root owns is left as it is.
run.sh keeps Python from writing bytecode there under sudo for the same
reason (PYTHONDONTWRITEBYTECODE)."""
import os
import time

# A file's ctime comes from the kernel's coarse clock, up to a tick (10 ms
# at HZ=100) behind time.time(): what the run made at once could read as
# older than its start. A second before it is still this run's.
STARTED = time.time() - 1.0


def sudo_user(environ):
    """(uid, gid) of the user behind sudo when this process is root through
    sudo, else None."""
    if os.geteuid() != 0:
        return None
    uid, gid = environ.get("SUDO_UID", ""), environ.get("SUDO_GID", "")
    if not (uid.isdigit() and gid.isdigit()) or int(uid) == 0:
        return None
    return int(uid), int(gid)


def hand_back(roots, environ, since=STARTED):
    """Chown to the sudo user what root made or changed under each of roots
    since `since` (a ctime: allow for the coarse clock); the roots the user
    does not own are skipped.
    Returns how many paths changed hands; never raises."""
    user = sudo_user(environ)
    if user is None:
        return 0
    uid, gid = user
    moved = 0
    for root in dict.fromkeys(os.path.realpath(r) for r in roots if r):
        try:
            if os.stat(root).st_uid != uid and os.stat(os.path.dirname(root)).st_uid != uid:
                continue
        except OSError:
            continue
        moved += _walk(root, uid, gid, since)
    return moved


def _walk(root, uid, gid, since):
    moved = 0
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in [None, *dirs, *files]:
            path = dirpath if name is None else os.path.join(dirpath, name)
            if name is None and dirpath != root:
                continue  # each folder once, as its parent's entry
            try:
                st = os.lstat(path)
                if st.st_uid == 0 and st.st_ctime >= since:
                    os.lchown(path, uid, gid)
                    moved += 1
            except OSError:
                pass
    return moved

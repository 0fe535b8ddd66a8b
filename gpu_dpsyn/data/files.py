"""Output files: checked before anything is read, written whole or not at all.

A run's outputs come after the fit has spent the privacy budget, so everything that can be
known about them is checked first (check_output): the path names a regular file or nothing
yet, its directory exists and takes a new file (a probe file is created there and removed:
os.access says yes to root and to a read-only mount), it is no dangling symlink.  Two paths
are compared as files (file_id: device and inode), so a hard link to the input counts as
the input.  Every write goes to a temporary file beside the target, which then replaces it
(os.replace, atomic on one file system): on a full disk, an error or Ctrl-C, the earlier
file is still there whole and the temporary file is removed.
"""
from __future__ import annotations

import errno
import hashlib
import os
import stat
import uuid
from contextlib import contextmanager
from pathlib import Path

from gpu_dpsyn.data.text import shown
from gpu_dpsyn.errors import DPSynError

try:
    import fcntl
except ImportError:  # (Windows: no claims, as before them)
    fcntl = None


def _where(path, flag: str | None) -> str:
    return f"{flag} {shown(str(path))}" if flag else shown(str(path))


def file_id(path) -> tuple:
    """What identifies the file a path names: its device and inode when it exists (hard
    links and symlinks to one file are one file), else its resolved path."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return ("path", str(Path(path).resolve()))
    return ("inode", st.st_dev, st.st_ino)


def same_file(a, b) -> bool:
    return file_id(a) == file_id(b)


def target_of(path) -> Path:
    """The file a write replaces: a symlink's target (the link stays a link), else path."""
    p = Path(path)
    return Path(os.path.realpath(p)) if p.is_symlink() else p


PACKED = (".gz", ".bz2", ".xz", ".zip")  # compression suffixes (pandas' and ours)


def packing(path) -> str | None:
    """The compression suffix the file name ends in (any case), or None."""
    name = str(path).lower()
    return next((s for s in PACKED if name.endswith(s)), None)


def _kind_suffix(p: Path) -> tuple:
    """The suffixes that name a file's format: the last, and the one before a
    compression suffix (".csv.gz")."""
    s = [x.lower() for x in p.suffixes]
    return tuple(s[-2:]) if s and s[-1] in PACKED else tuple(s[-1:])


def check_name(path, where: str) -> None:
    """DPSynError when the file system cannot take the name (a part of it past NAME_MAX,
    255 bytes on common file systems, or the whole past PATH_MAX): every look at such a
    path fails with ENAMETOOLONG."""
    try:
        os.lstat(path)
    except OSError as e:
        if e.errno == errno.ENAMETOOLONG:
            raise DPSynError(f"{where}: the name is too long for the file system "
                             f"({e.strerror})") from None
    except ValueError:  # a NUL byte: said by the callers' own checks
        pass


def check_output(path, flag: str | None = None) -> None:
    """DPSynError unless `path` can take a new file: it names a regular file or nothing
    yet, not a directory, a device, a FIFO, a dangling symlink or a symlink to a file
    of another kind (other suffixes), and its directory accepts a new file (a probe file
    is created and removed there)."""
    p, where = Path(path), _where(path, flag)
    if "\0" in str(p):  # the system refuses it (pathlib's checks say False to it)
        raise DPSynError(f"{where} holds a NUL byte; give a file name without one")
    check_name(p, where)
    if p.is_symlink() and not p.exists():
        raise DPSynError(f"{where} is a dangling symlink (to {os.readlink(p)!r}); give a "
                         "file name")
    if p.is_dir():
        raise DPSynError(f"{where} is a directory; give a file name")
    if p.is_symlink() and _kind_suffix(p) != _kind_suffix(target_of(p)):
        raise DPSynError(f"{where} is a symlink to {str(target_of(p))!r}, a file of another "
                         "kind: the output's format comes from its name; give the file's own "
                         "name")
    if p.exists():
        if not stat.S_ISREG(os.stat(p).st_mode):
            raise DPSynError(f"{where} is not a regular file (a device, FIFO or socket); "
                             "give a file name")
        if not os.access(p, os.W_OK):
            raise DPSynError(f"{where} is not writable")
    parent = target_of(p).parent
    if not parent.is_dir():
        raise DPSynError(f"{where}: {str(parent)!r} is not an existing directory")
    probe_directory(parent, where, target_of(p).name)


# output kinds: (name, what their files start with, what they hold early on)
JSON = ("JSON document", (b"{", b"["), b"")


def check_kind(path, kind: tuple, flag: str | None = None) -> None:
    """DPSynError when `path` names an existing, non-empty file that does not start as
    a file of `kind` does, its marker within the first 4 KiB (JSON, cli.paths' kinds,
    saving.MODEL; leading whitespace skipped): an output replaces an earlier output of
    its kind, never another file, such as a data table named by mistake."""
    name, starts, marker = kind
    try:
        with open(path, "rb") as f:
            head = f.read(4096).lstrip()  # a marker's key comes early (a ledger's, ~200)
    except OSError:  # nothing there yet, or check_output says what is wrong
        return
    if head and not (head.startswith(starts) and marker in head):
        raise DPSynError(f"{_where(path, flag)} holds a file that is no {name}; an output "
                         f"replaces only an earlier {name}: give another name")


MAX_DOCUMENT = 1 << 28  # bytes of a schema, a ledger or a value list: a schema listing
# 65,536 values on many columns is tens of MiB


def read_small(path, what: str, error=DPSynError) -> str:
    """The UTF-8 text of a document given by name (a schema, a ledger, a list of values),
    or a one-line `error`: it must be a regular file of at most MAX_DOCUMENT bytes
    (/dev/zero was read until memory ran out; a FIFO hung)."""
    where = f"{what} {shown(str(path))}"
    try:
        st = os.stat(path)
    except (OSError, ValueError) as e:  # (ValueError: a NUL in the name)
        raise error(f"cannot read {where}: {getattr(e, 'strerror', None) or e}") from None
    if not stat.S_ISREG(st.st_mode):
        raise error(f"cannot read {where}: it is not a regular file")
    if st.st_size > MAX_DOCUMENT:
        raise error(f"cannot read {where}: it holds {st.st_size:,} bytes, more than a {what} "
                    f"has ({MAX_DOCUMENT:,} at most)")
    try:
        with open(path, encoding="utf-8-sig") as f:  # (a BOM, as Notepad saves: skipped)
            return f.read(MAX_DOCUMENT + 1)
    except OSError as e:
        raise error(f"cannot read {where}: {e.strerror or e}") from None
    except UnicodeDecodeError as e:
        raise error(f"{where} is not UTF-8 text: {e}") from None


def probe_directory(directory, where: str, name: str = "probe") -> None:
    """DPSynError unless a new file can be created in `directory` (one is, then removed)."""
    probe = _temporary(Path(directory) / name)
    try:
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
    except OSError as e:
        raise DPSynError(f"{where}: cannot create a file in {str(directory)!r}: "
                         f"{e.strerror or e}") from None
    try:
        os.remove(probe)
    except OSError:
        pass


_NAME_MAX = 255  # bytes of one name on common file systems


def _temporary(target: Path) -> Path:
    """A new name beside target: its own, cut where the tag would take it past
    _NAME_MAX (a name of 250 bytes is one the system takes; its tagged twin was not)."""
    name, tag = target.name, f".{uuid.uuid4().hex[:12]}.tmp"
    while name and len(os.fsencode(f".{name}{tag}")) > _NAME_MAX:
        name = name[:-1]
    return target.parent / f".{name}{tag}"


@contextmanager
def replacing(path, flag: str | None = None):
    """Yield a temporary path beside `path` for the caller to write; once the body
    returns, the temporary file replaces `path` (a symlink's target).  On any exception,
    KeyboardInterrupt included, the temporary file is removed and `path` keeps what it
    held; an OSError becomes a one-line DPSynError naming the path."""
    target = target_of(path)
    tmp = _temporary(target)
    try:
        try:  # made with the mode the file it replaces has (a kept fit's 0600), not the
            # umask's, while the body writes it (open(tmp, "wb") keeps a file's mode); the
            # owner may write it (a read-only file replaced: its mode is set after)
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL,
                             stat.S_IMODE(os.stat(target).st_mode) & 0o666 | 0o200))
        except FileNotFoundError:
            pass
        yield tmp
        with open(tmp, "rb+") as f:  # on the disk before it takes the name
            os.fsync(f.fileno())
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)
        except FileNotFoundError:
            mode = None  # a new file keeps the mode the umask gave it
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, target)
    except OSError as e:
        raise DPSynError(f"cannot write {_where(path, flag)}: {e.strerror or e}") from None
    finally:
        try:
            os.remove(tmp)
        except OSError:  # replaced (gone), or never created
            pass


def write_text(path, text: str, flag: str | None = None) -> None:
    """Write text to path whole or not at all (see replacing)."""
    with replacing(path, flag) as tmp:
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)


@contextmanager
def claiming(outputs: dict):
    """Hold a claim on each output (flag -> path; None skipped) while the body runs: a lock
    (flock) on a file beside it, .NAME.lock, removed after.  A second run writing one of
    them is refused at once, before it reads anything: both had checked that nothing was
    there, and the later one's table replaced the earlier one's without --overwrite.  The
    lock dies with its process (a kill -9 leaves the file, which the next run reuses); a
    file of that name that is not the empty one locked stays (a user's, or --ledger
    .NAME.lock: both had been deleted); a claim that cannot be made (no such directory:
    check_output says so; a file system without locks) is left out."""
    held = []
    try:
        for flag, path in outputs.items():
            if path is not None and fcntl is not None:
                held.append(_claim(target_of(path), flag, path))
        yield
    finally:
        for got in held:
            if got is not None:
                fd, lock = got
                try:  # (before the lock goes: the next run makes its own); only the empty
                    # file locked, never a user's of that name or an output written there
                    mine = os.fstat(fd)
                    if mine.st_size == 0 and os.path.samestat(mine, os.stat(lock)):
                        os.remove(lock)
                except OSError:
                    pass
                os.close(fd)


def _claim(target: Path, flag: str, path):
    """(fd, lock file) of a lock held on target's claim, None where none can be made."""
    name, tail = target.name, ".lock"
    if len(os.fsencode(f".{name}{tail}")) > _NAME_MAX:  # cut: the whole name's hash kept,
        # so two names alike in their first bytes do not share a claim (a run writing
        # both refused itself)
        tail = f".{hashlib.sha256(os.fsencode(name)).hexdigest()[:16]}.lock"
        while name and len(os.fsencode(f".{name}{tail}")) > _NAME_MAX:
            name = name[:-1]
    lock = target.parent / f".{name}{tail}"
    for _ in range(100):  # (a lock file removed between its open and its lock: again)
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise DPSynError(f"{_where(path, flag)} is being written by another gpu-dpsyn "
                             f"run (it holds {str(lock)!r}): wait for it to end, or give "
                             "another name") from None
        except OSError:
            os.close(fd)
            return None
        try:
            if os.path.samestat(os.fstat(fd), os.stat(lock)):
                return fd, lock
        except OSError:
            pass
        os.close(fd)
    return None

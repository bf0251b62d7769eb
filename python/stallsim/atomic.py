"""Output files that readers see whole or not at all, with the rules of the
C writers (sim/util/atomic_file.h), for every writer of this package
(stallsim.watch, stallsim-probe, --gpu-rate):

- a symbolic link is written through: the file it leads to is replaced and
  the link stays a link (os.replace on the link itself once turned a
  root's /dev/stdout into a regular file);
- "-", or a link to this process's stdout (/dev/stdout, /proc/self/fd/1),
  is written to stdout;
- a folder, a device, FIFO or socket, or a link that leads nowhere or to
  one of those, is refused by target(), which a writer calls before any
  work, not after it;
- the file keeps the target's mode, or gets 0666 & ~umask when new
  (mkstemp's 0600 hid profiles from the other users of a shared folder).

    path = atomic.target(out)      # at the start: OSError-free check (ValueError)
    ...
    atomic.write(out, text)        # at the end
"""

import os
import stat
import sys
import tempfile


class OutputError(ValueError):
    """An output that cannot be written, said before any work."""


def is_stdout(path):
    """True for "-" or a symbolic link to the file this process's stdout is
    open on. A device named as such (/dev/null) is not stdout: it is refused."""
    if path == "-":
        return True
    try:
        if not stat.S_ISLNK(os.lstat(path).st_mode):
            return False
        a, b = os.stat(path), os.fstat(sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _folder_check(path):
    d = os.path.dirname(path) or "."
    if not os.path.exists(d):
        raise OutputError(f"cannot write {path}: the folder {d} does not exist")
    if not os.path.isdir(d):
        raise OutputError(f"{path}: {d} is not a folder")
    if not os.access(d, os.W_OK | os.X_OK):
        raise OutputError(f"cannot write {path}: the folder {d} is not writable")


def target(path):
    """The file an output named `path` replaces: path itself, or the regular
    file a link at path leads to; None for stdout. Raises OutputError (a
    ValueError) with the reason otherwise: call it before any work."""
    if not path:
        raise OutputError("an empty file name")
    path = os.fspath(path)
    if is_stdout(path):
        return None
    real = path
    if os.path.islink(path):
        real = os.path.realpath(path)
        if not os.path.exists(real):
            raise OutputError(f"{path}: a symbolic link that leads to no file; the output is "
                              "written through a link, never over it: name a file")
        if not os.path.isfile(real):
            raise OutputError(f"{path}: a symbolic link to {real}, which is not a regular file "
                              "(the output would replace it by a rename); name a file, or - for stdout")
    elif os.path.isdir(path):
        raise OutputError(f"{path}: is a directory")
    elif os.path.exists(path) and not os.path.isfile(path):
        raise OutputError(f"{path}: not a regular file (the output replaces it by a rename)")
    _folder_check(real)
    return real


def _mode_for(real):
    try:
        return stat.S_IMODE(os.stat(real).st_mode)
    except FileNotFoundError:
        mask = os.umask(0o22)
        os.umask(mask)
        return 0o666 & ~mask


def write(path, text):
    """Writes text to the output `path` atomically, by the rules above."""
    real = target(path)
    if real is None:
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(real) + ".tmp.", dir=os.path.dirname(real) or ".")
    try:
        os.fchmod(fd, _mode_for(real))
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, real)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise

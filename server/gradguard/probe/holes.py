"""Free the head of a file another process is still appending to, without moving its end.

Cutting a growing output file by reading its tail and truncating it loses whatever the
writer appends between the read and the truncate (on a loaded machine, the last line a
script prints). Punching a hole instead releases the disk blocks of the head while the
file keeps its length and the writer's offsets, so nothing after the hole can be lost.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_FALLOC_FL_KEEP_SIZE = 0x01
_FALLOC_FL_PUNCH_HOLE = 0x02
_F_PUNCHHOLE = 99  # macOS fcntl command
_BLOCK = 4096


class _PunchHole(ctypes.Structure):
    """macOS's ``fpunchhole_t``."""

    _fields_ = [("fp_flags", ctypes.c_uint), ("reserved", ctypes.c_uint),
                ("fp_offset", ctypes.c_longlong), ("fp_length", ctypes.c_longlong)]


def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name, use_errno=True) if name else None
    except OSError:
        return None


_LIBC = _libc() if sys.platform in ("linux", "darwin") else None


def free_head(fd: int, length: int) -> bool:
    """Release the first ``length`` bytes of the open file ``fd`` (they read as zeros
    afterwards); False where the platform or the file system cannot."""
    length -= length % _BLOCK  # macOS punches whole blocks only
    if _LIBC is None or length <= 0:
        return False
    if sys.platform == "linux":
        fallocate = _LIBC.fallocate
        fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_longlong, ctypes.c_longlong]
        return bool(fallocate(fd, _FALLOC_FL_PUNCH_HOLE | _FALLOC_FL_KEEP_SIZE, 0, length) == 0)
    hole = _PunchHole(0, 0, 0, length)
    fcntl = _LIBC.fcntl
    fcntl.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_PunchHole)]
    return bool(fcntl(fd, _F_PUNCHHOLE, ctypes.byref(hole)) == 0)

# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl._utils: raw-memory helpers for tests and examples, with NIXL's names and arguments.

- ``malloc_passthru(size) -> int``: the address of ``size`` bytes aligned to 4096 (uninitialised);
- ``free_passthru(addr)``: frees what ``malloc_passthru`` returned (0 is a no-op);
- ``ba_buf(addr, size)``: fills ``size`` bytes at ``addr`` with 0xba;
- ``verify_transfer(addr1, addr2, size) -> bool``: whether the two ranges hold the same bytes
  (a mismatch also logs one ERROR line with the first differing offset).

Pure Python over ctypes. Unlike NIXL's (which dereferences whatever it is given), bad input
raises instead of crashing the process: arguments that are not integers ``TypeError``, negative
sizes, a free of an address this module did not hand out (or freed twice), and a range that is
not mapped (or not writable, for ``ba_buf``) ``ValueError``. Memory is read and written through
``process_vm_readv``/``process_vm_writev`` on this process, which report an unmapped range as
EFAULT where a plain load would fault; where those calls are refused (seccomp), plain copies are
used and the ranges are trusted, as NIXL does.

Thread safety: the table of live allocations is guarded by a lock; the memory functions share
no state.
"""

import ctypes
import errno
import operator
import os
import threading

from nixl.logging import get_logger

__all__ = ["malloc_passthru", "free_passthru", "ba_buf", "verify_transfer"]

_ALIGN = 4096
# Bytes moved per system call: bounds the scratch buffers for large ranges.
_CHUNK = 1 << 20
_ADDR_LIMIT = 1 << 64

_libc = ctypes.CDLL(None, use_errno=True)
_libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
_libc.posix_memalign.restype = ctypes.c_int
_libc.free.argtypes = [ctypes.c_void_p]
_libc.free.restype = None


class _iovec(ctypes.Structure):
    _fields_ = [("iov_base", ctypes.c_void_p), ("iov_len", ctypes.c_size_t)]


def _vm_call(name):
    fn = getattr(_libc, name, None)
    if fn is not None:
        fn.argtypes = [ctypes.c_int, ctypes.POINTER(_iovec), ctypes.c_ulong,
                       ctypes.POINTER(_iovec), ctypes.c_ulong, ctypes.c_ulong]
        fn.restype = ctypes.c_ssize_t
    return fn


_vm_readv = _vm_call("process_vm_readv")
_vm_writev = _vm_call("process_vm_writev")
# False once the kernel refused the calls (ENOSYS, EPERM): plain copies from then on.
_vm_usable = _vm_readv is not None and _vm_writev is not None

_lock = threading.Lock()
_allocs: dict = {}  # address -> size, for every live malloc_passthru allocation
_pattern = None  # _CHUNK bytes of 0xba, made on first use


def _int(value, func, what):
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{func}: {what} must be an int, not {type(value).__name__}") from None


def _size(value, func):
    n = _int(value, func, "size")
    if n < 0:
        raise ValueError(f"{func}: size must not be negative, got {n}")
    return n


def _range(addr, size, func):
    a = _int(addr, func, "address")
    n = _size(size, func)
    if n and (a <= 0 or a + n > _ADDR_LIMIT):
        raise ValueError(f"{func}: {a:#x} + {n} bytes is not a valid address range")
    return a, n


def _copy(to_remote, local, remote, n):
    """Copies n bytes between our buffer at local and the caller's range at remote; returns 0
    or the errno that stopped it (EFAULT: part of the range is not accessible)."""
    global _vm_usable
    if not _vm_usable:
        if to_remote:
            ctypes.memmove(remote, local, n)
        else:
            ctypes.memmove(local, remote, n)
        return 0
    fn = _vm_writev if to_remote else _vm_readv
    done = 0
    while done < n:
        liov = _iovec(local + done, n - done)
        riov = _iovec(remote + done, n - done)
        got = fn(os.getpid(), ctypes.byref(liov), 1, ctypes.byref(riov), 1, 0)
        if got < 0:
            err = ctypes.get_errno()
            if err == errno.EINTR:
                continue
            if err in (errno.ENOSYS, errno.EPERM) and done == 0:
                _vm_usable = False
                return _copy(to_remote, local, remote, n)
            return err
        if got == 0:
            return errno.EFAULT
        done += got
    return 0


def malloc_passthru(size):
    """Allocates size bytes aligned to 4096 and returns their address (an int)."""
    n = _size(size, "malloc_passthru")
    ptr = ctypes.c_void_p()
    # At least one byte, so that size 0 still gives a distinct address free_passthru takes.
    rc = _libc.posix_memalign(ctypes.byref(ptr), _ALIGN, max(n, 1))
    if rc != 0 or not ptr.value:
        raise MemoryError(f"malloc_passthru: cannot allocate {n} bytes: {os.strerror(rc)}")
    with _lock:
        _allocs[ptr.value] = n
    return ptr.value


def free_passthru(addr):
    """Frees an allocation of malloc_passthru; 0 is ignored (as free(NULL))."""
    a = _int(addr, "free_passthru", "address")
    if a == 0:
        return
    with _lock:
        known = _allocs.pop(a, None) is not None
    if not known:
        raise ValueError(f"free_passthru: {a:#x} is not a live allocation of malloc_passthru")
    _libc.free(a)


def _pattern_buffer():
    global _pattern
    with _lock:
        if _pattern is None:
            _pattern = ctypes.create_string_buffer(b"\xba" * _CHUNK, _CHUNK)
        return _pattern


def ba_buf(addr, size):
    """Fills size bytes at addr with 0xba; on ValueError the bytes before the inaccessible part
    are filled."""
    a, n = _range(addr, size, "ba_buf")
    # A local reference: the buffer's address goes to a call made without the GIL.
    pattern = _pattern_buffer()
    for off in range(0, n, _CHUNK):
        k = min(_CHUNK, n - off)
        err = _copy(True, ctypes.addressof(pattern), a + off, k)
        if err:
            raise ValueError(f"ba_buf: cannot write {n} bytes at {a:#x}: {os.strerror(err)}")


def verify_transfer(addr1, addr2, size):
    """Whether size bytes at addr1 and at addr2 are equal; a difference is one ERROR line."""
    a1, n = _range(addr1, size, "verify_transfer")
    a2, _ = _range(addr2, size, "verify_transfer")
    for off in range(0, n, _CHUNK):
        k = min(_CHUNK, n - off)
        bufs = []
        for a in (a1, a2):
            buf = bytearray(k)
            err = _copy(False, ctypes.addressof((ctypes.c_char * k).from_buffer(buf)), a + off, k)
            if err:
                raise ValueError(
                    f"verify_transfer: cannot read {n} bytes at {a:#x}: {os.strerror(err)}")
            bufs.append(buf)
        if bufs[0] != bufs[1]:
            i = next(i for i in range(k) if bufs[0][i] != bufs[1][i])
            # The logger is set up only here: importing this module leaves logging alone.
            get_logger().error(
                "verify_transfer: %#x and %#x differ at byte %d of %d (%#04x != %#04x)",
                a1, a2, off + i, n, bufs[0][i], bufs[1][i])
            return False
    return True

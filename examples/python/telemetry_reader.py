#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Print the telemetry events a libnixl agent writes to its BUFFER ring.

With NIXL_TELEMETRY_DIR set, each agent writes its events to the shared-memory ring
$NIXL_TELEMETRY_DIR/<agent name> (format: docs/telemetry-ring.md, layout version 6). This reader
is its consumer: it reads the file with pread (never maps it, so a file truncated by someone
else ends the reader with a message instead of SIGBUS), takes events as they arrive and stores
its read position in the file, so a reader started later (or this one restarted) resumes where the last one stopped.
Only one reader may consume a ring at a time.

Standard library only (os, ctypes, struct). The header layout below mirrors the C++
static_asserts in src/utils/common/shared_ring.h and is checked at import.

Usage:
    telemetry_reader.py --telemetry_path /tmp/telemetry/agent0 [--count N] [--timeout S]

Output: one line per event, "<type> <name> <value>", after a "# ..." line describing the ring.
Exit status: 0 done, 1 the file is not a ring this reader understands (or stops being one
while it reads: truncated, resized, header rewritten), 2 --timeout expired before --count
events arrived.

Memory ordering: the producer publishes slots with a release store of write_pos. On x86 plain
loads are not reordered with each other, so reading write_pos before the slots is enough; on
weakly ordered CPUs (ARM) this pure-Python reader may in rare cases read a slot early and is
meant as an example, not a production consumer.
"""

import argparse
import ctypes
import os
import stat
import struct
import sys
import time

TELEMETRY_VERSION = 6
HEADER_SIZE = 512
EVENT_SIZE = 16
_VERSION_OFFSET = 16  # the same in every layout version
_READ_POS_OFFSET = 256
_CHECKED_BYTES = _READ_POS_OFFSET + 8  # producer line and read_pos, re-read every poll
_EVENT = struct.Struct("<IIQ")  # type u32, path word u32 (see PATH_NAMES), value u64

# libnixl's event names by type for layout version 6 (the BUFFER file does not carry the table):
# NIXL 1.4's 0..19, then agent_trace_phases_dropped (20) and events dropped, always last (21).
# A type outside the table prints as type_<n>.
EVENT_NAMES = (
    "agent_tx_bytes",
    "agent_rx_bytes",
    "agent_tx_requests_num",
    "agent_rx_requests_num",
    "agent_memory_registered",
    "agent_memory_deregistered",
    "agent_xfer_time",
    "agent_xfer_post_time",
    "agent_err_not_posted",
    "agent_err_invalid_param",
    "agent_err_backend",
    "agent_err_not_found",
    "agent_err_mismatch",
    "agent_err_not_allowed",
    "agent_err_repost_active",
    "agent_err_unknown",
    "agent_err_not_supported",
    "agent_err_remote_disconnect",
    "agent_err_canceled",
    "agent_err_no_telemetry",
    "agent_trace_phases_dropped",
    "agent_telemetry_events_dropped",
)


# The word after the type (zero before issue 34, and for every other type) carries, for the
# transfer bytes and request events, the data path in bits 0..7 and, in a request event of value
# 0 that marks a fallback, its reason in bits 8..15 (nixl_xfer_path.h). Old readers skip the word,
# and every sum stays right. A path outside the table prints as path_<n>; a reason outside it as
# "other", as nixl_path_fallback_name() (and so the C++ reader and the exporters) name it.
PATH_NAMES = {
    1: "UCX/direct_memcpy",
    2: "UCX/direct_cma",
    3: "UCX/ucp",
    4: "LIBFABRIC/shm",
    5: "LIBFABRIC/tcp",
    6: "POSIX/uring",
    7: "POSIX/aio",
    8: "POSIX/posix_aio",
}
FALLBACK_NAMES = {
    1: "peer_other_host",
    2: "disabled_by_config",
    3: "transport_unavailable",
    4: "cma_denied",
    5: "probe_mismatch",
    6: "nixl_peer",
    7: "mem_type_unsupported",
    8: "other",
}


def path_suffix(word):
    """' path=UCX/ucp', ' fallback=UCX/ucp reason=...' or '' for a zero word."""
    if word == 0:
        return ""
    path = word & 0xFF
    reason = (word >> 8) & 0xFF
    name = PATH_NAMES.get(path, f"path_{path}")
    if reason:
        return f" fallback={name} reason={FALLBACK_NAMES.get(reason, 'other')}"
    return f" path={name}"


class RingHeader(ctypes.Structure):
    """The 512-byte ring header; one 256-byte line per side."""

    _fields_ = [
        ("write_pos", ctypes.c_uint64),
        ("capacity", ctypes.c_uint64),
        ("version", ctypes.c_int32),
        ("expected_version", ctypes.c_int32),
        ("mask", ctypes.c_uint64),
        ("lost_events", ctypes.c_uint64),
        ("_pad_write", ctypes.c_uint8 * 216),
        ("read_pos", ctypes.c_uint64),
        ("_pad_read", ctypes.c_uint8 * 248),
    ]


# Byte offsets pinned by static_asserts in shared_ring.h.
EXPECTED_OFFSETS = {
    "write_pos": 0,
    "capacity": 8,
    "version": 16,
    "expected_version": 20,
    "mask": 24,
    "lost_events": 32,
    "_pad_write": 40,
    "read_pos": 256,
    "_pad_read": 264,
}


class RingLayoutError(RuntimeError):
    """This script's header mirror drifted from the C++ layout."""


class RingFileError(RuntimeError):
    """The file is not a version-6 ring (wrong version, size or capacity)."""


def check_layout(header_cls=RingHeader):
    """Raise RingLayoutError unless header_cls matches the C++ header byte for byte."""
    if ctypes.sizeof(header_cls) != HEADER_SIZE:
        raise RingLayoutError(
            f"{header_cls.__name__} is {ctypes.sizeof(header_cls)} bytes, expected {HEADER_SIZE}"
        )
    names = [f[0] for f in header_cls._fields_]
    if sorted(names) != sorted(EXPECTED_OFFSETS):
        raise RingLayoutError(f"{header_cls.__name__} fields {names} differ from the C++ header")
    for name, offset in EXPECTED_OFFSETS.items():
        actual = getattr(header_cls, name).offset
        if actual != offset:
            raise RingLayoutError(
                f"{header_cls.__name__}.{name} is at byte {actual}, expected {offset}"
            )


check_layout()


class RingReader:
    """Consumer side of one ring file. Not thread-safe; one reader per ring at a time.

    The file is read and written with os.pread/os.pwrite, never mapped: another process that
    truncates or rewrites it makes pop_batch raise RingFileError; it cannot kill the reader
    (a mapping would fault with SIGBUS). Every poll re-reads the header and checks it is still
    the ring validated at open: same size, version, capacity and mask, write_pos inside the
    ring and read_pos where this reader left it.
    """

    def __init__(self, path):
        self.path = path
        self._fd = os.open(path, os.O_RDWR | getattr(os, "O_CLOEXEC", 0))
        try:
            self._open()
        except BaseException:
            self.close()
            raise

    def _fail(self, why):
        raise RingFileError(f"ring file {self.path}: {why}")

    def _open(self):
        st = os.fstat(self._fd)
        if not stat.S_ISREG(st.st_mode):
            self._fail("not a regular file")
        size = st.st_size
        if size < _VERSION_OFFSET + 4:
            self._fail(f"too small ({size} bytes) to hold a ring header")
        head = os.pread(self._fd, min(size, HEADER_SIZE), 0)
        if len(head) < _VERSION_OFFSET + 4:
            self._fail("cannot read the header")
        (version,) = struct.unpack_from("<i", head, _VERSION_OFFSET)
        if version != TELEMETRY_VERSION:
            self._fail(f"version mismatch: expected {TELEMETRY_VERSION}, got {version}")
        if size < HEADER_SIZE or len(head) < HEADER_SIZE:
            self._fail(f"too small ({size} bytes) to hold the {HEADER_SIZE}-byte header")
        hdr = RingHeader.from_buffer_copy(head)
        cap, mask = hdr.capacity, hdr.mask
        if cap < 2 or cap & (cap - 1) or mask != cap - 1:
            self._fail(f"bad capacity {cap} (mask {mask})")
        need = HEADER_SIZE + EVENT_SIZE * cap
        if need != size:
            self._fail(f"capacity {cap} needs {need} bytes but the file has {size}")
        if hdr.write_pos > mask or hdr.read_pos > mask:
            self._fail(f"write_pos {hdr.write_pos} or read_pos {hdr.read_pos} is outside "
                       f"the {cap}-slot ring")
        # Seed every cached value from the header, so a re-attached reader resumes exactly
        # where the previous one stopped.
        self._size = size
        self._mask = mask
        self._read = hdr.read_pos
        self._lost = hdr.lost_events

    def _recheck(self):
        """Re-read the header; raise RingFileError unless it is still our ring."""
        size = os.fstat(self._fd).st_size
        if size != self._size:
            self._fail(f"changed while reading: size {size} bytes, expected {self._size} "
                       "(truncated or re-created?)")
        head = os.pread(self._fd, _CHECKED_BYTES, 0)
        if len(head) != _CHECKED_BYTES:
            self._fail("changed while reading: the header cannot be read")
        hdr = RingHeader.from_buffer_copy(head + bytes(HEADER_SIZE - _CHECKED_BYTES))
        if (hdr.version != TELEMETRY_VERSION or hdr.capacity != self._mask + 1
                or hdr.mask != self._mask or hdr.write_pos > self._mask
                or hdr.read_pos != self._read):
            self._fail(f"header changed while reading (version {hdr.version}, capacity "
                       f"{hdr.capacity}, mask {hdr.mask}, write_pos {hdr.write_pos}, read_pos "
                       f"{hdr.read_pos} where this reader stored {self._read}); re-attach if "
                       "the agent was re-created")
        self._lost = hdr.lost_events
        return hdr

    @property
    def capacity(self):
        return self._mask + 1

    @property
    def lost_events(self):
        return self._lost

    def pop_batch(self, max_events):
        """Return up to max_events (type, value) pairs, oldest first; [] when empty.

        Raises RingFileError when the file stopped being the ring opened (see the class).
        """
        return [(t, v) for t, _, v in self.pop_events(max_events)]

    def pop_events(self, max_events):
        """As pop_batch, as (type, path word, value) triples (see PATH_NAMES)."""
        hdr = self._recheck()
        r = self._read
        mask = self._mask
        n = min((hdr.write_pos - r) & mask, max_events)
        if n == 0:
            return []
        first = min(n, mask + 1 - r)
        data = os.pread(self._fd, first * EVENT_SIZE, HEADER_SIZE + r * EVENT_SIZE)
        if n > first:
            data += os.pread(self._fd, (n - first) * EVENT_SIZE, HEADER_SIZE)
        if len(data) != n * EVENT_SIZE:
            self._fail("changed while reading: short read of the events")
        out = [_EVENT.unpack_from(data, i * EVENT_SIZE) for i in range(n)]
        # One aligned 8-byte write frees the slots for the producer.
        self._read = (r + n) & mask
        os.pwrite(self._fd, struct.pack("<Q", self._read), _READ_POS_OFFSET)
        return out

    def close(self):
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def event_name(event_type):
    if 0 <= event_type < len(EVENT_NAMES):
        return EVENT_NAMES[event_type]
    return f"type_{event_type}"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--telemetry_path", required=True, help="ring file, $NIXL_TELEMETRY_DIR/<agent>")
    ap.add_argument("--count", type=int, default=0, help="stop after N events (0: run until ^C)")
    ap.add_argument("--timeout", type=float, default=0.0,
                    help="give up after S seconds (0: no limit); exit 2 if --count not reached")
    ap.add_argument("--poll_interval", type=float, default=0.1,
                    help="seconds to sleep when the ring is empty")
    args = ap.parse_args(argv)

    try:
        reader = RingReader(args.telemetry_path)
    except (OSError, RingFileError) as e:
        print(f"telemetry_reader: {e}", file=sys.stderr)
        return 1

    deadline = time.monotonic() + args.timeout if args.timeout > 0 else None
    seen = 0
    status = 0
    with reader:
        print(f"# ring {args.telemetry_path} version {TELEMETRY_VERSION} "
              f"capacity {reader.capacity} lost_events {reader.lost_events}", flush=True)
        try:
            while args.count <= 0 or seen < args.count:
                want = args.count - seen if args.count > 0 else 4096
                batch = reader.pop_events(min(want, 4096))
                for event_type, word, value in batch:
                    print(f"{event_type} {event_name(event_type)} {value}{path_suffix(word)}")
                seen += len(batch)
                if batch:
                    sys.stdout.flush()
                    continue
                if deadline is not None and time.monotonic() >= deadline:
                    status = 2 if args.count > 0 else 0
                    break
                time.sleep(args.poll_interval)
        except KeyboardInterrupt:
            pass
        except (OSError, RingFileError) as e:
            sys.stdout.flush()
            print(f"telemetry_reader: {e}", file=sys.stderr)
            status = 1
        print(f"# read {seen} events, lost_events {reader.lost_events}", flush=True)
    return status


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Reads a libnixl chrome trace file, including one whose process was killed.

The plugin writes "[\n" and then one event per line, each line ending in ",\n"; a file
closed normally ends with a last event and "]\n". After SIGKILL the file may end in the
middle of a line (a write cut short by the kill). The reading rule: keep everything up to
and including the last newline, drop a trailing comma there, and close the array.

    nixl_trace_repair.py TRACE.json [OUT.json]   writes OUT (default: TRACE.json) in place
"""
import json
import sys


def repaired_text(data: bytes) -> str:
    """The file's whole events as a JSON array text (raises ValueError if not a trace)."""
    if not data.startswith(b"[\n"):
        raise ValueError("not a libnixl chrome trace file (no '[' line)")
    text = data[: data.rfind(b"\n") + 1].decode("utf-8")  # the plugin writes only UTF-8
    if text.rstrip().endswith("]"):
        return text  # closed normally
    body = text.rstrip()
    if body.endswith(","):
        body = body[:-1]
    return body + "\n]\n"


def load(path: str):
    """The list of events of a trace file, complete or cut short."""
    with open(path, "rb") as f:
        return json.loads(repaired_text(f.read()))


def main(argv):
    if len(argv) not in (2, 3):
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], "rb") as f:
        text = repaired_text(f.read())
    json.loads(text)  # refuse to write something that does not parse
    with open(argv[2] if len(argv) == 3 else argv[1], "w", encoding="utf-8") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

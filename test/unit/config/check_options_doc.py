#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The option table of docs/configuration.md against the NIXL_* options the code reads.

Usage: check_options_doc.py SOURCE_ROOT

The code's options: every string literal "NIXL_..." in src/ (C, C++ and Python; options are
named by literals wherever they are read: nixlConfig, the plugin SDK, getenv, os.environ), less
the names of API identifiers (status and enum names that the bindings and log texts spell as
strings) and NOT_OPTIONS below. The doc's options: the first cell of each table row under
"## Options". Exit status 1, with one line per difference, when an option is missing from the
doc or the doc names one the code does not read; 0 when they agree.

Before comparing, the script checks that it can fail: it drops one row from the doc's table and
must then report exactly that option as missing.
"""

import pathlib
import re
import sys

# Literals that look like options and are not: the Python bindings' name of
# nixl_cost_t::ANALYTICAL_BACKEND.
NOT_OPTIONS = {"NIXL_COST_ANALYTICAL_BACKEND"}

SOURCE_SUFFIXES = {".h", ".hpp", ".c", ".cpp", ".tpp", ".py"}
OPTION_LITERAL = re.compile(r'"(NIXL_[A-Z0-9_]*[A-Z0-9])"')
STRINGS_AND_COMMENTS = re.compile(r'"(?:\\.|[^"\\\n])*"|//[^\n]*|/\*.*?\*/', re.S)
IDENTIFIER = re.compile(r"\bNIXL_[A-Z0-9_]+\b")
DOC_ROW_NAME = re.compile(r"^\|\s*`(NIXL_[A-Z0-9_]+)`\s*\|")

# Fewer than this means the scan broke (moved sources, changed spelling), not that the code
# lost its options: fail rather than pass on an empty comparison.
MIN_OPTIONS = 30


def code_options(root):
    api_identifiers = set()
    for header in (root / "src" / "api").rglob("*.h"):
        text = STRINGS_AND_COMMENTS.sub(" ", header.read_text(errors="replace"))
        api_identifiers.update(IDENTIFIER.findall(text))
    found = {}
    for path in sorted((root / "src").rglob("*")):
        if path.suffix not in SOURCE_SUFFIXES or not path.is_file():
            continue
        for m in OPTION_LITERAL.finditer(path.read_text(errors="replace")):
            found.setdefault(m.group(1), path.relative_to(root))
    return {
        name: where
        for name, where in found.items()
        if name not in api_identifiers and name not in NOT_OPTIONS
    }


def doc_option_lines(doc_text):
    """(name, line index) of each option row in the "## Options" section."""
    rows = []
    in_section = False
    for i, line in enumerate(doc_text.splitlines()):
        if line.startswith("## "):
            in_section = line.strip() == "## Options"
            continue
        if in_section:
            m = DOC_ROW_NAME.match(line)
            if m:
                rows.append((m.group(1), i))
    return rows


def differences(code, doc_names):
    out = []
    for name in sorted(set(code) - doc_names):
        out.append(f"{name} (read in {code[name]}) is missing from docs/configuration.md, section Options")
    for name in sorted(doc_names - set(code)):
        out.append(f"{name} is in docs/configuration.md, section Options, but no code in src/ reads it")
    return out


def main():
    if len(sys.argv) != 2:
        print("usage: check_options_doc.py SOURCE_ROOT", file=sys.stderr)
        return 2
    root = pathlib.Path(sys.argv[1])
    doc_text = (root / "docs" / "configuration.md").read_text()

    code = code_options(root)
    rows = doc_option_lines(doc_text)
    doc_names = [name for name, _ in rows]
    if len(code) < MIN_OPTIONS or len(doc_names) < MIN_OPTIONS:
        print(f"scan found {len(code)} options in src/ and {len(doc_names)} in the doc, "
              f"expected at least {MIN_OPTIONS} each: the scan is broken")
        return 1
    duplicated = sorted({n for n in doc_names if doc_names.count(n) > 1})
    if duplicated:
        print("listed more than once in docs/configuration.md: " + ", ".join(duplicated))
        return 1

    # The comparison must notice a dropped row, or agreeing below would mean nothing.
    dropped, dropped_line = rows[len(rows) // 2]
    lines = doc_text.splitlines()
    del lines[dropped_line]
    seen = {name for name, _ in doc_option_lines("\n".join(lines))}
    reported = [d for d in differences(code, seen) if d.startswith(dropped + " ")]
    if dropped in code and (dropped in seen or len(reported) != 1):
        print(f"self-check: dropping {dropped}'s row was not reported")
        return 1

    problems = differences(code, set(doc_names))
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{len(code)} options, all in docs/configuration.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())

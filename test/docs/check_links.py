#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Checks that every relative link in the project's markdown resolves.

A link [text](target) or [text](target#anchor) whose target is not a URL must name a file or
directory of the source tree; an anchor into a markdown file must be one of that file's
headings, as GitHub turns them into ids, or an explicit <a id="..."> / <a name="...">.
Links inside fenced code blocks and inline code are not links and are ignored.

Usage: check_links.py --source-root DIR [FILE.md ...]
Without files: README.md and every *.md under docs/, benchmark/, examples/, test/ and src/.
Prints one line per broken link (file:line: target: reason) and exits 1 when there is any.
"""
import argparse
import os
import re
import sys
import unicodedata
import urllib.parse

# [text](target) and ![alt](target); the target runs to the first space or closing paren (an
# optional "title" after a space is ignored).
LINK_RE = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)')
# [label]: target reference definitions.
REF_DEF_RE = re.compile(r'^\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(?:\s+.*)?$')
HEADING_RE = re.compile(r'^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$')
ANCHOR_TAG_RE = re.compile(r'<a\s+[^>]*(?:id|name)\s*=\s*"([^"]+)"', re.IGNORECASE)
FENCE_RE = re.compile(r'^\s{0,3}(```+|~~~+)')
INLINE_CODE_RE = re.compile(r'(`+)(?:(?!\1).)+?\1')
URL_SCHEME_RE = re.compile(r'^[a-zA-Z][a-zA-Z0-9+.-]*:')


def github_slug(heading):
    """The id GitHub gives a heading: markup dropped, lower case, punctuation other than '-'
    and '_' removed, each space a '-'."""
    text = re.sub(r'!?\[([^\]]*)\]\([^)]*\)', r'\1', heading)  # links keep their text
    text = re.sub(r'<[^>]+>', '', text)                         # inline HTML
    text = text.replace('`', '').replace('*', '')
    text = text.lower()
    out = []
    for ch in text:
        if ch == ' ':
            out.append('-')
        elif ch in '-_' or ch.isalnum():
            out.append(ch)
        elif unicodedata.category(ch).startswith(('L', 'N', 'M')):
            out.append(ch)
    return ''.join(out)


def strip_inline_code(line):
    return INLINE_CODE_RE.sub('', line)


def markdown_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    fence = None
    for number, line in enumerate(lines, 1):
        m = FENCE_RE.match(line)
        if m:
            marker = m.group(1)
            if fence is None:
                fence = marker[0] * len(marker)
                continue
            if marker.startswith(fence):
                fence = None
                continue
        if fence is None:
            yield number, line


_anchor_cache = {}


def anchors_of(path):
    if path in _anchor_cache:
        return _anchor_cache[path]
    anchors = set()
    seen = {}
    for _, line in markdown_lines(path):
        for m in ANCHOR_TAG_RE.finditer(line):
            anchors.add(m.group(1))
        h = HEADING_RE.match(line)
        if not h:
            continue
        slug = github_slug(h.group(2))
        # GitHub numbers repeated headings: x, x-1, x-2, ...
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        anchors.add(slug if count == 0 else f'{slug}-{count}')
    _anchor_cache[path] = anchors
    return anchors


def check_file(path, source_root):
    problems = []
    base = os.path.dirname(path)
    rel = os.path.relpath(path, source_root)
    for number, raw in markdown_lines(path):
        line = strip_inline_code(raw)
        targets = [m.group(1) for m in LINK_RE.finditer(line)]
        ref = REF_DEF_RE.match(line)
        if ref:
            targets.append(ref.group(1))
        for target in targets:
            if URL_SCHEME_RE.match(target) or target.startswith('//'):
                continue  # a URL (http, https, mailto, ...): not checked offline
            file_part, _, anchor = target.partition('#')
            file_part = urllib.parse.unquote(file_part)  # a%20b.md names "a b.md"
            anchor = urllib.parse.unquote(anchor)
            if file_part:
                resolved = os.path.normpath(os.path.join(base, file_part))
                root = os.path.realpath(source_root)
                # commonpath, not a string prefix: /src/main2 is not inside /src/main.
                if os.path.commonpath([os.path.realpath(resolved), root]) != root:
                    problems.append(f'{rel}:{number}: {target}: outside the source tree')
                    continue
                if not os.path.exists(resolved):
                    problems.append(f'{rel}:{number}: {target}: no such file')
                    continue
            else:
                resolved = path
            if anchor and resolved.endswith('.md') and os.path.isfile(resolved):
                if anchor not in anchors_of(resolved):
                    problems.append(f'{rel}:{number}: {target}: no heading or anchor '
                                    f'"{anchor}" in {os.path.relpath(resolved, source_root)}')
    return problems


def default_files(source_root):
    files = [os.path.join(source_root, 'README.md')]
    for top in ('docs', 'benchmark', 'examples', 'test', 'src', 'contrib'):
        for dirpath, dirnames, filenames in os.walk(os.path.join(source_root, top)):
            dirnames[:] = sorted(d for d in dirnames if not d.startswith('.'))
            files += [os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith('.md')]
    return [f for f in files if os.path.isfile(f)]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--source-root', required=True)
    parser.add_argument('files', nargs='*')
    args = parser.parse_args()
    root = os.path.abspath(args.source_root)
    files = [os.path.abspath(f) for f in args.files] or default_files(root)
    problems = []
    for f in files:
        problems += check_file(f, root)
    for p in problems:
        print(p)
    print(f'docs_links: {len(files)} files, {len(problems)} broken links')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

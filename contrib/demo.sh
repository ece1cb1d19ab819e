#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Quick start, first command: installs the dependencies (contrib/install-deps.sh), configures
# and builds `build`, then runs the two-agent example (examples/cpp/nixl_example). Exits
# non-zero unless the example verified its data.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo"

echo "==== installing dependencies ===="
bash "$repo/contrib/install-deps.sh" </dev/null

echo "==== configuring build ===="
if [ -f build/meson-private/coredata.dat ]; then
    meson setup --reconfigure build
else
    rm -rf build
    meson setup build
fi

echo "==== building ===="
meson compile -C build

example=build/examples/nixl_example
if [ ! -x "$example" ]; then
    echo "demo: $example was not built (is -Dbuild_examples=false set?)" >&2
    exit 1
fi

echo "==== running $example ===="
out=$(mktemp)
trap 'rm -f "$out"' EXIT
set +e
NIXL_PLUGIN_DIR="$repo/build/src/plugins" "$example" </dev/null 2>&1 | tee "$out"
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then
    echo "demo: FAILED: nixl_example exited with status $rc" >&2
    exit 1
fi
if ! grep -Eq '^verified [0-9]+ bytes' "$out"; then
    echo "demo: FAILED: nixl_example did not report verified data" >&2
    exit 1
fi
echo "demo: OK. Next: ./contrib/test.sh runs all the tests."

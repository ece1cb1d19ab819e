#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Quick start, first command: installs the dependencies (contrib/install-deps.sh), configures
# `build` and builds only what the demo runs (libnixl, the TEST, UCX, LIBFABRIC and POSIX
# plugins and three examples; contrib/test.sh builds the rest), then runs the examples: two
# processes moving data over the UCX backend and again over the LIBFABRIC backend
# (examples/cpp/ucx_two_process.cpp --backend), two agents in one process over the TEST backend
# (examples/cpp/nixl_example.cpp), and KV-cache blocks offloaded to a file and read back over
# the POSIX backend (examples/cpp/kv_offload.cpp). Exits non-zero unless each verified its data.
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

# Only the demo's targets: the whole tree (every test and benchmark) is several times the work,
# and contrib/test.sh builds it anyway. A target this configuration does not define (no UCX,
# no libfabric, -Dbuild_examples=false) is left out here and reported below.
echo "==== building the demo's targets ===="
wanted=(examples/nixl_example examples/ucx_two_process src/plugins/libplugin_TEST.so
    src/plugins/libplugin_UCX.so src/plugins/libplugin_LIBFABRIC.so examples/kv_offload
    src/plugins/libplugin_POSIX.so)
defined=$(ninja -C build -t targets all | cut -d: -f1)
targets=()
for t in "${wanted[@]}"; do
    if grep -qxF "$t" <<<"$defined"; then
        targets+=("$t")
    fi
done
ninja -C build "${targets[@]}"

# run_example <program> <what it shows> [args]: runs it and insists on its "verified N bytes"
# line.
run_example() {
    local example=$1
    local what=$2
    shift 2
    if [ ! -x "$example" ]; then
        echo "demo: $example was not built (is -Dbuild_examples=false set, or libucx-dev missing?)" >&2
        exit 1
    fi
    echo "==== running $example $*: $what ===="
    local out rc
    out=$(mktemp)
    set +e
    # Bounded: each example takes seconds; a hung peer fails the demo instead of stalling it.
    NIXL_PLUGIN_DIR="$repo/build/src/plugins" UCX_MEM_EVENTS=no timeout 300 "$example" "$@" \
        </dev/null 2>&1 | tee "$out"
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ]; then
        rm -f "$out"
        if [ "$rc" -eq 124 ]; then
            echo "demo: FAILED: $example did not finish within 300 s" >&2
        else
            echo "demo: FAILED: $example exited with status $rc" >&2
        fi
        exit 1
    fi
    if ! grep -Eq '^verified [0-9]+ bytes' "$out"; then
        rm -f "$out"
        echo "demo: FAILED: $example did not report verified data" >&2
        exit 1
    fi
    rm -f "$out"
}

run_example build/examples/ucx_two_process "two processes, UCX backend"
if [ -e build/src/plugins/libplugin_LIBFABRIC.so ]; then
    run_example build/examples/ucx_two_process "two processes, LIBFABRIC backend" --backend LIBFABRIC
else
    echo "demo: libfabric-dev not found at configure time: the LIBFABRIC pass is skipped" >&2
fi
run_example build/examples/nixl_example "two agents in one process, TEST backend"
if [ -e build/src/plugins/libplugin_POSIX.so ]; then
    run_example build/examples/kv_offload "KV-cache blocks to a file and back, POSIX backend"
else
    echo "demo: liburing-dev or libaio-dev not found at configure time: the POSIX pass is skipped" >&2
fi
echo "demo: OK. Next: ./contrib/test.sh builds the rest and runs all the tests."

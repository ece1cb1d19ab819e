#!/bin/bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Before/after comparison of builds of the nixl package in one session (docs/python.md §7):
# runs connector_bench.py once per module directory, in turn, PAIRS times, so all builds see the
# same machine load; prints each run's table row with the load average.
#
# Usage (from the source tree, after -Dbuild_benchmarks=true):
#   benchmark/python/ab_modules.sh "--blocks 1 --rounds 5 --iters 20000" DIR...
# where each DIR holds a nixl/ package directory (e.g. a copy of build/src/bindings/python/nixl
# made before a change: cp -r build/src/bindings/python/nixl /tmp/before/). The copies find
# libnixl through LD_LIBRARY_PATH=build/src. PAIRS (default 3) sets the repetitions.
# pipefail: a connector_bench run that fails (or prints no row) stops the comparison.
set -euo pipefail
args=$1
shift
export NIXL_PLUGIN_DIR=${NIXL_PLUGIN_DIR:-build/src/plugins} UCX_MEM_EVENTS=no UCX_NET_DEVICES=lo
export LD_LIBRARY_PATH=build/src${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
for ((i = 1; i <= ${PAIRS:-3}; i++)); do
    for dir in "$@"; do
        echo "== run $i $dir load $(cut -d' ' -f1-3 /proc/loadavg) $(date -u +%H:%M:%S)"
        # shellcheck disable=SC2086
        PYTHONPATH=$dir /usr/bin/python3 benchmark/python/connector_bench.py \
            --peer build/benchmark/python/connector_bench_peer $args | grep '^| [0-9]'
    done
done

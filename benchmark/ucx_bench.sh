#!/bin/sh
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Runs ucx_bench (two processes through nixlAgent and the UCX backend) and, in the same
# invocation, ucx_perftest (package ucx-utils) for the raw cma bandwidth and UCP put latency at
# the same sizes, and prints the ratios.
#
#   [RATIOS_ONLY=1] benchmark/ucx_bench.sh [build dir] [extra ucx_bench options]
#
# RATIOS_ONLY=1 skips the sweeps and prints only the comparison with ucx_perftest.
#
# Bandwidth ratio: ucx_bench WRITE, batch 1, against `ucx_perftest -t put_bw -x cma -d memory
# -D zcopy` (UCT, one process_vm_writev stream, no agent). Latency ratio: ucx_bench WRITE 4 KiB
# batch 1 against `ucx_perftest -t ucp_put_lat` (UCP put round trip / 2, memory allocated by
# UCX), both one-way latencies in microseconds.
set -eu

build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/benchmark/ucx_bench"
[ -x "$bench" ] || { echo "no $bench: build the ucx_bench target first" >&2; exit 1; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not found (apt install ucx-utils)" >&2; exit 1; }

export NIXL_PLUGIN_DIR="$build/src/plugins"
export UCX_MEM_EVENTS=no
blocks="4096 65536 1048576 16777216 67108864"
port=$((20000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ "${RATIOS_ONLY:-0}" != 1 ]; then
echo "== ucx_bench (direct cma path)"
"$bench" --blocks 4K,64K,1M,16M,64M --batches 1,4,16,64,256 "$@" | tee "$tmp/direct.txt"
echo
echo "== ucx_bench (two agents of one process: memcpy under the registration table's fence)"
"$bench" --mode inproc --blocks 4K,64K,1M,16M,64M --batches 1,16 "$@" | tee "$tmp/inproc.txt"
echo
echo "== ucx_bench (ucp_put/get path, progress thread on)"
"$bench" --direct no --progress-thread 1 --blocks 4K,1M,64M --batches 1,16 "$@" | tee "$tmp/ucp.txt"
fi

# perftest <port> <args...>: runs server and client, prints the client's "Final:" line.
perftest() {
    p=$1
    shift
    ucx_perftest -p "$p" "$@" > "$tmp/server.log" 2>&1 &
    server=$!
    # The client retries until the server listens.
    i=0
    while ! ucx_perftest 127.0.0.1 -p "$p" "$@" > "$tmp/client.log" 2>&1; do
        i=$((i + 1))
        [ $i -lt 50 ] || { kill "$server" 2>/dev/null; echo "perftest failed" >&2; return 1; }
        sleep 0.2
    done
    wait "$server" || true
    grep '^Final:' "$tmp/client.log" | tail -1
}

echo
echo "== ucx_perftest"
# Two ratios: of GB/s over the whole run, and of the GB/s one median operation gives (block /
# p50 latency: ucx_bench's post-to-completion, perftest's 50th percentile), which a loaded
# machine's preemptions do not move (perftest's runs are short and often dodge them).
printf '%-10s %14s %14s %10s %14s %14s %10s\n' block "ucx_bench GB/s" "cma put GB/s" ratio \
    "p50: ours GB/s" "cma put GB/s" ratio
# Each block's ucx_bench point runs right before perftest's, so both see the machine in about
# the same state (on a shared VM the load drifts over a whole sweep).
: > "$tmp/ours.csv"
for b in $blocks; do
    "$bench" --csv --ops WRITE --blocks "$b" --batches 1 "$@" | tail -n +2 >> "$tmp/ours.csv"
    iters=$((268435456 / b))
    [ $iters -gt 2000 ] && iters=2000
    [ $iters -lt 20 ] && iters=20
    line=$(perftest $port -t put_bw -x cma -d memory -D zcopy -s "$b" -n $iters -w 5)
    port=$((port + 1))
    # Final: iterations, overhead 50%, avg, overall, bandwidth avg MB/s, overall MB/s, ...
    cma=$(echo "$line" | awk '{printf "%.3f", $7 * 1048576 / 1e9}')
    ours=$(awk -F, -v b="$b" '$2 == b && $3 == 1 {print $5}' "$tmp/ours.csv")
    ratio=$(awk -v a="$ours" -v c="$cma" 'BEGIN {if (c > 0) printf "%.2f", a / c; else print "-"}')
    cma50=$(echo "$line" | awk -v b="$b" '{if ($3 > 0) printf "%.3f", b / $3 / 1e3; else print 0}')
    ours50=$(awk -F, -v b="$b" '$2 == b && $3 == 1 && $8 > 0 {printf "%.3f", b / $8 / 1e3}' "$tmp/ours.csv")
    ratio50=$(awk -v a="$ours50" -v c="$cma50" 'BEGIN {if (c > 0) printf "%.2f", a / c; else print "-"}')
    printf '%-10s %14s %14s %10s %14s %14s %10s\n' "$b" "$ours" "$cma" "$ratio" "$ours50" "$cma50" \
        "$ratio50"
done

line=$(perftest $port -t ucp_put_lat -s 4096 -n 20000 -w 1000)
ucp_lat=$(echo "$line" | awk '{print $4}')
ours_lat=$(awk -F, '$2 == 4096 && $3 == 1 {print $6}' "$tmp/ours.csv")
ours_p50=$(awk -F, '$2 == 4096 && $3 == 1 {print $8}' "$tmp/ours.csv")
echo
printf '%-28s %10s us\n' "ucp_put_lat 4 KiB (avg)" "$ucp_lat"
printf '%-28s %10s us\n' "ucx_bench WRITE 4 KiB (avg)" "$ours_lat"
printf '%-28s %10s us\n' "ucx_bench WRITE 4 KiB (p50)" "$ours_p50"
awk -v a="$ours_lat" -v c="$ucp_lat" 'BEGIN {if (c > 0) printf "latency ratio ucx_bench / ucp_put_lat: %.2f\n", a / c}'

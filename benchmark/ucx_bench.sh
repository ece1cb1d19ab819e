#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Runs ucx_bench (two processes through nixlAgent and the UCX backend) and, in the same
# invocation, ucx_perftest (package ucx-utils) for the raw cma bandwidth and UCP put latency at
# the same sizes, and prints the ratios.
#
#   [RATIOS_ONLY=1] [BLOCKS="4096 ..."] benchmark/ucx_bench.sh [--json OUT.json] [build dir]
#       [extra ucx_bench options]
#
# RATIOS_ONLY=1 skips the sweeps and prints only the comparison with ucx_perftest. BLOCKS
# replaces the comparison's block sizes (bytes, space-separated).
#
# --json OUT.json also writes the comparison's ucx_bench points (WRITE, batch 1, one per block:
# ucx_bench --json's objects, memcpy and process_vm_writev already under "peers") with the
# ucx_perftest put_bw run of the same block appended as one more peer ({"name": "ucx_perftest
# put_bw cma", "GBps", "p50_us"}: perftest's overall bandwidth and its typical, i.e. median,
# time per operation) and the ucx_perftest ucp_put_lat run of the same block as another
# ({"name": "ucx_perftest ucp_put_lat", "p50_us", "avg_us"}: its typical and average one-way
# latency), so benchmark/plot.py draws the peer's latency at every size, not only at 4 KiB.
# Needs python3 for the merge.
#
# Bandwidth ratio: ucx_bench WRITE, batch 1, against `ucx_perftest -t put_bw -x cma -d memory
# -D zcopy` (UCT, one process_vm_writev stream, no agent). Latency ratio: ucx_bench WRITE 4 KiB
# batch 1 against `ucx_perftest -t ucp_put_lat` (UCP put round trip / 2, memory allocated by
# UCX), both one-way latencies in microseconds.
# bash for pipefail: a ucx_bench that fails inside `| tee` must fail the script.
set -euo pipefail

json_out=
if [ "${1:-}" = --json ]; then
    [ $# -ge 2 ] || { echo "--json needs a file name" >&2; exit 2; }
    json_out=$2
    shift 2
    command -v python3 >/dev/null || { echo "--json needs python3 for the merge" >&2; exit 1; }
fi
build=${1:-build}
[ $# -gt 0 ] && shift
bench="$build/benchmark/ucx_bench"
[ -x "$bench" ] || { echo "no $bench: build the ucx_bench target first" >&2; exit 1; }
command -v ucx_perftest >/dev/null || { echo "ucx_perftest not found (apt install ucx-utils)" >&2; exit 1; }

export NIXL_PLUGIN_DIR="$build/src/plugins"
export UCX_MEM_EVENTS=no
blocks=${BLOCKS:-"4096 65536 1048576 16777216 67108864"}
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
    # Bounded: a server whose client died mid-run would otherwise wait for it forever.
    timeout 120 ucx_perftest -p "$p" "$@" > "$tmp/server.log" 2>&1 &
    server=$!
    # The client retries until the server listens.
    i=0
    while ! timeout 120 ucx_perftest 127.0.0.1 -p "$p" "$@" > "$tmp/client.log" 2>&1; do
        i=$((i + 1))
        [ $i -lt 50 ] || { kill "$server" 2>/dev/null; echo "perftest failed" >&2; return 1; }
        sleep 0.2
    done
    wait "$server" || true
    # No Final: line leaves the ratio "-", as before pipefail.
    { grep '^Final:' "$tmp/client.log" || true; } | tail -1
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
: > "$tmp/perftest_lat.txt"
for b in $blocks; do
    if [ -z "$json_out" ]; then
        "$bench" --csv --ops WRITE --blocks "$b" --batches 1 "$@" | tail -n +2 >> "$tmp/ours.csv"
    else
        # The same point as JSON; its CSV row (the columns read below) is derived from it.
        "$bench" --json --ops WRITE --blocks "$b" --batches 1 "$@" | tee -a "$tmp/ours.jsonl" |
            python3 -c '
import json, sys
for line in sys.stdin:
    if line.strip():
        p = json.loads(line)
        print(",".join(str(v) for v in (p["op"], p["block"], p["batch"], p["iters"], p["GBps"],
                                        p["avg_us"], p["p99_us"], p["p50_us"])))' >> "$tmp/ours.csv"
    fi
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
    echo "$b $cma $(echo "$line" | awk '{print $3}')" >> "$tmp/perftest.txt"
    if [ -n "$json_out" ]; then
        # The latency peer of the same block: about 2^28 bytes moved per run, as for put_bw,
        # but at most 20,000 round trips (the 4 KiB run below) and at least 20.
        lat_iters=$((268435456 / b))
        [ $lat_iters -gt 20000 ] && lat_iters=20000
        [ $lat_iters -lt 20 ] && lat_iters=20
        line=$(perftest $port -t ucp_put_lat -s "$b" -n $lat_iters -w $((lat_iters / 20 + 1)))
        port=$((port + 1))
        # Final: iterations, typical (median) latency, average, overall, ... (microseconds)
        echo "$b $(echo "$line" | awk '{print $3, $4}')" >> "$tmp/perftest_lat.txt"
    fi
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

if [ -n "$json_out" ]; then
    # Each point gets the ucx_perftest put_bw run of its block as one more peer.
    # And the ucp_put_lat run of its block, when that run printed its Final: line.
    python3 - "$tmp/ours.jsonl" "$tmp/perftest.txt" "$tmp/perftest_lat.txt" "$json_out" <<'EOF'
import json, sys
ours, raw, raw_lat, out = sys.argv[1:5]
peers = {}
with open(raw, encoding="utf-8") as f:
    for line in f:
        block, gbps, typical_us = line.split()
        if float(gbps) > 0:
            peers[int(block)] = [{"name": "ucx_perftest put_bw cma", "GBps": float(gbps),
                                  "p50_us": float(typical_us)}]
with open(raw_lat, encoding="utf-8") as f:
    for line in f:
        fields = line.split()
        if len(fields) == 3 and float(fields[1]) > 0 and float(fields[2]) > 0:
            peers.setdefault(int(fields[0]), []).append(
                {"name": "ucx_perftest ucp_put_lat", "p50_us": float(fields[1]),
                 "avg_us": float(fields[2])})
with open(ours, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for line in f:
        if line.strip():
            p = json.loads(line)
            if p["block"] in peers:
                p["peers"] = p.get("peers", []) + peers[p["block"]]
            o.write(json.dumps(p, separators=(",", ":")) + "\n")
EOF
    echo "# JSON with the ucx_perftest peer: $json_out"
fi

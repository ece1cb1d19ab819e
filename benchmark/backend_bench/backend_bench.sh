#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Runs backend_bench (two processes through nixlAgent) for LIBFABRIC/shm, LIBFABRIC/tcp;ofi_rxm
# and UCX and, in the same invocation, fi_pingpong (package libfabric-bin) of each provider on
# 127.0.0.1 as the raw reference, at 4 KiB, 64 KiB, 1 MiB, 16 MiB and 64 MiB; prints the table
# and the ratios.
#
#   benchmark/backend_bench/backend_bench.sh [--json OUT.json] [build dir] [extra options]
#
# --json OUT.json also writes every backend_bench point as JSON Lines (backend_bench --json's
# objects) with the fi_pingpong run of the same provider and size under "peers" ({"name":
# "fi_pingpong <provider>", "GBps", "avg_us"}: fi_pingpong reports an average, no percentiles),
# which benchmark/plot.py draws. Needs python3 for the merge; the printed output is the same.
#
# What is compared: backend_bench moves one descriptor of `block` bytes per request (batch 1),
# posts the next only when the last completed, and reports data bytes / elapsed time (GB/s =
# 10^9 B/s) and the post-to-completion time. fi_pingpong -e rdm -m msg is a message ping-pong:
# one message of `block` bytes in flight, echoed back; its MB/sec counts the bytes of both
# directions over the elapsed time (10^6 B/s), i.e. the one-at-a-time bandwidth of the provider's
# message path, and its usec/xfer is the time of one message. Both are one-outstanding-operation
# figures of the same provider on the same host in the same run. Ratio = backend_bench GB/s /
# fi_pingpong GB/s. The UCX row has no raw reference here (benchmark/ucx_bench.sh has).
# bash for pipefail: a backend_bench that fails inside `| tee` must fail the script.
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
bench="$build/benchmark/backend_bench/backend_bench"
[ -x "$bench" ] || { echo "no $bench: build the backend_bench target first" >&2; exit 1; }
command -v fi_pingpong >/dev/null || { echo "fi_pingpong not found (apt install libfabric-bin)" >&2; exit 1; }

export NIXL_PLUGIN_DIR="$build/src/plugins"
export FI_TCP_IFACE=lo
export UCX_MEM_EVENTS=no
blocks="4096 65536 1048576 16777216 67108864"
port=$((30000 + $$ % 20000))
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(date -u '+%Y-%m-%d %H:%M:%S UTC'), load average: $(cut -d' ' -f1-3 /proc/loadavg)"
run() {
    label=$1
    shift
    echo "== backend_bench $label"
    if [ -z "$json_out" ]; then
        "$bench" --label "$label" --csv --max-total 64M "$@" | tee -a "$tmp/ours.csv"
        return
    fi
    # The same run as JSON; its CSV rows (the table's input) are derived from it.
    "$bench" --label "$label" --json --max-total 64M "$@" | tee -a "$tmp/ours.jsonl" |
        python3 -c '
import json, sys
print("label,op,block,batch,iters,GBps,avg_us,p50_us,p99_us,p999_us,max_us")
for line in sys.stdin:
    if line.strip():
        p = json.loads(line)
        print("%s,%s,%d,%d,%d,%.4f,%.2f,%.2f,%.2f,%.2f,%.2f" % (p["label"], p["op"], p["block"],
              p["batch"], p["iters"], p["GBps"], p["avg_us"], p["p50_us"], p["p99_us"],
              p["p999_us"], p["max_us"]))' | tee -a "$tmp/ours.csv"
}
run lf-shm --backend LIBFABRIC --param provider=shm "$@"
run lf-tcp --backend LIBFABRIC --param 'provider=tcp;ofi_rxm' "$@"
if [ -e "$NIXL_PLUGIN_DIR/libplugin_UCX.so" ]; then
    run ucx --backend UCX "$@"
fi

# pingpong <provider> <size>: GB/s and usec/xfer of fi_pingpong's client, "- -" on failure.
pingpong() {
    iters=$((268435456 / $2))
    [ $iters -gt 1000 ] && iters=1000
    [ $iters -lt 10 ] && iters=10
    timeout 120 fi_pingpong -p "$1" -e rdm -I $iters -S "$2" -B $port > "$tmp/server.txt" 2>&1 &
    server=$!
    # The client retries until the server listens.
    i=0
    while ! timeout 120 fi_pingpong -p "$1" -e rdm -I $iters -S "$2" -P $port 127.0.0.1 \
        > "$tmp/client.txt" 2>&1; do
        i=$((i + 1))
        if [ $i -ge 50 ]; then
            kill "$server" 2>/dev/null || true
            echo "- -"
            return
        fi
        sleep 0.2
    done
    wait "$server" || true
    port=$((port + 1))
    # bytes #sent #ack total time MB/sec usec/xfer Mxfers/sec
    tail -1 "$tmp/client.txt" | awk '{printf "%.4f %.2f\n", $6 / 1000, $7}'
}

echo
echo "== fi_pingpong -e rdm on 127.0.0.1 (raw provider reference)"
printf '%-10s %-12s %-6s %10s %10s %12s %10s %10s\n' block provider op "ours GB/s" "raw GB/s" \
    ratio "ours p50" "raw us/xfer"
for b in $blocks; do
    for pair in "shm lf-shm" "tcp lf-tcp" "tcp;ofi_rxm lf-tcp"; do
        prov=${pair% *}
        label=${pair#* }
        set -- $(pingpong "$prov" "$b")
        raw=$1
        rawus=$2
        echo "$label|$prov|$b|$raw|$rawus" >> "$tmp/raw.txt"
        for op in WRITE READ; do
            ours=$(awk -F, -v l="$label" -v o="$op" -v b="$b" '$1 == l && $2 == o && $3 == b {print $6}' "$tmp/ours.csv")
            p50=$(awk -F, -v l="$label" -v o="$op" -v b="$b" '$1 == l && $2 == o && $3 == b {print $8}' "$tmp/ours.csv")
            ratio=$(awk -v a="${ours:-0}" -v c="$raw" 'BEGIN {if (c + 0 > 0) printf "%.2f", a / c; else print "-"}')
            printf '%-10s %-12s %-6s %10s %10s %12s %10s %10s\n' "$b" "$prov" "$op" "${ours:--}" \
                "$raw" "$ratio" "${p50:--}" "$rawus" | tee -a "$tmp/ratios.txt"
        done
    done
done
echo
echo "== issue 15 targets"
awk '$1 >= 65536 && $2 == "shm" && $6 != "-" {n++; if ($6 >= 0.9) ok++}
     END {printf "shm WRITE/READ >= 0.9x fi_pingpong shm at >= 64 KiB: %d of %d points\n", ok, n}' "$tmp/ratios.txt"
awk '$2 == "tcp" && $6 != "-" {n++; if ($6 >= 0.9) ok++}
     END {printf "tcp;ofi_rxm >= 0.9x fi_pingpong tcp: %d of %d points\n", ok, n}' "$tmp/ratios.txt"
awk -F, '$1 == "lf-shm" && $2 == "WRITE" && $3 == 4096 {printf "shm 4 KiB WRITE p50: %s us (target <= 5)\n", $8}' "$tmp/ours.csv"
if [ -n "$json_out" ]; then
    # Each point gets the fi_pingpong runs of its provider at its size as peers.
    python3 - "$tmp/ours.jsonl" "$tmp/raw.txt" "$json_out" <<'EOF'
import json, sys
ours, raw, out = sys.argv[1:4]
peers = {}
with open(raw, encoding="utf-8") as f:
    for line in f:
        label, prov, block, gbps, us = line.strip().split("|")
        if gbps != "-":
            peers.setdefault((label, int(block)), []).append(
                {"name": "fi_pingpong " + prov, "GBps": float(gbps), "avg_us": float(us)})
with open(ours, encoding="utf-8") as f, open(out, "w", encoding="utf-8") as o:
    for line in f:
        if line.strip():
            p = json.loads(line)
            p["peers"] = p.get("peers", []) + peers.get((p["label"], p["block"]), [])
            o.write(json.dumps(p, separators=(",", ":")) + "\n")
EOF
    echo "# JSON with the fi_pingpong peers: $json_out"
fi
echo "# done, load average: $(cut -d' ' -f1-3 /proc/loadavg)"

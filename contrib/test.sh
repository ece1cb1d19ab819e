#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Runs every test of libnixl (the quick start's second command):
#   1. configures `build` if needed and builds it;
#   2. meson test -C build: every suite except 'fuzz';
#   3. fuzzing pass (when clang++-14 is installed): configures `build-fuzz` with clang,
#      libFuzzer and ASan+UBSan, builds the fuzz targets and runs the 'fuzz' suite;
#   3b. ThreadSanitizer build (`build-tsan`, -O1 -g1) of the multi-threaded tests, and their run;
#      the builds of 3 and 3b run at nice 19 in the background during step 2's tests;
#   4. the install check (test/install/check_install.sh), counted as one test.
# The last line is the summary, e.g. "tests: 57 passed, 0 failed", counted from meson's
# testlog.json files (OK and EXPECTEDFAIL pass, SKIP is not counted, anything else fails) plus
# the install check. Exit status is non-zero when anything failed.
#
# Environment: NIXL_TEST_JOBS (default 2) parallel tests; NIXL_SKIP_FUZZ=1 skips step 3;
# NIXL_SKIP_TSAN=1 skips step 3b;
# NIXL_MESON_TEST_ARGS adds arguments to every meson test call (e.g. --timeout-multiplier 2).
# Does not install packages: run contrib/install-deps.sh first on a fresh machine.
#
# contrib/test.sh --stress: the load lane (docs/testing.md). Steps 1 and 2 only, with step 2
# run while one CPU-burning process per core (nproc of them) competes with the tests, and
# every test repeated: meson test --repeat $NIXL_STRESS_REPEAT (default 3) with
# --timeout-multiplier $NIXL_STRESS_TIMEOUT_MULTIPLIER (default 4). The burners are killed
# by a trap however the script ends. No fuzz, ThreadSanitizer or install step. Same summary.
# NIXL_STRESS_HOGS overrides the number of burners (default: nproc). The model test
# (agent_model) runs NIXL_MODEL_SEQUENCES (default here 30000, normal lane 10000) sequences.
# CI keeps the normal lane.
set -uo pipefail

stress=0
for arg in "$@"; do
    case "$arg" in
    --stress) stress=1 ;;
    -h | --help)
        sed -n '2,/^set -uo/p' "${BASH_SOURCE[0]}" | sed -e '$d' -e 's/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "test.sh: unknown argument '$arg' (known: --stress, --help)" >&2
        exit 2
        ;;
    esac
done

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$repo" || exit 1

jobs=${NIXL_TEST_JOBS:-2}

# ccache (installed by install-deps.sh; meson picks it up at configure time) may reuse objects
# compiled in another checkout of the same sources: without these, -g builds hash the working
# directory and a fresh clone in another folder never hits the cache.
export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$repo}
read -r -a extra_test_args <<<"${NIXL_MESON_TEST_ARGS:-}"

# Results of each step, printed before the summary.
phase_lines=()
extra_passed=0
extra_failed=0
testlogs=()

now() {
    date +%s
}

record() {
    # record NAME STATUS START
    local elapsed=$(($(now) - $3))
    phase_lines+=("$(printf '  %-28s %-8s %4ds' "$1" "$2" "$elapsed")")
}

banner() {
    echo
    echo "==== $* ===="
}

# meson setup, or --reconfigure when the directory is already configured.
configure() {
    local dir=$1
    shift
    if [ -f "$dir/meson-private/coredata.dat" ]; then
        meson setup --reconfigure "$dir" "$@"
    else
        rm -rf "$dir"
        meson setup "$dir" "$@"
    fi
}

# run_meson_test NAME BUILD_DIR ARGS...: runs meson test, keeps its testlog.json for the count.
# A failure that leaves no failed test in the log (e.g. a build error) counts as one failure.
run_meson_test() {
    local name=$1 dir=$2
    shift 2
    local start log rc
    start=$(now)
    log="$dir/meson-logs/testlog.json"
    rm -f "$log" "$dir/meson-logs/testlog-$name.json"
    meson test -C "$dir" --print-errorlogs --num-processes "$jobs" "${extra_test_args[@]}" "$@"
    rc=$?
    if [ -f "$log" ]; then
        # Keep a copy: a later meson test on the same directory would overwrite it.
        cp "$log" "$dir/meson-logs/testlog-$name.json"
        testlogs+=("$dir/meson-logs/testlog-$name.json")
    fi
    if [ "$rc" -ne 0 ] && ! grep -q '"result": *"\(FAIL\|TIMEOUT\|ERROR\|UNEXPECTEDPASS\)"' \
        "$dir/meson-logs/testlog-$name.json" 2>/dev/null; then
        echo "test.sh: meson test ($name) failed with status $rc and no failed test in its log"
        extra_failed=$((extra_failed + 1))
    fi
    if [ "$rc" -eq 0 ]; then
        record "$name" "ok" "$start"
    else
        record "$name" "FAILED" "$start"
    fi
}

targets_for() {
    python3 - "$@" <<'PY'
import json
import os
import subprocess
import sys

# targets_for <build dir> (--suite S | test names...): the ninja targets (files relative to the
# build dir) that the selected tests run or depend on.
bdir = sys.argv[1]
args = sys.argv[2:]
suite = args[1] if args[:1] == ["--suite"] else None
names = set() if suite else set(args)
def intro(what):
    out = subprocess.run(["meson", "introspect", bdir, what], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)
files = {}
for t in intro("--targets"):
    files[t["id"]] = [os.path.relpath(f, os.path.abspath(bdir)) for f in t["filename"]]
wanted = set()
for t in intro("--tests"):
    suites = t.get("suite", [])
    if suite is not None:
        selected = suite in suites or any(s.endswith(":" + suite) for s in suites)
    else:
        selected = t["name"] in names
    if selected:
        for dep in t.get("depends", []):
            wanted.update(files.get(dep, []))
        cmd = t.get("cmd", [])
        if cmd:
            exe = os.path.relpath(cmd[0], os.path.abspath(bdir))
            if not exe.startswith(".."):
                wanted.add(exe)
print(" ".join(sorted(wanted)))
PY
}

# CPU burners of the stress lane: started by start_hogs, killed by stop_hogs (also from the
# EXIT trap, so an interrupted or failing run leaves none behind).
hog_pids=()

start_hogs() {
    local n=$1 i
    for ((i = 0; i < n; i++)); do
        # bash -c runs the loop itself, so $! is the burner and killing it stops the load.
        bash -c 'while :; do :; done' &
        hog_pids+=($!)
    done
    echo "test.sh: started $n CPU burner(s): ${hog_pids[*]}"
}

stop_hogs() {
    if [ "${#hog_pids[@]}" -gt 0 ]; then
        kill "${hog_pids[@]}" 2>/dev/null
        wait "${hog_pids[@]}" 2>/dev/null
        echo "test.sh: stopped ${#hog_pids[@]} CPU burner(s)"
        hog_pids=()
    fi
}

# Steps 3 and 3b build in the background, at the lowest CPU priority (nice 19), while step 2's
# tests run: those tests leave much of the two cores idle (they wait on sockets, servers and
# peer processes), and at nice 19 the compilers only take what the tests leave. The builds'
# output is printed after the tests; their run of tests comes after that.
builder_pid=""
builder_log=""
builder_status=""

stop_builder() {
    if [ -n "$builder_pid" ]; then
        # The builder leads its own process group (set -m below): this stops it and its ninja.
        kill -TERM -- "-$builder_pid" 2>/dev/null
        wait "$builder_pid" 2>/dev/null
        builder_pid=""
    fi
    rm -f "$builder_log" "$builder_status"
}

cleanup() {
    stop_hogs
    stop_builder
}

# build_fuzz: configures build-fuzz (clang-14, libFuzzer, ASan+UBSan) and builds only what the
# fuzz suite needs, not every unit test a second time. -O1 and line tables only (-g1), as in
# build-tsan: about 12% less compile time than -O2 -g, and reports still name file and line.
# Status 0 when it is built.
build_fuzz() {
    local targets
    CC=clang-14 CXX=clang++-14 configure build-fuzz \
        -Dbuild_fuzzers=true -Db_sanitize=address,undefined -Db_lundef=false \
        -Dbuild_benchmarks=false -Dbuild_examples=false \
        -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 || return 1
    targets=$(targets_for build-fuzz --suite fuzz) || return 1
    if [ -z "$targets" ]; then
        echo "test.sh: no tests in suite 'fuzz' are defined"
        return 0
    fi
    # shellcheck disable=SC2086
    ninja -C build-fuzz $targets
}

# tsan_selected: the names of the ThreadSanitizer lane's tests that build-tsan defines.
# The multi-threaded tests: agent, TEST backend, telemetry pipeline, tracing (core, the chrome
# plugin, and the NVTX plugin under its recording tools when the NVTX headers are there), ring
# and exporters, and the UCX backend when it is built (its tests carry their own suppressions
# file for races inside UCX 1.13 itself: test/unit/ucx/tsan.supp).
tsan_selected() {
    local tests=(agent p2p test_backend telemetry_core tracing trace_chrome trace_chrome_agent
        trace_nvtx_plugin_ext trace_nvtx_plugin_core ring prometheus_exporter prometheus_agent
        prometheus_mp prometheus_mp_e2e etcd_json etcd_client etcd_agent etcd_batch)
    if [ -f build/src/plugins/libplugin_UCX.so ]; then
        # The Python module's two-agent and many-threads tests (libtsan preloaded into python).
        # etcd_nixl_peer: a NIXL 1.4-format peer process and our agent over etcd and UCX.
        tests+=(ucx etcd_mesh etcd_nixl_peer py_bindings_transfer py_bindings_threads)
    fi
    # The LIBFABRIC backend's tests (posting threads with and without the progress thread, and
    # the teardown drain: lfProgressIdle.DestroyedWithReadPostedFinishesIt is in lf_test);
    # their suppressions file covers libfabric 1.17 itself: test/unit/libfabric/tsan.supp.
    if [ -f build/src/plugins/libplugin_LIBFABRIC.so ]; then
        tests+=(libfabric)
    fi
    # The POSIX file backend's tests (eight posting threads, release while in flight).
    if [ -f build/src/plugins/libplugin_POSIX.so ]; then
        tests+=(posix)
    fi
    # Tests of plugins that are not built here (no prometheus-cpp) are simply not selected.
    local known t
    known=$(meson introspect build-tsan --tests | python3 -c \
        'import json, sys; print(" ".join(t["name"] for t in json.load(sys.stdin)))') || return 1
    for t in "${tests[@]}"; do
        case " $known " in *" $t "*) printf '%s\n' "$t" ;; esac
    done
}

# build_tsan: configures build-tsan and builds what the selected tests need. -O1 and line
# tables only (-g1) halve the compile time of -O2 -g, and reports still name file and line.
build_tsan() {
    local tests targets
    configure build-tsan -Db_sanitize=thread -Db_lundef=false \
        -Dbuild_benchmarks=false -Dbuild_examples=false \
        -Doptimization=1 -Ddebug=false -Dc_args=-g1 -Dcpp_args=-g1 || return 1
    local selected
    # Not `mapfile < <(...)`: its status would hide a failed introspection.
    selected=$(tsan_selected) || return 1
    mapfile -t tests <<<"$selected"
    targets=$(targets_for build-tsan "${tests[@]}") || return 1
    # Plus every plugin library: tests load them by path, not all declare them.
    # shellcheck disable=SC2046,SC2086
    ninja -C build-tsan $targets $(cd build-tsan && ninja -t targets all |
        grep -E '^(src/plugins|test)/[^:]*\.so:' | cut -d: -f1)
}

# builder_step NAME FUNCTION: runs FUNCTION, appends "NAME ok|FAILED SECONDS" to the status file.
builder_step() {
    local s r
    s=$(now)
    if "$2"; then r=ok; else r=FAILED; fi
    echo "$1 $r $(($(now) - s))" >>"$builder_status"
}

# start_builder FUZZ TSAN (each 0 or 1): starts the background builds.
start_builder() {
    builder_log=$(mktemp)
    builder_status=$(mktemp)
    # Monitor mode for this one job: it gets a process group of its own for stop_builder.
    set -m
    (
        renice -n 19 -p "$BASHPID" >/dev/null 2>&1
        if [ "$1" -eq 1 ]; then
            banner "configure and build: build-fuzz (clang-14, libFuzzer, ASan+UBSan; in the background)"
            builder_step build-fuzz build_fuzz
        fi
        if [ "$2" -eq 1 ]; then
            banner "configure and build: build-tsan (ThreadSanitizer; in the background)"
            builder_step build-tsan build_tsan
        fi
    ) >"$builder_log" 2>&1 </dev/null &
    builder_pid=$!
    set +m
}

# wait_builder: waits for the background builds, prints their output, records their phases.
wait_builder() {
    local name r secs
    [ -n "$builder_pid" ] || return 0
    wait "$builder_pid"
    builder_pid=""
    cat "$builder_log"
    while read -r name r secs; do
        phase_lines+=("$(printf '  %-28s %-8s %4ds (during the tests)' "$name" "$r" "$secs")")
        if [ "$r" = ok ]; then
            printf -v "built_${name#build-}" 1
        else
            extra_failed=$((extra_failed + 1))
        fi
    done <"$builder_status"
}

trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

total_start=$(now)

# 1. Main build.
banner "configure and build: build"
start=$(now)
build_ok=1
if ! configure build; then
    build_ok=0
elif ! meson compile -C build; then
    build_ok=0
fi
if [ "$build_ok" -eq 1 ]; then
    record "build" "ok" "$start"
else
    record "build" "FAILED" "$start"
    extra_failed=$((extra_failed + 1))
fi

# Which of steps 3 and 3b run; their builds start now.
want_fuzz=0
want_tsan=0
built_fuzz=0
built_tsan=0
if [ "$stress" -eq 1 ]; then
    phase_lines+=("  fuzz                         skipped (--stress)")
    phase_lines+=("  tsan                         skipped (--stress)")
else
    if [ "${NIXL_SKIP_FUZZ:-0}" = "1" ]; then
        phase_lines+=("  fuzz                         skipped (NIXL_SKIP_FUZZ=1)")
    elif ! command -v clang++-14 >/dev/null 2>&1; then
        phase_lines+=("  fuzz                         skipped (clang++-14 not installed)")
    else
        want_fuzz=1
        # Symbolized stack traces in sanitizer reports.
        if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ] && [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
            export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
        fi
    fi
    if [ "${NIXL_SKIP_TSAN:-0}" = "1" ]; then
        phase_lines+=("  tsan                         skipped (NIXL_SKIP_TSAN=1)")
    else
        want_tsan=1
    fi
    if [ "$want_fuzz" -eq 1 ] || [ "$want_tsan" -eq 1 ]; then
        start_builder "$want_fuzz" "$want_tsan"
    fi
fi

# 2. Every suite but fuzz (in the stress lane: under load, repeated).
if [ "$build_ok" -eq 1 ] && [ "$stress" -eq 1 ]; then
    repeat=${NIXL_STRESS_REPEAT:-3}
    multiplier=${NIXL_STRESS_TIMEOUT_MULTIPLIER:-4}
    hogs=${NIXL_STRESS_HOGS:-$(nproc)}
    banner "stress: meson test -C build --repeat $repeat (all suites except fuzz), $hogs CPU burner(s)"
    # The model test runs three times its normal-lane sequences (docs/testing.md).
    export NIXL_MODEL_SEQUENCES=${NIXL_MODEL_SEQUENCES:-30000}
    start_hogs "$hogs"
    run_meson_test "stress" build --no-suite fuzz --no-rebuild --repeat "$repeat" \
        --timeout-multiplier "$multiplier"
    stop_hogs
elif [ "$build_ok" -eq 1 ]; then
    banner "meson test -C build (all suites except fuzz)"
    run_meson_test "tests" build --no-suite fuzz
fi

# Steps 3 and 3b: the background builds end, then their tests run.
wait_builder

# 3. Fuzzing pass.
if [ "$built_fuzz" -eq 1 ]; then
    banner "meson test -C build-fuzz --suite fuzz"
    run_meson_test "fuzz" build-fuzz --suite fuzz --no-rebuild
fi

# 3b. ThreadSanitizer pass over the tests that run the agent from several threads. Glibc's
# reports that TSan cannot model are suppressed by test/tsan.supp (tests with their own
# TSAN_OPTIONS repeat its entries).
if [ "$built_tsan" -eq 1 ]; then
    # Never an empty list: meson test would run every test of build-tsan.
    if tsan_list=$(tsan_selected) && [ -n "$tsan_list" ]; then
        mapfile -t tsan_tests <<<"$tsan_list"
        banner "meson test -C build-tsan ${tsan_tests[*]}"
        UCX_MEM_EVENTS=no \
            TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$repo/test/tsan.supp" \
            run_meson_test "tsan" build-tsan --no-rebuild "${tsan_tests[@]}"
    else
        echo "test.sh: cannot list the ThreadSanitizer tests of build-tsan"
        phase_lines+=("  tsan                         FAILED (no test list)")
        extra_failed=$((extra_failed + 1))
    fi
fi

# 4. Install check.
if [ "$stress" -eq 1 ]; then
    phase_lines+=("  install check                skipped (--stress)")
elif [ "$build_ok" -eq 1 ]; then
    banner "install check"
    start=$(now)
    if bash "$repo/test/install/check_install.sh" "$repo/build" </dev/null; then
        extra_passed=$((extra_passed + 1))
        record "install check" "ok" "$start"
    else
        extra_failed=$((extra_failed + 1))
        record "install check" "FAILED" "$start"
    fi
else
    extra_failed=$((extra_failed + 1))
    phase_lines+=("  install check                FAILED (build failed)")
fi

# Summary.
if ! counts=$(python3 - "${testlogs[@]}" <<'PY'
import json
import sys

passed = failed = skipped = 0
bad = []
for path in sys.argv[1:]:
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            t = json.loads(line)
            result = t.get("result", "")
            if result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
                bad.append("%s (%s)" % (t.get("name", "?"), result))
print(passed, failed, skipped)
for b in bad:
    print(b)
PY
); then
    counts=$(printf '0 1 0\ntest.sh: cannot read %s' "${testlogs[*]}")
fi
read -r log_passed log_failed log_skipped <<<"$(head -n1 <<<"$counts")"
failed_names=$(tail -n +2 <<<"$counts")

passed=$((log_passed + extra_passed))
failed=$((log_failed + extra_failed))

echo
echo "==== summary ===="
printf '%s\n' "${phase_lines[@]}"
echo "  total                                 $(($(now) - total_start))s"
if [ "$log_skipped" -gt 0 ]; then
    echo "  skipped tests (not counted): $log_skipped"
fi
if [ -n "$failed_names" ]; then
    echo "  failed tests:"
    while IFS= read -r name; do
        echo "    $name"
    done <<<"$failed_names"
fi
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

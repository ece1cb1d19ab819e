#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Installs every build and test dependency of libnixl from Debian 12 (bookworm) packages.
# Idempotent: when everything is already installed it does nothing (no network access).
# Non-interactive: never reads stdin. Runs as root, or through sudo otherwise.
#
# Services shipped by the server packages (prometheus, etcd) are NOT started by the install:
# the tests start their own instances on loopback ports they choose.
set -euo pipefail

packages=(
    # build
    meson
    ninja-build
    pkg-config
    gcc
    g++
    python3
    ccache # meson uses it when present: a second build of the same sources is mostly cache hits
    libtomlplusplus-dev # NIXL_CONFIG_FILE / ~/.nixl.cfg / /etc/nixl.cfg (TOML; headers only used)
    # tests and benchmarks
    libgtest-dev
    libgmock-dev
    libbenchmark-dev
    python3-matplotlib # benchmark/plot.py draws the benchmarks' --json output (plot_smoke)
    liblttng-ust-dev # trace_lttng_bench: the chrome trace file against LTTng-UST
    lttng-tools # trace_lttng_bench starts its own lttng-sessiond and sessions
    babeltrace2 # trace_lttng_bench counts the events that reached the LTTng trace
    # fuzzing (libFuzzer and the sanitizer runtimes)
    clang-14
    libclang-rt-14-dev
    llvm-14 # llvm-symbolizer, for readable sanitizer reports
    # backends
    libucx-dev
    ucx-utils
    libfabric-dev
    libfabric-bin # fi_pingpong, the raw-provider reference of the backend benchmark
    liburing-dev # the POSIX file backend's io_uring engine
    libaio-dev # the POSIX file backend's Linux AIO engine (its default)
    fio # the reference the POSIX backend's benchmark compares against
    # telemetry, exporters and metadata exchange
    libabsl-dev
    libfmt-dev
    prometheus-cpp-dev
    libcurl4-openssl-dev
    libboost-dev
    # the Python package (nixl._api / nixl._bindings) and its tests
    python3-dev
    pybind11-dev
    python3-numpy
    python3-torch # CPU tensors in the Python tests; the package itself never needs torch
    # the pip wheel (pyproject.toml; test py_wheel_venv): built offline with the installed
    # backend (pip install --no-build-isolation .), installed into a venv and uninstalled
    python3-mesonpy # meson-python 0.12, pyproject.toml's build backend
    python3-build # python3 -m build --wheel --no-isolation
    python3-pip # pip install / uninstall in the test's venv
    python3-venv # python3 -m venv (with ensurepip)
    patchelf # meson-python needs it for platform wheels; the wheel's module RUNPATH ($ORIGIN/.libs)
    # servers the end-to-end tests start on loopback
    prometheus
    python3-prometheus-client
    etcd-server
    openssl # the etcd TLS tests make their certificates with the openssl command
    # the two-simulated-hosts test (root only): namespaces, veth, etcd health probe
    iproute2
    util-linux
    curl
)

missing=()
for pkg in "${packages[@]}"; do
    status=$(dpkg-query -W -f='${db:Status-Status}' "$pkg" 2>/dev/null || true)
    if [ "$status" != "installed" ]; then
        missing+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install-deps: all ${#packages[@]} packages already installed"
    exit 0
fi

echo "install-deps: installing ${missing[*]}"

if [ "$(id -u)" -eq 0 ]; then
    as_root=()
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo -n env DEBIAN_FRONTEND=noninteractive)
else
    echo "install-deps: not root and sudo is not available; install as root: ${missing[*]}" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive

# Keep package scripts from starting services (prometheus, etcd) during the install. Only when
# no policy is in place already; ours is removed again on exit.
policy=/usr/sbin/policy-rc.d
policy_added=0
cleanup() {
    if [ "$policy_added" -eq 1 ]; then
        "${as_root[@]}" rm -f "$policy"
    fi
}
trap cleanup EXIT
if [ ! -e "$policy" ]; then
    printf '#!/bin/sh\n# added by libnixl contrib/install-deps.sh\nexit 101\n' |
        "${as_root[@]}" tee "$policy" >/dev/null
    "${as_root[@]}" chmod 755 "$policy"
    policy_added=1
fi

apt_opts=(-y -q -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold
    --no-install-recommends)

# A fresh image has no package lists; retry once on a transient mirror failure.
for attempt in 1 2; do
    if "${as_root[@]}" apt-get update -q </dev/null; then
        break
    fi
    if [ "$attempt" -eq 2 ]; then
        echo "install-deps: apt-get update failed" >&2
        exit 1
    fi
    sleep 5
done

for attempt in 1 2; do
    if "${as_root[@]}" apt-get install "${apt_opts[@]}" "${missing[@]}" </dev/null; then
        break
    fi
    if [ "$attempt" -eq 2 ]; then
        echo "install-deps: apt-get install failed" >&2
        exit 1
    fi
    sleep 5
    "${as_root[@]}" apt-get update -q </dev/null || true
done

echo "install-deps: done"

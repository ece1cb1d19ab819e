#!/usr/bin/env bash
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
#
# Install check: stages `meson install` of a configured and built tree into a temporary
# directory, builds test/install/nixl14_app.cpp against the staged install the way a NIXL 1.4
# user would (c++ -std=c++17 app.cpp $(pkg-config --cflags --libs nixl)), and runs it with
# LD_LIBRARY_PATH into the staged libdir and without NIXL_PLUGIN_DIR, so the TEST plugin has to
# be found in <libdir of libnixl>/plugins. Also checks that the plugin C headers compile as C99,
# and builds and runs test/install/nixlbench_like, a meson project that finds libnixl the way
# NIXL's nixlbench does (find_library 'nixl', 'nixl_build', 'serdes'; headers from
# <prefix>/include).
#
# Usage: test/install/check_install.sh [BUILD_DIR]   (default: <repo>/build)
# Exit status 0 and a last line "install check: passed" on success.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
cxx=${CXX_FOR_INSTALL_CHECK:-c++}
cc=${CC_FOR_INSTALL_CHECK:-cc}

tmp=$(mktemp -d /tmp/nixl-install-check.XXXXXX)
cleanup() {
    rm -rf "$tmp"
}
trap cleanup EXIT

fail() {
    echo "install check: FAILED: $*" >&2
    echo "install check: failed"
    exit 1
}

echo "install check: staging meson install of $build into $tmp/stage"
if ! meson install -C "$build" --destdir "$tmp/stage" >"$tmp/install.log" 2>&1; then
    cat "$tmp/install.log" >&2
    fail "meson install"
fi

# prefix and libdir as configured (libdir may be relative to prefix or absolute).
read -r prefix libdir < <(meson introspect "$build" --buildoptions | python3 -c '
import json, sys
opts = {o["name"]: o["value"] for o in json.load(sys.stdin)}
print(opts["prefix"], opts["libdir"])')
case "$libdir" in
    /*) ;;
    *) libdir="$prefix/$libdir" ;;
esac
stage_prefix="$tmp/stage$prefix"
stage_libdir="$tmp/stage$libdir"
pcdir="$stage_libdir/pkgconfig"

[ -f "$pcdir/nixl.pc" ] || fail "nixl.pc not installed in $libdir/pkgconfig"
[ -f "$stage_prefix/include/nixl.h" ] || fail "nixl.h not installed in $prefix/include"
[ -f "$stage_libdir/plugins/libplugin_TEST.so" ] ||
    fail "libplugin_TEST.so not installed in $libdir/plugins"

# Every installed plugin exports its entry point and nothing else (src/plugins/plugin.map).
for so in "$stage_libdir"/plugins/*.so; do
    extra=$(nm -D --defined-only "$so" | awk '{print $NF}' |
        grep -v -E '^nixl_(backend|telemetry_exporter|trace_backend)_plugin_get$' || true)
    [ -z "$extra" ] || fail "$(basename "$so") exports more than its entry point: $(echo $extra | head -c 300)"
done
echo "install check: installed plugins export only their entry points"

# pkg-config --define-prefix derives the prefix from the .pc location by going two levels up,
# which is right for <prefix>/lib/pkgconfig but not for a multiarch libdir such as
# <prefix>/lib/x86_64-linux-gnu/pkgconfig; then the prefix is given explicitly.
pc() {
    PKG_CONFIG_PATH="$pcdir" pkg-config "$@" nixl
}
flags=$(pc --define-prefix --cflags --libs)
# shellcheck disable=SC2086 # one flag per line
if ! printf '%s\n' $flags | grep -qx -- "-I$stage_prefix/include"; then
    echo "install check: note: pkg-config --define-prefix gave '$flags';" \
        "using --define-variable=prefix=$stage_prefix (libdir $libdir is below prefix/lib)"
    flags=$(pc --define-variable=prefix="$stage_prefix" --cflags --libs)
fi
# shellcheck disable=SC2086 # one flag per line
cflags=$(printf '%s\n' $flags | grep -- '^-I' | tr '\n' ' ' || true)
echo "install check: pkg-config flags: $flags"

app="$tmp/nixl14_app"
# shellcheck disable=SC2086
if ! "$cxx" -std=c++17 -Wall -Wextra "$here/nixl14_app.cpp" $flags -o "$app" \
    >"$tmp/cxx17.log" 2>&1; then
    cat "$tmp/cxx17.log" >&2
    # shellcheck disable=SC2086
    if "$cxx" -std=c++20 -Wall -Wextra "$here/nixl14_app.cpp" $flags -o "$app" \
        >/dev/null 2>&1; then
        fail "the installed headers need C++20; NIXL users build with C++17"
    fi
    fail "nixl14_app does not compile against the installed headers"
fi
if [ -s "$tmp/cxx17.log" ]; then
    echo "install check: warnings building nixl14_app with -std=c++17:"
    cat "$tmp/cxx17.log"
fi
echo "install check: nixl14_app built with -std=c++17"

# The plugin C headers must stay includable from C.
printf '#include "nixl_backend_plugin.h"\n#include "nixl_telemetry_exporter_plugin.h"\n%s\n' \
    '#include "nixl_trace_backend_plugin.h"' >"$tmp/c_abi.c"
printf '#include "nixl_plugin_names.h"\n#include "nixl_trace_context.h"\n' >>"$tmp/c_abi.c"
printf 'int main(void) { return (int)sizeof(nixl_backend_plugin_t) == 0 || %s; }\n' \
    'nixl_be_mem_name(NIXL_BE_MEM_FILE) == 0' >>"$tmp/c_abi.c"
# shellcheck disable=SC2086
if ! "$cc" -std=c99 -Wall -Wextra -pedantic -c "$tmp/c_abi.c" $cflags -o "$tmp/c_abi.o" \
    >"$tmp/c99.log" 2>&1; then
    cat "$tmp/c99.log" >&2
    fail "the installed plugin C headers do not compile as C99"
fi
echo "install check: plugin C headers compile as C99"

# A backend and an exporter written with the C++ SDKs build from the installed headers alone
# (the SDK headers include their internal/ adapters), with hidden visibility as a plugin is.
cat >"$tmp/sdk_plugin.cpp" <<'PLUGIN'
#include "nixl_backend_sdk.h"
#include "nixl_telemetry_exporter_sdk.h"

class installEngine : public nixlBackendEngine {
public:
    explicit installEngine(const nixlBackendInitParams *p) : nixlBackendEngine(p) {}
    static nixl_b_params_t pluginOptions() { return {}; }
    static nixl_mem_list_t pluginMems() { return {DRAM_SEG}; }
    bool supportsRemote() const override { return false; }
    bool supportsLocal() const override { return true; }
    bool supportsNotif() const override { return false; }
    nixl_mem_list_t getSupportedMems() const override { return {DRAM_SEG}; }
    nixl_status_t registerMem(const nixlBlobDesc &, const nixl_mem_t &,
                              nixlBackendMD *&) override { return NIXL_ERR_NOT_SUPPORTED; }
    nixl_status_t deregisterMem(nixlBackendMD *) override { return NIXL_SUCCESS; }
    nixl_status_t connect(const std::string &) override { return NIXL_SUCCESS; }
    nixl_status_t disconnect(const std::string &) override { return NIXL_SUCCESS; }
    nixl_status_t unloadMD(nixlBackendMD *) override { return NIXL_SUCCESS; }
    nixl_status_t prepXfer(const nixl_xfer_op_t &, const nixl_meta_dlist_t &,
                           const nixl_meta_dlist_t &, const std::string &, nixlBackendReqH *&,
                           const nixl_opt_b_args_t *) const override {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    nixl_status_t postXfer(const nixl_xfer_op_t &, const nixl_meta_dlist_t &,
                           const nixl_meta_dlist_t &, const std::string &, nixlBackendReqH *&,
                           const nixl_opt_b_args_t *) const override {
        return NIXL_ERR_NOT_SUPPORTED;
    }
    nixl_status_t checkXfer(nixlBackendReqH *) const override { return NIXL_ERR_NOT_SUPPORTED; }
    nixl_status_t releaseReqH(nixlBackendReqH *) const override { return NIXL_SUCCESS; }
};
NIXL_BACKEND_PLUGIN_DEFINE(installEngine, "INSTALLCHECK", "0.0.1")

class installExporter : public nixlTelemetryExporterBase {
public:
    explicit installExporter(const nixlTelemetryExporterContext &) {}
    nixl_plugin_status_t exportEvents(std::span<const nixl_telemetry_event_abi_t>) noexcept
        override { return NIXL_PLUGIN_SUCCESS; }
};
NIXL_TELEMETRY_EXPORTER_PLUGIN_DEFINE(installExporter, "installcheck", "0.0.1")
PLUGIN
# shellcheck disable=SC2086
if ! "$cxx" -std=c++20 -Wall -Wextra -fPIC -shared -fvisibility=hidden "$tmp/sdk_plugin.cpp" \
    $cflags -o "$tmp/libplugin_INSTALLCHECK.so" >"$tmp/sdk.log" 2>&1; then
    cat "$tmp/sdk.log" >&2
    fail "a plugin using the C++ SDKs does not build against the installed headers"
fi
echo "install check: a C++ SDK plugin builds against the installed headers"

# The app must pick up the staged libnixl, not one installed elsewhere on the machine.
resolved=$(env LD_LIBRARY_PATH="$stage_libdir" ldd "$app" | awk '/libnixl/ {print $3}')
case "$resolved" in
    "$stage_libdir"/*) ;;
    *) fail "nixl14_app resolves libnixl to '$resolved', not to the staged $stage_libdir" ;;
esac

set +e
env -u NIXL_PLUGIN_DIR LD_LIBRARY_PATH="$stage_libdir" "$app" </dev/null >"$tmp/run.log" 2>&1
rc=$?
set -e
cat "$tmp/run.log"
[ "$rc" -eq 0 ] || fail "nixl14_app exited with status $rc"
grep -Eq '^nixl14_app: verified [0-9]+ bytes$' "$tmp/run.log" ||
    fail "nixl14_app did not print its 'verified' line"

# nixlbench-style consumer: a separate meson project that finds libnixl exactly as NIXL's
# nixlbench does (find_library of nixl, nixl_build and serdes in <prefix>/<libdir>, headers from
# <prefix>/include, C++17, -Werror). libnixl_build.so and libserdes.so must be libnixl itself
# (symlinks), not copies, and the program must depend on libnixl.so.1 only.
for alias in nixl_build serdes; do
    so="$stage_libdir/lib$alias.so"
    [ -e "$so" ] || fail "lib$alias.so not installed in $libdir"
    [ "$(readlink -f "$so")" = "$(readlink -f "$stage_libdir/libnixl.so")" ] ||
        fail "lib$alias.so is not libnixl.so (resolves to $(readlink -f "$so"))"
done
case "$libdir" in
    "$prefix"/*) rel_libdir=${libdir#"$prefix"/} ;;
    *) fail "libdir $libdir is not below prefix $prefix; nixlbench looks in <nixl_path>/<libdir>" ;;
esac
nb_build="$tmp/nixlbench_like"
if ! meson setup "$nb_build" "$here/nixlbench_like" -Dnixl_path="$stage_prefix" \
    -Dlibdir="$rel_libdir" >"$tmp/nb_setup.log" 2>&1; then
    cat "$tmp/nb_setup.log" >&2
    fail "nixlbench_like: meson setup (find_library nixl/nixl_build/serdes) failed"
fi
if ! ninja -C "$nb_build" >"$tmp/nb_build.log" 2>&1; then
    cat "$tmp/nb_build.log" >&2
    fail "nixlbench_like does not build against the staged install"
fi
nb_app="$nb_build/nixlbench_like"
needed=$(readelf -d "$nb_app" | awk '/NEEDED/ {print $NF}' | tr -d '[]' |
    { grep -E 'nixl|serdes' || true; } | sort -u | tr '\n' ' ')
[ "$needed" = "libnixl.so.1 " ] || fail "nixlbench_like needs '$needed', expected libnixl.so.1 only"
resolved=$(env LD_LIBRARY_PATH="$stage_libdir" ldd "$nb_app" | awk '/libnixl/ {print $3}')
case "$resolved" in
    "$stage_libdir"/*) ;;
    *) fail "nixlbench_like resolves libnixl to '$resolved', not to the staged $stage_libdir" ;;
esac
set +e
env -u NIXL_PLUGIN_DIR LD_LIBRARY_PATH="$stage_libdir" "$nb_app" </dev/null >"$tmp/nb_run.log" 2>&1
rc=$?
set -e
cat "$tmp/nb_run.log"
[ "$rc" -eq 0 ] || fail "nixlbench_like exited with status $rc"
grep -Eq '^nixlbench_like: verified [0-9]+ bytes$' "$tmp/nb_run.log" ||
    fail "nixlbench_like did not print its 'verified' line"
echo "install check: nixlbench_like (find_library nixl, nixl_build, serdes) built and ran"

# The Python package, when the build has it: the staged site-packages holds nixl/ with the
# module and the .py files; the module's RUNPATH names <libdir>, and with the staged libdir
# first it imports, loads libnixl from there and finds the plugins in <libdir>/plugins.
pymod=$(meson introspect "$build" --installed | python3 -c '
import json, sys
print(next((v for v in json.load(sys.stdin).values() if "/nixl/_bindings" in v), ""))')
if [ -n "$pymod" ]; then
    read -r pyexe < <(meson introspect "$build" --buildoptions | python3 -c '
import json, sys
print({o["name"]: o["value"] for o in json.load(sys.stdin)}["python_path"])')
    pkgdir=$(dirname "$tmp/stage$pymod")
    for f in __init__.py _api.py _utils.py logging.py; do
        [ -f "$pkgdir/$f" ] || fail "nixl/$f not installed next to $(basename "$pymod")"
    done
    readelf -d "$tmp/stage$pymod" | grep -q "R.*PATH.*\[$libdir\]" ||
        fail "$(basename "$pymod") does not carry RUNPATH $libdir"
    if ! env -u NIXL_PLUGIN_DIR PYTHONPATH="$(dirname "$pkgdir")" LD_LIBRARY_PATH="$stage_libdir" \
        "$pyexe" -c '
import sys
import nixl, nixl._api, nixl._bindings as b
from nixl import nixl_agent, nixl_agent_config, nixl_thread_sync_t
from nixl._utils import malloc_passthru, free_passthru
assert b.__file__.startswith(sys.argv[1]), b.__file__
free_passthru(malloc_passthru(4096))
agent = b.nixlAgent("install-check", b.nixlAgentConfig())
assert "TEST" in agent.getAvailPlugins(), agent.getAvailPlugins()
print("install check: python: imported", b.__file__)
' "$pkgdir" >"$tmp/py.log" 2>&1; then
        cat "$tmp/py.log" >&2
        fail "the installed Python package does not import or find its plugins"
    fi
    cat "$tmp/py.log"
fi

echo "install check: passed"

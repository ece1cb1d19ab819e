#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""The pip wheel end to end (issue 34): build, install into a fresh venv, run, uninstall.

1. `python3 -m build --wheel --no-isolation` builds the wheel with meson-python (pyproject.toml)
   in NIXL_WHEEL_BUILDDIR with NIXL_WHEEL_SETUP_ARGS (the test build's own optimisation and
   debug flags, so a warm ccache serves the compiles), into a temporary directory;
2. `python3 -m venv --system-site-packages` (numpy and torch come from Debian) and
   `pip install --no-index --no-deps` the wheel;
3. from a directory outside the source tree, with NIXL_PLUGIN_DIR, LD_LIBRARY_PATH and
   PYTHONPATH unset: the venv imports its own `nixl` and loads the wheel's libnixl and plugins;
   examples/python/two_peers.py and connector_flow.py succeed; NIXL_PLUGIN_DIR still wins;
4. `pip uninstall -y nixl` removes every file the wheel installed.

Exits 77 (meson's skip) with one line when python3-mesonpy, python3-build, python3-venv or
patchelf is missing. Run by meson (test/python/wheel/meson.build), which sets the variables.
"""

import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile

SRC = pathlib.Path(__file__).resolve().parents[3]
# What a child must not inherit: the wheel has to work without any of them.
STRIPPED = ("NIXL_PLUGIN_DIR", "LD_LIBRARY_PATH", "PYTHONPATH", "PYTHONHOME")


def skip_reason():
    for mod, pkg in (("mesonpy", "python3-mesonpy"), ("build", "python3-build"),
                     ("ensurepip", "python3-venv"), ("pip", "python3-pip")):
        if importlib.util.find_spec(mod) is None:
            return f"{sys.executable} cannot import {mod} ({pkg})"
    if shutil.which("patchelf") is None:
        return "patchelf not found (meson-python needs it for platform wheels)"
    return None


def run(cmd, what, **kw):
    r = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, **kw)
    if r.returncode != 0:
        print(r.stdout)
        sys.exit(f"FAIL: {what} exited {r.returncode}: {' '.join(map(str, cmd))}")
    return r.stdout


def clean_env(**extra):
    env = {k: v for k, v in os.environ.items() if k not in STRIPPED}
    env.update(extra)
    return env


# Run by the venv's python: where nixl, its module, libnixl and the plugins came from.
PROBE = r"""
import sys
import nixl, nixl._bindings
from nixl._api import nixl_agent
agent = nixl_agent("probe")
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "libnixl" in l})
print(nixl.__file__)
print(nixl._bindings.__file__)
print(",".join(libs))
print(",".join(agent.get_plugin_list()))
"""


def main():
    reason = skip_reason()
    if reason:
        print(f"SKIP: {reason}")
        return 77
    builddir = os.environ["NIXL_WHEEL_BUILDDIR"]
    setup_args = os.environ.get("NIXL_WHEEL_SETUP_ARGS", "").split()
    # meson-python 0.12 with a builddir runs `meson setup --reconfigure` whenever its native
    # file in the source tree is unchanged, which fails on a missing build directory, and a
    # plain `meson setup` (ignoring changed args) otherwise. Start both afresh unless both exist.
    native = SRC / ".mesonpy-native-file.ini"
    if not (native.exists() and (pathlib.Path(builddir) / "meson-private" / "coredata.dat").exists()):
        shutil.rmtree(builddir, ignore_errors=True)
        native.unlink(missing_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(prefix="nixl-wheel-"))
    try:
        dist = tmp / "dist"
        cmd = [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", dist,
               "-C", f"builddir={builddir}"]
        for a in setup_args:
            cmd += ["-C", f"setup-args={a}"]
        run(cmd, "python3 -m build", cwd=SRC, env=clean_env())
        wheels = list(dist.glob("nixl-*.whl"))
        assert len(wheels) == 1, f"expected one wheel in {dist}: {wheels}"
        print(f"built {wheels[0].name} ({wheels[0].stat().st_size} bytes)")

        venv = tmp / "venv"
        run([sys.executable, "-m", "venv", "--system-site-packages", venv], "python3 -m venv")
        py = venv / "bin" / "python"
        run([py, "-m", "pip", "install", "--no-index", "--no-deps", wheels[0]], "pip install",
            env=clean_env())
        site = pathlib.Path(run([py, "-c", "import sysconfig; print(sysconfig.get_path('platlib'))"],
                                "sysconfig").strip())
        pkg = site / "nixl"
        record = next(site.glob("nixl-*.dist-info")) / "RECORD"
        installed = [site / line.split(",")[0] for line in record.read_text().splitlines() if line]
        assert (pkg / ".libs" / "libnixl.so").is_file(), "libnixl.so is not in the package"

        # Outside the source tree: the scripts' directory must not provide a nixl either.
        work = tmp / "run"
        work.mkdir()
        for ex in ("two_peers.py", "connector_flow.py"):
            shutil.copy(SRC / "examples" / "python" / ex, work / ex)

        out = run([py, "-c", PROBE], "import from the venv", cwd=work, env=clean_env())
        init, mod, libs, plugins = out.strip().splitlines()[-4:]
        assert pathlib.Path(init).parent == pkg, f"imported {init}, not the venv's {pkg}"
        assert pathlib.Path(mod).parent == pkg, f"module {mod} is not the venv's"
        assert libs == str(pkg / ".libs" / "libnixl.so"), f"loaded libnixl {libs!r}"
        for p in ("UCX", "TEST"):
            assert p in plugins.split(","), f"plugin {p} not found from the wheel: {plugins}"
        print(f"venv nixl: {pkg}, plugins {plugins}")

        # NIXL_PLUGIN_DIR keeps its meaning and wins over the package's directory.
        empty = tmp / "no-plugins"
        empty.mkdir()
        out = run([py, "-c", "import nixl._bindings as b; "
                   "print(b.nixlAgent('e', b.nixlAgentConfig(False)).getAvailPlugins())"],
                  "NIXL_PLUGIN_DIR probe", cwd=work, env=clean_env(NIXL_PLUGIN_DIR=str(empty)))
        assert out.strip().splitlines()[-1] == "[]", f"NIXL_PLUGIN_DIR ignored: {out}"

        for ex in ("two_peers.py", "connector_flow.py"):
            run([py, work / ex], ex, cwd=work, env=clean_env())
            print(f"{ex}: ok")

        run([py, "-m", "pip", "uninstall", "-y", "nixl"], "pip uninstall", env=clean_env())
        left = [str(f) for f in installed if f.exists()]
        assert not left, f"left after pip uninstall: {left}"
        assert not pkg.exists(), f"{pkg} left after pip uninstall"
        print(f"uninstalled: {len(installed)} files removed")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

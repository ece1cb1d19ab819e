#!/usr/bin/env python3
# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""Two simulated hosts: two agents in separate network, pid, mount, IPC and UTS namespaces,
joined by a veth pair, exchange metadata (--metadata p2p: the initiator's P2P listener; etcd: a
real etcd server running inside the initiator's namespaces, reached over the veth) and move
verified data (WRITE and READ with notifications) through UCX over tcp on the veth.

Each side is `unshare --net --pid --mount --ipc --uts --fork --kill-child --mount-proc`, which
mounts a private tmpfs on /dev/shm, sets its own hostname and then runs two_hosts_peer as pid 1
of its pid namespace. The namespaces are anonymous: they, and the veth pair created inside them,
disappear with their processes, so nothing outside them is created, changed or addressed. The
veth is created from inside namespace A with its peer end placed directly into namespace B; the
addresses (10.77.0.1/24, 10.77.0.2/24) exist only on it.

Readiness goes through pipes: each side prints NS_READY after its namespaces exist, the driver
configures the link and waits until both ends report LOWER_UP, the initiator prints LISTENING
once its listener is bound, and each peer waits for a line on stdin before each step (EOF: the
driver died, the peer exits). Cleanup (SIGKILL of every process left, which takes the namespaces
and the veth with it) runs however the test ends.

Asserts, besides both peers' own byte checks: the UCX backend of each agent logged a connection
to the other whose data path is ucp_put/get because the peer is "on another host or pid
namespace" (the same-host direct path was not used), with tcp lanes; no veth is left in the
caller's namespace afterwards.

--initiator-uid UID (with --share-pid-ns) runs the initiator as another user: its cma probe of
the root-owned target is refused, so it must use ucp_put/get with the reason cma_denied, while
the target (root may read any process) takes the direct path.

Telemetry (issue 34): each side exports to a BUFFER ring in the log directory; after the run the
initiator's ring, read with examples/python/telemetry_reader.py, must hold exactly one fallback
marker, UCX (or LIBFABRIC) falling back to ucp (tcp) with the reason peer_other_host, and bytes
on that path; in the shared-pid-namespace control no fallback and bytes on UCX direct_cma.

--backend LIBFABRIC runs the same over the LIBFABRIC backend (FI_TCP_IFACE = the side's veth)
and asserts instead that each agent's LIBFABRIC DEBUG line says tcp;ofi_rxm was chosen for the
other because it is on another host (shm is never used across IPC namespaces).

Exit 0 pass, 1 fail, 77 skip (not root, or namespaces cannot be created here; reason printed).
"""

import argparse
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

VETH = ("nxveth-a", "nxveth-b")
ADDR = ("10.77.0.1", "10.77.0.2")
PORT = 18515
ETCD_PORT = 2379
HOSTNAMES = ("nixl-host-a", "nixl-host-b")


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(77)


SHARE_PID_NS = False  # --share-pid-ns: the check of the check (see main)
INITIATOR_UID = None  # --initiator-uid: with --share-pid-ns, the cma_denied case (see main)


def side_command(hostname, argv):
    """unshare into fresh namespaces, make them look like another host, print NS_READY, exec."""
    # A sysfs mounted from inside the new network namespace shows its devices (UCX lists
    # /sys/class/net); the inherited one shows the caller's.
    script = ('mount -t tmpfs -o mode=1777 nixl-two-hosts /dev/shm && '
              'mount -t sysfs nixl-two-hosts /sys && hostname "$0" && '
              'echo NS_READY && exec "$@"')
    pid_ns = [] if SHARE_PID_NS else ["--pid", "--mount-proc"]
    return ["unshare", "--net", *pid_ns, "--mount", "--ipc", "--uts", "--fork", "--kill-child",
            "--propagation", "private", "--", "/bin/sh", "-c", script, hostname, *argv]


class Side:
    """One namespace set with one peer in it; stdout lines are read into a queue."""

    def __init__(self, index, role, peer, peer_args, workdir, env, uid=None):
        self.index = index
        self.role = role
        self.err_path = os.path.join(workdir, f"{role}.stderr")
        self.err = open(self.err_path, "wb")
        # The namespaces are set up as root; the peer itself may then run as another user.
        as_user = [] if uid is None else ["setpriv", f"--reuid={uid}", f"--regid={uid}",
                                          "--clear-groups", "--"]
        cmd = side_command(HOSTNAMES[index], [*as_user, peer, role, *peer_args])
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.err, env=env)
        self.lines = queue.Queue()
        self.out = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode(errors="replace").rstrip("\n")
            self.out.append(line)
            self.lines.put(line)
        self.lines.put(None)

    def wait_line(self, want, deadline):
        while True:
            try:
                line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"{self.role}: no '{want}' before the deadline")
            if line is None:
                raise RuntimeError(f"{self.role}: exited before printing '{want}'")
            if line == want:
                return

    def go(self):
        self.proc.stdin.write(b"go\n")
        self.proc.stdin.flush()

    def inner_pid(self):
        """The peer's pid as the caller sees it (pid 1 inside its namespace)."""
        with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
            return int(f.read().split()[0])

    def stderr_text(self):
        if not self.err.closed:
            self.err.flush()
        with open(self.err_path, "rb") as f:
            return f.read().decode(errors="replace")

    def kill(self):
        """SIGKILLs the peer (pid 1 of its namespace: everything in it dies, the network
        namespace and the veth go), lets unshare reap it and exit, then closes the log."""
        if self.proc.poll() is None:
            try:
                os.kill(self.inner_pid(), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                pass  # not started yet, or already gone
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
        if self.proc.poll() is None:
            # unshare's child has PR_SET_PDEATHSIG=SIGKILL (--kill-child): it dies with it.
            self.proc.kill()
        self.proc.wait()
        self.err.close()


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}: {r.stdout.strip()}")
    return r.stdout


def in_net(side, *cmd):
    return run(["nsenter", "-t", str(side.proc.pid), "-n", "--", *cmd])


def configure(a, b, deadline):
    # Both ends are created from inside A; the peer end goes straight into B's namespace.
    in_net(a, "ip", "link", "add", VETH[0], "type", "veth", "peer", "name", VETH[1],
           "netns", str(b.proc.pid))
    for side in (a, b):
        i = side.index
        in_net(side, "ip", "link", "set", "lo", "up")
        in_net(side, "ip", "addr", "add", f"{ADDR[i]}/24", "dev", VETH[i])
        in_net(side, "ip", "link", "set", VETH[i], "up")
    # Carrier is up once both ends are: wait for it (a condition, polled with a deadline).
    for side in (a, b):
        while "LOWER_UP" not in in_net(side, "ip", "-o", "link", "show", VETH[side.index]):
            if time.monotonic() > deadline:
                raise RuntimeError(f"{VETH[side.index]} never reported LOWER_UP")
            time.sleep(0.01)


def start_etcd(side, workdir, deadline):
    """etcd in all of side's namespaces (it dies with them), serving on side's veth address."""
    ip = ADDR[side.index]
    log = open(os.path.join(workdir, "etcd.log"), "wb")
    cmd = ["nsenter", "-t", str(side.inner_pid()), "-n", "-p", "-m", "-i", "-u", "--",
           "etcd", "--name", "two-hosts", "--data-dir", os.path.join(workdir, "etcd"),
           "--listen-client-urls", f"http://{ip}:{ETCD_PORT}",
           "--advertise-client-urls", f"http://{ip}:{ETCD_PORT}",
           "--listen-peer-urls", "http://127.0.0.1:2380",
           "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
           "--initial-cluster", "two-hosts=http://127.0.0.1:2380"]
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
    log.close()
    # Ready once /health says true (a leader): polled from inside the namespace, with a deadline.
    while True:
        r = subprocess.run(["nsenter", "-t", str(side.proc.pid), "-n", "--", "curl", "-sf",
                            "--max-time", "5", f"http://{ip}:{ETCD_PORT}/health"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if r.returncode == 0 and '"health":"true"' in r.stdout.replace(" ", ""):
            return proc
        if proc.poll() is not None:
            raise RuntimeError(f"etcd exited with {proc.returncode}; see "
                               f"{os.path.join(workdir, 'etcd.log')}")
        if time.monotonic() > deadline:
            raise RuntimeError("etcd did not become healthy before the deadline")
        time.sleep(0.05)


CONN_RE = re.compile(r"UCX connection to (\S+) \(pid \d+(, same host)?\): data path ([^\n]*)")
LANE_RE = re.compile(r"UCX lane \d+ to (\S+) on \S+: transports (.*), error handling")


LF_CONN_RE = re.compile(r"LIBFABRIC connection to (\S+) over (\S+): ([^\n]*)")
BACKEND = "UCX"  # --backend


def check_lf_paths(side, remote, failures):
    """LIBFABRIC: one DEBUG line per connection; tcp;ofi_rxm, because of another host."""
    conns = [m for m in LF_CONN_RE.finditer(side.stderr_text()) if m.group(1) == remote]
    if not conns:
        failures.append(f"{side.role}: no 'LIBFABRIC connection to {remote}' line in its log")
    for m in conns:
        if m.group(2) != "tcp;ofi_rxm" or "another host" not in m.group(3):
            failures.append(f"{side.role}: connection to {remote} did not choose tcp;ofi_rxm "
                            f"for another host: {m.group(0)}")
    return conns, [f"tcp;ofi_rxm on {VETH[side.index]}"]


def check_paths(side, remote, failures):
    if BACKEND == "LIBFABRIC":
        return check_lf_paths(side, remote, failures)
    text = side.stderr_text()
    conns = [m for m in CONN_RE.finditer(text) if m.group(1) == remote]
    if not conns:
        failures.append(f"{side.role}: no 'UCX connection to {remote}' line in its log")
    if SHARE_PID_NS and INITIATOR_UID is not None and side.role == "initiator":
        # Same host, but the target is another user's process: the probe is refused.
        for m in conns:
            if m.group(2) is None or not m.group(3).startswith(
                    "ucp_put/get (cma probe failed: Operation not permitted)"):
                failures.append(f"{side.role}: connection to {remote} of another user did not "
                                f"fall back for a refused cma probe: {m.group(0)}")
        return conns, ["(ucp, cma denied)"]
    if SHARE_PID_NS:
        # The control: one kernel and one pid namespace is one host to the backend, whatever
        # the network namespaces; it must take the direct path.
        for m in conns:
            if not m.group(2) or not m.group(3).startswith("direct cma"):
                failures.append(f"{side.role}: connection to {remote} in a shared pid "
                                f"namespace did not take the direct path: {m.group(0)}")
        return conns, ["(direct)"]
    for m in conns:
        if m.group(2) or not m.group(3).startswith(
                "ucp_put/get (peer on another host or pid namespace)"):
            failures.append(f"{side.role}: connection to {remote} did not take the "
                            f"between-hosts path: {m.group(0)}")
    lanes = [m.group(2) for m in LANE_RE.finditer(text) if m.group(1) == remote]
    if not lanes:
        failures.append(f"{side.role}: no 'UCX lane ... to {remote}' line in its log")
    # e.g. "tcp/nxveth-a(am,am_bw#0,keepalive,wireup)": transport/device(roles), one a lane
    want = f"tcp/{VETH[side.index]}"
    for tl in lanes:
        devices = {t.split("(")[0] for t in tl.split()}
        if devices != {want}:
            failures.append(f"{side.role}: lane to {remote} uses '{tl}', expected {want} only")
    return conns, lanes


def check_telemetry(workdir, failures):
    """The initiator's BUFFER ring: its path words say which path its bytes moved on and why
    the connection fell back (telemetry_reader.py prints them as path=... / fallback=...)."""
    examples = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..",
                            "examples", "python")
    sys.path.insert(0, examples)
    sys.dont_write_bytecode = True  # no __pycache__ in the source tree
    import telemetry_reader  # pylint: disable=import-outside-toplevel

    ring = os.path.join(workdir, "telemetry-initiator", "initiator")
    words = []
    try:
        with telemetry_reader.RingReader(ring) as reader:
            while True:
                batch = reader.pop_events(4096)
                if not batch:
                    break
                words += [telemetry_reader.path_suffix(w).strip() for _, w, _ in batch]
    except (OSError, telemetry_reader.RingFileError) as e:
        failures.append(f"initiator: cannot read its telemetry ring {ring}: {e}")
        return "no ring"
    fallbacks = sorted(w for w in words if w.startswith("fallback="))
    paths = sorted({w for w in words if w.startswith("path=")})
    if SHARE_PID_NS and INITIATOR_UID is not None:
        want_fallbacks, want_path = ["fallback=UCX/ucp reason=cma_denied"], "path=UCX/ucp"
    elif SHARE_PID_NS:
        want_fallbacks, want_path = [], "path=UCX/direct_cma"
    elif BACKEND == "LIBFABRIC":
        want_fallbacks = ["fallback=LIBFABRIC/tcp reason=peer_other_host"]
        want_path = "path=LIBFABRIC/tcp"
    else:
        want_fallbacks = ["fallback=UCX/ucp reason=peer_other_host"]
        want_path = "path=UCX/ucp"
    if fallbacks != want_fallbacks:
        failures.append(f"initiator telemetry: fallbacks {fallbacks}, want {want_fallbacks}")
    if paths != [want_path]:
        failures.append(f"initiator telemetry: bytes on {paths}, want [{want_path!r}]")
    return f"telemetry: {', '.join(fallbacks) or 'no fallback'}; {', '.join(paths)}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--peer", required=True, help="two_hosts_peer executable")
    ap.add_argument("--metadata", choices=("p2p", "etcd"), default="p2p")
    ap.add_argument("--timeout", type=float, default=240.0)
    ap.add_argument("--keep", action="store_true", help="keep the log directory")
    ap.add_argument("--share-pid-ns", action="store_true",
                    help="the control: both sides stay in the caller's pid namespace (own "
                         "network, mount, IPC, UTS namespaces); the backend must then see one "
                         "host and take the same-host direct path (cma), which is asserted")
    ap.add_argument("--backend", choices=("UCX", "LIBFABRIC"), default="UCX")
    ap.add_argument("--initiator-uid", type=int,
                    help="with --share-pid-ns: the initiator runs as this user, the target as "
                         "root, so the initiator's cma probe of the target is refused: it must "
                         "fall back to ucp with the reason cma_denied (the target, root, still "
                         "takes the direct path)")
    args = ap.parse_args()
    global SHARE_PID_NS, BACKEND, INITIATOR_UID
    SHARE_PID_NS = args.share_pid_ns
    INITIATOR_UID = args.initiator_uid
    if INITIATOR_UID is not None and (not SHARE_PID_NS or args.backend != "UCX"):
        ap.error("--initiator-uid needs --share-pid-ns and the UCX backend")
    BACKEND = args.backend

    # meson's timeout sends SIGTERM: run the cleanup below instead of dying without it.
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))
    if os.geteuid() != 0:
        skip("needs root to create network/pid/mount namespaces (run the test suite as root)")
    tools = ("unshare", "nsenter", "ip") + (("etcd", "curl") if args.metadata == "etcd" else ()) \
        + (("setpriv",) if INITIATOR_UID is not None else ())
    for tool in tools:
        if shutil.which(tool) is None:
            skip(f"'{tool}' is not installed (util-linux / iproute2 / etcd-server / curl)")
    # The same setup with `true` as the peer: what fails here (e.g. an unprivileged container
    # refusing namespaces or mounts) is an environment limit, reported as a skip.
    probe = subprocess.run(side_command("nixl-probe", ["true"]), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
    if probe.returncode != 0:
        skip(f"cannot create namespaces here: {probe.stdout.strip()}")
    if INITIATOR_UID is not None:
        # The other user must be able to run the peer (usage: exit 2) and load the UCX plugin;
        # a build tree under a private home directory is an environment limit, not a failure.
        plugin = os.path.join(os.environ.get("NIXL_PLUGIN_DIR", ""), "libplugin_UCX.so")
        probe = subprocess.run(["setpriv", f"--reuid={INITIATOR_UID}",
                                f"--regid={INITIATOR_UID}", "--clear-groups", "--", "/bin/sh",
                                "-c", 'test -r "$0" || exit 9; "$1"', plugin, args.peer],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if probe.returncode != 2:
            skip(f"uid {INITIATOR_UID} cannot run {args.peer} or read {plugin} (exit "
                 f"{probe.returncode}): the build tree is not readable by other users")

    workdir = tempfile.mkdtemp(prefix="nixl-two-hosts-")
    sides = []
    etcd = None
    failures = []
    start = time.monotonic()
    deadline = start + args.timeout
    phases = []  # (what, seconds since start): printed, to tell a slow phase from a stuck one

    def phase(what):
        phases.append(f"{what} {time.monotonic() - start:.2f}s")
    try:
        peer_args = [ADDR[0], str(PORT)] if args.metadata == "p2p" else \
            [ADDR[0], str(ETCD_PORT), "etcd"]
        for i, role in enumerate(("initiator", "target")):
            env = dict(os.environ)
            env["UCX_NET_DEVICES"] = VETH[i]  # the test environment says lo; here: the veth
            env["NIXL_LOG_LEVEL"] = "DEBUG"   # the backend's path decision is asserted from it
            env["TWO_HOSTS_BACKEND"] = args.backend
            env["FI_TCP_IFACE"] = VETH[i]     # libfabric's IP providers: the veth, not lo
            # The path words of the telemetry events are asserted from the initiator's ring.
            env["NIXL_TELEMETRY_ENABLE"] = "y"
            env["NIXL_TELEMETRY_EXPORTER"] = "BUFFER"
            env["NIXL_TELEMETRY_DIR"] = os.path.join(workdir, f"telemetry-{role}")
            os.makedirs(env["NIXL_TELEMETRY_DIR"], exist_ok=True)
            uid = INITIATOR_UID if role == "initiator" else None
            if uid is not None:
                # The other user creates its ring here: its own directory (0700, its owner),
                # reachable through the log directory (mkdtemp made it 0700; 0711 lets it pass
                # without listing it).
                os.chmod(workdir, 0o711)
                os.chown(env["NIXL_TELEMETRY_DIR"], uid, uid)
                os.chmod(env["NIXL_TELEMETRY_DIR"], 0o700)
            sides.append(Side(i, role, args.peer, peer_args, workdir, env, uid))
        a, b = sides
        for side in sides:
            side.wait_line("NS_READY", deadline)
        phase("namespaces")
        configure(a, b, deadline)
        phase("veth up")
        if args.metadata == "etcd":
            etcd = start_etcd(a, workdir, deadline)
            phase("etcd healthy")
        a.go()
        a.wait_line("LISTENING", deadline)
        phase("initiator ready")
        b.go()
        # The target stays until the initiator is done: its exit takes the veth pair, hence the
        # initiator's address (etcd's), with its network namespace; an initiator still talking
        # to etcd then (its lease revoke at exit) would wait for an address that is gone.
        released = False
        # Until both exited; the first failure ends the other side too (no 120 s wait).
        while any(s.proc.poll() is None for s in sides):
            if not released and a.proc.poll() is not None:
                released = True
                try:
                    b.go()
                except OSError:
                    pass  # the target is gone already
            if any(s.proc.poll() not in (None, 0) for s in sides):
                break
            if time.monotonic() > deadline:
                failures.append("a peer was still running at the deadline")
                break
            # Both may have exited since the loop's check: then there is nothing to wait for.
            alive = next((s for s in sides if s.proc.poll() is None), None)
            if alive is not None:
                try:
                    alive.proc.wait(timeout=0.2)
                except subprocess.TimeoutExpired:
                    pass
            for side in sides:
                if side.proc.poll() is not None and not any(
                        p.startswith(side.role) for p in phases):
                    phase(f"{side.role} exited")
        phase("both exited")
        for side in sides:
            # Every line the peer printed is read before its output is checked (EOF: unshare
            # and the peer, the pipe's only writers, are gone).
            if side.proc.poll() is not None:
                side.reader.join(timeout=max(1.0, deadline - time.monotonic()))
        for side, ok in ((a, "INITIATOR OK"), (b, "TARGET OK")):
            rc = side.proc.poll()
            if rc != 0 or ok not in side.out:
                failures.append(f"{side.role}: exit {rc}, output {side.out}")
        conns_a, lanes_a = check_paths(a, "target", failures)
        conns_b, lanes_b = check_paths(b, "initiator", failures)
        telemetry = check_telemetry(workdir, failures)
    except RuntimeError as e:
        failures.append(str(e))
    finally:
        for side in sides:
            side.kill()
        if etcd is not None:
            # Killed with the initiator's pid namespace; nsenter returns then.
            try:
                etcd.wait(timeout=60)
            except subprocess.TimeoutExpired:
                etcd.kill()
                etcd.wait()
                failures.append("etcd outlived the initiator's pid namespace")
    # Nothing may be left in the caller's namespace.
    for name in VETH:
        if subprocess.run(["ip", "link", "show", name], stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0:
            failures.append(f"{name} exists in the caller's network namespace")

    print("phases: " + ", ".join(phases))
    if failures:
        for side in sides:
            print(f"--- {side.role} stdout: {side.out}")
            print(f"--- {side.role} stderr (last 60 lines):")
            with open(side.err_path, errors="replace") as f:
                print("\n".join(f.read().splitlines()[-60:]))
        for f in failures:
            print(f"FAIL: {f}")
        print(f"logs kept in {workdir}")
        return 1
    for side, conns, lanes in ((a, conns_a, lanes_a), (b, conns_b, lanes_b)):
        print(f"{side.role}: {conns[0].group(0)}; lanes: {', '.join(lanes)}")
    print(f"initiator {telemetry}")
    if INITIATOR_UID is not None:
        over = "ucp, the initiator another user (cma denied)"
    else:
        over = "the direct path (shared pid namespace)" if SHARE_PID_NS else BACKEND + " tcp"
    print(f"PASS: WRITE and READ of 8 MiB verified between two namespaces over {over}, "
          f"metadata through {'etcd in the initiator namespaces' if etcd else 'P2P'}")
    if args.keep:
        print(f"logs kept in {workdir}")
    else:
        shutil.rmtree(workdir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

# SPDX-FileCopyrightText: Copyright (c) 2026 libnixl contributors
# SPDX-License-Identifier: Apache-2.0
"""nixl._api: NIXL's high-level Python API (``nixl_agent``, ``nixl_agent_config``) over libnixl.

Source-compatible with NIXL 1.4's ``nixl._api``; docs/python.md lists every call and the few
places where we differ. Tensors are recognised through ``sys.modules`` (this module never imports
torch), so a process without torch pays nothing for it.

Thread safety: one ``nixl_agent`` may be used from many Python threads at once. The bindings
run an agent asked for NONE as RW and guard each handle; the Python-side tables (``backends``,
``notifs``, the keep-alive map) are guarded by one lock.
"""

import enum
import pickle
import sys
import threading
from typing import Optional

import numpy as np

import nixl._bindings as nixlBind
from nixl import __all__ as _PACKAGE_ALL
from nixl.logging import get_logger

logger = get_logger()

# The package's list (nixl/__init__.py), written once there: the package cannot import this
# module to read it without losing its lazy import.
__all__ = list(_PACKAGE_ALL)

DEFAULT_COMM_PORT = nixlBind.DEFAULT_COMM_PORT

# A backend handle is the pointer value the bindings return.
nixl_backend_handle = int

# Key under which num_threads reaches each backend created at agent start.
_THREAD_KEYS = {
    "UCX": "num_threads",
    "OBJ": "num_threads",
    "LIBFABRIC": "num_threads",
    "GDS_MT": "thread_count",
    "UCCL": "num_cpus",
}

_INIT_AGENT_NAMES = ("NIXL_INIT_AGENT", "", b"NIXL_INIT_AGENT", b"")


class nixl_thread_sync_t(enum.Enum):
    """Locking discipline of an agent, as NIXL's: each ``.value`` is the ``nixl._bindings``
    member, so ``nixlBind.nixlAgentConfig(..., m.value)`` takes it as is. DEFAULT is an alias of
    NONE (equal values, as in C++), so iteration yields NONE, STRICT and RW."""

    NIXL_THREAD_SYNC_NONE = nixlBind.NIXL_THREAD_SYNC_NONE
    NIXL_THREAD_SYNC_STRICT = nixlBind.NIXL_THREAD_SYNC_STRICT
    NIXL_THREAD_SYNC_RW = nixlBind.NIXL_THREAD_SYNC_RW
    NIXL_THREAD_SYNC_DEFAULT = nixlBind.NIXL_THREAD_SYNC_DEFAULT


# The short names earlier libnixl releases used, kept for their callers. Set after the class is
# made so they are plain class attributes: __members__ and name lookup (nixl_thread_sync_t[...])
# stay exactly NIXL's.
for _short in ("NONE", "STRICT", "RW", "DEFAULT"):
    setattr(nixl_thread_sync_t, _short, getattr(nixl_thread_sync_t, "NIXL_THREAD_SYNC_" + _short))
del _short


class nixl_agent_config:
    """Configuration of a nixl_agent; arguments may be passed positionally.

    sync_mode None means STRICT with the listener on, otherwise NONE (as NIXL). The bindings run
    a NONE agent as RW (see docs/python.md), so one agent is safe from many Python threads.
    """

    def __init__(
        self,
        enable_prog_thread: bool = True,
        enable_listen_thread: bool = False,
        listen_port: int = DEFAULT_COMM_PORT,
        capture_telemetry: bool = False,
        num_threads: int = 0,
        backends: list = ["UCX"],  # noqa: B006 (NIXL's signature; never mutated)
        sync_mode: Optional[nixl_thread_sync_t] = None,
    ):
        if sync_mode is not None and not isinstance(sync_mode, nixl_thread_sync_t):
            raise TypeError(
                f"sync_mode must be a nixl_thread_sync_t or None, not {type(sync_mode).__name__}"
            )
        self.enable_pthread = enable_prog_thread
        self.enable_listen = enable_listen_thread
        self.port = listen_port
        self.capture_telemetry = capture_telemetry
        self.num_threads = num_threads
        self.backends = list(backends)
        self.sync_mode = sync_mode


def _torch_tensor_type():
    torch = sys.modules.get("torch")
    return getattr(torch, "Tensor", None) if torch is not None else None


def _tensor_desc(t, with_meta):
    dev = t.get_device()
    nbytes = t.numel() * t.element_size()
    if with_meta:
        return (t.data_ptr(), nbytes, max(dev, 0), "")
    return (t.data_ptr(), nbytes, max(dev, 0))


def _tensor_mem(t):
    return nixlBind.DRAM_SEG if t.get_device() == -1 else nixlBind.VRAM_SEG


class _handle_base(nixlBind._handle):
    """Base of the handle classes. The slots _handle (the int the bindings gave out), _agent (the
    bindings agent: a handle keeps it alive) and _released live in the C base
    (nixl._bindings._handle), which also releases an unreleased handle when it is collected: no
    Python-level __del__ runs per transfer."""

    __slots__ = ()
    _release_call = ""

    def __repr__(self):
        return f"{type(self).__name__}(0x{self._handle:x}, released={self._released})"

    def release(self):
        """Release the native object; a second call does nothing."""
        if not self._released:
            getattr(self._agent, self._release_call)(self._handle)
            self._released = True

    def _release_failed(self):
        # Called by the C base when the release at collection raised (best effort: interpreter
        # shutdown or an active transfer).
        try:
            logger.warning("%r: release at finalisation failed", self)
        except Exception:
            pass


class nixl_prepped_dlist_handle(_handle_base):
    """A prepared descriptor list (prep_xfer_dlist); no __eq__/__len__/__bool__ on purpose."""

    __slots__ = ()
    _release_call = "releasedDlistH"


class nixl_xfer_handle(_handle_base):
    """A transfer request; release() of an active transfer cancels it, or raises
    nixlRepostActiveError and leaves the handle live. No __eq__/__len__/__bool__ on purpose."""

    __slots__ = ()
    _release_call = "releaseXferReq"


def _raw(h):
    return h._handle if isinstance(h, _handle_base) else int(h)


def _name_key(name):
    # The bindings decode agent names (dict keys) the same way.
    return (name.decode("utf-8", "surrogateescape") if isinstance(name, (bytes, bytearray))
            else name)


def _as_bytes(msg):
    return msg.encode() if isinstance(msg, str) else bytes(msg)


class nixl_agent(nixlBind._agent_base):
    """A NIXL agent: backends, registrations, metadata, transfers and notifications.

    The connector's per-transfer methods (make_prepped_xfer, transfer, check_xfer_state,
    release_xfer_handle) are wrapped in nixl._bindings._fast_method: their common argument
    shapes go straight to the bindings in C, any other runs the Python body below, which
    defines what each accepts and raises (docs/python.md §7). ``agent`` is a slot of the C base
    (nixl._bindings._agent_base)."""

    def __init__(self, agent_name, nixl_conf: Optional[nixl_agent_config] = None,
                 instantiate_all: bool = False):
        if isinstance(agent_name, (bytes, bytearray)):
            agent_name = agent_name.decode()
        if not isinstance(agent_name, str):
            raise TypeError(f"agent_name must be str, not {type(agent_name).__name__}")
        if not agent_name:
            raise ValueError("agent_name must not be empty")
        if nixl_conf is not None and instantiate_all:
            logger.warning("nixl_agent %s: instantiate_all ignored, a config was given", agent_name)
            instantiate_all = False
        conf = nixl_conf if nixl_conf is not None else nixl_agent_config()
        sync = conf.sync_mode
        if sync is None:
            sync = (nixl_thread_sync_t.NIXL_THREAD_SYNC_STRICT if conf.enable_listen
                    else nixl_thread_sync_t.NIXL_THREAD_SYNC_NONE)
        bconf = nixlBind.nixlAgentConfig(
            bool(conf.enable_pthread), bool(conf.enable_listen), int(conf.port),
            sync.value, 1, 0, 100000, bool(conf.capture_telemetry))

        self.agent = nixlBind.nixlAgent(agent_name, bconf)
        self.name = agent_name
        self.notifs: dict = {}
        self.backends: dict = {}
        self.backend_mems: dict = {}
        self.backend_options: dict = {}
        self._lock = threading.RLock()
        self._keepalive: dict = {}
        self._leaked_xfer_handles: list = []

        self.plugin_list = list(self.agent.getAvailPlugins())
        if not self.plugin_list:
            raise RuntimeError("No NIXL plugins found (NIXL_PLUGIN_DIR); cannot start transfers")
        self.plugin_b_options: dict = {}
        self.plugin_mem_types: dict = {}
        for plugin in self.plugin_list:
            params, mems = self.agent.getPluginParams(plugin)
            self.plugin_b_options[plugin] = dict(params)
            self.plugin_mem_types[plugin] = list(mems)

        wanted = self.plugin_list if instantiate_all else conf.backends
        for bknd in wanted:
            if bknd not in self.plugin_list:
                logger.warning("nixl_agent %s: skipping backend %s, its plugin is missing",
                               agent_name, bknd)
                continue
            init = {}
            if conf.num_threads > 0 and bknd in _THREAD_KEYS:
                init[_THREAD_KEYS[bknd]] = str(conf.num_threads)
            self.create_backend(bknd, init)

        self.nixl_mems = {
            "DRAM": nixlBind.DRAM_SEG,
            "VRAM": nixlBind.VRAM_SEG,
            "FILE": nixlBind.FILE_SEG,
            "BLOCK": nixlBind.BLK_SEG,
            "OBJ": nixlBind.OBJ_SEG,
            "cpu": nixlBind.DRAM_SEG,
            "cuda": nixlBind.VRAM_SEG,
        }
        self.nixl_ops = {"WRITE": nixlBind.NIXL_WRITE, "READ": nixlBind.NIXL_READ}
        logger.info("Initialized NIXL agent: %s", agent_name)

    # ---- backends ---------------------------------------------------------------------------

    def get_plugin_list(self) -> list:
        return self.plugin_list

    def get_plugin_mem_types(self, backend: str) -> list:
        if backend in self.plugin_mem_types:
            return self.plugin_mem_types[backend]
        logger.warning("Plugin %s is not available to get its memory types", backend)
        return []

    def get_plugin_params(self, backend: str) -> dict:
        if backend in self.plugin_b_options:
            return self.plugin_b_options[backend]
        logger.warning("Plugin %s is not available to get its parameters", backend)
        return {}

    def get_backend_mem_types(self, backend: str) -> list:
        if backend in self.backend_mems:
            return self.backend_mems[backend]
        logger.warning("Backend %s is not instantiated to get its memory types", backend)
        return []

    def get_backend_params(self, backend: str) -> dict:
        if backend in self.backend_options:
            return self.backend_options[backend]
        logger.warning("Backend %s is not instantiated to get its parameters", backend)
        return {}

    def create_backend(self, backend: str, initParams: dict = {}):  # noqa: B006
        """Create a backend from its plugin; unknown plugin → nixlNotFoundError, twice →
        nixlInvalidParamError."""
        params = {str(k): str(v) for k, v in dict(initParams).items()}
        h = self.agent.createBackend(backend, params)
        params_out, mems = self.agent.getBackendParams(h)
        with self._lock:
            self.backends[backend] = h
            self.backend_mems[backend] = list(mems)
            self.backend_options[backend] = dict(params_out)
        logger.info("Backend %s was instantiated", backend)

    def _backend_handles(self, backends) -> list:
        if not backends:
            return []
        if isinstance(backends, (str, bytes)):
            backends = [backends]
        return [self.backends[_name_key(b)] for b in backends]

    # ---- descriptors ------------------------------------------------------------------------

    def _mem(self, mem_type):
        return self.nixl_mems[mem_type]

    def _tensor_list(self, tensors, with_meta):
        """(descs, mem) for tensors on one device, or None."""
        dev = tensors[0].get_device()
        descs = []
        for t in tensors:
            if t.get_device() != dev:
                logger.error("nixl_agent %s: tensors on different devices (%d, %d) in one list",
                             self.name, dev, t.get_device())
                return None
            if not t.is_contiguous():
                logger.error("nixl_agent %s: a non-contiguous tensor cannot be described",
                             self.name)
                return None
            descs.append(_tensor_desc(t, with_meta))
        return descs, _tensor_mem(tensors[0])

    def _build(self, descs, mem_type, kind):
        """Shared body of get_reg_descs / get_xfer_descs; kind is 'reg' or 'xfer'."""
        reg = kind == "reg"
        own, other = ((nixlBind.nixlRegDList, nixlBind.nixlXferDList) if reg
                      else (nixlBind.nixlXferDList, nixlBind.nixlRegDList))
        if isinstance(descs, own):
            return descs
        if isinstance(descs, other):
            logger.error("nixl_agent %s: a %s was given where a %s is needed", self.name,
                         type(descs).__name__, own.__name__)
            return None
        tensor_t = _torch_tensor_type()
        if tensor_t is not None and isinstance(descs, tensor_t):
            descs = [descs]
        if isinstance(descs, np.ndarray):
            if mem_type is None:
                logger.error("nixl_agent %s: an ndarray of descriptors needs mem_type", self.name)
                return None
            mem = self._mem(mem_type)
            if descs.ndim != 2 or descs.shape[1] != 3:
                logger.error("nixl_agent %s: a descriptor array must be Nx3, not %s", self.name,
                             descs.shape)
                return None
            # dtype and layout: the bindings raise ValueError
            return own(mem, descs)
        if isinstance(descs, tuple):
            raise (ValueError if reg else TypeError)(
                "descriptors must be a list, not a tuple")
        if not isinstance(descs, list):
            logger.error("nixl_agent %s: cannot describe memory from a %s", self.name,
                         type(descs).__name__)
            return None
        if len(descs) == 0:
            raise IndexError("empty descriptor list")
        first = descs[0]
        if tensor_t is not None and isinstance(first, tensor_t):
            if not all(isinstance(t, tensor_t) for t in descs):
                logger.error("nixl_agent %s: a tensor list must hold only tensors", self.name)
                return None
            built = self._tensor_list(descs, reg)
            if built is None:
                return None
            return own(built[1], built[0])
        arity = 4 if reg else 3
        if not isinstance(first, tuple):
            logger.error("nixl_agent %s: descriptor list entries must be tuples or tensors, not %s",
                         self.name, type(first).__name__)
            return None
        if len(first) != arity:
            logger.error("nixl_agent %s: %s descriptors are %d-tuples, got %d", self.name,
                         kind, arity, len(first))
            return None
        if mem_type is None:
            logger.error("nixl_agent %s: a list of descriptors needs mem_type", self.name)
            return None
        return own(self._mem(mem_type), descs)

    def get_reg_descs(self, descs, mem_type: Optional[str] = None):
        """A nixlRegDList from a RegDList, a list of (addr,len,dev,meta), an Nx3 ndarray, a
        tensor or a list of tensors on one device; None when it cannot be described."""
        return self._build(descs, mem_type, "reg")

    def get_xfer_descs(self, descs, mem_type: Optional[str] = None):
        """A nixlXferDList; the same inputs as get_reg_descs with (addr,len,dev)."""
        return self._build(descs, mem_type, "xfer")

    def get_remote_descs(self, descs, mem_type: Optional[str] = None):
        """A nixlRemoteDList from a list of (addr,len,dev,agent) (agent as str or bytes)."""
        if isinstance(descs, nixlBind.nixlRemoteDList):
            return descs
        if isinstance(descs, tuple):
            raise TypeError("descriptors must be a list, not a tuple")
        if not isinstance(descs, list):
            logger.error("nixl_agent %s: remote descriptors need a list of 4-tuples", self.name)
            return None
        if len(descs) == 0:
            raise IndexError("empty descriptor list")
        if not isinstance(descs[0], tuple) or len(descs[0]) != 4:
            logger.error("nixl_agent %s: remote descriptors are (addr,len,dev,agent)", self.name)
            return None
        if mem_type is None:
            logger.error("nixl_agent %s: a list of descriptors needs mem_type", self.name)
            return None
        rows = [(a, n, d, _name_key(ag)) for a, n, d, ag in descs]
        return nixlBind.nixlRemoteDList(self._mem(mem_type), rows)

    def get_serialized_descs(self, descs) -> bytes:
        return pickle.dumps(descs)

    def deserialize_descs(self, serialized_descs: bytes):
        return pickle.loads(serialized_descs)

    # ---- registration -----------------------------------------------------------------------

    def register_memory(self, reg_list, mem_type: Optional[str] = None,
                        backends: list = []):  # noqa: B006
        """Register memory; tensors given here stay referenced until deregister_memory."""
        descs = self.get_reg_descs(reg_list, mem_type)
        if descs is None:
            raise TypeError("register_memory: the input cannot be described as registrations")
        handles = self._backend_handles(backends)
        self.agent.registerMem(descs, handles)
        owners = self._owners(reg_list)
        if owners:
            with self._lock:
                for t in owners:
                    key = _tensor_desc(t, False)
                    self._keepalive.setdefault(key, []).append(t)
        return descs

    def _owners(self, reg_list):
        tensor_t = _torch_tensor_type()
        if tensor_t is None:
            return []
        if isinstance(reg_list, tensor_t):
            return [reg_list]
        if isinstance(reg_list, list) and reg_list and isinstance(reg_list[0], tensor_t):
            return reg_list
        return []

    def deregister_memory(self, dereg_list, backends: list = []):  # noqa: B006
        """Deregister; drops the references register_memory kept for those ranges."""
        if not isinstance(dereg_list, nixlBind.nixlRegDList):
            d = self.get_reg_descs(dereg_list)
            if d is None:
                raise TypeError("deregister_memory needs a nixlRegDList")
            dereg_list = d
        self.agent.deregisterMem(dereg_list, self._backend_handles(backends))
        with self._lock:
            if self._keepalive:
                for i in range(dereg_list.descCount()):
                    addr, length, dev = tuple(dereg_list[i])[:3]
                    held = self._keepalive.get((addr, length, dev))
                    if held:
                        held.pop()
                        if not held:
                            del self._keepalive[(addr, length, dev)]

    def query_memory(self, reg_list, backend: str, mem_type: Optional[str] = None) -> list:
        """Per descriptor, a dict of what the backend knows of it, or None."""
        if backend not in self.backends:
            raise ValueError(f"query_memory: backend {backend} is not instantiated")
        descs = self.get_reg_descs(reg_list, mem_type)
        if descs is None:
            raise TypeError("query_memory: the input cannot be described as registrations")
        return [None if r is None else dict(r)
                for r in self.agent.queryMem(descs, self.backends[backend])]

    # ---- metadata ---------------------------------------------------------------------------

    def get_agent_metadata(self) -> bytes:
        return self.agent.getLocalMD()

    def get_partial_agent_metadata(self, descs, inc_conn_info: bool = False,
                                   backends: list = []) -> bytes:  # noqa: B006
        return self.agent.getLocalPartialMD(self._partial(descs), inc_conn_info,
                                            self._backend_handles(backends))

    def _partial(self, descs):
        if descs is None or (isinstance(descs, list) and not descs):
            return nixlBind.nixlRegDList(nixlBind.DRAM_SEG)
        d = self.get_reg_descs(descs)
        if d is None:
            raise TypeError("partial metadata needs a nixlRegDList")
        return d

    def add_remote_agent(self, metadata: bytes) -> bytes:
        """Load a peer's metadata; returns its name as bytes (as NIXL does)."""
        return self.agent.loadRemoteMD(metadata)

    def remove_remote_agent(self, agent: str):
        """Forget a peer; never raises."""
        try:
            self.agent.invalidateRemoteMD(agent)
        except Exception as e:  # noqa: BLE001 (documented: never raises)
            logger.warning("nixl_agent %s: remove_remote_agent(%r): %s", self.name, agent, e)

    def send_local_metadata(self, ip_addr: str = "", port: int = DEFAULT_COMM_PORT):
        """Publish our metadata: to ip_addr:port (P2P), or to etcd when ip_addr is ""."""
        self.agent.sendLocalMD(ip_addr, port)

    def send_partial_agent_metadata(self, descs, inc_conn_info: bool = False,
                                    backends: list = [], ip_addr: str = "",  # noqa: B006
                                    port: int = DEFAULT_COMM_PORT, label: str = ""):
        self.agent.sendLocalPartialMD(self._partial(descs), inc_conn_info,
                                      self._backend_handles(backends), ip_addr, port, label)

    def fetch_remote_metadata(self, remote_agent: str, ip_addr: str = "",
                              port: int = DEFAULT_COMM_PORT, label: str = ""):
        """Ask for a peer's metadata (asynchronous: check_remote_metadata shows it)."""
        self.agent.fetchRemoteMD(remote_agent, ip_addr, port, label)

    def invalidate_local_metadata(self, ip_addr: str = "", port: int = DEFAULT_COMM_PORT):
        self.agent.invalidateLocalMD(ip_addr, port)

    def check_remote_metadata(self, agent, descs=None) -> bool:
        """True when the peer's metadata (and descs, if given) is loaded; never raises."""
        try:
            if descs is None:
                d = nixlBind.nixlXferDList(nixlBind.DRAM_SEG)
            else:
                d = self.get_xfer_descs(descs)
                if d is None:
                    return False
            return self.agent.checkRemoteMD(agent, d) == _SUCCESS
        except Exception as e:  # noqa: BLE001 (documented: never raises)
            logger.warning("nixl_agent %s: check_remote_metadata(%r): %s", self.name, agent, e)
            return False

    def make_connection(self, remote_agent: str, backends: list = []):  # noqa: B006
        self.agent.makeConnection(remote_agent, self._backend_handles(backends))

    # ---- transfers --------------------------------------------------------------------------

    def prep_xfer_dlist(self, agent_name, xfer_list, mem_type: Optional[str] = None,
                        backends: list = []) -> nixl_prepped_dlist_handle:  # noqa: B006
        """Prepare descriptors once: agent_name "NIXL_INIT_AGENT" or "" for the local side, a
        peer's name for its side, our own name for loopback."""
        descs = self.get_xfer_descs(xfer_list, mem_type)
        if descs is None:
            raise TypeError("prep_xfer_dlist: the input cannot be described as transfers")
        if agent_name in _INIT_AGENT_NAMES:
            agent_name = nixlBind.NIXL_INIT_AGENT
        h = self.agent.prepXferDlist(agent_name, descs, self._backend_handles(backends))
        return nixl_prepped_dlist_handle(self.agent, h)

    @nixlBind._fast_method
    def make_prepped_xfer(self, operation: str, local_xfer_side, local_indices,
                          remote_xfer_side, remote_indices, notif_msg: bytes = b"",
                          backends: list = [],  # noqa: B006
                          skip_desc_merge: bool = False) -> nixl_xfer_handle:
        """A request from index selections of two prepared lists."""
        op = self.nixl_ops[operation]
        li = local_indices if local_indices.__class__ in _INDEX_TYPES else _indices(local_indices)
        ri = (remote_indices if remote_indices.__class__ in _INDEX_TYPES
              else _indices(remote_indices))
        n = len(li)
        if n == 0 or n != len(ri):
            raise nixlBind.nixlInvalidParamError(
                f"make_prepped_xfer: index lists must be non-empty and of equal length "
                f"({n} local, {len(ri)} remote)")
        lh = local_xfer_side._handle if local_xfer_side.__class__ is _PREPPED else int(local_xfer_side)
        rh = (remote_xfer_side._handle if remote_xfer_side.__class__ is _PREPPED
              else int(remote_xfer_side))
        msg = notif_msg if notif_msg.__class__ is bytes else _as_bytes(notif_msg)
        agent = self.agent
        h = agent.makeXferReq(op, lh, li, rh, ri, msg,
                              self._backend_handles(backends) if backends else _NO_BACKENDS,
                              skip_desc_merge if skip_desc_merge.__class__ is bool
                              else bool(skip_desc_merge))
        return _XFER(agent, h)

    def initialize_xfer(self, operation: str, local_descs, remote_descs, remote_agent,
                        notif_msg: bytes = b"",
                        backends: list = []) -> nixl_xfer_handle:  # noqa: B006
        """A request from two nixlXferDLists (local, and remote_agent's side)."""
        op = self.nixl_ops[operation]
        for d in (local_descs, remote_descs):
            if not isinstance(d, nixlBind.nixlXferDList):
                raise TypeError(f"initialize_xfer needs nixlXferDList, not {type(d).__name__}")
        h = self.agent.createXferReq(op, local_descs, remote_descs, remote_agent,
                                     _as_bytes(notif_msg), self._backend_handles(backends))
        return nixl_xfer_handle(self.agent, h)

    @nixlBind._fast_method
    def transfer(self, handle, notif_msg: bytes = b"") -> str:
        """Post; "DONE" or "PROC" ("ERR" only for a status the bindings return, errors raise)."""
        h = handle._handle if handle.__class__ is _XFER else int(handle)
        msg = notif_msg if notif_msg.__class__ is bytes else _as_bytes(notif_msg)
        s = self.agent.postXferReq(h, msg)
        # The bindings return the enum's own members: `is` costs nothing, where int() or ==
        # on a pybind11 enum is a call into the module (docs/python.md, Speed).
        return "DONE" if s is _SUCCESS else "PROC" if s is _IN_PROG else "ERR"

    @nixlBind._fast_method
    def check_xfer_state(self, handle) -> str:
        h = handle._handle if handle.__class__ is _XFER else int(handle)
        s = self.agent.getXferStatus(h)
        return "DONE" if s is _SUCCESS else "PROC" if s is _IN_PROG else "ERR"

    def get_xfer_telemetry(self, handle):
        """The request's nixlXferTelemetry; nixlNoTelemetryError without telemetry."""
        return self.agent.getXferTelemetry(_raw(handle))

    def estimate_xfer_cost(self, req_handle) -> tuple:
        us, margin, method = self.agent.estimateXferCost(_raw(req_handle))
        known = int(method) == _COST_ANALYTICAL
        return int(us), int(margin), "ANALYTICAL_BACKEND" if known else "UNKNOWN"

    def query_xfer_backend(self, handle) -> str:
        bh = self.agent.queryXferBackend(_raw(handle))
        with self._lock:
            for name, h in self.backends.items():
                if h == bh:
                    return name
        raise nixlBind.nixlNotFoundError("query_xfer_backend: backend of this request unknown")

    @nixlBind._fast_method
    def release_xfer_handle(self, handle):
        """Release (cancelling if active); nixlRepostActiveError leaves the handle live."""
        if handle.__class__ is _XFER:
            if not handle._released:
                handle._agent.releaseXferReq(handle._handle)
                handle._released = True
        elif isinstance(handle, _handle_base):
            handle.release()
        else:
            self.agent.releaseXferReq(int(handle))

    def release_dlist_handle(self, handle):
        if isinstance(handle, _handle_base):
            handle.release()
        else:
            self.agent.releasedDlistH(int(handle))

    def prep_mem_view(self, dlist, *, backends=None) -> int:
        raise nixlBind.nixlNotSupportedError(
            "prep_mem_view: libnixl has no GPU device API (memory views need UCX's device API)")

    def release_mem_view(self, mvh):
        raise nixlBind.nixlNotSupportedError(
            "release_mem_view: libnixl has no GPU device API (memory views need UCX's device API)")

    # ---- notifications ----------------------------------------------------------------------

    def get_new_notifs(self, backends: list = []) -> dict:  # noqa: B006
        """Notifications that arrived since the last call: a fresh {agent: [bytes]}."""
        return self.agent.getNotifs(None, self._backend_handles(backends))

    def update_notifs(self, backends: list = []) -> dict:  # noqa: B006
        """Add new notifications to self.notifs and return it."""
        new = self.get_new_notifs(backends)
        with self._lock:
            for agent, msgs in new.items():
                self.notifs.setdefault(agent, []).extend(msgs)
            return self.notifs

    def check_remote_xfer_done(self, remote_agent_name, lookup_tag: bytes,
                               backends: list = [],  # noqa: B006
                               tag_is_prefix: bool = True) -> bool:
        """Consume one notification from remote_agent_name that starts with lookup_tag
        (tag_is_prefix) or contains it; True if one was found."""
        self.update_notifs(backends)
        key = _name_key(remote_agent_name)
        tag = _as_bytes(lookup_tag)
        with self._lock:
            msgs = self.notifs.get(key)
            if not msgs:
                return False
            for i, m in enumerate(msgs):
                if (m.startswith(tag) if tag_is_prefix else tag in m):
                    del msgs[i]
                    return True
        return False

    def send_notif(self, remote_agent_name, notif_msg: bytes, backend=None):
        """Send a notification; backend is one backend name (or a list of names), None lets
        libnixl choose. Unknown name → KeyError."""
        handles = self._backend_handles(backend) if backend is not None else []
        self.agent.genNotif(remote_agent_name, _as_bytes(notif_msg), handles)


def _indices(idx):
    """Indices as the bindings take them: a 1-D array (any integer dtype, cast to uint32 there)
    or a sequence of ints; a torch index tensor becomes an array."""
    if isinstance(idx, np.ndarray):
        if idx.ndim != 1:
            raise ValueError("index array must be 1-D")
        return idx
    if isinstance(idx, (list, tuple, range)):
        return idx
    tensor_t = _torch_tensor_type()
    if tensor_t is not None and isinstance(idx, tensor_t):
        return idx.detach().cpu().numpy().reshape(-1)
    raise TypeError(f"indices must be a sequence of int or a 1-D array, not {type(idx).__name__}")


_SUCCESS = nixlBind.NIXL_SUCCESS
_IN_PROG = nixlBind.NIXL_IN_PROG
_COST_ANALYTICAL = int(nixlBind.nixl_cost_t.NIXL_COST_ANALYTICAL_BACKEND)
_INDEX_TYPES = (np.ndarray, list, tuple, range)
_NO_BACKENDS: list = []
_XFER = nixl_xfer_handle
_PREPPED = nixl_prepped_dlist_handle
# The classes the fast methods build and recognise; numpy.ndarray is read in place (the probe
# checks the bindings read numpy's array layout right).
nixlBind._register_api_types(nixl_xfer_handle, nixl_prepped_dlist_handle, np.ndarray,
                             np.array([7, -9, 11], dtype=np.int64)[::2])


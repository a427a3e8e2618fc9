"""Python producer for ``vizdeck --share PATH`` (issue 18): write vizdeck's GPU buffers from CUDA.

Importable without installing vizdeck: the standard library only, plus CuPy and/or PyTorch for
the CUDA path (the CUDA runtime is reached through ctypes, or ``cuda.bindings.runtime`` when
no ``libcudart`` can be loaded).

    import vizdeck_share
    share = vizdeck_share.connect("/tmp/vizdeck.sock")
    a = share.cuda_array()            # CuPy ndarray over vizdeck's memory, e.g. f32 [N, 8]
    for n in range(1, frames + 1):
        a[:, 0:3] = positions         # write the frame on the GPU
        share.frame_complete(n)       # synchronises the device, then "frame n complete"
        share.wait_released(n)        # vizdeck copied it: write the next

The wire format is vizdeck's ``crates/protocols/src/share.rs``:

* after ``connect`` vizdeck sends one message: ``b"VZSH"``, the JSON body's length (u32 LE),
  then the body (a ShareDescription). The fds (each buffer's memory, in ``fd_index`` order)
  ride as one ``SCM_RIGHTS`` control message on the ``sendmsg`` carrying the 8-byte header.
* frames: the producer sends ``b"VZFC" + 4 zero bytes + n (u64 LE)`` for frame n (numbers
  increase); vizdeck answers ``b"VZFR" + 4 zero + n`` once it has copied frame n.
  Without semaphores (``"semaphores": null``: vizdeck's device cannot share them) the producer
  sends it once frame n is completely written (``frame_complete`` synchronises the device) and
  must not write again before the answer. With semaphores (``"semaphores": {"ready": {fd_index,
  initial_value}, "released": {...}}``, two Vulkan timeline semaphores imported with
  ``cudaImportExternalSemaphore``) the waits are on the GPU: ``begin_frame()`` makes the CUDA
  stream wait until ``released`` reaches the last frame, the producer writes, and
  ``frame_complete(n)`` makes the stream signal ``ready`` = n and sends the message at once,
  without synchronising; vizdeck's queue waits for ``ready`` on its side. ``wait_released``
  then only bounds how far the CPU runs ahead.
* host memory (the comparison path): buffers with ``"memory": "host"`` are memfds of host memory
  (the particle scene hands one beside its device buffer). ``host_array()`` maps one, and with
  CUDA ``host_register()`` pins it (``cudaHostRegister``) so a device-to-host copy into it is a
  pinned copy; ``frame_complete(n, memory="host")`` sends ``b"VZFH" + 4 zero + n``: vizdeck
  uploads the memfd through its upload path, then answers ``b"VZFR"`` as above.
"""

from __future__ import annotations

import array
import ctypes
import ctypes.util
import glob
import json
import mmap
import os
import socket
import struct
import sys
import time

__all__ = [
    "connect",
    "Share",
    "ShareError",
    "ProtocolError",
    "VizdeckGone",
    "CudaUnavailable",
    "DeviceMismatch",
    "CudaError",
]

MAGIC = b"VZSH"
HEADER_LEN = 8
MAX_BODY = 1 << 20
MAX_FDS = 8
PROTOCOL_VERSION = 1
COMPLETE_MAGIC = b"VZFC"
COMPLETE_HOST_MAGIC = b"VZFH"
RELEASED_MAGIC = b"VZFR"
FRAME_MSG_LEN = 16

# vizdeck dtype name -> (numpy/CuPy dtype name, __cuda_array_interface__ typestr, bytes)
DTYPES = {
    "f32": ("float32", "<f4", 4),
    "f16": ("float16", "<f2", 2),
    "u32": ("uint32", "<u4", 4),
    "i32": ("int32", "<i4", 4),
}


class ShareError(Exception):
    """Base of this module's errors (one line each)."""


class ProtocolError(ShareError):
    """vizdeck sent something that is not a valid share message."""


class VizdeckGone(ShareError):
    """The socket closed or failed: vizdeck exited (or dropped this producer)."""


class CudaUnavailable(ShareError):
    """No CUDA runtime, no CUDA device, or neither CuPy nor PyTorch for the array."""


class DeviceMismatch(ShareError):
    """No CUDA device has the Vulkan device UUID vizdeck exported the memory from."""


class CudaError(ShareError):
    """A CUDA runtime call failed."""


# --------------------------------------------------------------------------------------------
# The description


def _validate(desc: dict, nfds: int) -> None:
    """The checks vizdeck's ShareDescription::validate makes, so a bad message fails here."""
    def bad(m):
        raise ProtocolError(f"bad share description: {m}")

    if not isinstance(desc, dict):
        bad("not a JSON object")
    if desc.get("protocol") != PROTOCOL_VERSION:
        bad(f"protocol {desc.get('protocol')!r} (this client speaks {PROTOCOL_VERSION})")
    for what in ("device_uuid", "driver_uuid"):
        u = desc.get(what)
        if not isinstance(u, str) or len(u) != 32 or any(c not in "0123456789abcdefABCDEF" for c in u):
            bad(f"{what} {u!r} is not 32 hex digits")
    bufs = desc.get("buffers")
    if not isinstance(bufs, list):
        bad("no buffers list")
    used = set()
    idx = [(b.get("name"), b.get("fd_index")) for b in bufs]
    sems = desc.get("semaphores")
    if sems is not None:
        for which in ("ready", "released"):
            if not isinstance(sems.get(which), dict):
                bad(f"semaphores: no {which} semaphore")
            idx.append((f"{which} semaphore", sems[which].get("fd_index")))
    for name, i in idx:
        if not isinstance(i, int) or not 0 <= i < nfds:
            bad(f"{name}: fd {i} of {nfds}")
        if i in used:
            bad(f"{name}: fd {i} used twice")
        used.add(i)
    for b in bufs:
        if b.get("dtype") not in DTYPES:
            bad(f"{b.get('name')}: dtype {b.get('dtype')!r}")
        shape, strides = b.get("shape"), b.get("strides")
        if len(shape) != len(strides):
            bad(f"{b['name']}: shape and strides differ in length")
        end = b["offset"]
        if 0 not in shape:
            end += sum((n - 1) * s for n, s in zip(shape, strides)) + DTYPES[b["dtype"]][2]
        if not end <= b["size"] <= b["allocation_size"]:
            bad(f"{b['name']}: array of shape {shape} does not fit {b['size']} bytes")


# --------------------------------------------------------------------------------------------
# The CUDA runtime through ctypes

cudaExternalMemoryHandleTypeOpaqueFd = 1
cudaExternalMemoryDedicated = 0x1


class _Win32Handle(ctypes.Structure):
    _fields_ = [("handle", ctypes.c_void_p), ("name", ctypes.c_void_p)]


class _HandleUnion(ctypes.Union):
    # 16 bytes, 8-aligned (the win32 pair of pointers is the largest member).
    _fields_ = [("fd", ctypes.c_int), ("win32", _Win32Handle), ("nvSciBufObject", ctypes.c_void_p)]


class cudaExternalMemoryHandleDesc(ctypes.Structure):
    """driver_types.h (runtime API, CUDA 10.0-12.x): type @0, [pad 4], handle @8 (16 bytes),
    size @24, flags @32, [pad 4] = 40 bytes. The driver API's CUDA_EXTERNAL_MEMORY_HANDLE_DESC
    has ``unsigned int reserved[16]`` after flags (104 bytes); the trailing zeroed ``reserved``
    here makes the struct valid for either reading (a runtime that reads only 40 bytes ignores
    it; one that forwards the full driver layout finds zeros)."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("handle", _HandleUnion),
        ("size", ctypes.c_ulonglong),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


class cudaExternalMemoryBufferDesc(ctypes.Structure):
    """offset @0, size @8, flags @16 (runtime: 24 bytes; driver: + reserved[16] = 88)."""

    _fields_ = [
        ("offset", ctypes.c_ulonglong),
        ("size", ctypes.c_ulonglong),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd = 9


class cudaExternalSemaphoreHandleDesc(ctypes.Structure):
    """driver_types.h: type @0, [pad 4], handle @8 (16 bytes), flags @24, then (driver layout)
    reserved[16]; zeroed either way."""

    _fields_ = [
        ("type", ctypes.c_int),
        ("handle", _HandleUnion),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


class cudaExternalSemaphoreParams(ctypes.Structure):
    """cudaExternalSemaphoreSignalParams / WaitParams (CUDA >= 11.2, the _v2 layout): params
    (72 bytes: fence.value @0, nvSciSync @8, keyedMutex @16, reserved) @0, flags @72,
    reserved[16] @76; 144 bytes. Only ``params.fence.value`` is set for a timeline semaphore."""

    _fields_ = [
        ("fence_value", ctypes.c_ulonglong),
        ("params_rest", ctypes.c_ubyte * 64),
        ("flags", ctypes.c_uint),
        ("reserved", ctypes.c_uint * 16),
    ]


assert ctypes.sizeof(cudaExternalSemaphoreHandleDesc) == 96
assert cudaExternalSemaphoreHandleDesc.flags.offset == 24
assert ctypes.sizeof(cudaExternalSemaphoreParams) == 144
assert cudaExternalSemaphoreParams.flags.offset == 72
assert ctypes.sizeof(cudaExternalMemoryHandleDesc) == 104
assert cudaExternalMemoryHandleDesc.handle.offset == 8
assert cudaExternalMemoryHandleDesc.size.offset == 24
assert cudaExternalMemoryHandleDesc.flags.offset == 32
assert ctypes.sizeof(cudaExternalMemoryBufferDesc) == 88
assert cudaExternalMemoryBufferDesc.flags.offset == 16

# cudaDeviceProp: char name[256] then cudaUUID_t uuid (16 bytes) at 256, in every CUDA >= 10.
# The struct is ~1 KiB in CUDA 12; a larger buffer is handed to be safe.
_PROP_BYTES = 8192
_PROP_UUID_OFFSET = 256


def _cudart_candidates():
    """Paths/names of libcudart to try, best first."""
    names = ["libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"]
    dirs = []
    # CuPy / PyTorch bundled runtimes (pip wheels: nvidia/cuda_runtime/lib; torch/lib).
    for mod in ("cupy", "torch", "nvidia.cuda_runtime"):
        m = sys.modules.get(mod)
        if m is None:
            continue
        for p in list(getattr(m, "__path__", []) or []) + [os.path.dirname(getattr(m, "__file__", "") or "")]:
            if p:
                dirs += [os.path.join(p, "lib"), os.path.join(p, "_lib"), os.path.join(p, "..", "nvidia", "cuda_runtime", "lib")]
    for sp in sys.path:
        if sp and os.path.isdir(os.path.join(sp, "nvidia")):
            dirs += glob.glob(os.path.join(sp, "nvidia", "cuda_runtime", "lib"))
            dirs += glob.glob(os.path.join(sp, "nvidia", "cu1*", "lib"))
    for env in ("CUDA_HOME", "CUDA_PATH"):
        if os.environ.get(env):
            dirs += [os.path.join(os.environ[env], "lib64"), os.path.join(os.environ[env], "lib")]
    dirs += ["/usr/local/cuda/lib64", "/usr/local/cuda/targets/x86_64-linux/lib"]
    out = []
    # Bare sonames first: dlopen returns a runtime already loaded by CuPy/PyTorch (same soname).
    out += names
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "libcudart.so*")), reverse=True):
            out.append(f)
    found = ctypes.util.find_library("cudart")
    if found:
        out.append(found)
    return out


class _CtypesRuntime:
    """The few runtime calls this module needs, from libcudart through ctypes."""

    def __init__(self, lib, where):
        self.lib = lib
        self.where = where
        c = ctypes
        for name, args in [
            ("cudaGetDeviceCount", [c.POINTER(c.c_int)]),
            ("cudaSetDevice", [c.c_int]),
            ("cudaGetDevice", [c.POINTER(c.c_int)]),
            ("cudaDeviceSynchronize", []),
            ("cudaGetErrorString", [c.c_int]),
            ("cudaRuntimeGetVersion", [c.POINTER(c.c_int)]),
            ("cudaImportExternalMemory", [c.POINTER(c.c_void_p), c.POINTER(cudaExternalMemoryHandleDesc)]),
            ("cudaExternalMemoryGetMappedBuffer", [c.POINTER(c.c_void_p), c.c_void_p, c.POINTER(cudaExternalMemoryBufferDesc)]),
            ("cudaDestroyExternalMemory", [c.c_void_p]),
            ("cudaFree", [c.c_void_p]),
            ("cudaHostRegister", [c.c_void_p, c.c_size_t, c.c_uint]),
            ("cudaHostUnregister", [c.c_void_p]),
            ("cudaImportExternalSemaphore", [c.POINTER(c.c_void_p), c.POINTER(cudaExternalSemaphoreHandleDesc)]),
            ("cudaDestroyExternalSemaphore", [c.c_void_p]),
        ]:
            f = getattr(lib, name)
            f.argtypes = args
            f.restype = c.c_char_p if name == "cudaGetErrorString" else c.c_int
        # CUDA 12 headers map cudaGetDeviceProperties to the _v2 symbol (new cudaDeviceProp).
        try:
            self._props = lib.cudaGetDeviceProperties_v2
        except AttributeError:
            self._props = lib.cudaGetDeviceProperties
        self._props.argtypes = [ctypes.c_void_p, ctypes.c_int]
        self._props.restype = ctypes.c_int
        # CUDA 11.2-12 headers map the semaphore calls to the _v2 symbols (the 144-byte params).
        self._sem = {}
        for name in ("cudaSignalExternalSemaphoresAsync", "cudaWaitExternalSemaphoresAsync"):
            f = getattr(lib, name + "_v2", None) or getattr(lib, name)
            f.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(cudaExternalSemaphoreParams),
                          ctypes.c_uint, ctypes.c_void_p]
            f.restype = ctypes.c_int
            self._sem[name] = f

    def check(self, what, rc):
        if rc != 0:
            msg = self.lib.cudaGetErrorString(rc)
            raise CudaError(f"{what} failed: error {rc} ({msg.decode() if msg else '?'})")

    def version(self):
        v = ctypes.c_int()
        self.check("cudaRuntimeGetVersion", self.lib.cudaRuntimeGetVersion(ctypes.byref(v)))
        return v.value

    def device_count(self):
        n = ctypes.c_int()
        rc = self.lib.cudaGetDeviceCount(ctypes.byref(n))
        if rc != 0:
            msg = self.lib.cudaGetErrorString(rc)
            raise CudaUnavailable(f"no CUDA device: cudaGetDeviceCount error {rc} ({msg.decode() if msg else '?'})")
        return n.value

    def device_uuid(self, dev):
        buf = ctypes.create_string_buffer(_PROP_BYTES)
        self.check("cudaGetDeviceProperties", self._props(buf, dev))
        return buf.raw[_PROP_UUID_OFFSET:_PROP_UUID_OFFSET + 16].hex()

    def set_device(self, dev):
        self.check("cudaSetDevice", self.lib.cudaSetDevice(dev))

    def synchronize(self):
        self.check("cudaDeviceSynchronize", self.lib.cudaDeviceSynchronize())

    def import_fd(self, fd, size, dedicated):
        d = cudaExternalMemoryHandleDesc()
        d.type = cudaExternalMemoryHandleTypeOpaqueFd
        d.handle.fd = fd
        d.size = size
        d.flags = cudaExternalMemoryDedicated if dedicated else 0
        ext = ctypes.c_void_p()
        self.check("cudaImportExternalMemory", self.lib.cudaImportExternalMemory(ctypes.byref(ext), ctypes.byref(d)))
        return ext.value

    def mapped_buffer(self, ext, offset, size):
        d = cudaExternalMemoryBufferDesc()
        d.offset = offset
        d.size = size
        d.flags = 0
        ptr = ctypes.c_void_p()
        self.check("cudaExternalMemoryGetMappedBuffer",
                   self.lib.cudaExternalMemoryGetMappedBuffer(ctypes.byref(ptr), ctypes.c_void_p(ext), ctypes.byref(d)))
        return ptr.value

    def free(self, ptr):
        self.lib.cudaFree(ctypes.c_void_p(ptr))

    def host_register(self, ptr, size):
        self.check("cudaHostRegister", self.lib.cudaHostRegister(ctypes.c_void_p(ptr), size, 0))

    def host_unregister(self, ptr):
        self.lib.cudaHostUnregister(ctypes.c_void_p(ptr))

    def destroy(self, ext):
        self.lib.cudaDestroyExternalMemory(ctypes.c_void_p(ext))

    def import_semaphore(self, fd):
        d = cudaExternalSemaphoreHandleDesc()
        d.type = cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
        d.handle.fd = fd
        d.flags = 0
        sem = ctypes.c_void_p()
        self.check("cudaImportExternalSemaphore",
                   self.lib.cudaImportExternalSemaphore(ctypes.byref(sem), ctypes.byref(d)))
        return sem.value

    def _semaphore_op(self, name, sem, value, stream):
        p = cudaExternalSemaphoreParams()
        p.fence_value = value
        arr = (ctypes.c_void_p * 1)(sem)
        self.check(name, self._sem[name](arr, ctypes.byref(p), 1, ctypes.c_void_p(stream or None)))

    def signal_semaphore(self, sem, value, stream):
        self._semaphore_op("cudaSignalExternalSemaphoresAsync", sem, value, stream)

    def wait_semaphore(self, sem, value, stream):
        self._semaphore_op("cudaWaitExternalSemaphoresAsync", sem, value, stream)

    def destroy_semaphore(self, sem):
        self.lib.cudaDestroyExternalSemaphore(ctypes.c_void_p(sem))


class _BindingsRuntime:
    """The same calls through NVIDIA's ``cuda.bindings.runtime`` (cuda-python)."""

    def __init__(self, rt):
        self.rt = rt
        self.where = "cuda.bindings.runtime"

    def check(self, what, err):
        if int(err) != 0:
            raise CudaError(f"{what} failed: {err}")

    def version(self):
        err, v = self.rt.cudaRuntimeGetVersion()
        self.check("cudaRuntimeGetVersion", err)
        return v

    def device_count(self):
        err, n = self.rt.cudaGetDeviceCount()
        if int(err) != 0:
            raise CudaUnavailable(f"no CUDA device: cudaGetDeviceCount {err}")
        return n

    def device_uuid(self, dev):
        err, p = self.rt.cudaGetDeviceProperties(dev)
        self.check("cudaGetDeviceProperties", err)
        return bytes(p.uuid.bytes).hex()

    def set_device(self, dev):
        (err,) = self.rt.cudaSetDevice(dev)
        self.check("cudaSetDevice", err)

    def synchronize(self):
        (err,) = self.rt.cudaDeviceSynchronize()
        self.check("cudaDeviceSynchronize", err)

    def import_fd(self, fd, size, dedicated):
        d = self.rt.cudaExternalMemoryHandleDesc()
        d.type = self.rt.cudaExternalMemoryHandleType.cudaExternalMemoryHandleTypeOpaqueFd
        d.handle.fd = fd
        d.size = size
        d.flags = cudaExternalMemoryDedicated if dedicated else 0
        err, ext = self.rt.cudaImportExternalMemory(d)
        self.check("cudaImportExternalMemory", err)
        return ext

    def mapped_buffer(self, ext, offset, size):
        d = self.rt.cudaExternalMemoryBufferDesc()
        d.offset = offset
        d.size = size
        d.flags = 0
        err, ptr = self.rt.cudaExternalMemoryGetMappedBuffer(ext, d)
        self.check("cudaExternalMemoryGetMappedBuffer", err)
        return int(ptr)

    def free(self, ptr):
        self.rt.cudaFree(ptr)

    def host_register(self, ptr, size):
        (err,) = self.rt.cudaHostRegister(ptr, size, 0)
        self.check("cudaHostRegister", err)

    def host_unregister(self, ptr):
        self.rt.cudaHostUnregister(ptr)

    def destroy(self, ext):
        self.rt.cudaDestroyExternalMemory(ext)

    def import_semaphore(self, fd):
        d = self.rt.cudaExternalSemaphoreHandleDesc()
        d.type = self.rt.cudaExternalSemaphoreHandleType.cudaExternalSemaphoreHandleTypeTimelineSemaphoreFd
        d.handle.fd = fd
        d.flags = 0
        err, sem = self.rt.cudaImportExternalSemaphore(d)
        self.check("cudaImportExternalSemaphore", err)
        return sem

    def signal_semaphore(self, sem, value, stream):
        p = self.rt.cudaExternalSemaphoreSignalParams()
        p.params.fence.value = value
        (err,) = self.rt.cudaSignalExternalSemaphoresAsync([sem], [p], 1, stream)
        self.check("cudaSignalExternalSemaphoresAsync", err)

    def wait_semaphore(self, sem, value, stream):
        p = self.rt.cudaExternalSemaphoreWaitParams()
        p.params.fence.value = value
        (err,) = self.rt.cudaWaitExternalSemaphoresAsync([sem], [p], 1, stream)
        self.check("cudaWaitExternalSemaphoresAsync", err)

    def destroy_semaphore(self, sem):
        self.rt.cudaDestroyExternalSemaphore(sem)


_runtime = None


def cuda_runtime():
    """The CUDA runtime (loaded once): libcudart through ctypes, else cuda.bindings.runtime.

    Raises CudaUnavailable naming what was tried."""
    global _runtime
    if _runtime is not None:
        return _runtime
    # Let CuPy / PyTorch load their runtime first, so the bare soname resolves to it.
    for mod in ("cupy", "torch"):
        if mod not in sys.modules:
            try:
                __import__(mod)
            except Exception:
                pass
    tried = []
    for cand in _cudart_candidates():
        try:
            lib = ctypes.CDLL(cand)
            getattr(lib, "cudaImportExternalMemory")
        except (OSError, AttributeError) as e:
            tried.append(cand)
            continue
        _runtime = _CtypesRuntime(lib, cand)
        return _runtime
    try:
        from cuda.bindings import runtime as rt  # cuda-python >= 12.6
    except ImportError:
        try:
            from cuda import cudart as rt  # older cuda-python
        except ImportError:
            rt = None
    if rt is not None:
        _runtime = _BindingsRuntime(rt)
        return _runtime
    raise CudaUnavailable(
        "no CUDA runtime: libcudart not found (tried sonames, CuPy/PyTorch/nvidia wheels, "
        "$CUDA_HOME, /usr/local/cuda) and cuda.bindings is not installed"
    )


# --------------------------------------------------------------------------------------------
# The share


class _CudaArrayInterface:
    """A bare object exposing __cuda_array_interface__ (v3), for torch.as_tensor without CuPy."""

    def __init__(self, ptr, shape, typestr, strides, owner):
        self._owner = owner
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (ptr, False),
            "strides": tuple(strides),
            "version": 3,
            "stream": None,
        }


class Share:
    """One connection to vizdeck's --share socket: the description, the fds, and the frames."""

    def __init__(self, sock: socket.socket, description: dict, fds: list):
        self.sock = sock
        self.description = description
        self.fds = list(fds)
        self._imported = {}  # buffer index -> (ext handle, mapped pointer)
        self._device = None
        self._rt = None
        self._last_complete = 0
        self._closed = False
        self._host = {}  # buffer index -> (mmap, ctypes anchor, registered with CUDA)
        self._sems = None  # (ready, released) CUDA external semaphores, once imported

    @property
    def semaphores(self) -> bool:
        """Whether vizdeck shared timeline semaphores (the frame waits are on the GPU)."""
        return self.description.get("semaphores") is not None

    def _semaphores(self):
        """The (ready, released) semaphores, imported into CUDA on first use."""
        if self._sems is None:
            rt = self._rt or cuda_runtime()
            self._rt = rt
            rt.set_device(self.cuda_device)
            got = []
            for which in ("ready", "released"):
                i = self.description["semaphores"][which]["fd_index"]
                got.append(rt.import_semaphore(self.fds[i]))
                self.fds[i] = -1  # CUDA owns it now
            self._sems = tuple(got)
        return self._sems

    def begin_frame(self, stream: int = 0) -> None:
        """With semaphores: make CUDA `stream` (a cudaStream_t as int; 0 the legacy default
        stream CuPy and PyTorch use by default) wait on the GPU until vizdeck has released the
        last frame, so the next writes on it cannot overwrite a frame vizdeck is copying.
        Call before writing each frame. Without semaphores it does nothing (wait_released is the
        wait)."""
        if self.semaphores and self._last_complete > 0:
            _, released = self._semaphores()
            self._rt.set_device(self.cuda_device)
            self._rt.wait_semaphore(released, self._last_complete, stream)

    # ---- description

    @property
    def device_uuid(self) -> str:
        """vizdeck's Vulkan deviceUUID, 32 lowercase hex digits (CUDA's cudaDeviceProp::uuid)."""
        return self.description["device_uuid"].lower()

    @property
    def scene(self) -> str:
        return self.description["scene"]

    @property
    def buffers(self) -> list:
        return self.description["buffers"]

    def buffer_index(self, memory: str = "device") -> int:
        """The index of the first buffer in `memory` ("device" or "host"; a buffer without the
        field is device memory). Raises ProtocolError if there is none (an older vizdeck)."""
        for i, b in enumerate(self.buffers):
            if b.get("memory", "device") == memory:
                return i
        raise ProtocolError(f"vizdeck offers no {memory} memory buffer")

    # ---- host memory

    def host_view(self, index: int | None = None) -> memoryview:
        """Host buffer `index` (default: the first host buffer) mapped shared and writable, as a
        memoryview of its `size` bytes (mapped once; unmapped by close)."""
        if index is None:
            index = self.buffer_index("host")
        b = self.buffers[index]
        if b.get("memory", "device") != "host":
            raise ProtocolError(f"buffer {index} is not host memory")
        if index not in self._host:
            m = mmap.mmap(self.fd(index), b["allocation_size"], mmap.MAP_SHARED,
                          mmap.PROT_READ | mmap.PROT_WRITE)
            self._host[index] = [m, None, False]
        return memoryview(self._host[index][0])[:b["size"]]

    def host_pointer(self, index: int | None = None) -> int:
        """The address of host buffer `index`'s mapping (for cudaMemcpy)."""
        if index is None:
            index = self.buffer_index("host")
        self.host_view(index).release()
        h = self._host[index]
        if h[1] is None:
            h[1] = ctypes.c_char.from_buffer(h[0])
        return ctypes.addressof(h[1])

    def host_array(self, index: int | None = None):
        """Host buffer `index` as a NumPy ndarray (shape/dtype/strides of the description)."""
        import numpy as np

        if index is None:
            index = self.buffer_index("host")
        b = self.buffers[index]
        return np.ndarray(tuple(b["shape"]), dtype=DTYPES[b["dtype"]][0], buffer=self.host_view(index),
                          offset=b["offset"], strides=tuple(b["strides"]))

    def host_register(self, index: int | None = None) -> int:
        """cudaHostRegister (flags 0) of host buffer `index`'s mapping, so a device-to-host copy
        into it is a pinned copy. Returns its address."""
        if index is None:
            index = self.buffer_index("host")
        ptr = self.host_pointer(index)
        h = self._host[index]
        if not h[2]:
            if self._rt is None:
                self._rt = cuda_runtime()
            self._rt.set_device(self.cuda_device)
            self._rt.host_register(ptr, self.buffers[index]["allocation_size"])
            h[2] = True
        return ptr

    def fd(self, index: int = 0) -> int:
        """The memory fd of buffer `index` (owned by this Share until imported into CUDA)."""
        return self.fds[self.buffers[index]["fd_index"]]

    # ---- CUDA

    @property
    def cuda_device(self) -> int:
        """The CUDA device whose UUID is vizdeck's (found on first use)."""
        if self._device is None:
            self._device = self._find_device()
        return self._device

    def _find_device(self, device=None):
        rt = self._rt = cuda_runtime()
        n = rt.device_count()
        if n == 0:
            raise CudaUnavailable("no CUDA device")
        want = self.device_uuid
        uuids = {d: rt.device_uuid(d) for d in ([device] if device is not None else range(n))}
        for d, u in uuids.items():
            if u == want:
                return d
        seen = ", ".join(f"{d}: {u}" for d, u in uuids.items())
        raise DeviceMismatch(
            f"vizdeck's GPU (Vulkan device UUID {want}) is not CUDA device "
            f"{'s ' if device is None else ''}{seen}: run vizdeck on the GPU CUDA uses "
            f"(or set CUDA_VISIBLE_DEVICES)"
        )

    def _pointer(self, index, device=None):
        if index in self._imported:
            return self._imported[index][1]
        if self._closed:
            raise ShareError("share closed")
        if device is not None and self._device is None:
            self._device = self._find_device(device)
        dev = self.cuda_device
        rt = self._rt
        rt.set_device(dev)
        b = self.buffers[index]
        fd = self.fds[b["fd_index"]]
        if fd < 0:
            raise ShareError(f"buffer {index}: its fd was already imported")
        # Import the whole exported allocation (allocation_size, as vizdeck asks), dedicated as
        # it was allocated. On success the fd belongs to CUDA (it closes it).
        ext = rt.import_fd(fd, b["allocation_size"], b["dedicated"])
        self.fds[b["fd_index"]] = -1
        try:
            ptr = rt.mapped_buffer(ext, 0, b["size"])
        except Exception:
            rt.destroy(ext)
            raise
        self._imported[index] = (ext, ptr)
        return ptr

    def cuda_array(self, index: int = 0, device: int | None = None):
        """Buffer `index` as a CuPy ndarray over vizdeck's memory (shape/dtype/strides of the
        description). `device`: the CUDA device to use (default: the one with vizdeck's UUID)."""
        try:
            import cupy
        except ImportError as e:
            raise CudaUnavailable(f"cuda_array needs CuPy ({e}); torch_tensor() needs only PyTorch") from e
        ptr = self._pointer(index, device)
        b = self.buffers[index]
        dtype = DTYPES[b["dtype"]][0]
        mem = cupy.cuda.UnownedMemory(ptr, b["size"], self, device_id=self.cuda_device)
        mp = cupy.cuda.MemoryPointer(mem, b["offset"])
        return cupy.ndarray(tuple(b["shape"]), dtype=dtype, memptr=mp, strides=tuple(b["strides"]))

    def torch_tensor(self, index: int = 0, device: int | None = None):
        """Buffer `index` as a PyTorch CUDA tensor (through __cuda_array_interface__; no CuPy
        needed). Strides in the description are bytes; PyTorch's are elements."""
        try:
            import torch
        except ImportError as e:
            raise CudaUnavailable(f"torch_tensor needs PyTorch ({e})") from e
        ptr = self._pointer(index, device)
        b = self.buffers[index]
        _, typestr, _ = DTYPES[b["dtype"]]
        cai = _CudaArrayInterface(ptr + b["offset"], b["shape"], typestr, b["strides"], self)
        t = torch.as_tensor(cai, device=f"cuda:{self.cuda_device}")
        t._vizdeck_share = self  # keep the mapping alive while the tensor is
        return t

    def synchronize(self):
        """Wait for all CUDA work on vizdeck's device (what frame_complete does by default)."""
        if self._rt is not None and self._imported:
            self._rt.set_device(self.cuda_device)
            self._rt.synchronize()

    # ---- frames

    def frame_complete(self, n: int, synchronize: bool = True, memory: str = "device",
                       stream: int = 0) -> None:
        """Tell vizdeck frame `n` (increasing) is completely written, in the device buffers or
        (memory="host") the host buffers.

        Device memory with semaphores: `stream` (the one the writes were issued on) signals
        `ready` = n on the GPU and the message goes at once; nothing waits on the CPU. Otherwise,
        with `synchronize` (the default), the CUDA device is synchronised first so every write
        has landed; pass False only if you synchronised the writing stream yourself."""
        if memory not in ("device", "host"):
            raise ValueError(f"memory {memory!r} (device or host)")
        if n <= self._last_complete:
            raise ValueError(f"frame numbers increase: {n} after {self._last_complete}")
        if memory == "device" and self.semaphores:
            ready, _ = self._semaphores()
            self._rt.set_device(self.cuda_device)
            self._rt.signal_semaphore(ready, n, stream)
        elif synchronize:
            self.synchronize()
        magic = COMPLETE_HOST_MAGIC if memory == "host" else COMPLETE_MAGIC
        msg = magic + b"\0\0\0\0" + struct.pack("<Q", n)
        try:
            self.sock.settimeout(None)
            self.sock.sendall(msg)
        except OSError as e:
            raise VizdeckGone(f"vizdeck is gone (sending frame {n} complete: {e})") from e
        self._last_complete = n

    def wait_released(self, n: int, timeout: float | None = 10.0) -> int:
        """Block until vizdeck answers "released m" with m >= n (it has copied frame n; the
        buffers may be written again). Returns m. Raises TimeoutError after `timeout` seconds,
        VizdeckGone if the socket closes."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            b = b""
            while len(b) < FRAME_MSG_LEN:
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"vizdeck did not release frame {n} within {timeout} s")
                    self.sock.settimeout(left)
                else:
                    self.sock.settimeout(None)
                try:
                    chunk = self.sock.recv(FRAME_MSG_LEN - len(b))
                except socket.timeout:
                    raise TimeoutError(f"vizdeck did not release frame {n} within {timeout} s") from None
                except OSError as e:
                    raise VizdeckGone(f"vizdeck is gone (waiting for frame {n}'s release: {e})") from e
                if not chunk:
                    raise VizdeckGone(f"vizdeck is gone (the socket closed waiting for frame {n}'s release)")
                b += chunk
            if b[:4] != RELEASED_MAGIC:
                raise ProtocolError(f"unexpected frame message {b[:4]!r} (wanted {RELEASED_MAGIC!r})")
            m = struct.unpack("<Q", b[8:16])[0]
            if m >= n:
                return m

    def frame(self, n: int, timeout: float | None = 10.0) -> int:
        """frame_complete(n) then wait_released(n)."""
        self.frame_complete(n)
        return self.wait_released(n, timeout)

    # ---- teardown

    def close(self) -> None:
        """Unmap and destroy the CUDA imports, close unimported fds and the socket (vizdeck
        keeps drawing the last complete frame)."""
        if self._closed:
            return
        self._closed = True
        if self._sems is not None:
            try:
                self._rt.synchronize()  # no queued wait or signal still uses them
                for sem in self._sems:
                    self._rt.destroy_semaphore(sem)
            except Exception:
                pass
            self._sems = None
        for ext, ptr in self._imported.values():
            try:
                self._rt.free(ptr)
                self._rt.destroy(ext)
            except Exception:
                pass
        self._imported.clear()
        for h in self._host.values():
            m, anchor, registered = h
            h[1] = None
            try:
                if registered:
                    self._rt.host_unregister(ctypes.addressof(anchor))
                del anchor
                m.close()
            except Exception:
                pass
        self._host.clear()
        for i, fd in enumerate(self.fds):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass
                self.fds[i] = -1
        try:
            self.sock.close()
        except OSError:
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        # Arrays from cuda_array()/torch_tensor() hold this object, so this runs after them.
        try:
            self.close()
        except Exception:
            pass


def _recv_exact(sock, n, what):
    b = b""
    while len(b) < n:
        try:
            chunk = sock.recv(n - len(b))
        except socket.timeout:
            raise TimeoutError(f"vizdeck sent no {what}") from None
        except OSError as e:
            raise VizdeckGone(f"vizdeck is gone (reading the {what}: {e})") from e
        if not chunk:
            raise VizdeckGone(f"vizdeck closed the socket mid-{what}")
        b += chunk
    return b


def _recv_fds(sock, bufsize, maxfds):
    """socket.recv_fds, but close-on-exec: CPython's recv_fds ignores its flags argument, so
    MSG_CMSG_CLOEXEC is passed to recvmsg here (as vizdeck's Rust receiver does)."""
    msg, ancdata, flags, _ = sock.recvmsg(
        bufsize, socket.CMSG_SPACE(maxfds * 4), getattr(socket, "MSG_CMSG_CLOEXEC", 0))
    fds = array.array("i")
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return msg, list(fds), flags


def connect(path: str, timeout: float | None = 30.0) -> Share:
    """Connect to vizdeck's --share socket at `path` and receive the description and fds.

    vizdeck serves one producer at a time; a second waits (until `timeout`) for the first to go.
    """
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(os.fspath(path))
    except OSError as e:
        sock.close()
        raise VizdeckGone(f"cannot connect to vizdeck at {path}: {e} (is `vizdeck --share {path}` running?)") from e
    sock.settimeout(timeout)
    fds = []
    try:
        try:
            header, fds, flags = _recv_fds(sock, HEADER_LEN, MAX_FDS)
        except socket.timeout:
            raise TimeoutError(f"vizdeck at {path} sent no description within {timeout} s "
                               "(another producer connected?)") from None
        except OSError as e:
            raise VizdeckGone(f"vizdeck is gone (reading the description: {e})") from e
        if flags & getattr(socket, "MSG_CTRUNC", 0x8):
            raise ProtocolError(f"share message with too many fds (at most {MAX_FDS})")
        if not header:
            raise VizdeckGone(f"vizdeck at {path} closed the connection (its offer failed; see its notice)")
        header += _recv_exact(sock, HEADER_LEN - len(header), "header")
        if header[:4] != MAGIC:
            raise ProtocolError(f"not a vizdeck share message (magic {header[:4]!r})")
        n = struct.unpack("<I", header[4:8])[0]
        if n > MAX_BODY:
            raise ProtocolError(f"share message body of {n} bytes (at most {MAX_BODY})")
        body = _recv_exact(sock, n, "description")
        try:
            desc = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise ProtocolError(f"bad share description: {e}") from e
        _validate(desc, len(fds))
    except BaseException:
        for fd in fds:
            os.close(fd)
        sock.close()
        raise
    return Share(sock, desc, fds)

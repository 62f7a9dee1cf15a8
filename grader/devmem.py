"""GPU memory that reaches a boxed worker as a file descriptor (CUDA's virtual memory management).

The grader owns every buffer a submission writes. Legacy CUDA IPC (`cudaIpcGetMemHandle`) names the
exporting process by its pid, so a worker that opened such a handle had to share the grader's PID
namespace, and with it the host's /proc (every process's command line, and the roots and memory of
processes of its own uid). An allocation made with `cuMemCreate` for the POSIX file-descriptor handle
type is exported as a descriptor instead: it travels over a unix socket like any other descriptor, so
the worker lives in a PID namespace of its own, as every other box does.

Both sides call the driver API through ctypes (CuPy does not wrap these calls); both run in the
primary context the CUDA runtime uses, so the mapped addresses are ordinary device pointers to the
runtime, to CuPy and to the submission.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass

CU_MEM_ALLOCATION_TYPE_PINNED = 1
CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1
CU_MEM_LOCATION_TYPE_DEVICE = 1
CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3
CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0


class DriverError(RuntimeError):
    """A driver call failed: the call's name and CUDA's name for the error."""


class _Location(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("id", ctypes.c_int)]


class _AllocFlags(ctypes.Structure):
    _fields_ = [("compressionType", ctypes.c_ubyte), ("gpuDirectRDMACapable", ctypes.c_ubyte),
                ("usage", ctypes.c_ushort), ("reserved", ctypes.c_ubyte * 4)]


class _AllocationProp(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("requestedHandleTypes", ctypes.c_int), ("location", _Location),
                ("win32HandleMetaData", ctypes.c_void_p), ("allocFlags", _AllocFlags)]


class _AccessDesc(ctypes.Structure):
    _fields_ = [("location", _Location), ("flags", ctypes.c_int)]


@functools.lru_cache(maxsize=1)
def _driver() -> ctypes.CDLL:
    return ctypes.CDLL("libcuda.so.1", mode=os.RTLD_LOCAL)


def _call(name: str, *args) -> None:
    driver = _driver()
    result = getattr(driver, name)(*args)
    if result != 0:
        text = ctypes.c_char_p()
        driver.cuGetErrorName(result, ctypes.byref(text))
        raise DriverError(f"{name} failed: {(text.value or b'error %d' % result).decode()}")


def current_device() -> int:
    device = ctypes.c_int()
    _call("cuCtxGetDevice", ctypes.byref(device))
    return device.value


def _properties(device: int) -> _AllocationProp:
    prop = _AllocationProp()
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED
    prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR
    prop.location = _Location(CU_MEM_LOCATION_TYPE_DEVICE, device)
    return prop


@functools.lru_cache(maxsize=8)
def granularity(device: int) -> int:
    size = ctypes.c_size_t()
    _call("cuMemGetAllocationGranularity", ctypes.byref(size), ctypes.byref(_properties(device)),
          CU_MEM_ALLOC_GRANULARITY_MINIMUM)
    return size.value


def rounded(nbytes: int, device: int) -> int:
    """`nbytes` rounded up to what the driver maps (2 MiB on current GPUs)."""
    step = granularity(device)
    return max(step, -(-nbytes // step) * step)


@dataclass
class Mapping:
    """An allocation mapped read-write for one device at `pointer`, `size` bytes long."""

    handle: int
    pointer: int
    size: int

    def close(self) -> None:
        if self.pointer:
            _call("cuMemUnmap", ctypes.c_uint64(self.pointer), ctypes.c_size_t(self.size))
            _call("cuMemAddressFree", ctypes.c_uint64(self.pointer), ctypes.c_size_t(self.size))
            self.pointer = 0
        if self.handle:
            _call("cuMemRelease", ctypes.c_uint64(self.handle))
            self.handle = 0


def _map(handle: int, size: int, device: int) -> Mapping:
    pointer = ctypes.c_uint64()
    try:
        _call("cuMemAddressReserve", ctypes.byref(pointer), ctypes.c_size_t(size), ctypes.c_size_t(0),
              ctypes.c_uint64(0), ctypes.c_ulonglong(0))
    except DriverError:
        _call("cuMemRelease", ctypes.c_uint64(handle))
        raise
    mapping = Mapping(handle, pointer.value, size)
    try:
        _call("cuMemMap", ctypes.c_uint64(mapping.pointer), ctypes.c_size_t(size), ctypes.c_size_t(0),
              ctypes.c_uint64(handle), ctypes.c_ulonglong(0))
    except DriverError:
        _call("cuMemAddressFree", ctypes.c_uint64(mapping.pointer), ctypes.c_size_t(size))
        mapping.pointer = 0
        mapping.close()
        raise
    access = _AccessDesc(_Location(CU_MEM_LOCATION_TYPE_DEVICE, device), CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    try:
        _call("cuMemSetAccess", ctypes.c_uint64(mapping.pointer), ctypes.c_size_t(size), ctypes.byref(access),
              ctypes.c_size_t(1))
    except DriverError:
        mapping.close()
        raise
    return mapping


def allocate(nbytes: int, device: int | None = None) -> Mapping:
    """Device memory of at least `nbytes` (rounded up to the granularity), exportable as a descriptor."""
    device = current_device() if device is None else device
    size = rounded(nbytes, device)
    handle = ctypes.c_uint64()
    _call("cuMemCreate", ctypes.byref(handle), ctypes.c_size_t(size), ctypes.byref(_properties(device)),
          ctypes.c_ulonglong(0))
    return _map(handle.value, size, device)


def export(mapping: Mapping) -> int:
    """A new descriptor for the allocation behind `mapping`; the caller closes it."""
    fd = ctypes.c_int(-1)
    _call("cuMemExportToShareableHandle", ctypes.byref(fd), ctypes.c_uint64(mapping.handle),
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, ctypes.c_ulonglong(0))
    return fd.value


def import_fd(fd: int, size: int, device: int | None = None) -> Mapping:
    """Map the allocation a descriptor stands for (`size`: the whole allocation, as exported)."""
    device = current_device() if device is None else device
    if size <= 0 or size % granularity(device):
        raise DriverError(f"an allocation of {size} bytes is not a whole number of {granularity(device)}-byte pages")
    handle = ctypes.c_uint64()
    _call("cuMemImportFromShareableHandle", ctypes.byref(handle), ctypes.c_void_p(fd),
          CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)
    return _map(handle.value, size, device)

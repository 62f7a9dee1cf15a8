"""What the GPU is: name, architecture, size, clocks, and the FP32 peak they imply."""

from __future__ import annotations

from dataclasses import dataclass

from grader.errors import BackendUnavailable

FP32_LANES_PER_SM = {
    (6, 0): 64, (6, 1): 128, (6, 2): 128, (7, 0): 64, (7, 2): 64, (7, 5): 64,
    (8, 0): 64, (8, 6): 128, (8, 7): 128, (8, 9): 128, (9, 0): 128,
    (10, 0): 128, (10, 3): 128, (11, 0): 128, (12, 0): 128, (12, 1): 128,
}
"""FP32 FMA units per multiprocessor, from the CUDA programming guide's throughput table."""


@dataclass(frozen=True)
class DeviceInfo:
    name: str
    major: int
    minor: int
    multiprocessors: int
    clock_khz: int
    l2_bytes: int
    memory_bytes: int
    driver_version: int
    runtime_version: int

    @property
    def compute_capability(self) -> str:
        return f"{self.major}.{self.minor}"

    @property
    def fp32_peak_gflops(self) -> float | None:
        lanes = FP32_LANES_PER_SM.get((self.major, self.minor))
        if lanes is None or not self.clock_khz:
            return None
        return self.multiprocessors * lanes * 2 * self.clock_khz * 1e3 / 1e9

    @property
    def driver(self) -> str:
        return _cuda_version(self.driver_version)


def _cuda_version(encoded: int) -> str:
    return f"{encoded // 1000}.{encoded % 1000 // 10}"


def query(ordinal: int = 0) -> DeviceInfo:
    """Properties of GPU `ordinal`; BackendUnavailable when there is no usable GPU."""
    try:
        import cupy
        rt = cupy.cuda.runtime
        props = rt.getDeviceProperties(ordinal)
        clock_khz = props.get("clockRate") or rt.deviceGetAttribute(rt.cudaDevAttrClockRate, ordinal)
        return DeviceInfo(
            name=props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"]),
            major=props["major"], minor=props["minor"],
            multiprocessors=props["multiProcessorCount"], clock_khz=int(clock_khz),
            l2_bytes=props["l2CacheSize"], memory_bytes=props["totalGlobalMem"],
            driver_version=rt.driverGetVersion(), runtime_version=rt.runtimeGetVersion(),
        )
    except ImportError as exc:
        raise BackendUnavailable("CuPy is not installed", hint="pip install cupy-cuda13x") from exc
    except Exception as exc:  # CUDARuntimeError and friends: no driver, no device
        raise BackendUnavailable(f"no usable NVIDIA GPU: {exc}",
                                 hint="grade on a machine with an NVIDIA GPU and driver") from exc


def count() -> int:
    """How many GPUs this process can see (0 without a driver or CuPy)."""
    try:
        import cupy
        return int(cupy.cuda.runtime.getDeviceCount())
    except Exception:  # no CuPy, no driver, no device: none usable
        return 0

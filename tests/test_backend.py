"""The backend protocols: what the pipeline asks of the GPU and of the emulator."""

from __future__ import annotations


def test_both_backends_answer_the_backend_protocol():
    """The pipeline depends on grader.backend's protocols, not on either class."""
    import shutil

    from grader.backend import Backend, TimingBackend
    from grader.cuda_backend import CudaBackend
    from grader.emulator.backend import EmulatorBackend
    for member in ("build", "call_limit", "worker", "buffer", "synchronize", "free_memory", "environment"):
        assert callable(getattr(CudaBackend, member)) and callable(getattr(EmulatorBackend, member))
    for member in ("flush_bytes", "bandwidth_gbps", "time_baseline"):
        assert hasattr(CudaBackend, member)
    if shutil.which("g++"):
        emulator = EmulatorBackend()
        assert isinstance(emulator, Backend) and not isinstance(emulator, TimingBackend)

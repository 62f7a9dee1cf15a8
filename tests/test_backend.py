"""The backend protocols: what the pipeline asks of the GPU and of the emulator."""

from __future__ import annotations


def test_both_backends_answer_the_backend_protocol():
    """The pipeline depends on grader.backends' protocols, not on either class."""
    import shutil

    from grader.backends import Backend, TimingBackend
    from grader.backends.cuda import CudaBackend
    from grader.backends.emulator import EmulatorBackend
    for member in ("build", "call_limit", "worker", "buffer", "synchronize", "free_memory", "environment"):
        assert callable(getattr(CudaBackend, member)) and callable(getattr(EmulatorBackend, member))
    for member in ("flush_bytes", "bandwidth_gbps", "time_baseline"):
        assert hasattr(CudaBackend, member)
    if shutil.which("g++"):
        emulator = EmulatorBackend()
        assert isinstance(emulator, Backend) and not isinstance(emulator, TimingBackend)

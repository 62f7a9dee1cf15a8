"""The bandwidth memory-bound metrics are shown against: measured as a device-to-device copy."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.gpu


def test_the_copy_bandwidth_is_measured_once_and_is_plausible(cuda_backend):
    first = cuda_backend.bandwidth_gbps()
    assert 100 < first < 20_000, f"{first:.0f} GB/s"  # any data-centre GPU from the last decade, well inside
    assert cuda_backend.bandwidth_gbps() == first, "measured once per backend"

"""The CPU emulator's machinery: the same `.cu` file, rewritten to C++ and run on fibers.

`translate` rewrites what macros cannot (kernel launches, `extern __shared__`), `include/` holds
the compatibility headers, `runtime.cpp` the fiber scheduler and the CUDA runtime API, and
`calibrate.cu` the trusted program that measures the emulator's speed. The backend that plugs it
into the grading pipeline is `grader.backends.emulator`.
"""

from pathlib import Path

FOLDER = Path(__file__).resolve().parent
"""The emulator's own files, which the boxed g++ must see."""
INCLUDE = FOLDER / "include"
RUNTIME = FOLDER / "runtime.cpp"
CALIBRATION = FOLDER / "calibrate.cu"

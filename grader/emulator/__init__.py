"""The CPU emulator backend: the same `.cu` file, rewritten to C++ and run on fibers.

`translate` rewrites what macros cannot (kernel launches, `extern __shared__`), `include/` holds
the compatibility headers, `runtime.cpp` the fiber scheduler and the CUDA runtime API, and
`backend` plugs it into the grading pipeline.
"""

"""Warp Lab: CUDA warp-level primitives and reductions, lane by lane.

Importing this package is cheap: CuPy is imported only when a GPU backend is actually asked for.
Submodules:

* ``helpers.engine.backend``  which engine runs the kernels (a CUDA GPU through CuPy, or the emulator)
* ``helpers.engine.kernels``  loading ``kernels/*.cu`` (CuPy RawModule) and compile-only PTX through NVRTC
* ``helpers.engine.warp``     the public warp-intrinsic API, the same answers on both backends
* ``helpers.engine.emulator`` the lane-exact NumPy model of the intrinsics
* ``helpers.engine.trace``    the one trace format every figure is drawn from
"""

__version__ = "0.1.0"

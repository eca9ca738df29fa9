"""Run one thing anywhere (the ground floor): which engine (backend), parameter checks (params), the
operator table (ops), the lane-exact intrinsic semantics (emulator), the intrinsic table (intrinsics)
and the public warp API (warp, warp_cupy on the GPU), kernels/ sources, NVRTC and the shipped PTX
(kernels, nvrtc), the SASS ptxas makes of it (sass), the one trace format (trace) and the intrinsic
cases (cases). Imports nothing else of helpers.
"""

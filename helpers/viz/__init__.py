"""Figures drawn from traces and results (never from a Python copy of a kernel): style, lanes (warp
figures), block, ladder, allreduce, diverged, steps (the lane debugger's step as SVG). Imports engine,
machine, topics, bench and data.
"""

"""Figures drawn from traces and results (never from a Python copy of a kernel): style, lanes (warp
figures), block, ladder, allreduce, diverged. Imports engine, topics, bench and data.
"""

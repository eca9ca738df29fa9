"""Timing on a GPU (timing: CUDA-graph device time beside host-inclusive time, cupy.sum as the
yardstick) and queries over the recorded results. Imports engine and topics.
"""

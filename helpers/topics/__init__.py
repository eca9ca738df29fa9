"""What each notebook teaches, as runs of the real kernels of kernels/ on either engine (launch: the
GPU, or the SIMT machine of helpers.machine): ballot_uses, warp_reduce, block_reduce, reduce (the
ladder), reduce_maps, allreduce; registry gathers every kernel file's instantiations.
Imports helpers.engine and helpers.machine only.
"""

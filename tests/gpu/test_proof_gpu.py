"""The proof's GPU launcher returns every output in its own dtype and length, also when the argument
is a view with another dtype than its base (a float64 view of uint32 words, a misaligned head)."""
import numpy as np
import pytest

from helpers.recording.proof import worker

pytestmark = pytest.mark.gpu

_ADD_ONE = r'''extern "C" __global__ void add_one(double* p, int n) {
    int i = threadIdx.x;
    if (i < n) p[i] += 1.0;
}'''


def test_views_of_another_dtype_come_back_whole_and_typed() -> None:
    import cupy

    fn = cupy.RawKernel(_ADD_ONE, "add_one")
    words = np.zeros(12, np.uint32)
    a = words.view(np.float64)[1:5]
    a[:] = [1.0, -2.5, 1e300, 0.125]
    got = worker.gpu_launch(fn, (1, 1, 1), (32, 1, 1), [a, np.int32(4)], 0)
    assert got[0].dtype == np.float64 and got[0].shape == (4,)
    assert got[0].tolist() == [2.0, -1.5, 1e300 + 1.0, 1.125]
    assert got[1] is None

"""The one trace format: what every lane holds at every step of a warp-level algorithm.

A :class:`Trace` is produced identically by an instrumented real kernel (built with
``-DWARPLAB_TRACE``, see ``kernels/warplab_common.cuh``) and by the emulator, and every figure of
the series is drawn from one. Step 0 is the input; step k >= 1 is the state after the k-th step.

Arrays are shaped (n_steps, n_warps, 32):

* ``held``      the value the lane holds after the step
* ``received``  the value the lane received during the step (its own input at step 0)
* ``src_lane``  the lane it received from (its own lane when it kept its own value; -1: no call)
* ``active``    the lane was active at this step
* ``in_mask``   the lane was named in the step's member mask
* ``defined``   the received value is defined by the Programming Guide (hatched when False)

A *block trace* (the block reductions of notebook 04, drawn from the SIMT machine's run by
:meth:`helpers.machine.trace.MachineTrace.block`) is the same format with its optional block-level
fields set: a step is then a *phase* between the block's barriers, ``held`` is the value each
thread moved in that phase (``active`` False: it moved none), and

* ``kinds``          per step: "input", "warp" (shuffles), "load" (shared -> registers), "store"
                     (registers -> shared), "barrier" (``__syncthreads()``) or "return" (the value written out)
* ``block``          the block shape (x, y); threads are tid = y * x + x, warp w holds tids 32w..32w+31
* ``shared``, ``shared_defined``  (n_steps, n_slots): shared memory after each step
* ``loads``, ``stores``  per step, an (k, 2) int array of (thread, slot) pairs
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

import numpy as np

from helpers.engine import emulator
from helpers.engine import params
from helpers.engine.emulator import ShuffleResult

_ARRAYS = ("held", "received", "src_lane", "active", "in_mask", "defined")
# A trace keeps six arrays per lane per step (about 15 bytes a lane a step): traces are for figures
# and recordings of a few warps, so they stop here (a six-step trace of this many is about 50 MB).
MAX_TRACE_WARPS = 2**14


def check_trace_size(n_warps: int) -> None:
    """Raise ValueError if a trace of ``n_warps`` warps would exceed :data:`MAX_TRACE_WARPS`."""
    if n_warps > MAX_TRACE_WARPS:
        raise ValueError(f"a trace keeps every lane at every step, so it takes at most MAX_TRACE_WARPS = "
                         f"{MAX_TRACE_WARPS:,} warps; got {n_warps:,}. For results without a trace (up to "
                         f"params.MAX_WARPS warps), call the function without _trace (e.g. warp_reduce, warp_reduce_sum)")


@dataclass(frozen=True)
class Trace:
    """What every lane holds at every step; see the module docstring for the fields."""

    title: str
    source: str
    labels: tuple[str, ...]
    held: np.ndarray
    received: np.ndarray
    src_lane: np.ndarray
    active: np.ndarray
    in_mask: np.ndarray
    defined: np.ndarray
    meta: dict[str, Any] = field(default_factory=dict)
    kinds: Optional[tuple[str, ...]] = None
    block: Optional[tuple[int, int]] = None
    shared: Optional[np.ndarray] = None
    shared_defined: Optional[np.ndarray] = None
    loads: Optional[tuple[np.ndarray, ...]] = None
    stores: Optional[tuple[np.ndarray, ...]] = None

    def __post_init__(self) -> None:
        shape = self.held.shape
        if len(shape) != 3 or shape[2] != params.LANES or len(self.labels) != shape[0]:
            raise ValueError(f"a Trace needs arrays of shape (n_steps, n_warps, 32) and one label per step; "
                             f"got held {shape} with {len(self.labels)} labels")
        for name in _ARRAYS:
            if getattr(self, name).shape != shape:
                raise ValueError(f"Trace.{name} must have shape {shape}; got {getattr(self, name).shape}")

    @property
    def n_steps(self) -> int:
        return self.held.shape[0]

    @property
    def n_warps(self) -> int:
        return self.held.shape[1]

    def same_as(self, other: "Trace") -> bool:
        """Equal step for step where both are defined, with identical flags (sources/titles ignored)."""
        if self.held.shape != other.held.shape or self.labels != other.labels:
            return False
        flags = all(np.array_equal(getattr(self, n), getattr(other, n)) for n in ("active", "in_mask", "defined"))
        d = self.defined
        return flags and all(
            np.array_equal(np.where(d, getattr(self, n), 0), np.where(d, getattr(other, n), 0))
            for n in ("held", "received", "src_lane")
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (values as lists; dtype kept in ``dtype``)."""
        out: dict[str, Any] = {"title": self.title, "source": self.source, "labels": list(self.labels),
                               "dtype": self.held.dtype.name, "meta": self.meta}
        for name in _ARRAYS:
            a = getattr(self, name)
            out[name] = a.astype(int).tolist() if a.dtype == np.bool_ else a.tolist()
        if self.kinds is not None:
            out.update(kinds=list(self.kinds), block=list(self.block), shared=self.shared.tolist(),
                       shared_defined=self.shared_defined.astype(int).tolist(),
                       loads=[a.tolist() for a in self.loads], stores=[a.tolist() for a in self.stores])
        return out

    @property
    def is_block(self) -> bool:
        """A block trace (the optional block-level fields are set)."""
        return self.kinds is not None

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Trace":
        dtype = np.dtype(d["dtype"])
        arrays = {
            "held": np.asarray(d["held"], dtype=dtype),
            "received": np.asarray(d["received"], dtype=dtype),
            "src_lane": np.asarray(d["src_lane"], dtype=np.int32),
            **{n: np.asarray(d[n], dtype=bool) for n in ("active", "in_mask", "defined")},
        }
        if "kinds" in d:
            pairs = lambda ps: tuple(np.asarray(p, np.int64).reshape(-1, 2) for p in ps)  # noqa: E731
            arrays.update(kinds=tuple(d["kinds"]), block=tuple(d["block"]), shared=np.asarray(d["shared"], dtype),
                          shared_defined=np.asarray(d["shared_defined"], bool), loads=pairs(d["loads"]),
                          stores=pairs(d["stores"]))
        return cls(title=d["title"], source=d["source"], labels=tuple(d["labels"]), meta=d.get("meta", {}), **arrays)

    def save(self, path: Path | str) -> None:
        Path(path).write_text(json.dumps(self.to_dict()) + "\n")

    @classmethod
    def load(cls, path: Path | str) -> "Trace":
        return cls.from_dict(json.loads(Path(path).read_text()))


class Recorder:
    """Builds a :class:`Trace` step by step, for algorithms run on the emulator.

    >>> rec = Recorder(values, "WarpReduceSum")          # step 0: the input
    >>> r = emulator.shuffle("down", held, ...)           # a shuffle step
    >>> rec.step("shfl_down 16", held + r.values, r, mask, active)
    """

    def __init__(self, values: np.ndarray, title: str, label: str = "input", *,
                 active: Optional[np.ndarray] = None, mask: Optional[np.ndarray] = None,
                 meta: Optional[dict[str, Any]] = None) -> None:
        v = np.atleast_2d(values)
        check_trace_size(v.shape[0])
        self.title, self.meta = title, dict(meta or {})
        act = np.ones(v.shape, bool) if active is None else np.atleast_2d(active)
        in_mask = np.ones(v.shape, bool) if mask is None else emulator.mask_bits(np.atleast_1d(mask))
        self._steps: list[tuple] = []
        own = np.broadcast_to(emulator.LANE, v.shape).astype(np.int32)
        self._add(label, v, v, np.where(act, own, -1), act, in_mask, act)

    def _add(self, label: str, held, received, src, active, in_mask, defined) -> None:
        self._steps.append((label, held.copy(), received.copy(), src.astype(np.int32), active.copy(),
                            np.broadcast_to(in_mask, held.shape).copy(), defined.copy()))

    def step(self, label: str, held: np.ndarray, shuffled: ShuffleResult, mask: np.ndarray,
             active: np.ndarray) -> None:
        """Record a shuffle step: ``held`` is what lanes hold after combining what ``shuffled`` gave."""
        self._add(label, np.atleast_2d(held), np.atleast_2d(shuffled.values), np.atleast_2d(shuffled.src_lane),
                  np.atleast_2d(active), emulator.mask_bits(np.atleast_1d(mask)), np.atleast_2d(shuffled.defined))

    def trace(self, source: str = "emulator") -> Trace:
        cols = list(zip(*self._steps))
        return Trace(title=self.title, source=source, labels=tuple(cols[0]), held=np.stack(cols[1]),
                     received=np.stack(cols[2]), src_lane=np.stack(cols[3]), active=np.stack(cols[4]),
                     in_mask=np.stack(cols[5]), defined=np.stack(cols[6]), meta=self.meta)


def gpu_source() -> str:
    """The ``source`` string for traces recorded on this machine's GPU."""
    from helpers.engine.backend import detect

    d = detect()
    return f"GPU: {d.gpu_name} (compute capability {d.compute_capability}), CuPy {d.cupy_version}"


def run_traced(kernel_file: str, name_expression: str, n_steps: int, n_threads: int, grid: int, block: int,
               args: Sequence[Any], name_expressions: Sequence[str] = (), defines: Sequence[str] = (),
               shared_mem: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Launch an instrumented kernel (built with ``-DWARPLAB_TRACE``) and read its trace buffers.

    Returns ``(held, received, src_lane)``, each (n_steps, n_threads) (held/received as float64,
    exact for 32-bit values). Needs a GPU.
    """
    import cupy

    from helpers.engine import kernels

    check_trace_size(-(-n_threads // params.LANES))
    exprs = tuple(name_expressions) or (name_expression,)
    mod = kernels.module(kernel_file, exprs, ("WARPLAB_TRACE", *defines))
    held = cupy.full((n_steps, n_threads), np.nan)
    received = cupy.full((n_steps, n_threads), np.nan)
    src = cupy.full((n_steps, n_threads), -1, dtype=np.int32)
    sink = np.zeros(1, dtype=[("held", "u8"), ("received", "u8"), ("src", "u8"), ("n_slots", "i8"),
                              ("n_steps", "i4"), ("pad", "i4")])
    sink["held"], sink["received"], sink["src"] = held.data.ptr, received.data.ptr, src.data.ptr
    sink["n_slots"], sink["n_steps"] = n_threads, n_steps
    ptr = mod.get_global("warplab_trace_sink")
    ptr.copy_from_host(sink.ctypes.data, sink.nbytes)
    mod.get_function(name_expression)((grid,), (block,), tuple(args), shared_mem=shared_mem)
    cupy.cuda.get_current_stream().synchronize()
    return cupy.asnumpy(held), cupy.asnumpy(received), cupy.asnumpy(src)

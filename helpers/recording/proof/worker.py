"""``python3 -m helpers.recording.proof.worker SPEC.json OUT``: launch recorded PTX on the GPU, one item at a time.

The GPU side of :mod:`helpers.recording.proof.record` and :mod:`helpers.recording.proof.sanitize`, kept thin and in its
own process: a launch that kills the CUDA context (synccheck stops a kernel at a divergent barrier)
loses only the rest of this process's items, which the caller runs again in a fresh one.

SPEC is JSON: ``{"ptx": PATH, "items": [{"key", "function", "kind": "program" | "launch", "item"}]}``
where ``item`` is a :class:`~helpers.recording.proof.programs.Program` or :class:`~helpers.recording.proof.launches.Launch`
as a dict. For each item the worker prints ``@@start KEY``, rebuilds the arguments from the seed,
launches, synchronises, prints ``@@done KEY`` (or ``@@error KEY message`` and exits 3), and at the
end writes ``OUT.npz`` (outputs, ``KEY.ARG``) and ``OUT.json`` (``{KEY: input checksum}``).
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

from helpers.recording.proof import launches, programs, rand


def build(kind: str, item: dict[str, Any]) -> tuple[Any, list[Any], list[tuple[int, str]]]:
    """(the item, its arguments, [(position, name)] of its outputs)."""
    if kind == "program":
        p = programs.Program.from_dict(item)
        return p, programs.arguments(p), [(2, "iout"), (3, "fout")]
    launch = launches.Launch.from_dict(item)
    return launch, launches.arguments(launch), [(i, a.name) for i, a in launches.output_names(launch)]


STANDIN_ENV = "WARPLAB_PROOF_STANDIN"   # set: no GPU, launches leave every buffer as it was (dry runs)


class _StandIn:
    """A module whose kernels do nothing: lets the whole recording run without a GPU (tests)."""

    def get_function(self, name: str) -> Callable[..., None]:
        return lambda grid, block, args, shared_mem=0: None


def gpu_module(ptx: str) -> Any:
    """The PTX loaded by the driver (cuModuleLoadData: the driver JIT-compiles exactly this PTX)."""
    if os.environ.get(STANDIN_ENV):
        return _StandIn()
    import cupy

    mod = cupy.cuda.function.Module()
    mod.load(ptx.encode())
    return mod


def gpu_launch(fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: list[Any], shared_mem: int) -> list[Any]:
    """Copy the NumPy arrays to the GPU, launch, wait, copy every array back (scalars stay None)."""
    if os.environ.get(STANDIN_ENV):
        return [a.copy() if isinstance(a, np.ndarray) else None for a in args]
    import cupy

    dev = [_device(a) if isinstance(a, np.ndarray) else a for a in args]
    fn(tuple(grid), tuple(block), tuple(dev), shared_mem=shared_mem)
    cupy.cuda.runtime.deviceSynchronize()
    return [cupy.asnumpy(d) if isinstance(d, cupy.ndarray) else None for d in dev]


def _device(a: np.ndarray) -> Any:
    """``a`` on the GPU, same dtype and bytes; a view into a contiguous base stays a view at the same
    byte offset into a copy of that base, so its address has the same misalignment as on the host
    (the float4 kernels' head path). The base may have another dtype (a float64 view of uint32 words):
    the offset and the length are counted in bytes, never in the base's elements."""
    import cupy

    base = a.base
    if isinstance(base, np.ndarray) and a.ndim == 1 and a.flags.c_contiguous and base.flags.c_contiguous:
        off = a.__array_interface__["data"][0] - base.__array_interface__["data"][0]
        raw = cupy.asarray(base.reshape(-1).view(np.uint8))
        return raw[off:off + a.nbytes].view(a.dtype)
    return cupy.asarray(a)


def run(spec: dict[str, Any], out: Path, say: Callable[[str], None] = print) -> int:
    mod = gpu_module(Path(spec["ptx"]).read_text())
    arrays: dict[str, np.ndarray] = {}
    sums: dict[str, int] = {}
    status = 0
    for it in spec["items"]:
        key = it["key"]
        say(f"@@start {key}")
        try:
            obj, args, outs = build(it["kind"], it["item"])
            sums[key] = rand.checksum(*(np.asarray(a) for a in args))
            got = gpu_launch(mod.get_function(it["function"]), obj.grid, obj.block, args, obj.shared_mem)
            for pos, name in outs:
                if got[pos].dtype != args[pos].dtype or got[pos].shape != args[pos].shape:
                    raise TypeError(f"{name} came back as {got[pos].dtype}{got[pos].shape}, "
                                    f"not {args[pos].dtype}{args[pos].shape}")
                arrays[f"{key}.{name}"] = got[pos]
        except Exception as exc:  # a CUDA error: the context may be gone; the caller restarts us
            say(f"@@error {key} {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            status = 3
            break
        say(f"@@done {key}")
    np.savez_compressed(f"{out}.npz", **arrays)
    Path(f"{out}.json").write_text(json.dumps(sums))
    return status


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    spec = json.loads(Path(argv[0]).read_text())
    return run(spec, Path(argv[1]), say=lambda s: print(s, flush=True))


if __name__ == "__main__":
    raise SystemExit(main())

"""SASS, the machine code the GPU runs, made and read on the CPU: ``ptxas`` assembles PTX for one
architecture and ``cuobjdump -sass`` prints the result; :func:`functions` parses that text, and
:func:`loads_in_flight` answers the question a bandwidth-bound loop raises: how many 16-byte global
loads does each thread keep in flight before it waits for the first of them?

PTX is a virtual ISA; ptxas, "the optimising backend" (PTX ISA, "Introduction"), schedules it again.
The same PTX loop that issues eight ``ld.global.v4.f32`` before its first add can come out with
fewer in flight: ptxas moves later loads below earlier adds and reuses their registers. Only the
SASS says what the hardware is asked to keep in flight, which is what Little's law counts.

The tools: ``ptxas`` comes with a CUDA toolkit (``$CUDA_PATH/bin``, ``/usr/local/cuda/bin``, PATH)
or the ``nvidia-cuda-nvcc`` wheel; ``cuobjdump``, and the ``nvdisasm`` it runs to print SASS, with a
toolkit or the ``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm`` wheels. ``$WARPLAB_PTXAS``,
``$WARPLAB_CUOBJDUMP`` and ``$WARPLAB_NVDISASM`` name the files directly. The H200 host's
compiler is CUDA 13.0 (``data/machine_sass.json.gz``); another ptxas release may schedule
differently, so a claim about the H200's SASS is checked with :data:`H200_PTXAS`.
"""
from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Sequence

H200_PTXAS = "V13.0.88"  # ptxas --version on the H200 host (data/machine_sass.json.gz's "ptxas" build)

HOW_TO_GET_IT = (
    "Reading SASS needs ptxas, cuobjdump and nvdisasm, which are not all found here. Install a CUDA "
    "toolkit (they are in its bin/), or `pip install nvidia-cuda-nvcc nvidia-cuda-cuobjdump "
    "nvidia-cuda-nvdisasm`, or set WARPLAB_PTXAS, WARPLAB_CUOBJDUMP and WARPLAB_NVDISASM to the files."
)


class SassUnavailable(ImportError):
    """ptxas, cuobjdump or nvdisasm is not found here; the message says how to get them."""


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: ``address`` in bytes from the function's start, ``predicate`` as
    printed (``""``, ``"@P0"``, ``"@!P1"``), ``opcode`` with its modifiers (``"LDG.E.EF.128"``) and
    ``operands`` as printed (``"R8"``, ``"desc[UR10][R14.64]"``)."""

    address: int
    predicate: str
    opcode: str
    operands: tuple[str, ...]


def _tool(name: str, env: str) -> Optional[str]:
    named = os.environ.get(env)
    if named:
        return named if Path(named).is_file() else None
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).is_file():
            return str(Path(root) / "bin" / name)
    found = shutil.which(name)
    if found:
        return found
    try:  # the NVIDIA wheels: a namespace package nvidia/, the tools in nvidia/cu*/bin/
        import nvidia

        for base in nvidia.__path__:
            for hit in sorted(Path(base).glob(f"cu*/bin/{name}")):
                return str(hit)
    except ImportError:
        pass
    return None


@functools.lru_cache(maxsize=1)
def tools() -> Optional[tuple[str, str, str]]:
    """(ptxas, cuobjdump, nvdisasm) paths, or None when any is missing (``cuobjdump -sass`` runs nvdisasm)."""
    found = (_tool("ptxas", "WARPLAB_PTXAS"), _tool("cuobjdump", "WARPLAB_CUOBJDUMP"),
             _tool("nvdisasm", "WARPLAB_NVDISASM"))
    return found if all(found) else None  # type: ignore[return-value]


def available() -> bool:
    """True when ptxas, cuobjdump and nvdisasm are all found."""
    return tools() is not None


def cuobjdump(*args: str, timeout: int = 120) -> str:
    """``cuobjdump ARGS`` 's standard output, with the nvdisasm :func:`tools` found on its PATH.
    Raises :class:`SassUnavailable` without the tools, CalledProcessError when cuobjdump fails."""
    _, tool, nvdisasm = _require()
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(nvdisasm).parent), os.environ.get("PATH", "")])}
    return subprocess.run([tool, *args], check=True, capture_output=True, text=True, timeout=timeout,
                          env=env).stdout


def _require() -> tuple[str, str, str]:
    found = tools()
    if found is None:
        raise SassUnavailable(HOW_TO_GET_IT)
    return found


@functools.lru_cache(maxsize=1)
def ptxas_release() -> str:
    """ptxas's release as it prints it, e.g. ``"V13.0.88"``."""
    out = subprocess.run([_require()[0], "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"\bV\d+\.\d+\.\d+", out)
    return m.group(0) if m else out.strip()


@dataclass(frozen=True)
class Assembled:
    """``sass``: ``cuobjdump -sass`` text; ``log``: ``ptxas -v`` (registers and spills per function)."""

    sass: str
    log: str


def assemble(ptx: str, arch: str = "sm_90") -> Assembled:
    """``ptx`` assembled by ``ptxas -v -arch=ARCH`` (``"sm_90"``) and printed by ``cuobjdump -sass``.

    Raises :class:`SassUnavailable` without the tools, ValueError for a malformed ``arch`` and
    RuntimeError with ptxas's log when the PTX does not assemble."""
    if not re.fullmatch(r"sm_\d{2,3}a?", arch):
        raise ValueError(f"arch must look like 'sm_90'; got {arch!r}")
    ptxas = _require()[0]
    with tempfile.TemporaryDirectory() as tmp:
        src, cubin = Path(tmp) / "k.ptx", Path(tmp) / "k.cubin"
        src.write_text(ptx)
        done = subprocess.run([ptxas, "-v", f"-arch={arch}", "-o", str(cubin), str(src)], capture_output=True,
                              text=True, timeout=300)
        if done.returncode != 0:
            raise RuntimeError(f"ptxas -arch={arch} failed:\n{done.stderr}")
        return Assembled(cuobjdump("-sass", str(cubin)), done.stderr)


@dataclass(frozen=True)
class Resources:
    """What ``ptxas -v`` reports for one function: registers per thread and bytes spilled to local memory."""

    registers: int
    spill_store_bytes: int
    spill_load_bytes: int


def resources(log: str) -> dict[str, Resources]:
    """``ptxas -v`` log -> {mangled function name: :class:`Resources`}."""
    out: dict[str, Resources] = {}
    name, spills = None, (0, 0)
    for line in log.splitlines():
        m = re.search(r"(?:Compiling entry function|Function properties for) '?([\w$]+)'?", line)
        if m:
            name = m.group(1)
            continue
        m = re.search(r"(\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m and name:
            spills = (int(m.group(1)), int(m.group(2)))
            continue
        m = re.search(r"Used (\d+) registers", line)
        if m and name:
            out[name] = Resources(int(m.group(1)), *spills)
            spills = (0, 0)
    return out


_FUNCTION = re.compile(r"\s*Function : (\S+)")
_INSTRUCTION = re.compile(r"\s*/\*([0-9a-f]{4,})\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)\s*([^;]*);")


def functions(text: str) -> dict[str, list[Instruction]]:
    """``cuobjdump -sass`` text -> {mangled function name: its instructions, in address order}."""
    out: dict[str, list[Instruction]] = {}
    cur: Optional[list[Instruction]] = None
    for line in text.splitlines():
        m = _FUNCTION.match(line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = _INSTRUCTION.match(line)
        if cur is not None and m:
            operands = tuple(o.strip() for o in _split_operands(m.group(4)) if o.strip())
            cur.append(Instruction(int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3), operands))
    return out


def _split_operands(text: str) -> list[str]:
    """Split on the commas outside brackets (``desc[UR10][R14.64]`` is one operand)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return parts + [cur]


def loops(instructions: Sequence[Instruction]) -> list[tuple[int, int]]:
    """Every loop as (first address, address of the branch back to it): one per backward ``BRA``."""
    out = []
    for ins in instructions:
        if ins.opcode == "BRA" and ins.operands:
            m = re.match(r"0x([0-9a-f]+)", ins.operands[0])
            if m and int(m.group(1), 16) <= ins.address:
                out.append((int(m.group(1), 16), ins.address))
    return out


_REGISTER = re.compile(r"(?<![A-Z])R(\d+)(\.64)?\b")
# opcodes whose first operand is not a register they write
_NO_DESTINATION = ("ST", "STG", "STS", "STL", "RED", "BRA", "BSSY", "BSYNC", "BAR", "EXIT", "WARPSYNC", "NOP",
                   "MEMBAR", "DEPBAR", "CALL", "RET", "YIELD")


def _registers(operand: str) -> set[int]:
    regs: set[int] = set()
    for m in _REGISTER.finditer(operand):
        r = int(m.group(1))
        regs |= {r, r + 1} if m.group(2) else {r}
    return regs


def _load_width(opcode: str) -> int:
    m = re.search(r"\.(64|128)\b", opcode)
    return int(m.group(1)) if m else 32


def loads_in_flight(instructions: Sequence[Instruction], start: int, end: int, bits: int = 128) -> int:
    """The most ``bits``-wide global loads (``LDG``) in flight at once in program order between
    addresses ``start`` and ``end`` (a loop body, :func:`loops`).

    A load is in flight from its issue until the first instruction that reads one of its
    destination registers (where the warp waits for it) or overwrites one. This counts within one
    pass of the body in program order: a load whose first use falls in the next iteration (software
    pipelining) ends at the branch. Predicated loads count as issued."""
    pending: dict[int, set[int]] = {}
    most = 0
    for ins in instructions:
        if not start <= ins.address <= end:
            continue
        writes_first = ins.opcode.split(".")[0] not in _NO_DESTINATION
        sources = ins.operands[1:] if writes_first else ins.operands
        read = set().union(*(_registers(o) for o in sources)) if sources else set()
        written = _registers(ins.operands[0]) if writes_first and ins.operands else set()
        if ins.opcode.startswith("LDG") and _load_width(ins.opcode) == bits:
            for key in [k for k, regs in pending.items() if regs & read]:
                del pending[key]
            first = min(written) if written else 0
            pending[ins.address] = set(range(first, first + bits // 32))
            most = max(most, len(pending))
            continue
        for key in [k for k, regs in pending.items() if regs & (read | written)]:
            del pending[key]
    return most


def main_loop_loads_in_flight(instructions: Sequence[Instruction], bits: int = 128) -> int:
    """:func:`loads_in_flight` of the first loop that issues a ``bits``-wide global load (a grid-stride
    loop's body); 0 when no loop does."""
    for start, end in loops(instructions):
        n = loads_in_flight(instructions, start, end, bits)
        if n:
            return n
    return 0

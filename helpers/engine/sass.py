"""SASS, the machine code the GPU runs, made and read on the CPU: ``ptxas`` assembles PTX for one
architecture and ``cuobjdump -sass`` prints the result; :func:`functions` parses that text, and
:func:`loads_in_flight` answers the question a bandwidth-bound loop raises: how many 16-byte global
loads does each thread have in flight at once before it waits for them?

PTX is a virtual ISA; ptxas, "the optimising backend" (PTX ISA, "Introduction"), schedules it again.
The same PTX loop that issues eight ``ld.global.v4.f32`` before its first add can come out with
fewer in flight: ptxas moves later loads below earlier adds and reuses their registers. Only the
SASS says what the hardware is asked to keep in flight, which is what Little's law counts.

How a warp waits is in each instruction's control bits, which cuobjdump prints as the high bits of
the second 64-bit word of every 128-bit instruction (sm_70 and later; Jia et al., "Dissecting the
NVIDIA Volta GPU Architecture via Microbenchmarking", 2018, section 2.1): a variable-latency
instruction such as a global load names a *scoreboard* (0..5; 7: none) that it releases when its
result arrives, and a later instruction lists in its *wait mask* the scoreboards it waits for. Loads
that share a scoreboard are waited for together. ``DEPBAR.LE SBn, k`` waits until at most k of the
operations on scoreboard n are outstanding.

The tools: ``ptxas`` comes with a CUDA toolkit (``$CUDA_PATH/bin``, ``/usr/local/cuda/bin``, PATH)
or the ``nvidia-cuda-nvcc`` wheel; ``cuobjdump``, and the ``nvdisasm`` it runs to print SASS, with a
toolkit or the ``nvidia-cuda-cuobjdump`` and ``nvidia-cuda-nvdisasm`` wheels (nvdisasm is also looked
for beside cuobjdump). ``$WARPLAB_PTXAS``, ``$WARPLAB_CUOBJDUMP`` and ``$WARPLAB_NVDISASM`` name the
files directly. The H200 host's compiler is CUDA 13.0 (``data/machine_sass.json.gz``); another
ptxas release may schedule differently, so a claim about the H200's SASS is checked with
:data:`H200_PTXAS`.
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

from helpers.engine import kernels, nvrtc

H200_PTXAS = "V13.0.88"  # ptxas --version on the H200 host (data/machine_sass.json.gz's "ptxas" build)
NO_SCOREBOARD = 7
LOAD_BITS = (32, 64, 128)

HOW_TO_GET_IT = (
    "Reading SASS needs ptxas, cuobjdump and nvdisasm, which are not all found here. Install a CUDA "
    "toolkit (they are in its bin/), or `pip install nvidia-cuda-nvcc nvidia-cuda-cuobjdump "
    "nvidia-cuda-nvdisasm`, or set WARPLAB_PTXAS, WARPLAB_CUOBJDUMP and WARPLAB_NVDISASM to the files."
)
_ENV = {"ptxas": "WARPLAB_PTXAS", "cuobjdump": "WARPLAB_CUOBJDUMP", "nvdisasm": "WARPLAB_NVDISASM"}


class SassUnavailable(ImportError):
    """ptxas, cuobjdump or nvdisasm is not found here; the message says which and how to get them."""


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction: ``address`` in bytes from the function's start, ``predicate`` as
    printed (``""``, ``"@P0"``, ``"@!P1"``), ``opcode`` with its modifiers (``"LDG.E.EF.128"``),
    ``operands`` as printed (``"R8"``, ``"desc[UR10][R14.64]"``), and ``control``, the 23 control
    bits (stall, yield, scoreboards, wait mask, reuse); -1 where the text had no encoding."""

    address: int
    predicate: str
    opcode: str
    operands: tuple[str, ...]
    control: int = -1

    @property
    def write_scoreboard(self) -> int:
        """The scoreboard this instruction releases when its result is written (:data:`NO_SCOREBOARD`: none)."""
        return (self.control >> 5) & 7 if self.control >= 0 else NO_SCOREBOARD

    @property
    def wait_mask(self) -> int:
        """Bit b set: the warp waits here until scoreboard b is released."""
        return (self.control >> 11) & 0x3F if self.control >= 0 else 0


def _tool(name: str) -> tuple[Optional[str], str]:
    """(path, "") where ``name`` is found, else (None, why)."""
    env = _ENV[name]
    named = os.environ.get(env)
    if named:
        return (named, "") if Path(named).is_file() else (None, f"{env}={named!r} is not a file")
    for root in (os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and (Path(root) / "bin" / name).is_file():
            return str(Path(root) / "bin" / name), ""
    found = shutil.which(name)
    if found:
        return found, ""
    if name == "nvdisasm":  # beside cuobjdump, as NVIDIA's wheels and toolkits put it
        dump, _ = _tool("cuobjdump")
        if dump and (Path(dump).parent / name).is_file():
            return str(Path(dump).parent / name), ""
    try:  # the NVIDIA wheels: a namespace package nvidia/, the tools in nvidia/cu*/bin/, newest CUDA first
        import nvidia

        for base in nvidia.__path__:
            for hit in sorted(Path(base).glob(f"cu*/bin/{name}"), reverse=True):
                return str(hit), ""
    except ImportError:
        pass
    return None, f"{name} not found"


@functools.lru_cache(maxsize=1)
def _found() -> tuple[Optional[tuple[str, str, str]], str]:
    paths, problems = [], []
    for name in _ENV:
        path, why = _tool(name)
        paths.append(path)
        if why:
            problems.append(why)
    return (tuple(paths), "") if not problems else (None, "; ".join(problems))  # type: ignore[return-value]


def tools() -> Optional[tuple[str, str, str]]:
    """(ptxas, cuobjdump, nvdisasm) paths, or None when any is missing (``cuobjdump -sass`` runs nvdisasm)."""
    return _found()[0]


def available() -> bool:
    """True when ptxas, cuobjdump and nvdisasm are all found."""
    return tools() is not None


def _require() -> tuple[str, str, str]:
    found, why = _found()
    if found is None:
        raise SassUnavailable(f"{why}. {HOW_TO_GET_IT}")
    return found


@functools.lru_cache(maxsize=1)
def ptxas_release() -> str:
    """ptxas's release as it prints it, e.g. ``"V13.0.88"``."""
    out = subprocess.run([_require()[0], "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"\bV\d+\.\d+\.\d+", out)
    return m.group(0) if m else out.strip()


def cuobjdump(*args: str, timeout: int = 120) -> str:
    """``cuobjdump ARGS``'s standard output, with the nvdisasm :func:`tools` found on its PATH.
    Raises :class:`SassUnavailable` without the tools, RuntimeError with cuobjdump's message when it fails."""
    _, tool, nvdisasm = _require()
    env = {**os.environ, "PATH": os.pathsep.join([str(Path(nvdisasm).parent), os.environ.get("PATH", "")])}
    done = subprocess.run([tool, *args], capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"cuobjdump {' '.join(args)} failed: {done.stderr.strip()}")
    return done.stdout


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
_ENCODING = re.compile(r"/\*\s*(0x[0-9a-f]{16})\s*\*/")


def functions(text: str) -> dict[str, list[Instruction]]:
    """``cuobjdump -sass`` text -> {mangled function name: its instructions, in address order}. The
    control bits come from the line after each instruction (its second encoding word)."""
    out: dict[str, list[Instruction]] = {}
    cur: Optional[list[Instruction]] = None
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _FUNCTION.match(line)
        if m:
            cur = out.setdefault(m.group(1), [])
            continue
        m = _INSTRUCTION.match(line)
        if cur is None or not m:
            continue
        control = -1
        if i + 1 < len(lines) and not _INSTRUCTION.match(lines[i + 1]):
            words = _ENCODING.findall(lines[i + 1])
            if words:
                control = int(words[-1], 16) >> 41
        operands = tuple(o.strip() for o in _split_operands(m.group(4)) if o.strip())
        cur.append(Instruction(int(m.group(1), 16), (m.group(2) or "").strip(), m.group(3), operands, control))
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
    """Every loop as (first address, address of the branch back to it): one per branch (``BRA``,
    ``BRA.U``, ...; not ``BRA.DIV``, a jump to divergence handling) to an earlier address."""
    out = []
    for ins in instructions:
        if ins.opcode.split(".")[0] == "BRA" and ins.opcode != "BRA.DIV" and ins.operands:
            m = re.match(r"0x([0-9a-f]+)", ins.operands[-1])
            if m and int(m.group(1), 16) < ins.address:
                out.append((int(m.group(1), 16), ins.address))
    return out


def _load_width(opcode: str) -> int:
    m = re.search(r"\.(64|128)\b", opcode)
    return int(m.group(1)) if m else 32


def is_global_load(ins: Instruction, bits: int = 128) -> bool:
    """True when ``ins`` is a ``bits``-wide global load (``LDG``, any cache modifiers)."""
    return ins.opcode.split(".")[0] == "LDG" and _load_width(ins.opcode) == bits


def loads_in_flight(instructions: Sequence[Instruction], start: int, end: int, bits: int = 128) -> int:
    """The most ``bits``-wide global loads (``LDG``) outstanding at once in program order between
    addresses ``start`` and ``end`` (a loop body, :func:`loops`), by the scoreboards: a load is in
    flight from its issue until an instruction waits on its scoreboard (which waits for every load on
    it), or a ``DEPBAR.LE`` lets no more than that many stay outstanding.

    One pass through the body in program order: a load still outstanding at the branch back is
    counted in that pass only. Predicated loads count as issued. Raises ValueError for ``bits`` not in
    :data:`LOAD_BITS`, ``start`` after ``end``, or instructions without control bits."""
    if bits not in LOAD_BITS:
        raise ValueError(f"bits must be one of {LOAD_BITS}; got {bits!r}")
    if start > end:
        raise ValueError(f"start ({start:#x}) must not be after end ({end:#x})")
    pending: list[tuple[int, int]] = []  # (address, scoreboard), oldest first
    most = 0
    for ins in instructions:
        if not start <= ins.address <= end:
            continue
        if ins.control < 0:
            raise ValueError(f"the instruction at {ins.address:#x} has no control bits (parse cuobjdump -sass "
                             f"text with its encoding lines)")
        if ins.wait_mask:
            pending = [(a, b) for a, b in pending if not (ins.wait_mask >> b) & 1]
        if ins.opcode.startswith("DEPBAR"):
            m = re.search(r"SB(\d)\s*,\s*(0x[0-9a-f]+|\d+)", " ".join(ins.operands))
            if m:
                board, keep = int(m.group(1)), int(m.group(2), 0)
                on_board = [p for p in pending if p[1] == board]
                done = set(on_board[:max(0, len(on_board) - keep)])
                pending = [p for p in pending if p not in done]
        if is_global_load(ins, bits) and ins.write_scoreboard != NO_SCOREBOARD:
            pending.append((ins.address, ins.write_scoreboard))
            most = max(most, len(pending))
    return most


def main_loop_loads_in_flight(instructions: Sequence[Instruction], bits: int = 128) -> int:
    """:func:`loads_in_flight` of the first loop in the code that issues a ``bits``-wide global load; 0
    when none does. In the project's grid-stride sums that is the loop of whole rounds: the loop of the
    remainder comes after it (and the compiler may unroll that one: v8's, at 2 a round, issues 4)."""
    for start, end in sorted(loops(instructions)):
        if any(start <= i.address <= end and is_global_load(i, bits) for i in instructions):
            return loads_in_flight(instructions, start, end, bits)
    return 0


def first_wait(instructions: Sequence[Instruction], issued: Instruction) -> Optional[Instruction]:
    """The first instruction after ``issued`` in program order that waits on its scoreboard (where the
    warp first stops for its result), or None. Raises ValueError when ``issued`` releases no scoreboard."""
    if issued.write_scoreboard == NO_SCOREBOARD:
        raise ValueError(f"issued (the {issued.opcode} at {issued.address:#x}) releases no scoreboard")
    return next((i for i in instructions if i.address > issued.address and (i.wait_mask >> issued.write_scoreboard) & 1),
                None)


def compiled(source: str, names: Sequence[str], defines: Sequence[str] = (),
             arch: str = "sm_90") -> dict[str, tuple[list[Instruction], Resources]]:
    """CUDA C++ ``source`` compiled as CuPy compiles it (NVRTC, ``-std=c++17 -ftz=true``, the project's
    include directories, ``-D`` for each of ``defines``) and assembled for ``arch``: {name expression:
    (its instructions, :class:`Resources`)} for each of ``names``."""
    program = nvrtc.compile(source, options=("-std=c++17", "-ftz=true", f"-arch=compute_{arch[3:]}",
                                             *(f"-D{d}" for d in defines), *kernels.include_options()),
                            name_expressions=names)
    out = assemble(program.ptx, arch)
    funcs, res = functions(out.sass), resources(out.log)
    return {n: (funcs[program.lowered[n]], res[program.lowered[n]]) for n in names}


def compiled_loads_in_flight(source: str, names: Sequence[str], defines: Sequence[str] = (),
                             arch: str = "sm_90") -> dict[str, tuple[int, Resources]]:
    """:func:`compiled`, then {name expression: (:func:`main_loop_loads_in_flight`, :class:`Resources`)}."""
    return {n: (main_loop_loads_in_flight(body), res) for n, (body, res) in compiled(source, names, defines, arch).items()}

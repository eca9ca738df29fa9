"""Loading ``kernels/*.cu``: their source (whole or by named anchor), compiled CuPy modules, PTX,
and the PTX and compiler logs shipped precompiled in ``kernels/shipped/``.

Kernel files are the single source of truth. Notebook prose shows code with :func:`anchor`, which
cuts the lines between ``// [anchor:NAME]`` and ``// [end:NAME]`` out of the file, so the text can
never drift from what runs.

:func:`module` compiles through ``cupy.RawModule`` (NVRTC, ``-std=c++17``, templates through
``name_expressions``) and caches the result. :func:`ptx` and :func:`compile_log` compile without any
GPU or driver, through NVRTC alone (:mod:`helpers.engine.nvrtc`).

Where NVRTC cannot be installed (macOS), :func:`shipped_ptx` and :func:`shipped_compile_log` return
what the maintainers' NVRTC made (``./warplab ship``): the PTX of every registered instantiation
(``helpers.topics.registry``) for :data:`SHIPPED_ARCHS`, and the log of every seed file that must not
compile, each labelled with the NVRTC release. Notebooks show only these, so their stored outputs are
the same with and without NVRTC; ``tests/engine/test_kernels.py`` fails when one no longer matches its
source and, where NVRTC is installed, recompiles each and compares.
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence

from helpers.engine import nvrtc

KERNELS_DIR = Path(__file__).resolve().parents[2] / "kernels"
ARCHS: tuple[str, ...] = ("sm_70", "sm_80", "sm_90")
SHIPPED_DIR = KERNELS_DIR / "shipped"
SHIPPED_ARCHS: tuple[str, ...] = ("sm_90",)  # the H200's; the SIMT machine runs sm_90 PTX
# -lineinfo adds .loc/.file lines (source lines for the SIMT machine's reports); it changes no instruction
SHIPPED_OPTIONS: tuple[str, ...] = ("-lineinfo",)
# builds shipped beyond the plain one (no defines): what helpers compile at run time with -D
# (v9's own launch picks REDUCE_UNROLL=1 or 2 for small inputs: helpers.topics.reduce.v9_launch)
SHIPPED_DEFINES: dict[str, tuple[tuple[str, ...], ...]] = {
    f: tuple((f"REDUCE_UNROLL={u}",) for u in (1, 2, 4, 8, 16)) for f in ("reduce_v8", "reduce_onepass", "reduce_v9")
}
# files kept as text (so CI does not compile them) because they must NOT compile: their logs are shipped
SEED_AS_PRINTED = "seed_as_printed"

_ANCHOR = re.compile(r"^\s*//\s*\[anchor:([\w.-]+)\]\s*$")
_END = re.compile(r"^\s*//\s*\[end:([\w.-]+)\]\s*$")


def kernel_names() -> list[str]:
    """Names (file stems) of every compilable kernel file, ``*.cu``, sorted."""
    return sorted(p.stem for p in KERNELS_DIR.glob("*.cu"))


def path(name: str) -> Path:
    """The file for kernel ``name``: ``kernels/NAME.cu`` (or another file of kernels/, given with its
    suffix: ``"warp_reduce.cuh"``, ``"seed_as_printed/block_x_reduce.cu.txt"``)."""
    p = KERNELS_DIR / (name if Path(name).suffix else f"{name}.cu")
    if not p.is_file():
        known = ", ".join(kernel_names())
        raise ValueError(f"name must name a file in kernels/ ({known}); got {name!r}")
    return p


def source(name: str) -> str:
    """The whole text of a kernel file."""
    return path(name).read_text()


def anchor(name: str, anchor_name: str) -> str:
    """The lines of ``name`` between ``// [anchor:anchor_name]`` and ``// [end:anchor_name]``.

    Nested anchor markers inside the block are dropped from the result. Raises ValueError naming the
    anchors that do exist when ``anchor_name`` is not one of them.
    """
    lines = source(name).splitlines()
    out: list[str] = []
    inside = False
    found = False
    for line in lines:
        start, end = _ANCHOR.match(line), _END.match(line)
        if start and start.group(1) == anchor_name:
            inside, found = True, True
            continue
        if end and end.group(1) == anchor_name:
            inside = False
            continue
        if inside and not (start or end):
            out.append(line)
    if not found:
        raise ValueError(f"anchor_name must be one of {anchors(name)} in kernels/{path(name).name}; got {anchor_name!r}")
    return "\n".join(out)


def anchors(name: str) -> list[str]:
    """Every anchor name defined in a kernel file, in order."""
    return [m.group(1) for line in source(name).splitlines() if (m := _ANCHOR.match(line))]


def program_name(name: str) -> str:
    """The name NVRTC is given for ``name`` (its logs and PTX line tables say it): the path inside
    kernels/, less a ``.txt`` kept only so CI does not compile the file (``seed_as_printed/x.cu``)."""
    rel = path(name).relative_to(KERNELS_DIR).as_posix()
    return rel.removesuffix(".txt")


def not_compiling() -> list[str]:
    """The seed files kept exactly as printed, which must not compile (``seed_as_printed/*.cu.txt``)."""
    return sorted(p.relative_to(KERNELS_DIR).as_posix() for p in (KERNELS_DIR / SEED_AS_PRINTED).glob("*.cu.txt"))


def include_dirs() -> dict[str, Path]:
    """{label: folder} of the headers kernels may include, in search order: ``kernels`` (our own),
    ``cccl`` (CUB, libcu++, Thrust: the ``nvidia-cuda-cccl-cu12`` wheel, else CuPy's bundled copy, else
    the CUDA toolkit) and ``cuda`` (``cooperative_groups.h``: the ``nvidia-cuda-runtime-cu12`` wheel,
    else the toolkit). NVRTC bundles neither CCCL nor cooperative groups."""
    dirs: dict[str, Path] = {"kernels": KERNELS_DIR}
    toolkit = Path(os.environ.get("CUDA_PATH") or "/usr/local/cuda") / "include"
    candidates: list[Path] = []
    try:
        import nvidia.cuda_cccl as cccl_wheel  # a namespace package

        candidates += [Path(b) / "include" for b in cccl_wheel.__path__]
    except ImportError:
        pass
    try:
        import importlib.util

        spec = importlib.util.find_spec("cupy")  # CuPy's bundle, without importing CuPy
        if spec and spec.origin:
            candidates.append(Path(spec.origin).parent / "_core" / "include" / "cupy" / "_cccl")
    except (ImportError, ValueError):
        pass
    candidates += [toolkit / "cccl", toolkit]
    for c in candidates:
        if (c / "cub" / "cub.cuh").is_file():
            dirs["cccl"] = c
            break
        if (c / "cub" / "cub" / "cub.cuh").is_file():  # CuPy's bundle: cub/, libcudacxx/, thrust/ side by side
            dirs["cccl"], dirs["cccl-libcudacxx"], dirs["cccl-thrust"] = c / "cub", c / "libcudacxx", c / "thrust"
            break
    try:
        import nvidia.cuda_runtime as rt

        runtime = [Path(b) / "include" for b in rt.__path__]
    except ImportError:
        runtime = []
    for c in [*runtime, toolkit]:
        if (c / "cooperative_groups.h").is_file():
            dirs["cuda"] = c
            break
    return dirs


def include_options() -> list[str]:
    """The -I flags that compiling kernels/ code needs (kernels/, CUB, cooperative groups)."""
    return [f"-I{d}" for d in include_dirs().values()]


def header_versions() -> dict[str, str]:
    """The versions of the headers :func:`include_dirs` found: ``cccl`` (CCCL_VERSION) and ``cuda``
    (CUDART_VERSION), e.g. ``{"cccl": "2.8.2", "cuda": "12.9"}``; the PTX of kernels that include them
    depends on them."""
    dirs, out = include_dirs(), {}
    for label, rel, macro in (("cccl", "cuda/std/__cccl/version.h", "CCCL_VERSION"),
                              ("cccl-libcudacxx", "cuda/std/__cccl/version.h", "CCCL_VERSION"),
                              ("cuda", "cuda_runtime_api.h", "CUDART_VERSION")):
        f = dirs.get(label, Path("/nonexistent")) / rel
        m = re.search(rf"#define\s+{macro}\s+(\d+)", f.read_text(errors="replace")) if f.is_file() else None
        if m:
            v = int(m.group(1))
            out[label.split("-")[0]] = f"{v // 1000000}.{v // 1000 % 1000}.{v % 1000}" if label != "cuda" \
                else f"{v // 1000}.{v % 1000 // 10}"
    return out


def _options(defines: Sequence[str], extra: Sequence[str]) -> tuple[str, ...]:
    return ("-std=c++17", *(f"-D{d}" for d in defines), *extra)


@functools.lru_cache(maxsize=None)
def module(name: str, name_expressions: tuple[str, ...] = (), defines: tuple[str, ...] = (),
           options: tuple[str, ...] = ()) -> Any:
    """Compile ``kernels/NAME.cu`` with ``cupy.RawModule`` and cache it.

    ``name_expressions`` instantiates templates (fetch them with ``mod.get_function(expr)``);
    ``defines`` are macro names (``"WARPLAB_TRACE"``, ``"BLOCK=256"``). Needs a usable GPU.
    """
    import cupy

    return cupy.RawModule(
        code=source(name),
        options=_options(defines, options) + tuple(include_options()),
        name_expressions=list(name_expressions) or None,
    )


def _arch_option(arch: str) -> str:
    m = re.fullmatch(r"(?:sm|compute)_(\d{2,3}a?)", arch)
    if not m:
        raise ValueError(f"arch must look like 'sm_90' or 'compute_80'; got {arch!r}")
    return f"-arch=compute_{m.group(1)}"


def _compile(name: str, arch: str, name_expressions: Sequence[str], defines: Sequence[str],
             options: Sequence[str]) -> nvrtc.Compiled:
    opts = [_arch_option(arch), *_options(defines, options), *include_options()]
    return nvrtc.compile(source(name), filename=program_name(name), options=opts, name_expressions=name_expressions)


def ptx(name: str, arch: str = "sm_90", name_expressions: Sequence[str] = (),
        defines: Sequence[str] = (), options: Sequence[str] = ()) -> str:
    """Compile ``kernels/NAME.cu`` to PTX for ``arch`` through NVRTC alone: no GPU, no driver.

    ``arch`` is ``"sm_XY"`` or ``"compute_XY"``. Raises RuntimeError with NVRTC's log when the kernel
    does not compile, :class:`helpers.engine.nvrtc.NvrtcUnavailable` (saying how to get it) without NVRTC.
    Template kernels need ``name_expressions`` to be instantiated at all.
    """
    return compiled(name, arch, name_expressions, defines, options).ptx


def compiled(name: str, arch: str = "sm_90", name_expressions: Sequence[str] = (),
             defines: Sequence[str] = (), options: Sequence[str] = ()) -> nvrtc.Compiled:
    """As :func:`ptx`, with the mangled name of every name expression (``.lowered``), which loading
    the PTX as a module needs (``helpers.recording.proof.record``)."""
    _arch_option(arch)
    try:
        return _compile(name, arch, name_expressions, defines, options)
    except nvrtc.CompileError as exc:
        raise RuntimeError(f"kernels/{program_name(name)} does not compile for {arch}:\n{exc.log}") from exc


def compile_log(name: str, arch: str = "sm_90") -> str:
    """NVRTC's log for a kernel file that must not compile (``seed_as_printed/*.cu.txt``), in
    :func:`canonical` form. Raises AssertionError when the file compiles after all."""
    try:
        _compile(name, arch, (), (), ())
    except nvrtc.CompileError as exc:
        return canonical(exc.log)
    raise AssertionError(f"kernels/{program_name(name)} compiled: it should keep the seed's error")


# ---------------------------------------------------------------------------------------------
# Canonical text: the same bytes from every machine and every run

# NVRTC names internal-linkage symbols and anonymous namespaces after the translation unit, with a
# per-process hash and sometimes a counter: _ZN55_INTERNAL_00000000_18_warp_reduce_sum_cu_e7614226_11101
# 7warplab 9kFullMaskE, ...3__457_GLOBAL__N__00000000_18_warp_reduce_ops_cu_29812d1c_29704 6ignoreE
# (spaces added). The length prefix (55, 57) says where the name ends; digits before it may belong to
# the previous name ("3__4"), so each split is tried and only an exact parse is taken.
_UNIT_NAME = re.compile(r"(\d+)(_INTERNAL_|_GLOBAL__N__)([0-9a-f]{8})_(\d+)_")
_FILE_LINE = re.compile(r'^(\t\.file\t\d+ ")([^"]*)(")', re.M)
# -lineinfo's function names: "$L__info_string3:" then the bytes of the string, 40 a line, 0-terminated
_DEBUG_STR = re.compile(r"^(\$L__info_string\d+:\n)((?:\.b8 [\d,]+\n)+)", re.M)


def _unit_names(text: str) -> dict[str, str]:
    """{``LENGTH + name`` as found: its canonical form (hash zeroed, counter dropped)} for every
    translation-unit-derived name in ``text``."""
    out: dict[str, str] = {}
    for m in _UNIT_NAME.finditer(text):
        digits, start = m.group(1), m.start(2)
        n = int(m.group(4))
        stem_end = m.end() + n  # after "<kind><8 hex>_<n>_<file name of n chars>"
        for i in range(len(digits)):
            length = int(digits[i:])
            name = text[start:start + length]
            rest = name[stem_end - start:]
            if re.fullmatch(r"_[0-9a-f]{8}(_\d+)?", rest):
                fixed = name[:stem_end - start] + "_00000000"
                out[f"{length}{name}"] = f"{len(fixed)}{fixed}"
                break
        else:
            raise ValueError(f"unexpected NVRTC name at {text[m.start():m.start() + 80]!r}: "
                             "teach helpers.engine.kernels.canonical its form")
    return out


def _local_paths(text: str) -> str:
    """Include-folder prefixes replaced by their :func:`include_dirs` label: ``kernels/warp_reduce.cuh``,
    ``<cccl>/cub/warp/warp_reduce.cuh``."""
    for label, d in sorted(include_dirs().items(), key=lambda kv: -len(str(kv[1]))):
        text = text.replace(f"{d}{os.sep}", "kernels/" if label == "kernels" else f"<{label}>/")
        text = text.replace(f"{d}/", "kernels/" if label == "kernels" else f"<{label}>/")
    return text


def canonical(text: str) -> str:
    """PTX or an NVRTC log made reproducible: ``.file`` paths relative to the project (the main file
    as ``kernels/NAME.cu``, system headers as ``<cccl>/...``), and the names NVRTC derives from the
    translation unit (internal linkage, anonymous namespaces) with their per-process hash zeroed and
    counter dropped, consistently, also inside ``.debug_str``."""
    cwd = os.getcwd()

    def file_line(m: re.Match[str]) -> str:
        p = _local_paths(m.group(2))
        for prefix in (f"{cwd}{os.sep}", f"{cwd}/"):  # NVRTC prefixes the program name with the cwd
            if p.startswith(prefix):
                p = "kernels/" + p[len(prefix):]
        return f"{m.group(1)}{p}{m.group(3)}"

    text = _local_paths(_FILE_LINE.sub(file_line, text)) if "\t.file\t" in text else _local_paths(text)
    strings = {m.group(0): bytes(int(b) for line in m.group(2).split("\n") if line for b in line[4:].split(","))
               .decode("latin-1") for m in _DEBUG_STR.finditer(text)}
    names = _unit_names("\n".join([text, *strings.values()]))
    if not names:
        return text
    pattern = re.compile("|".join(re.escape(k) for k in sorted(names, key=len, reverse=True)))

    def rename(s: str) -> str:
        return pattern.sub(lambda m: names[m.group(0)], s)

    def debug_str(m: re.Match[str]) -> str:
        fixed = rename(strings[m.group(0)]).encode("latin-1")
        rows = [fixed[i:i + 40] for i in range(0, len(fixed), 40)]
        return m.group(1) + "".join(".b8 " + ",".join(map(str, r)) + "\n" for r in rows)

    return _DEBUG_STR.sub(debug_str, rename(text))


# ---------------------------------------------------------------------------------------------
# Shipped PTX and compiler logs

@dataclass(frozen=True)
class Build:
    """One shipped compilation: kernel file ``name`` for ``arch`` with ``defines``, every registered
    name expression instantiated, compiled with :data:`SHIPPED_OPTIONS`."""

    name: str
    arch: str
    defines: tuple[str, ...] = ()
    name_expressions: tuple[str, ...] = ()

    @property
    def file(self) -> str:
        """The shipped file, relative to kernels/shipped/."""
        tag = "".join(f"-D{d}" for d in self.defines)
        return f"{self.arch}/{self.name}{tag}.ptx.gz"


def shipped_builds(registry: dict[str, tuple[str, ...]]) -> list[Build]:
    """Every build ``./warplab ship`` makes from ``registry`` ({kernel file: name expressions},
    :func:`helpers.topics.registry.registry`): each file for each of :data:`SHIPPED_ARCHS`, plain
    and with each of its :data:`SHIPPED_DEFINES`."""
    builds = []
    for name, exprs in sorted(registry.items()):
        for arch in SHIPPED_ARCHS:
            for defines in ((), *SHIPPED_DEFINES.get(name, ())):
                builds.append(Build(name, arch, tuple(defines), tuple(exprs)))
    return builds


def compile_shipped(b: Build) -> tuple[str, dict[str, str]]:
    """Compile build ``b`` as ``./warplab ship`` does: (canonical PTX, {name expression: mangled name}).
    Needs NVRTC."""
    try:
        out = _compile(b.name, b.arch, b.name_expressions, b.defines, SHIPPED_OPTIONS)
    except nvrtc.CompileError as exc:
        raise RuntimeError(f"kernels/{program_name(b.name)} does not compile for {b.arch}:\n{exc.log}") from exc
    return canonical(out.ptx), dict(out.lowered)


def _includes(name: str) -> list[Path]:
    """``kernels/NAME`` and every file of kernels/ it includes, transitively (system headers excluded)."""
    seen: list[Path] = []
    todo = [path(name)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.append(p)
        for inc in re.findall(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', p.read_text(), re.M):
            for base in (p.parent, KERNELS_DIR):
                if (base / inc).is_file():
                    todo.append((base / inc).resolve())
                    break
    return seen


def inputs_digest(name: str, arch: str, defines: Sequence[str] = (), name_expressions: Sequence[str] = (),
                  options: Sequence[str] = SHIPPED_OPTIONS) -> str:
    """SHA-256 of everything in the project a compilation depends on: the file and each project
    header it includes, the arch, defines, options and the set of name expressions. A shipped file
    whose digest differs from the current one is stale."""
    parts = {"program": program_name(name), "arch": arch, "defines": list(defines), "options": list(options),
             "name_expressions": sorted(name_expressions),   # a set: the order they were registered in is no input
             "sources": {p.relative_to(KERNELS_DIR).as_posix(): p.read_text() for p in _includes(name)}}
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _manifest() -> dict[str, Any]:
    f = SHIPPED_DIR / "manifest.json"
    if not f.is_file():
        raise FileNotFoundError(f"{f} is missing: run ./warplab ship (needs NVRTC) to make the shipped PTX")
    return json.loads(f.read_text())


def manifest() -> dict[str, Any]:
    """The index of kernels/shipped/ (``compiler``, ``ptx`` and ``logs`` entries), as written by
    ``./warplab ship``."""
    return _manifest()


class _MadeByNVRTC:
    """What ``./warplab ship`` wrote with the maintainers' NVRTC; ``compiler`` says which."""

    compiler: dict[str, str]

    @property
    def nvrtc_version(self) -> str:
        return self.compiler.get("nvrtc", "?")


@dataclass(frozen=True)
class ShippedPTX(_MadeByNVRTC):
    """PTX that the maintainers' NVRTC made from a kernel file and that ships with the project.

    text:            the whole module (every registered instantiation), canonical (:func:`canonical`)
    lowered:         {name expression: mangled entry name} for every instantiation in ``text``
    name_expression: the instantiation asked for (None: the whole module)
    entry:           its mangled name, or None
    compiler:        {"nvrtc": release, "cccl": ..., "cuda": ...} that made it
    """

    name: str
    arch: str
    defines: tuple[str, ...]
    options: tuple[str, ...]
    text: str
    lowered: dict[str, str] = field(default_factory=dict)
    name_expression: Optional[str] = None
    entry: Optional[str] = None
    compiler: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """One line saying what this is and what made it, for printing above the PTX."""
        what = f"kernels/{program_name(self.name)}" + (f", {self.name_expression}" if self.name_expression else "")
        defs = "".join(f" -D{d}" for d in self.defines)
        return f"PTX of {what}{defs} for {self.arch}, made by NVRTC {self.nvrtc_version} (shipped in kernels/shipped/)"

    def function(self, name_expression: Optional[str] = None) -> str:
        """The text of one ``.entry`` (``name_expression``, default the one asked for), from its
        declaration to its closing brace."""
        expr = name_expression or self.name_expression
        if expr is None:
            raise ValueError("name_expression is needed: this ShippedPTX holds the whole module")
        entry = _lookup(self.lowered, expr, self.name)
        m = re.search(rf"^(?:\.visible |\.weak )?\.entry {re.escape(entry)}\(.*?^}}\n", self.text, re.M | re.S)
        if not m:
            raise AssertionError(f"{entry} is not in the shipped PTX of {self.name}: run ./warplab ship")
        return m.group(0)


def _lookup(lowered: dict[str, str], expr: str, name: str) -> str:
    if expr not in lowered:
        raise ValueError(f"name_expression must be one of the instantiations registered for {name} "
                         f"({', '.join(sorted(lowered))}); got {expr!r}")
    return lowered[expr]


def shipped_ptx(name: str, name_expression: Optional[str] = None, arch: str = "sm_90",
                defines: Sequence[str] = ()) -> ShippedPTX:
    """The shipped PTX of kernel file ``name`` for ``arch`` built with ``defines``: no NVRTC needed,
    the same text on every machine. ``name_expression`` (a registered instantiation, e.g.
    ``"warp_reduce_sum_kernel<int>"``) selects an entry: see :meth:`ShippedPTX.function`.

    Raises ValueError naming what is shipped when the combination is not.
    """
    _arch_option(arch)
    data = manifest()
    want = (name, arch, list(defines))
    for e in data["ptx"]:
        if (e["name"], e["arch"], e["defines"]) == want:
            text = gzip.decompress((SHIPPED_DIR / e["file"]).read_bytes()).decode()
            entry = _lookup(e["lowered"], name_expression, name) if name_expression is not None else None
            return ShippedPTX(name, arch, tuple(defines), tuple(e["options"]), text, dict(e["lowered"]),
                              name_expression, entry, dict(data["compiler"]))
    shipped = sorted({(e["name"], e["arch"], tuple(e["defines"])) for e in data["ptx"]})
    names = sorted({s[0] for s in shipped})
    if name not in names:
        raise ValueError(f"name must be a kernel file with shipped PTX ({', '.join(names)}); got {name!r}")
    variants = [f"arch={a!r}, defines={list(d)}" for n, a, d in shipped if n == name]
    raise ValueError(f"arch and defines must be one of the shipped builds of {name} ({'; '.join(variants)}); "
                     f"got arch={arch!r}, defines={list(defines)}")


@dataclass(frozen=True)
class ShippedLog(_MadeByNVRTC):
    """NVRTC's log for a seed file that does not compile, as the maintainers' NVRTC wrote it."""

    name: str
    arch: str
    text: str
    compiler: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return f"NVRTC {self.nvrtc_version} on kernels/{program_name(self.name)} for {self.arch} (log shipped in kernels/shipped/):"

    def first_error(self) -> str:
        """The first diagnostic: its line, the source line and the caret under it."""
        return self.text.strip().split("\n\n")[0]


def shipped_compile_log(name: str, arch: str = "sm_90") -> ShippedLog:
    """The shipped NVRTC log of ``name``, one of :func:`not_compiling` (e.g.
    ``"seed_as_printed/block_x_reduce.cu.txt"``): the same text on every machine, no NVRTC needed."""
    data = manifest()
    for e in data["logs"]:
        if (e["name"], e["arch"]) == (name, arch):
            return ShippedLog(name, arch, (SHIPPED_DIR / e["file"]).read_text(), dict(data["compiler"]))
    have = sorted({(e["name"], e["arch"]) for e in data["logs"]})
    raise ValueError(f"(name, arch) must be one of the shipped compile logs {have}; got {(name, arch)!r}")


def shipped_log_file(name: str, arch: str) -> str:
    """Where the log of ``name`` for ``arch`` is shipped, relative to kernels/shipped/."""
    return f"logs/{arch}/{program_name(name)}.log"


def iter_not_compiling() -> Iterator[tuple[str, str]]:
    """(name, arch) of every shipped compile log ``./warplab ship`` makes."""
    for name in not_compiling():
        for arch in SHIPPED_ARCHS:
            yield name, arch

"""The memory ceiling of a GPU: the most bytes per second any kernel can read from its DRAM, with
its source named (anywhere: the GPU side is one function, :func:`read_device`).

Two figures, kept apart and each labelled:

* the **theoretical peak** from the device itself: memory clock (``cudaDevAttrMemoryClockRate``,
  kHz) x bus width (``cudaDevAttrGlobalMemoryBusWidth``, bits) x 2 (two transfers per clock) / 8
  (CUDA Runtime API, cudaDeviceGetAttribute; read with ``cupy.cuda.runtime.deviceGetAttribute``);
  every GPU has it;
* the **datasheet** figure, for the GPUs in :data:`DATASHEETS` only (NVIDIA's product pages, cited
  there); matched on the device's name.

:class:`Ceiling` ``.tbps`` is the figure percentages and the goals use: the datasheet's where the
project knows the GPU (so the H200's goals read as its recording's), else the theoretical peak;
``.label`` names it. Contract: :func:`ceiling_of` never raises for a run that lacks the fields (older
recordings carry only the GPU's name; unknown GPU and no attributes: ``.tbps`` is None and every
percentage says so). Imports nothing of helpers.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional, Protocol

# cudaDeviceAttr values (CUDA Runtime API, enum cudaDeviceAttr): the memory clock in kHz and the
# global memory bus width in bits.
ATTR_MEMORY_CLOCK_RATE = 36
ATTR_GLOBAL_MEMORY_BUS_WIDTH = 37

H100_PAGE = "https://www.nvidia.com/en-us/data-center/h100/"
H200_PAGE = "https://www.nvidia.com/en-us/data-center/h200/"

# (name as CUDA reports it, datasheet TB/s, the product and where the figure is printed); the
# first entry whose name equals the device's, or is a prefix of it followed by a space, is used.
DATASHEETS: tuple[tuple[str, float, str, str], ...] = (
    ("NVIDIA H200 NVL", 4.8, "NVIDIA H200 NVL", H200_PAGE),
    ("NVIDIA H200", 4.8, "NVIDIA H200 SXM", H200_PAGE),
    ("NVIDIA H100 NVL", 3.9, "NVIDIA H100 NVL", H100_PAGE),
    ("NVIDIA H100 80GB HBM3", 3.35, "NVIDIA H100 SXM", H100_PAGE),
)


class Runtime(Protocol):
    """What :func:`read_device` needs of ``cupy.cuda.runtime`` (a fake one in tests)."""

    def deviceGetAttribute(self, attrib: int, device: int) -> int: ...  # noqa: N802 (CuPy's name)


@dataclass(frozen=True)
class Ceiling:
    """A GPU's memory ceiling: ``gpu`` (its name), ``memory_clock_khz`` and ``bus_width_bits``
    (None where not read), ``datasheet_tbps`` with ``datasheet_product`` and ``datasheet_url``
    (None for a GPU the project does not know)."""

    gpu: str
    memory_clock_khz: Optional[int] = None
    bus_width_bits: Optional[int] = None
    datasheet_tbps: Optional[float] = None
    datasheet_product: Optional[str] = None
    datasheet_url: Optional[str] = None

    @property
    def theoretical_tbps(self) -> Optional[float]:
        """Memory clock x bus width x 2 / 8, in TB/s (10^12 bytes/s); None where not read."""
        if not self.memory_clock_khz or not self.bus_width_bits:
            return None
        return self.memory_clock_khz * 1e3 * self.bus_width_bits * 2 / 8 / 1e12

    @property
    def tbps(self) -> Optional[float]:
        """The ceiling percentages and goals use: the datasheet's where known, else the theoretical peak."""
        return self.datasheet_tbps if self.datasheet_tbps is not None else self.theoretical_tbps

    @property
    def label(self) -> str:
        """What :attr:`tbps` is, e.g. ``the 3.35 TB/s of the NVIDIA H100 SXM datasheet``."""
        if self.datasheet_tbps is not None:
            return f"the {self.datasheet_tbps:g} TB/s of the {self.datasheet_product} datasheet"
        if self.theoretical_tbps is not None:
            return f"this GPU's theoretical peak {self.theoretical_tbps:.3f} TB/s"
        return "no known ceiling"

    def theoretical_text(self) -> str:
        """``3.352 TB/s = 2619 MHz x 5120-bit bus × 2 / 8 (from the device)``, or why there is none."""
        t = self.theoretical_tbps
        if t is None:
            return "theoretical peak: not recorded with this run"
        return (f"theoretical peak {t:.3f} TB/s = memory clock {self.memory_clock_khz / 1e3:g} MHz × "
                f"{self.bus_width_bits}-bit bus × 2 / 8 (from the device)")

    def describe(self) -> str:
        """One line: the GPU, the ceiling used and its source, the other figure beside it."""
        if self.datasheet_tbps is not None:
            head = f"{self.label} ({self.datasheet_url})"
        elif self.theoretical_tbps is not None:
            head = f"{self.label}, memory clock × bus width (no datasheet figure in helpers.bench.ceiling for this GPU)"
        else:
            return f"memory ceiling of {self.gpu}: unknown (no datasheet figure for it, no device attributes in this run)"
        tail = f"; {self.theoretical_text()}" if self.datasheet_tbps is not None else (
            f" = {self.memory_clock_khz / 1e3:g} MHz × {self.bus_width_bits}-bit bus × 2 / 8")
        return f"memory ceiling of {self.gpu}: {head}{tail}"

    def percent(self, gbps: float) -> str:
        """``92.7 % of the 3.35 TB/s of the NVIDIA H100 SXM datasheet`` (and of the theoretical
        peak beside it when both are known and differ), for a rate in GB/s."""
        if self.tbps is None:
            return "no known ceiling for this GPU"
        text = f"{100 * gbps / 1e3 / self.tbps:.1f} % of {self.label}"
        t = self.theoretical_tbps
        if self.datasheet_tbps is not None and t is not None and abs(t - self.datasheet_tbps) >= 0.005:
            text += f", {100 * gbps / 1e3 / t:.1f} % of the theoretical peak {t:.3f} TB/s"
        return text

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready, as stored in a run's ``"ceiling"``: the device's attributes (what
        :func:`from_dict` needs; the datasheet is looked up again by name)."""
        return {"gpu": self.gpu, "memory_clock_khz": self.memory_clock_khz, "bus_width_bits": self.bus_width_bits}


def datasheet(gpu: str) -> Optional[tuple[float, str, str]]:
    """(TB/s, product, URL) of :data:`DATASHEETS` for the device name ``gpu``, or None."""
    for name, tbps, product, url in DATASHEETS:
        if gpu == name or gpu.startswith(name + " "):
            return tbps, product, url
    return None


def make(gpu: str, memory_clock_khz: Optional[int] = None, bus_width_bits: Optional[int] = None) -> Ceiling:
    """The :class:`Ceiling` of a GPU named ``gpu`` with these attributes (None: not read)."""
    sheet = datasheet(gpu)
    return Ceiling(gpu, memory_clock_khz or None, bus_width_bits or None,
                   *(sheet if sheet else (None, None, None)))


def read_device(runtime: Runtime, device: int, gpu: str) -> Ceiling:
    """The ceiling of ``device`` (named ``gpu``), its attributes read through ``runtime``
    (``cupy.cuda.runtime`` on a GPU)."""
    return make(gpu, int(runtime.deviceGetAttribute(ATTR_MEMORY_CLOCK_RATE, device)),
                int(runtime.deviceGetAttribute(ATTR_GLOBAL_MEMORY_BUS_WIDTH, device)))


def ceiling_of(results: dict[str, Any]) -> Ceiling:
    """The ceiling of the GPU a run was made on: its ``"ceiling"`` (live runs, recordings since
    this module), else the datasheet of its ``"gpu"`` alone."""
    stored = results.get("ceiling") or {}
    gpu = stored.get("gpu") or results.get("gpu") or (results.get("stamp") or {}).get("gpu") or "this GPU"
    return make(gpu, stored.get("memory_clock_khz"), stored.get("bus_width_bits"))

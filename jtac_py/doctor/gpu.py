"""The "GPU driver" line: an NVIDIA (or other vendor) driver loaded on a real-time kernel."""

from __future__ import annotations

from pathlib import Path

from jtac_py.doctor.report import Check
from jtac_py.doctor.sysfs import read_small_file

# Kernel modules of GPU drivers whose long non-preemptible sections are known to add latency on RT.
GPU_MODULES = ("nvidia", "nvidia_drm", "nvidia_modeset", "nvidia_uvm", "nouveau", "amdgpu", "i915", "xe")
FIX_GPU_ON_RT = (
    "run the GPU work (perception, learning) on another machine that talks to jtac over the network, or pin "
    "the GPU's interrupts and its threads away from jtac's CPUs (see the isolated CPUs line) and measure the "
    "wake-up jitter line under GPU load"
)


def loaded_modules(proc_root: Path = Path("/proc")) -> list[str] | None:
    """Names of the loaded kernel modules (None when /proc/modules is absent: no module support)."""
    text = read_small_file(proc_root / "modules")
    if text is None:
        return None
    return [line.split()[0] for line in text.splitlines() if line.strip()]


def check_gpu_driver(kernel_rt: bool, proc_root: Path = Path("/proc")) -> Check:
    """kernel_rt: the kernel line found PREEMPT_RT. A GPU driver there warns; elsewhere it is ok."""
    name = "GPU driver"
    nvidia_version = read_small_file(proc_root / "driver" / "nvidia" / "version")
    modules = loaded_modules(proc_root)
    gpu = sorted(m for m in modules or () if m in GPU_MODULES)
    if nvidia_version and not any(m.startswith("nvidia") for m in gpu):
        gpu.insert(0, "nvidia")
    first_line = nvidia_version.splitlines()[0] if nvidia_version else None
    data = {"gpu_modules": gpu, "nvidia_version": first_line, "kernel_rt": kernel_rt}
    source = "/proc/modules" if modules is not None else "no /proc/modules: a kernel without modules"
    if not gpu:
        return Check(name, f"no GPU driver loaded ({source}; no /proc/driver/nvidia)", "ok", "", data)
    value = f"loaded: {', '.join(gpu)}" + (f" ({first_line})" if first_line else "")
    if not kernel_rt:
        return Check(name, value + "; the kernel is not PREEMPT_RT, so no RT conflict here", "ok", "", data)
    value += (
        "; on a PREEMPT_RT kernel a GPU driver's long non-preemptible sections and interrupt load delay "
        "the real-time threads (NVIDIA's driver builds on PREEMPT_RT only when forced: unsupported)"
    )
    return Check(name, value, "warn", FIX_GPU_ON_RT, data)

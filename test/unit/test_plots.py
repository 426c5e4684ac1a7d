"""Tests of jtac_py.plots: the four PNGs, the keys each plot needs, and summary_stats' numbers."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")  # the optional "plot" extra
from matplotlib.image import imread  # noqa: E402

from jtac_py.plots import (  # noqa: E402
    DPI,
    FIGSIZE_IN,
    format_stats,
    plot_all,
    plot_deflection,
    plot_timing,
    plot_tracking,
    plot_wrench,
    summary_stats,
)

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Constrained layout (no bbox_inches="tight") keeps every image at exactly the figure size.
EXPECTED_PX = (round(FIGSIZE_IN[1] * DPI), round(FIGSIZE_IN[0] * DPI))  # rows, columns
REPO_ROOT = Path(__file__).resolve().parents[2]


def synthetic_recording(n: int = 2000, seed: int = 1) -> dict[str, np.ndarray]:
    """1 kHz sinusoids on every joint, and a 10 N push along x from 0.8 s to 1.2 s."""
    rng = np.random.default_rng(seed)
    t = np.arange(n) * 1e-3
    j = np.arange(7)
    q_ref = 0.4 * np.sin(2 * np.pi * 0.5 * t[:, None] + j) + 0.1 * j
    push = (t >= 0.8) & (t < 1.2)
    wrench_filtered = np.zeros((n, 6))
    wrench_filtered[push, 0] = 10.0
    wrench_filtered[push, 4] = 0.5
    wrench_raw = wrench_filtered + rng.normal(0.0, 0.5, (n, 6))
    joint_offset = 1e-3 * wrench_filtered[:, :1] * np.cos(j)
    q_cmd = q_ref + joint_offset
    q = q_cmd - 2e-4 * np.cos(2 * np.pi * 0.5 * t[:, None] + j)
    ee_deflection = np.zeros((n, 6))
    ee_deflection[:, 0] = 1e-3 * wrench_filtered[:, 0]
    ee_deflection[:, 4] = 0.05 * wrench_filtered[:, 4]
    interval_us = 1000.0 + rng.normal(0.0, 4.0, n)
    interval_us[0] = 0.0  # the first cycle has no previous read
    interval_us[n // 2] = 2600.0  # one overrun
    return {
        "time": t,
        "tick": np.arange(n, dtype=np.uint64),
        "q": q,
        "dq": np.gradient(q, t, axis=0),
        "q_cmd": q_cmd,
        "dq_cmd": np.gradient(q_cmd, t, axis=0),
        "q_ref": q_ref,
        "error": q_ref - q,
        "joint_offset": joint_offset,
        "wrench_raw": wrench_raw,
        "wrench_filtered": wrench_filtered,
        "ee_deflection": ee_deflection,
        "time_scale": np.ones(n),
        "mode": np.full(n, 2, dtype=np.int32),
        "status": np.zeros(n, dtype=np.int32),
        "cycle_duration_us": rng.gamma(4.0, 10.0, n),
        "interval_us": interval_us,
        "dext_us": np.round(rng.gamma(3.0, 40.0, 500)),
    }


def assert_png(path: Path) -> None:
    data = path.read_bytes()
    assert data[:8] == PNG_SIGNATURE, path
    image = imread(path)
    assert image.shape[:2] == EXPECTED_PX, (path, image.shape)
    assert image.shape[2] == 4  # RGBA
    # Not a blank canvas: a drawn figure has many distinct colours. Packing each RGBA pixel into one
    # uint32 keeps np.unique 1-D (its axis=0 form takes a second on 800 000 rows).
    rgba = np.ascontiguousarray((image * 255).round().astype(np.uint8))
    assert np.unique(rgba.view(np.uint32)).size > 10


@pytest.fixture(scope="module")
def recording() -> dict[str, np.ndarray]:
    return synthetic_recording()


# --- plot_all -----------------------------------------------------------------------------------------


def test_plot_all_writes_four_valid_pngs(recording, tmp_path):
    out_dir = tmp_path / "nested" / "plots"  # plot_all creates it
    paths = plot_all(recording, out_dir, prefix="run1", push_window=(0.8, 1.2), period_us=1000.0)
    assert [p.name for p in paths] == [
        "run1_tracking.png",
        "run1_wrench.png",
        "run1_deflection.png",
        "run1_timing.png",
    ]
    for path in paths:
        assert path.parent == out_dir
        assert path.stat().st_size > 0
        assert_png(path)


def test_plot_all_default_prefix_and_npz_file(recording, tmp_path):
    np.savez(tmp_path / "rec.npz", **recording)
    with np.load(tmp_path / "rec.npz") as npz:
        paths = plot_all(npz, tmp_path)
    kinds = ("tracking", "wrench", "deflection", "timing")
    assert [p.name for p in paths] == [f"demo_{k}.png" for k in kinds]
    for path in paths:
        assert_png(path)


def test_plot_accepts_an_object_with_data(recording, tmp_path):
    class LiveRecording:  # the shape of jtac_py.controller.Recording: arrays through data()
        def data(self):
            return {k: recording[k] for k in ("interval_us", "cycle_duration_us")}

    assert_png(plot_timing(LiveRecording(), tmp_path / "timing.png"))


def test_plot_all_rejects_unknown_keyword(recording, tmp_path):
    with pytest.raises(TypeError, match="push_windw"):
        plot_all(recording, tmp_path, push_windw=(0.8, 1.2))


def test_plot_all_forwards_keywords(recording, tmp_path):
    with pytest.raises(ValueError, match="push_window"):
        plot_all(recording, tmp_path, push_window=(1.2, 0.8))
    with pytest.raises(ValueError, match="period_us"):
        plot_all(recording, tmp_path, period_us=-1.0)
    assert not list(tmp_path.iterdir())  # checked before anything is written
    with pytest.raises(ValueError, match="joint_names"):
        plot_all(recording, tmp_path, joint_names=["a", "b"])


# --- each plot needs only its own keys ----------------------------------------------------------------

NEEDED = {
    plot_tracking: ("time", "q", "q_cmd", "q_ref"),
    plot_wrench: ("time", "wrench_raw", "wrench_filtered"),
    plot_deflection: ("time", "joint_offset"),
    plot_timing: ("interval_us", "cycle_duration_us"),
}


@pytest.mark.parametrize("plot", list(NEEDED), ids=lambda f: f.__name__)
def test_plot_works_with_only_its_keys(plot, recording, tmp_path):
    subset = {k: recording[k] for k in NEEDED[plot]}
    path = plot(subset, tmp_path / "only.png")
    assert path == tmp_path / "only.png"
    assert_png(path)


@pytest.mark.parametrize(
    ("plot", "key"),
    [(plot, key) for plot, keys in NEEDED.items() for key in keys],
    ids=lambda v: getattr(v, "__name__", v),
)
def test_missing_key_raises_naming_it(plot, key, recording, tmp_path):
    subset = {k: recording[k] for k in NEEDED[plot] if k != key}
    with pytest.raises(KeyError, match=key):
        plot(subset, tmp_path / "missing.png")
    assert not (tmp_path / "missing.png").exists()


def test_wrong_shape_raises_naming_the_key(recording, tmp_path):
    bad = dict(recording, wrench_raw=recording["wrench_raw"][:, :3])
    with pytest.raises(ValueError, match="wrench_raw"):
        plot_wrench(bad, tmp_path / "w.png")
    short = dict(recording, q_cmd=recording["q_cmd"][:-1])
    with pytest.raises(ValueError, match="q_cmd"):
        plot_tracking(short, tmp_path / "t.png")


def test_deflection_falls_back_to_joint_offset_for_nan_ee_deflection(recording, tmp_path):
    rec = dict(recording, ee_deflection=np.full_like(recording["ee_deflection"], np.nan))
    del rec["joint_offset"]
    # All-NaN ee_deflection counts as absent, so joint_offset becomes the needed key.
    with pytest.raises(KeyError, match="joint_offset"):
        plot_deflection(rec, tmp_path / "d.png")
    rec["joint_offset"] = recording["joint_offset"]
    assert_png(plot_deflection(rec, tmp_path / "d.png", force_threshold_n=5.0))


def test_timing_handles_degenerate_and_integer_samples(tmp_path):
    rec = {
        "interval_us": np.full(100, 1000.0),  # no jitter at all: one bin
        "cycle_duration_us": np.arange(1.0, 101.0),  # whole microseconds
        "dext_us": np.array([np.nan, 250.0, 260.0, np.inf]),  # non-finite samples are skipped
    }
    assert_png(plot_timing(rec, tmp_path / "timing.png", period_us=2000.0))
    with pytest.raises(ValueError, match="period_us"):
        plot_timing(rec, tmp_path / "timing.png", period_us=0.0)


def test_tracking_with_joint_names(recording, tmp_path):
    names = [f"fr3_joint{i}" for i in range(1, 8)]
    assert_png(plot_tracking(recording, tmp_path / "t.png", joint_names=names))


def test_module_does_not_import_pyplot():
    # pyplot's global state (current figure, backend selection) is what the module avoids; a
    # fresh interpreter shows whether anything pulls it in.
    code = (
        "import sys, tempfile, numpy as np\n"
        "from jtac_py.plots import plot_timing\n"
        "d = tempfile.mkdtemp()\n"
        "plot_timing({'interval_us': np.ones(10), 'cycle_duration_us': np.ones(10)}, d + '/t.png')\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, check=True, timeout=120)


# --- summary_stats ------------------------------------------------------------------------------------


def test_summary_stats_known_values():
    assert summary_stats(np.arange(101.0)) == {"median": 50.0, "p99": 99.0, "max": 100.0}
    # 1..100: the median is between 50 and 51; numpy's linear p99 sits at rank 0.99 * 99 = 98.01,
    # i.e. 1% of the way from 99 to 100.
    stats = summary_stats(np.arange(1.0, 101.0))
    assert stats["median"] == pytest.approx(50.5)
    assert stats["p99"] == pytest.approx(99.01)
    assert stats["max"] == 100.0
    assert all(type(v) is float for v in stats.values())


def test_summary_stats_ignores_non_finite_and_flattens():
    values = [[1000.0, np.nan], [1002.0, 1004.0], [np.inf, 1006.0]]
    assert summary_stats(values) == summary_stats([1000.0, 1002.0, 1004.0, 1006.0])
    assert summary_stats(values)["median"] == 1003.0


def test_summary_stats_rejects_empty():
    with pytest.raises(ValueError, match="no finite values"):
        summary_stats([])
    with pytest.raises(ValueError, match="no finite values"):
        summary_stats([np.nan])


def test_format_stats():
    text = format_stats({"median": 1000.0, "p99": 1012.34, "max": 2600.0})
    assert text == "median 1000.0 µs, p99 1012.3 µs, max 2600.0 µs"

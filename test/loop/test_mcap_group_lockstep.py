"""An ArmGroup's recording as one .mcap (GroupRecording.save / record(path="pair.mcap")): each arm's
channels and events under its name (/left/joint_states, /right/jtac/events ...), all on one clock (the
group time mapped to the wall time of the recording's start), and every arm's rows back bit for bit.

Layer: loop with simulated hardware, two lockstep FR3s (ArmGroup.simulated_pair); the single-arm file
is tested in test_mcap_lockstep.py and test_mcap_events_streaming.py.
"""

from __future__ import annotations

import numpy as np
from mcap.reader import make_reader
from mcap_ros2.decoder import DecoderFactory

from jtac_py.arm_group import ArmGroup
from jtac_py.controller import Trajectory
from jtac_py.mcap_io import METADATA_NAME, load_group_mcap

FIELDS = ["time", "host_time", "trajectory_time", "q", "dq", "q_cmd", "dq_cmd"]
MOTION = np.array([0.1, 0.0, 0.0, 0.15, 0.0, 0.0, 0.1])  # [rad] per arm


def _decoded(path, topic: str) -> list:
    with path.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        return [(m.log_time, d) for _s, _c, m, d in reader.iter_decoded_messages(topics=[topic])]


def _clock(path, arm: str) -> tuple[int, float]:
    with path.open("rb") as stream:
        records = {m.name: m.metadata for m in make_reader(stream).iter_metadata()}
    meta = records[f"{METADATA_NAME}/{arm}"]
    return int(meta["wall_time_at_start_ns"]), float(meta["controller_time_at_start_s"])


def test_a_pairs_recording_holds_each_arm_under_its_name_on_one_clock(tmp_path):
    path = tmp_path / "pair.mcap"
    pair = ArmGroup.simulated_pair(clock="lockstep").start()
    try:
        pair.step(20)
        q0 = np.concatenate([np.array(c.state.q_cmd) for c in pair.controllers.values()])
        with pair.record(FIELDS, path=path) as rec:
            result = pair.follow(Trajectory.quintic(q0, q0 + np.tile(MOTION, 2), 0.4), timeout=5.0)
        joint_names = {arm: c.joint_names for arm, c in pair.controllers.items()}
    finally:
        pair.stop(brake=False)
    assert result.ok, result.message
    expected = rec.data()
    loaded = load_group_mcap(path)
    assert list(loaded) == ["left", "right"]
    for arm, rows in expected.items():
        assert set(loaded[arm]) == set(rows)
        for name, values in rows.items():
            assert loaded[arm][name].tobytes() == values.tobytes(), (arm, name)

    (wall0_ns, group0_s), right_clock = _clock(path, "left"), _clock(path, "right")
    assert right_clock == (wall0_ns, group0_s)  # one clock for both arms
    assert group0_s == min(expected[arm]["group_time"][0] for arm in expected)
    for arm in ("left", "right"):
        states = _decoded(path, f"/{arm}/joint_states")
        rows = expected[arm]
        assert len(states) == len(rows["time"]) > 400
        assert states[0][1].name == joint_names[arm]
        assert [s.position for _t, s in states[::100]] == rows["q"][::100].tolist()
        expected_ns = wall0_ns + np.round((rows["group_time"] - group0_s) * 1e9).astype(np.int64)
        assert [t for t, _s in states] == expected_ns.tolist()
        events = _decoded(path, f"/{arm}/jtac/events")
        arm_result = result.results[arm]
        (succeeded,) = [(t, e) for t, e in events if e.msg.startswith("GOAL_SUCCEEDED")]
        assert succeeded[0] == wall0_ns + round((arm_result.end_time_s - group0_s) * 1e9)
    assert _decoded(path, "/joint_states") == []  # nothing outside the arms' names

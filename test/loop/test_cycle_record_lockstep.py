"""One cycle record from C++ to Python, in lockstep.

Layer: loop with simulated hardware (as test_controller_lockstep.py). The native cycle table
(``_native.CYCLE_FIELDS``) is the one list of a cycle's fields: the snapshot's keys, the recording's
columns, RECORD_FIELDS and ControllerState's attributes are all of it, with its shapes, and the last
recorded row is the snapshot's cycle value for value.
"""

import dataclasses

import numpy as np
import pytest

from jtac_py import _native
from jtac_py.controller import RECORD_FIELDS, Controller, ControllerState, Trajectory
from jtac_py.hardware import SimulatedArm

TWO_TIPS = {"sensor_frames": ["fr3_ft_sensor", "fr3_link7"], "ee_frames": ["fr3_ee", "fr3_tcp"]}


@pytest.fixture
def controller():
    c = Controller(SimulatedArm("fr3", clock="lockstep"), TWO_TIPS).start()
    c.step(20)
    yield c
    c.stop()


def test_every_python_list_of_the_cycle_is_the_native_table():
    names = [name for name, _shape, _doc in _native.CYCLE_FIELDS]
    assert list(RECORD_FIELDS) == names
    assert [f.name for f in dataclasses.fields(ControllerState)] == [*names, "timing"]
    assert all(doc for _name, _shape, doc in _native.CYCLE_FIELDS)  # every field says what it is
    # The names docs/python_api.md documents are all there.
    assert {"time", "tick", "q", "dq", "q_cmd", "dq_cmd", "q_ref", "error", "joint_offset"} <= set(names)
    assert {"wrench_raw", "wrenches_raw", "mode", "status", "cycle_duration_us", "interval_us"} <= set(names)


def test_the_snapshot_and_the_recording_carry_the_table_with_its_shapes(controller):
    c = controller
    q0 = c.state.q
    c.follow(Trajectory.quintic(q0, q0 + 0.1, 1.0), wait=False)
    with c.record() as rec:
        c.step(300)
        state = c.state
    data = rec.data()
    assert set(data) == set(RECORD_FIELDS)
    for name, shape, _doc in _native.CYCLE_FIELDS:
        tips = len(shape) == 2
        expected = (c.num_tips, 6) if tips else tuple(shape)  # wrenches_* cut to the controller's tips
        assert np.shape(getattr(state, name)) == expected, name
        assert data[name].shape == (rec.rows, *expected), name
    # The last row is the state's cycle (the state is read right after it).
    for name in RECORD_FIELDS:
        value = getattr(state, name)
        if name in ("mode", "status"):
            value = int(value)
        np.testing.assert_array_equal(data[name][-1], value, err_msg=name)
    assert state.goal_id > 0 and np.abs(data["dq_ref"][-1]).max() > 0.0  # mid-move

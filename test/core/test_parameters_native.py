"""The generated C++ parameters (jtac::Params, bound as _native.Params) against the schema they come from:
the same names and defaults, and a validate() that refuses what jtac_py.parameters refuses, in its words."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtac_py import _native, config
from jtac_py.parameters import ParameterError, default_schema
from jtac_py.parameters.cpp import map_blocks, map_member, struct_name

# Small, fixed example counts keep `make test` fast and deterministic; no example database in the repo.
PROPERTY_SETTINGS = settings(max_examples=200, derandomize=True, database=None, deadline=None)


def _owner(params, group: str):
    for segment in filter(None, group.split(".")):
        params = getattr(params, segment)
    return params


def _cpp_message(values: dict) -> str:
    """Params.validate() of values (not validated in Python: config's copy into Params is field by field)."""
    return config._params(values).validate()


def _python_message(values: dict) -> str:
    try:
        default_schema().validate(values)
    except ParameterError as error:
        return str(error)
    return ""


# ---------------------------------------------------------------------------------------------- defaults
def test_params_holds_every_plain_parameter_with_the_schema_default():
    schema = default_schema()
    params = _native.Params()
    for spec in schema.entries:
        if spec.map_keys:
            continue
        *groups, leaf = spec.name.split(".")
        value = getattr(_owner(params, ".".join(groups)), leaf)
        expected = list(spec.default) if isinstance(spec.default, tuple) else spec.default
        assert value == expected, spec.name
        assert type(value) is type(expected), spec.name


def test_map_blocks_are_maps_of_entries_holding_the_schema_defaults():
    params = _native.Params()
    blocks = map_blocks(default_schema())
    assert [(group, key) for group, key, _ in blocks] == [
        ("ft_sensors", "sensor_frames"),
        ("constraints", "joints"),
    ]
    for group, key, specs in blocks:
        owner = _owner(params, group)
        assert getattr(owner, map_member(f"__map_{key}")) == {}  # no entry = every element's defaults
        entry = getattr(type(owner), struct_name(f"__map_{key}"))()
        for spec in specs:
            assert getattr(entry, spec.template.split(".")[-1]) == spec.default, spec.template


def test_defaults_validate_and_a_resolved_set_round_trips():
    assert _native.Params().validate() == ""
    values = config.resolve(**{"constraints.fr3_joint2.goal_tolerance": 0.02, "ft_sensor_name": "ati"})
    params = config.native_params(values)
    assert params.validate() == ""
    assert params.constraints.joints_map["fr3_joint2"].goal_tolerance == 0.02
    assert params.ft_sensor_name == "ati"
    assert _native.tip_ft_sensor_names(params) == ["ati"]


# ---------------------------------------------------------------------------------------------- validate()
BAD = [
    {"time_scale_percentage": 150.0},  # bounds<>
    {"default_path_tolerance": 0.0},  # gt<>
    {"ft_cutoff_frequency_ratio": 1.5},  # lt_eq<>
    {"jacobian_damping": -1e-05},  # gt_eq<>, a float Python writes in exponent form
    {"default_goal_tolerance": math.nan},  # finite
    {"gravity_vector": [0.0, math.inf, -9.81]},  # finite, with the element's index
    {"update_rate": 333},  # one_of<> (int)
    {"hardware": "gazebo"},  # one_of<> (string)
    {"gravity_vector": [0.0, -9.81]},  # fixed_size<>
    {"gravity_vector": [0.0, 0.0, -9.81, 1.0]},  # the capacity of double_array_fixed_3
    {"stop_accelerations": [5.0] * 6 + [-1.0]},  # jtac::element_gt
    {"stop_accelerations": [5.0] * 6},  # jtac::size_eq_param
    {"joints": ["a", "b", "a"]},  # unique<> on a map key, before anything else
    {"joints": []},  # not_empty<>
    {"base_frame": ""},  # not_empty<> (string)
    {"continuous_joints": ["fr3_joint9"]},  # jtac::subset_of_param
    {"cpu_affinity": [0, -1]},  # lower_element_bounds<>
    {"sensor_frames": [], "ee_frames": [], "ft_sensor_name": "ati"},  # jtac::not_empty_if
    {"ee_frames": ["fr3_ee", "tool"]},  # jtac::size_eq_param
    {"constraints.fr3_joint3.goal_tolerance": -0.1},  # a __map_ entry
    {"constraints.fr3_joint3.path_tolerance": math.inf},  # a __map_ entry, finite
]


@pytest.mark.parametrize("bad", BAD, ids=lambda bad: ",".join(bad))
def test_cpp_validate_refuses_what_python_refuses_with_the_same_message(bad):
    values = {**default_schema().defaults(), **bad}
    # A new joint or sensor frame list: its __map_ entries go with it (their defaults).
    if "joints" in bad:
        values["stop_accelerations"] = [5.0] * len(bad["joints"])
        values = {k: v for k, v in values.items() if not k.startswith("constraints.")}
    if "sensor_frames" in bad:
        values = {k: v for k, v in values.items() if not k.startswith("ft_sensors.")}
    python = _python_message(values)
    assert python, bad
    assert _cpp_message(values) == python


def test_a_string_is_written_as_python_writes_it():
    values = {**default_schema().defaults(), "hardware": "it's"}
    assert _cpp_message(values) == _python_message(values)
    assert '"it\'s"' in _cpp_message(values)


RATE_PARAMETERS = [
    "time_scale_percentage",
    "ft_cutoff_frequency_ratio",
    "jacobian_damping",
    "ft_force_deadband",
]


@PROPERTY_SETTINGS
@given(
    name=st.sampled_from(RATE_PARAMETERS),
    value=st.floats(allow_nan=True, allow_infinity=True, width=64),
)
def test_cpp_and_python_agree_on_any_double(name, value):
    values = {**default_schema().defaults(), name: value}
    assert _cpp_message(values) == _python_message(values)


@PROPERTY_SETTINGS
@given(value=st.lists(st.floats(allow_nan=True, allow_infinity=True, width=64), max_size=9))
def test_cpp_and_python_agree_on_any_stop_accelerations(value):
    values = {**default_schema().defaults(), "stop_accelerations": value}
    assert _cpp_message(values) == _python_message(values)


def test_an_entry_for_no_joint_is_refused():
    params = _native.Params()
    entry = _native.Params.Constraints.MapJoints()
    params.constraints.joints_map = {"elbow": entry}
    assert params.validate() == (
        "unknown parameter 'constraints.elbow.path_tolerance': 'elbow' is not an element of 'joints'"
    )


# ---------------------------------------------------------------------------------------------- the mapping
def test_the_mapping_takes_the_per_joint_tolerance_over_the_default():
    params = _native.Params()
    entry = _native.Params.Constraints.MapJoints()
    entry.goal_tolerance = 0.03
    params.constraints.joints_map = {"fr3_joint4": entry}
    native = _native.jtac_parameters(params)
    assert list(native.trajectory.default_goal_tolerance_rad) == [0.05] * 3 + [0.03] + [0.05] * 3
    assert list(native.trajectory.default_path_tolerance_rad) == [0.05] * 7
    assert list(native.gravity_base_m_s2) == [0.0, 0.0, -9.81]


def test_the_mapping_builds_the_config_with_the_arguments_beside_params():
    params = _native.Params()
    params.ft_sensors.sensor_frames_map = {"fr3_ft_sensor": _native.Params.FtSensors.MapSensorFrames()}
    native = _native.jtac_config(params, "<robot name='x'/>", [1.0] * 7, [2.0] * 7)
    assert native.urdf_xml == "<robot name='x'/>"
    assert native.has_force_torque_sensor is False
    assert native.max_velocity_rad_s == [1.0] * 7
    assert native.update_rate_hz == 1000.0

"""Tests of jtac_py.parameters: the schema, every validator, type rules, __map_ expansion, files, docs."""

from __future__ import annotations

import array
import math
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jtac_py.parameters import (
    DEFAULT_SCHEMA_PATH,
    ParameterError,
    SchemaError,
    admittance_enabled,
    default_joint_tolerances,
    default_schema,
    docs_are_current,
    load_params_file,
    load_schema,
    main,
    render_markdown,
    tip_ft_sensor_names,
)

DATA = Path(__file__).parent / "data"
FR3_JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]

# Small, fixed example counts keep `make test` fast and deterministic; no example database in the repo.
PROPERTY_SETTINGS = settings(max_examples=200, derandomize=True, database=None, deadline=None)


@pytest.fixture(scope="module")
def schema():
    return load_schema()


@pytest.fixture(scope="module")
def demo():
    """The test schema that uses every validator, one per parameter."""
    return load_schema(DATA / "validator_schema.yaml")


def _write(tmp_path: Path, text: str, name: str = "file.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------------------------------------- the schema
def test_schema_parses_and_every_default_passes_its_own_validation(schema):
    assert schema.namespace == "jtac"
    assert schema.path == DEFAULT_SCHEMA_PATH
    defaults = schema.defaults()
    assert schema.validate({}) == defaults
    assert schema.validate(defaults) == defaults
    for name, spec in schema.expand().items():
        assert spec.has_default, name
        assert spec.check(spec.default, defaults) == defaults[name]


def test_schema_lists_every_parameter_the_spec_and_public_configs_name(schema):
    names = set(schema.names())
    expected = {
        # seed 001 and the public JTAC configs
        "joints",
        "planning_group_name",
        "base_frame",
        "sensor_frames",
        "ee_frames",
        "ft_sensor_name",
        "stop_accelerations",
        "ft_cutoff_frequency_ratio",
        "ft_force_deadband",
        "ft_torque_deadband",
        "state_publish_rate",
        "jacobian_damping",
        "gravity_vector",
        "default_path_tolerance",
        "default_goal_tolerance",
        "default_goal_time_tolerance",
        "default_absolute_force_torque_threshold",
        "time_scale_percentage",
        "time_scale_filter_constant",
        "zero_fts_num_samples",
        "continuous_joints",
        # loop, hardware and capacities
        "update_rate",
        "hardware",
        "robot",
        "robot_ip",
        "realtime_priority",
        "cpu_affinity",
        "robot_description",
        "urdf_path",
        "max_trajectory_points",
        "record_buffer_cycles",
        "start_position_tolerance",
        "stitch_position_tolerance",
        "stitch_velocity_tolerance",
        # __map_ expansions of the defaults
        "ft_sensors.fr3_ft_sensor.name",
        "constraints.fr3_joint1.path_tolerance",
        "constraints.fr3_joint7.goal_tolerance",
    }
    assert expected <= names


def test_spec_defaults(schema):
    defaults = schema.defaults()
    assert defaults["joints"] == FR3_JOINTS
    assert defaults["jacobian_damping"] == 0.01
    assert defaults["gravity_vector"] == [0.0, 0.0, -9.81]
    assert defaults["default_path_tolerance"] == 0.05
    assert defaults["default_goal_tolerance"] == 0.05
    assert defaults["default_goal_time_tolerance"] == 0.0
    assert defaults["default_absolute_force_torque_threshold"] == [45.0, 45.0, 45.0, 10.0, 10.0, 10.0]
    assert defaults["time_scale_percentage"] == 100.0
    assert defaults["zero_fts_num_samples"] == 10
    assert defaults["ft_cutoff_frequency_ratio"] == 1.0
    assert defaults["ft_sensor_name"] == ""
    assert defaults["update_rate"] == 1000
    assert defaults["hardware"] == "sim"
    assert isinstance(defaults["state_publish_rate"], int)
    assert len(defaults["stop_accelerations"]) == len(defaults["joints"])


def test_structure_is_read_only_and_tuning_is_runtime(schema):
    read_only = {
        "joints",
        "base_frame",
        "sensor_frames",
        "ee_frames",
        "ft_sensor_name",
        "continuous_joints",
        "update_rate",
        "hardware",
        "robot",
        "robot_ip",
        "realtime_priority",
        "cpu_affinity",
        "max_trajectory_points",
        "record_buffer_cycles",
        "ft_sensors.fr3_ft_sensor.name",
    }
    runtime = {
        "time_scale_percentage",
        "time_scale_filter_constant",
        "default_path_tolerance",
        "default_goal_tolerance",
        "default_goal_time_tolerance",
        "ft_force_deadband",
        "ft_torque_deadband",
        "ft_cutoff_frequency_ratio",
        "gravity_vector",
        "stop_accelerations",
        "default_absolute_force_torque_threshold",
        "constraints.fr3_joint1.path_tolerance",
    }
    expanded = schema.expand()
    assert all(expanded[name].read_only for name in read_only)
    assert not any(expanded[name].read_only for name in runtime)


def test_every_description_states_meaning_and_numbers_state_units(schema):
    for spec in schema.entries:
        assert len(spec.description) > 20, spec.template
        if spec.base_type in ("int", "double"):
            assert re.search(r"\[[^\]]+\]", spec.description), f"{spec.template}: no [unit] in description"
        # Outside code spans a <name> would vanish as an HTML tag in the rendered docs.
        assert "<" not in re.sub(r"`[^`]*`", "", spec.description), spec.template


# ---------------------------------------------------------------------------------------------- validators
VALIDATOR_CASES = [
    # (parameter, good value, bad value, rule, index of the offending element or None, offending value)
    ("v_bounds", 2.0, 2.5, "bounds<>", None, 2.5),
    ("v_lt", 4, 5, "lt<>", None, 5),
    ("v_gt", 1e-9, 0.0, "gt<>", None, 0.0),
    ("v_lt_eq", 1.0, 1.5, "lt_eq<>", None, 1.5),
    ("v_gt_eq", 0, -1, "gt_eq<>", None, -1),
    ("v_one_of_str", "y", "z", "one_of<>", None, "z"),
    ("v_one_of_int", 2, 3, "one_of<>", None, 3),
    ("v_fixed_size", [1.0, 2.0, 3.0], [1.0, 2.0], "fixed_size<>", None, [1.0, 2.0]),
    ("v_size_gt", [1, 2], [1], "size_gt<>", None, [1]),
    ("v_size_lt", "abc", "abcd", "size_lt<>", None, "abcd"),
    ("v_not_empty", "a", "", "not_empty<>", None, ""),
    ("v_unique", ["a", "b"], ["a", "b", "a"], "unique<>", 2, "a"),
    ("v_subset_of", ["q", "p"], ["p", "r"], "subset_of<>", 1, "r"),
    ("v_element_bounds", [0.0, 1.0], [0.5, 1.5], "element_bounds<>", 1, 1.5),
    ("v_lower_element_bounds", [0, 5], [3, -1], "lower_element_bounds<>", 1, -1),
    ("v_upper_element_bounds", [1.0, -3.0], [2.0], "upper_element_bounds<>", 0, 2.0),
    ("v_element_gt", [0.1], [1.0, 0.0], "jtac::element_gt", 1, 0.0),
    ("v_elements_not_empty", ["a"], ["a", ""], "jtac::elements_not_empty", 1, ""),
    ("v_size_eq_param", [1.0, 2.0], [1.0], "jtac::size_eq_param", None, [1.0]),
    ("v_subset_of_param", ["b", "a"], ["c"], "jtac::subset_of_param", 0, "c"),
    ("v_no_brackets", 0.1, 0.0, "gt_eq<>", None, 0.0),
    ("v_scalar_arg", 0.0, -0.5, "gt_eq<>", None, -0.5),
]


def test_validator_cases_cover_every_validator(demo):
    used = {validator.name for spec in demo.entries for validator in spec.validators}
    assert used == {
        "bounds<>",
        "lt<>",
        "gt<>",
        "lt_eq<>",
        "gt_eq<>",
        "one_of<>",
        "fixed_size<>",
        "size_gt<>",
        "size_lt<>",
        "not_empty<>",
        "unique<>",
        "subset_of<>",
        "element_bounds<>",
        "lower_element_bounds<>",
        "upper_element_bounds<>",
        "jtac::element_gt",
        "jtac::elements_not_empty",
        "jtac::size_eq_param",
        "jtac::subset_of_param",
        "jtac::not_empty_if",
    }


@pytest.mark.parametrize(
    ("name", "good", "bad", "rule", "index", "offending"),
    VALIDATOR_CASES,
    ids=[case[0] for case in VALIDATOR_CASES],
)
def test_validator_accepts_good_and_rejects_bad_naming_parameter_value_and_rule(
    demo, name, good, bad, rule, index, offending
):
    assert demo.validate({name: good, "v_required": 0})[name] == good
    with pytest.raises(ParameterError) as info:
        demo.validate({name: bad, "v_required": 0})
    error = info.value
    message = str(error)
    assert error.name == name
    assert error.rule.startswith(rule)
    assert error.index == index
    assert error.value == offending
    assert rule in message
    assert repr(offending) in message
    assert (f"'{name}'[{index}]" if index is not None else f"parameter '{name}' =") in message


def test_not_empty_if_applies_only_while_the_other_parameter_is_set(demo):
    assert demo.validate({"v_not_empty_if": [], "v_required": 0})["v_not_empty_if"] == []
    assert demo.validate({"v_flag": "on", "v_not_empty_if": ["x"], "v_required": 0})["v_flag"] == "on"
    with pytest.raises(ParameterError, match=r"'v_not_empty_if'.*jtac::not_empty_if.*'v_flag' is set"):
        demo.validate({"v_flag": "on", "v_not_empty_if": [], "v_required": 0})


def test_required_parameter_without_default(demo):
    with pytest.raises(ParameterError, match="parameter 'v_required' is required"):
        demo.validate({})
    assert demo.validate({"v_required": 7})["v_required"] == 7


def test_fixed_type_holds_at_most_its_size(demo):
    # gpl's *_fixed_N types are static vectors of capacity N (an implicit size_lt<>: [N + 1]).
    assert demo.validate({"v_fixed_type": [1.0], "v_required": 0})["v_fixed_type"] == [1.0]
    with pytest.raises(ParameterError, match=r"'v_fixed_type' = .* violates type double_array_fixed_2"):
        demo.validate({"v_fixed_type": [1.0, 2.0, 3.0], "v_required": 0})


def test_jtac_schema_validators(schema):
    cases = {
        "time_scale_percentage": (100.5, "bounds<>"),
        "ft_cutoff_frequency_ratio": (0.0, "gt<>"),
        "default_path_tolerance": (0.0, "gt<>"),
        "default_goal_time_tolerance": (-0.1, "gt_eq<>"),
        "ft_force_deadband": (-1.0, "gt_eq<>"),
        "zero_fts_num_samples": (0, "gt_eq<>"),
        "update_rate": (333, "one_of<>"),
        "hardware": ("gazebo", "one_of<>"),
        "robot": ("ur5", "one_of<>"),
        "realtime_priority": (100, "bounds<>"),
        "gravity_vector": ([0.0, -9.81], "fixed_size<>"),
        "stop_accelerations": ([1.0] * 6 + [0.0], "jtac::element_gt"),
        "default_absolute_force_torque_threshold": ([45.0] * 5 + [-1.0], "jtac::element_gt"),
        "continuous_joints": (["fr3_joint9"], "jtac::subset_of_param"),
        "joints": ([*FR3_JOINTS[:6], "fr3_joint1"], "unique<>"),
        "cpu_affinity": ([-1], "lower_element_bounds<>"),
    }
    for name, (bad, rule) in cases.items():
        with pytest.raises(ParameterError) as info:
            schema.validate({name: bad})
        assert info.value.name == name, name
        assert rule in str(info.value), name


def test_cross_parameter_rules(schema):
    with pytest.raises(ParameterError, match=r"'stop_accelerations'.*as many elements as 'joints' \(2\)"):
        schema.validate({"joints": ["a", "b"]})
    values = schema.validate({"joints": ["a", "b"], "stop_accelerations": [1, 2]})
    assert values["stop_accelerations"] == [1.0, 2.0]
    with pytest.raises(ParameterError, match=r"'ee_frames'.*as many elements as 'sensor_frames'"):
        schema.validate({"sensor_frames": ["s1", "s2"]})
    with pytest.raises(ParameterError, match=r"'sensor_frames'.*not be empty while 'ft_sensor_name' is set"):
        schema.validate({"ft_sensor_name": "ft", "sensor_frames": [], "ee_frames": []})


# ---------------------------------------------------------------------------------------------- types
def test_int_accepts_integers_only(schema):
    assert schema.validate({"zero_fts_num_samples": 20})["zero_fts_num_samples"] == 20
    for bad in (20.0, True, "20", None):
        with pytest.raises(ParameterError, match=r"parameter 'zero_fts_num_samples'"):
            schema.validate({"zero_fts_num_samples": bad})
    with pytest.raises(ParameterError, match=r"= 1000\.0 violates type int: expected an integer, got float"):
        schema.validate({"update_rate": 1000.0})


def test_double_accepts_integers_as_floats_but_not_bools(schema):
    value = schema.validate({"time_scale_percentage": 50})["time_scale_percentage"]
    assert value == 50.0
    assert type(value) is float
    for bad in (True, "50", [50.0]):
        with pytest.raises(ParameterError, match=r"'time_scale_percentage' = .* violates type double"):
            schema.validate({"time_scale_percentage": bad})


def test_bool_and_string_types(demo, schema):
    assert demo.validate({"v_bool": True, "v_required": 0})["v_bool"] is True
    with pytest.raises(ParameterError, match=r"'v_bool' = 1 violates type bool: expected a bool, got int"):
        demo.validate({"v_bool": 1, "v_required": 0})
    with pytest.raises(ParameterError, match=r"'robot_ip' = 17 violates type string"):
        schema.validate({"robot_ip": 17})


def test_arrays_accept_lists_tuples_and_array_array_and_check_each_element(schema):
    values = schema.validate({"gravity_vector": (0, 0, -9)})
    assert values["gravity_vector"] == [0.0, 0.0, -9.0]
    assert all(type(v) is float for v in values["gravity_vector"])
    values = schema.validate({"gravity_vector": array.array("d", [0.0, 1.0, 2.0])})
    assert values["gravity_vector"] == [0.0, 1.0, 2.0]
    assert schema.validate({"cpu_affinity": array.array("q", [2, 3])})["cpu_affinity"] == [2, 3]
    with pytest.raises(ParameterError, match=r"'gravity_vector'\[1\] = True violates type double"):
        schema.validate({"gravity_vector": [0.0, True, 0.0]})
    with pytest.raises(ParameterError, match=r"'cpu_affinity'\[1\] = 2\.0 violates type int"):
        schema.validate({"cpu_affinity": [1, 2.0]})
    # A string is a sequence in Python, but never an array parameter.
    with pytest.raises(ParameterError, match=r"'joints' = 'fr3_joint1' violates type string_array"):
        schema.validate({"joints": "fr3_joint1"})


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_doubles_are_rejected(schema, bad):
    with pytest.raises(ParameterError, match=r"'time_scale_filter_constant' = .* violates finite"):
        schema.validate({"time_scale_filter_constant": bad})
    with pytest.raises(ParameterError) as info:
        schema.validate({"gravity_vector": [0.0, bad, 0.0]})
    assert info.value.index == 1
    assert info.value.rule == "finite"
    assert "'gravity_vector'[1]" in str(info.value)


@PROPERTY_SETTINGS
@given(
    st.one_of(st.floats(allow_nan=False, allow_infinity=False), st.floats(min_value=-1.0, max_value=101.0))
)
def test_bounds_validator_agrees_with_a_direct_comparison(value):
    spec = default_schema().spec("time_scale_percentage")
    if 0.0 <= value <= 100.0:
        assert spec.check(value) == value
    else:
        with pytest.raises(ParameterError, match="bounds<>"):
            spec.check(value)


@PROPERTY_SETTINGS
@given(st.lists(st.floats(min_value=-10.0, max_value=10.0), max_size=8))
def test_element_gt_agrees_with_a_direct_comparison(values):
    schema = default_schema()
    joints = [f"j{i}" for i in range(len(values))]
    candidate = {"joints": joints, "stop_accelerations": values}
    if values and all(v > 0.0 for v in values):
        assert schema.validate(candidate)["stop_accelerations"] == values
    else:
        with pytest.raises(ParameterError, match=r"'joints'|'stop_accelerations'"):
            schema.validate(candidate)


# ---------------------------------------------------------------------------------------------- read_only
def test_read_only_parameters_refuse_runtime_updates(schema):
    current = schema.defaults()
    with pytest.raises(ParameterError) as info:
        schema.validate_update(current, {"joints": ["a"]})
    assert str(info.value) == "parameter 'joints' is read_only: set it in the configuration and reload"
    assert info.value.rule == "read_only"
    with pytest.raises(ParameterError, match="'update_rate' is read_only"):
        schema.check_writable("update_rate")
    with pytest.raises(ParameterError, match=r"'ft_sensors\.fr3_ft_sensor\.name' is read_only"):
        schema.validate_update(current, {"ft_sensors.fr3_ft_sensor.name": "x"})
    schema.check_writable("time_scale_percentage")


def test_runtime_update_validates_against_the_whole_set(schema):
    current = schema.defaults()
    updated = schema.validate_update(current, {"time_scale_percentage": 25, "ft_force_deadband": 0.5})
    assert updated["time_scale_percentage"] == 25.0
    assert updated["ft_force_deadband"] == 0.5
    assert current["time_scale_percentage"] == 100.0
    with pytest.raises(ParameterError, match=r"'stop_accelerations'.*jtac::size_eq_param"):
        schema.validate_update(current, {"stop_accelerations": [1.0]})
    with pytest.raises(ParameterError, match="unknown parameter 'time_scale_percent': did you mean"):
        schema.validate_update(current, {"time_scale_percent": 50.0})


# ---------------------------------------------------------------------------------------------- __map_
def test_map_blocks_expand_per_entry_of_the_key_parameter(schema):
    names = schema.names({"joints": ["a", "b"], "sensor_frames": ["s1", "s2"]})
    assert [n for n in names if n.startswith("constraints.")] == [
        "constraints.a.path_tolerance",
        "constraints.b.path_tolerance",
        "constraints.a.goal_tolerance",
        "constraints.b.goal_tolerance",
    ]
    assert [n for n in names if n.startswith("ft_sensors.")] == ["ft_sensors.s1.name", "ft_sensors.s2.name"]
    spec = schema.spec("constraints.b.goal_tolerance", {"joints": ["a", "b"]})
    assert spec.template == "constraints.__map_joints.goal_tolerance"
    assert spec.map_keys == ("joints",)


def test_mapped_values_validate_under_their_expanded_name(schema):
    values = schema.validate({"constraints.fr3_joint2.path_tolerance": 0.2})
    assert values["constraints.fr3_joint2.path_tolerance"] == 0.2
    with pytest.raises(ParameterError, match=r"parameter 'constraints\.fr3_joint3\.goal_tolerance' = -0\.1"):
        schema.validate({"constraints.fr3_joint3.goal_tolerance": -0.1})
    # A mapped name for an entry the key parameter does not hold does not exist.
    with pytest.raises(ParameterError, match=r"unknown parameter 'constraints\.fr3_joint9\.path_tolerance'"):
        schema.validate({"constraints.fr3_joint9.path_tolerance": 0.2})
    values = schema.validate(
        {"joints": ["x"], "stop_accelerations": [1.0], "constraints.x.path_tolerance": 0.3}
    )
    assert values["constraints.x.path_tolerance"] == 0.3
    assert "constraints.fr3_joint1.path_tolerance" not in values


def test_nested_maps_expand_over_every_combination(demo):
    keys = {"names": ["a", "n2"], "others": ["o1", "o2"], "v_required": 1}
    values = demo.validate(keys)
    weights = sorted(n for n in values if n.endswith(".weight"))
    assert weights == [f"per_name.{n}.{o}.weight" for n in ("a", "n2") for o in ("o1", "o2")]
    with pytest.raises(ParameterError, match=r"'per_name\.a\.mode' is read_only"):
        demo.validate_update(values, {"per_name.a.mode": "on_mode"})
    assert demo.validate_update(values, {"per_name.n2.gain": 4})["per_name.n2.gain"] == 4.0


def test_map_key_is_checked_before_expansion(schema):
    with pytest.raises(ParameterError, match=r"'joints'\[1\] = '' violates jtac::elements_not_empty"):
        schema.validate({"joints": ["a", ""], "stop_accelerations": [1.0, 1.0]})
    with pytest.raises(ParameterError, match=r"'sensor_frames' = 'ft' violates type string_array"):
        schema.validate({"sensor_frames": "ft"})


# ---------------------------------------------------------------------------------------------- files
def test_params_file_is_loaded_merged_over_defaults(schema):
    values = load_params_file(DATA / "jtac_params.yaml", "jtac")
    assert values["joints"] == ["j1", "j2", "j3"]
    assert values["stop_accelerations"] == [3.0, 4.0, 5.0]
    assert values["time_scale_percentage"] == 80.0  # from the /** entry
    assert values["constraints.j1.path_tolerance"] == 0.1  # nested form
    assert values["constraints.j2.goal_tolerance"] == 0.02  # dotted form, 2e-2 read as a double
    assert values["ft_sensors.ft_b.name"] == "second_ft"
    assert values["gravity_vector"] == [0.0, 0.0, -9.80665]
    assert values["robot"] == "fr3"  # default
    assert tip_ft_sensor_names(values) == ["wrist_ft", "second_ft"]
    assert admittance_enabled(values)
    assert default_joint_tolerances(values) == ([0.1, 0.05, 0.05], [0.05, 0.02, 0.05])
    assert set(values) == set(schema.names(values))
    # Node names match with or without a leading slash, and through wildcards.
    assert schema.load_params_file(DATA / "jtac_params.yaml", "/jtac") == values
    other = schema.load_params_file(DATA / "jtac_params.yaml", "/other_node")
    assert other["time_scale_percentage"] == 10.0
    assert other["joints"] == FR3_JOINTS
    assert not admittance_enabled(other)


def test_params_file_with_several_nodes_needs_a_node_name(tmp_path, schema):
    with pytest.raises(ParameterError, match=r"jtac_params\.yaml: entries for several nodes .*node_name"):
        schema.load_params_file(DATA / "jtac_params.yaml")
    # /** applies to every node, so only a file without it can lack an entry for one.
    assert schema.load_params_file(DATA / "jtac_params.yaml", "/ns/anyone")["time_scale_percentage"] == 80.0
    path = _write(tmp_path, "/**:\n  ros__parameters:\n    update_rate: 250\n")
    assert schema.load_params_file(path)["update_rate"] == 250
    path = _write(tmp_path, "/ns/*:\n  ros__parameters:\n    update_rate: 125\n", "ns.yaml")
    assert schema.load_params_file(path, "/ns/jtac")["update_rate"] == 125
    with pytest.raises(ParameterError, match=r"ns\.yaml: no entry for node 'jtac' \(entries: /ns/\*\)"):
        schema.load_params_file(path, "jtac")


def test_params_file_unknown_parameter_is_named_with_file_and_line(tmp_path, schema):
    path = _write(tmp_path, "jtac:\n  ros__parameters:\n    hardware: sim\n    time_scale_percentag: 50.0\n")
    with pytest.raises(ParameterError) as info:
        schema.load_params_file(path, "jtac")
    assert str(info.value) == (
        f"{path}:4: unknown parameter 'time_scale_percentag': did you mean 'time_scale_percentage'?"
    )
    assert info.value.name == "time_scale_percentag"


def test_params_file_bad_value_is_named_with_file_line_value_and_rule(tmp_path, schema):
    text = "jtac:\n  ros__parameters:\n    stop_accelerations: [1.0, 1.0, 1.0, -2.0, 1.0, 1.0, 1.0]\n"
    path = _write(tmp_path, text)
    with pytest.raises(ParameterError) as info:
        schema.load_params_file(path, "jtac")
    assert str(info.value) == (
        f"{path}:3: parameter 'stop_accelerations'[3] = -2.0 violates jtac::element_gt: [0.0]: "
        "every element must be greater than 0.0"
    )
    path = _write(tmp_path, "jtac:\n  ros__parameters:\n    update_rate: 1000.0\n", "float.yaml")
    with pytest.raises(ParameterError, match=r"float\.yaml:3: parameter 'update_rate' = 1000\.0") as info:
        schema.load_params_file(path, "jtac")
    assert info.value.rule == "type int"
    path = _write(tmp_path, "jtac:\n  ros__parameters:\n    jacobian_damping: .nan\n", "nan.yaml")
    with pytest.raises(ParameterError, match=r"nan\.yaml:3: parameter 'jacobian_damping' = nan") as info:
        schema.load_params_file(path, "jtac")
    assert info.value.rule == "finite"


def test_params_file_malformed_yaml_names_file_and_line(tmp_path, schema):
    path = _write(tmp_path, "jtac:\n  ros__parameters:\n    joints: [a, b\n    hardware: sim\n")
    with pytest.raises(ParameterError, match=rf"^{re.escape(str(path))}:\d+: malformed YAML"):
        schema.load_params_file(path, "jtac")


def test_params_file_structure_errors(tmp_path, schema):
    path = _write(tmp_path, "jtac:\n  hardware: sim\n")
    with pytest.raises(ParameterError, match=r":1: node entry 'jtac' must hold exactly one key, ros__param"):
        schema.load_params_file(path, "jtac")
    path = _write(tmp_path, "- jtac\n", "list.yaml")
    with pytest.raises(ParameterError, match=r"list\.yaml: expected a mapping of node names"):
        schema.load_params_file(path)
    text = "jtac:\n  ros__parameters:\n    hardware: sim\n    hardware: franka\n"
    path = _write(tmp_path, text, "dup.yaml")
    with pytest.raises(ParameterError, match=r"dup\.yaml:4: key 'hardware' appears twice"):
        schema.load_params_file(path, "jtac")


# ---------------------------------------------------------------------------------------------- bad schemas
SCHEMA_ERRORS = [
    ("demo:\n  p: {type: float, default_value: 1.0}\n", r":2: parameter 'p': invalid type 'float'"),
    (
        "demo:\n  p: {type: double, default_value: 1.0, validation: {nope<>: []}}\n",
        r"unknown validator 'nope<>'",
    ),
    (
        "demo:\n  p: {type: string, default_value: a, validation: {bounds<>: [0, 1]}}\n",
        r"parameter 'p': validator 'bounds<>' does not apply to type string",
    ),
    (
        "demo:\n  p: {type: double, default_value: 1.0, validation: {bounds<>: [0.0]}}\n",
        r"validator 'bounds<>' takes 2 argument\(s\)",
    ),
    (
        "demo:\n  p: {type: double, default_value: 5.0, validation: {bounds<>: [0.0, 1.0]}}\n",
        r":2: default value invalid: parameter 'p' = 5\.0 violates bounds<>",
    ),
    (
        "demo:\n  p: {type: int, default_value: 1.5}\n",
        r"default_value: parameter 'p' = 1\.5 violates type int",
    ),
    ("demo:\n  p: {type: int, default_value: 1, unit: s}\n", r"parameter 'p': 'unit' is not valid syntax"),
    (
        "demo:\n  g:\n    __map_joints:\n      p: {type: int, default_value: 1}\n",
        r"parameter 'g\.__map_joints\.p': __map_joints needs a string_array parameter 'joints'",
    ),
    (
        "demo:\n  p: {type: string_array, default_value: [], validation: {'jtac::size_eq_param': [q]}}\n",
        r"names no other plain parameter",
    ),
    ("demo:\n  p: {type: int, default_value: [1\n", r":\d+: malformed YAML"),
    ("demo: 3\n", r"'demo' must be a parameter or a non-empty group"),
    ("a:\n  p: {type: int}\nb:\n  q: {type: int}\n", r"exactly one root key"),
]


@pytest.mark.parametrize(("text", "pattern"), SCHEMA_ERRORS)
def test_bad_schema_names_file_and_parameter(tmp_path, text, pattern):
    path = _write(tmp_path, text, "schema.yaml")
    with pytest.raises(SchemaError) as info:
        load_schema(path)
    message = str(info.value)
    assert message.startswith(str(path))
    assert re.search(pattern, message), message
    assert isinstance(info.value, ParameterError)


# ---------------------------------------------------------------------------------------------- docs and CLI
def test_docs_parameters_md_is_current(schema):
    assert docs_are_current(schema=schema), "run: python -m jtac_py.parameters --write-docs"


def test_docs_table_has_a_row_per_schema_entry(schema):
    text = render_markdown(schema)
    assert text.count("\n| `") == len(schema.entries)
    assert "| `constraints.<joints>.path_tolerance` | double | `0.0` | no | ≥ 0.0; finite |" in text
    assert "| `update_rate` | int | `1000` | yes | one of {1000, 500, 250, 200, 125, 100} |" in text


def test_cli(tmp_path, capsys):
    assert main(["--check-docs"]) == 0
    assert main(["--validate", str(DATA / "jtac_params.yaml"), "--node", "jtac"]) == 0
    assert "joints: ['j1', 'j2', 'j3']" in capsys.readouterr().out
    bad = _write(tmp_path, "jtac:\n  ros__parameters:\n    hardware: gazebo\n")
    assert main(["--validate", str(bad)]) == 2
    assert "hardware' = 'gazebo' violates one_of<>" in capsys.readouterr().err
    docs = tmp_path / "parameters.md"
    assert main(["--write-docs", "--docs", str(docs)]) == 0
    assert main(["--check-docs", "--docs", str(docs)]) == 0
    docs.write_text("stale\n", encoding="utf-8")
    assert main(["--check-docs", "--docs", str(docs)]) == 1


def test_generated_cpp_and_docs_are_current():
    # jtac::Params (jtac_parameters.hpp), its binding and docs/parameters.md: `--write` regenerates them.
    assert main(["--check"]) == 0, "run: python -m jtac_py.parameters --write"


def test_core_mapping_table_reads_schema_parameters_only(schema):
    # Every row's sources are schema parameters or make_jtac_config's arguments, with a known conversion.
    from jtac_py.parameters import mapping

    arguments = {name for _cpp_type, name in mapping.ARGUMENTS}
    for row in mapping.CORE_FIELDS:
        assert row.conversion in mapping.CONVERSIONS, row
        for name in row.sources:
            assert name in arguments or schema.template(name) is not None, row
    # The docs' rows are the table's, with __map_ segments written as <key>.
    rows = dict(mapping.rows(schema))
    assert rows["JtacConfig.urdf_xml"] == []
    assert rows["JtacParameters.trajectory.default_path_tolerance_rad"] == [
        "joints",
        "constraints.<joints>.path_tolerance",
        "default_path_tolerance",
    ]
    assert "- JtacParameters.gravity_base_m_s2 ← `gravity_vector`" in render_markdown(schema)


def test_core_mapping_refuses_a_name_the_schema_lacks(schema):
    from jtac_py.parameters import mapping

    with pytest.raises(ValueError, match=r"'gravity', which is no parameter of the schema"):
        mapping.source("gravity", schema)
    assert mapping.source("constraints.__map_joints.goal_tolerance", schema).field_pointer == (
        "&Params::Constraints::MapJoints::goal_tolerance"
    )

"""Tests of jtac_ros.parameters: descriptors from the schema, and declaration on a real rclpy node."""

from __future__ import annotations

import os
import random
import sys

# Before rclpy loads: keep DDS discovery on this host and away from other test sessions.
os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] = "LOCALHOST"
os.environ.setdefault("ROS_DOMAIN_ID", str(random.randint(1, 101)))

import pytest

rclpy = pytest.importorskip("rclpy")

from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from jtac_py.parameters import ParameterError, load_schema  # noqa: E402
from jtac_ros.parameters import (  # noqa: E402
    current_values,
    declare_parameters,
    descriptor_for,
    descriptors,
    make_on_set_parameters_callback,
    undeclared_overrides,
)

pytestmark = pytest.mark.ros

FR3_JOINTS = [f"fr3_joint{i}" for i in range(1, 8)]


@pytest.fixture(scope="module")
def schema():
    return load_schema()


@pytest.fixture(scope="module")
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.shutdown(context=context)


_node_count = 0


@pytest.fixture
def make_node(context):
    """Create nodes on the test context (with optional rclpy overrides) and destroy them afterwards."""
    nodes = []

    def make(overrides=None):
        global _node_count
        _node_count += 1
        node = rclpy.create_node(
            f"jtac_params_test_{_node_count}",
            context=context,
            enable_rosout=False,
            start_parameter_services=False,
            parameter_overrides=[Parameter(name, value=v) for name, v in (overrides or {}).items()],
        )
        nodes.append(node)
        return node

    yield make
    for node in nodes:
        node.destroy_node()


# ---------------------------------------------------------------------------------------------- descriptors
def test_descriptor_types_and_read_only(schema):
    by_name = descriptors(schema)
    assert set(by_name) == set(schema.names())
    expected_types = {
        "joints": ParameterType.PARAMETER_STRING_ARRAY,
        "base_frame": ParameterType.PARAMETER_STRING,
        "update_rate": ParameterType.PARAMETER_INTEGER,
        "time_scale_percentage": ParameterType.PARAMETER_DOUBLE,
        "stop_accelerations": ParameterType.PARAMETER_DOUBLE_ARRAY,
        "gravity_vector": ParameterType.PARAMETER_DOUBLE_ARRAY,
        "cpu_affinity": ParameterType.PARAMETER_INTEGER_ARRAY,
        "constraints.fr3_joint1.path_tolerance": ParameterType.PARAMETER_DOUBLE,
        "ft_sensors.fr3_ft_sensor.name": ParameterType.PARAMETER_STRING,
    }
    for name, ros_type in expected_types.items():
        assert by_name[name].type == ros_type, name
        assert by_name[name].name == name
    for name, spec in schema.expand().items():
        assert by_name[name].read_only == spec.read_only, name
        assert by_name[name].description == spec.description, name
    assert by_name["joints"].read_only
    assert not by_name["time_scale_percentage"].read_only


def test_descriptor_ranges_come_from_inclusive_bounds(schema):
    by_name = descriptors(schema)
    time_scale = by_name["time_scale_percentage"].floating_point_range[0]
    assert (time_scale.from_value, time_scale.to_value, time_scale.step) == (0.0, 100.0, 0.0)
    priority = by_name["realtime_priority"].integer_range[0]
    assert (priority.from_value, priority.to_value) == (0, 99)
    samples = by_name["zero_fts_num_samples"].integer_range[0]
    assert (samples.from_value, samples.to_value) == (1, 2**63 - 1)
    deadband = by_name["ft_force_deadband"].floating_point_range[0]
    assert (deadband.from_value, deadband.to_value) == (0.0, sys.float_info.max)
    # (0, 1]: only the inclusive upper end has a range form; the strict lower end is text and callback.
    ratio = by_name["ft_cutoff_frequency_ratio"]
    assert ratio.floating_point_range[0].to_value == 1.0
    assert ratio.floating_point_range[0].from_value == -sys.float_info.max
    assert "> 0.0" in ratio.additional_constraints
    # A strict double bound alone, one_of, and arrays get no range, only additional_constraints.
    assert not by_name["default_path_tolerance"].floating_point_range
    assert "> 0.0" in by_name["default_path_tolerance"].additional_constraints
    assert not by_name["update_rate"].integer_range
    assert "one of {1000, 500, 250, 200, 125, 100}" in by_name["update_rate"].additional_constraints
    assert not by_name["stop_accelerations"].floating_point_range
    assert "as many elements as `joints`" in by_name["stop_accelerations"].additional_constraints
    assert "size 3" in by_name["gravity_vector"].additional_constraints


def test_strict_integer_bounds_become_inclusive_ranges(tmp_path):
    path = tmp_path / "schema.yaml"
    path.write_text("demo:\n  n: {type: int, default_value: 1, validation: {gt<>: [0], lt<>: [10]}}\n")
    integer_range = descriptor_for(load_schema(path).spec("n")).integer_range[0]
    assert (integer_range.from_value, integer_range.to_value) == (1, 9)


# ---------------------------------------------------------------------------------------------- node
def test_node_declares_every_parameter(schema, make_node):
    node = make_node()
    values = declare_parameters(node, schema)
    assert values == schema.defaults()
    for name in schema.names():
        assert node.has_parameter(name), name
        assert node.describe_parameter(name).read_only == schema.spec(name).read_only, name
    # Empty arrays keep their declared type (rclpy would infer a byte array from []).
    assert node.get_parameter("continuous_joints").type_ == Parameter.Type.STRING_ARRAY
    assert node.get_parameter("cpu_affinity").type_ == Parameter.Type.INTEGER_ARRAY
    assert node.describe_parameter("continuous_joints").read_only
    assert node.get_parameter("time_scale_percentage").value == 100.0
    assert current_values(node, schema) == values


def test_overrides_and_map_expansion_follow_the_configured_keys(schema, make_node):
    node = make_node({"joints": ["a", "b"], "time_scale_percentage": 40.0})
    overrides = {
        "stop_accelerations": [2, 3],
        "constraints.b.goal_tolerance": 0.2,
        "continuous_joints": ["b"],
    }
    values = declare_parameters(node, schema, overrides)
    assert values["joints"] == ["a", "b"]
    assert values["time_scale_percentage"] == 40.0  # the node's own override wins
    assert values["stop_accelerations"] == [2.0, 3.0]
    assert node.get_parameter("constraints.b.goal_tolerance").value == 0.2
    assert node.has_parameter("constraints.a.path_tolerance")
    assert not node.has_parameter("constraints.fr3_joint1.path_tolerance")
    assert node.get_parameter("continuous_joints").value == ["b"]


def test_invalid_configuration_raises_parameter_error(schema, make_node):
    # Our own rule (size of stop_accelerations vs joints), which rclpy cannot check.
    with pytest.raises(ParameterError, match=r"'stop_accelerations'.*as many elements as 'joints'"):
        declare_parameters(make_node({"joints": ["a", "b"]}), schema)
    # rclpy's range check on a node override is reported the same way.
    with pytest.raises(ParameterError, match=r"parameter 'time_scale_percentage'"):
        declare_parameters(make_node({"time_scale_percentage": 150.0}), schema)
    with pytest.raises(ParameterError, match=r"unknown parameter 'time_scale_percentag'"):
        declare_parameters(make_node(), schema, {"time_scale_percentag": 50.0})


def test_undeclared_overrides_reveal_typos(schema, make_node):
    node = make_node({"time_scale_percentag": 50.0, "use_sim_time": False})
    declare_parameters(node, schema)
    assert undeclared_overrides(node) == ["time_scale_percentag"]


@pytest.fixture
def validated_node(schema, make_node):
    node = make_node()
    declare_parameters(node, schema)
    node.add_on_set_parameters_callback(make_on_set_parameters_callback(node, schema))
    return node


def test_valid_runtime_change_is_accepted(validated_node):
    results = validated_node.set_parameters(
        [Parameter("time_scale_percentage", value=50.0), Parameter("gravity_vector", value=[0.0, 0.0, -9.8])]
    )
    assert all(result.successful for result in results), results
    assert validated_node.get_parameter("time_scale_percentage").value == 50.0
    result = validated_node.set_parameters_atomically(
        [
            Parameter("ft_force_deadband", value=1.0),
            Parameter("constraints.fr3_joint3.path_tolerance", value=0.1),
        ]
    )
    assert result.successful, result.reason


def test_read_only_change_is_rejected_with_a_reason(validated_node, schema):
    result = validated_node.set_parameters([Parameter("joints", value=["x"])])[0]
    assert not result.successful
    assert "joints" in result.reason
    assert validated_node.get_parameter("joints").value == FR3_JOINTS
    # The callback itself also refuses it, for nodes that declared without the read_only flag.
    callback = make_on_set_parameters_callback(validated_node, schema)
    result = callback([Parameter("update_rate", value=500)])
    assert not result.successful
    assert result.reason == "parameter 'update_rate' is read_only: set it in the configuration and reload"


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("time_scale_percentage", 150.0, "time_scale_percentage"),
        # Within rclpy's 1e-6 relative tolerance at the range end, so only the callback catches it.
        ("time_scale_percentage", 100.00001, "'time_scale_percentage' = 100.00001 violates bounds<>"),
        ("default_path_tolerance", 0.0, "parameter 'default_path_tolerance' = 0.0 violates gt<>"),
        ("stop_accelerations", [1.0], "violates jtac::size_eq_param"),
        ("default_absolute_force_torque_threshold", [45.0] * 5 + [0.0], "threshold'[5] = 0.0 violates"),
        ("jacobian_damping", float("nan"), "jacobian_damping"),
    ],
)
def test_invalid_runtime_change_is_rejected_with_a_reason(validated_node, name, value, reason):
    before = validated_node.get_parameter(name).value
    result = validated_node.set_parameters([Parameter(name, value=value)])[0]
    assert not result.successful
    assert reason in result.reason
    assert validated_node.get_parameter(name).value == before


def test_callback_passes_other_parameters_through(validated_node):
    result = validated_node.set_parameters([Parameter("use_sim_time", value=False)])[0]
    assert result.successful, result.reason

"""jtac's parameter schema: load params/jtac_parameters.yaml, validate values, generate the docs and C++.

The schema is in generate_parameter_library's YAML format. This package imports nothing from ROS, so the
Python API and the rclpy node (jtac_ros.parameters) apply the very same rules:

- types: ``int`` accepts integers only (never a bool or a float), ``double`` accepts integers and floats
  and must be finite, arrays accept lists, tuples and ``array.array`` and check every element;
- every gpl validator (``bounds<>``, ``gt<>``, ``one_of<>``, ``element_bounds<>``, ...) with gpl's
  semantics, plus jtac's own ``jtac::*`` validators (listed in the schema's header);
- ``__map_<p>`` blocks expand once per entry of the string array ``p``
  (``constraints.__map_joints.path_tolerance`` -> ``constraints.fr3_joint1.path_tolerance``, ...);
- read_only parameters cannot change at runtime.

Every failure raises ParameterError, whose message names the parameter, the offending value (with the
element index for arrays) and the rule, prefixed with ``file:line`` when it comes from a file.

Modules: ``validators`` (errors, types, the validator engine), ``files`` (ROS-style YAML reading),
``schema`` (ParameterSpec, Schema, load_schema), ``values`` (tips' sensors, per-joint defaults),
``docs`` (docs/parameters.md), ``cpp`` (the generated C++ ``jtac::Params`` header and its binding),
``mapping`` (the core fields' table and the generated params_mapping.cpp), ``cli`` (the command line).

Command line: ``python -m jtac_py.parameters --write | --check | --write-docs | --check-docs |
--validate FILE [--node N]`` (``--write``/``--check``: the docs, the C++ header, its binding and the mapping).
"""

from __future__ import annotations

from jtac_py.parameters.cli import main
from jtac_py.parameters.docs import DEFAULT_DOCS_PATH, docs_are_current, render_markdown, write_docs
from jtac_py.parameters.files import RosYamlLoader
from jtac_py.parameters.schema import (
    DEFAULT_SCHEMA_PATH,
    ParameterSpec,
    Schema,
    default_schema,
    load_params_file,
    load_schema,
)
from jtac_py.parameters.validators import ParameterError, SchemaError, Validator
from jtac_py.parameters.values import admittance_enabled, default_joint_tolerances, tip_ft_sensor_names

__all__ = [
    "DEFAULT_DOCS_PATH",
    "DEFAULT_SCHEMA_PATH",
    "ParameterError",
    "ParameterSpec",
    "RosYamlLoader",
    "Schema",
    "SchemaError",
    "Validator",
    "admittance_enabled",
    "default_joint_tolerances",
    "default_schema",
    "docs_are_current",
    "load_params_file",
    "load_schema",
    "main",
    "render_markdown",
    "tip_ft_sensor_names",
    "write_docs",
]

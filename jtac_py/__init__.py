"""jtac_py: jtac's Python library (no ROS needed).

- ``jtac_py._native``: the pybind11 bindings of the C++20 core (kinematics, result codes, ...).
- ``jtac_py.parameters``: the parameter schema in ``params/`` (load, validate, document).
- ``jtac_py.robots``: the FR3 and Panda descriptions (URDF for Pinocchio, MJCF for MuJoCo).
- ``jtac_py.controller``: the Python API (``Controller``) over the native loop, on any
  ``jtac_py.hardware.Arm``; ``jtac_py.arms.build_arm`` builds the arm parameter values describe.

The name differs from ``jtac``, which is the rosidl-generated interface package
(``jtac.action``, ``jtac.msg``) that the ROS build installs.
"""

__version__ = "0.1.0"

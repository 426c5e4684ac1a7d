"""A custom law in the loop's slot (``Controller.use_law()``): a law compiled by
``jtac_py.laws.compile()`` behind the native CallbackLaw, its error and its call timing.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from jtac_py import _native, config, laws, robots

__all__ = ["CustomLawTenant"]

_log = logging.getLogger(__name__)


class CustomLawTenant:
    """A compiled law holding the slot (law_slot.Tenant)."""

    release_hint = "call use_law(None)"

    def __init__(self, law: laws.CompiledLaw, native: Any) -> None:
        self.law = law
        self.native = native
        self.handover_reason = f"the custom law '{law.name}' was put in use (Controller.use_law())"
        self._error_logged = False

    @classmethod
    def create(
        cls,
        law: laws.CompiledLaw,
        params: Sequence[float] | np.ndarray | None,
        arm: Any,
        values: Mapping[str, Any],
        joint_names: Sequence[str],
    ) -> CustomLawTenant:
        """The law's native CallbackLaw on this controller's arm and parameters: its kinematics from
        the controller's URDF (base_frame to the robot's TCP frame), `params` (default the law's set).
        TypeError for what is no CompiledLaw; ValueError for params of the wrong size or non-finite."""
        if not isinstance(law, laws.CompiledLaw):
            raise TypeError(f"use_law: expected a jtac_py.laws.CompiledLaw or None, got {type(law).__name__}")
        values_in = law.params if params is None else laws._as_params(params, law.n_params, law.name)
        native = _native.CallbackLaw(
            law.address,
            name=law.name,
            num_params=law.n_params,
            num_memory=law.n_memory,
            params=values_in,
            stop_accelerations_rad_s2=list(values["stop_accelerations"]),
            # The URDF the core was configured with: the arm's own, else the configuration's.
            urdf_xml=arm.urdf_xml or config.robot_description(values),
            base_frame=values["base_frame"],
            joint_names=list(joint_names),
            tcp_frame=robots.robot_spec(arm.robot).tcp_frame,
        )
        law.params = values_in
        return cls(law, native)

    @property
    def in_use(self) -> str:
        return f"the custom law '{self.law.name}' is in use (Controller.use_law())"

    @property
    def busy_reason(self) -> str:
        error = self.error()
        stopped = f" and stopped the arm: {error}" if error else ""
        return f"a custom law is in use ({self.law.name}){stopped}"

    def error(self) -> str | None:
        """Why the law stopped the arm (its name, code, or joint and non-finite value), None without."""
        error = self.native.error
        return None if error is None else str(error["message"])

    def calls(self) -> dict[str, float]:
        """{calls, mean_ns, max_ns} of the law's function (steady clock around each call)."""
        calls = int(self.native.calls)
        return {
            "calls": calls,
            "mean_ns": self.native.call_ns_total / calls if calls else math.nan,
            "max_ns": float(self.native.call_ns_max),
        }

    def claim(self) -> None:
        """The law's set_params() reaches this native law from now on."""
        self.law._native = self.native

    def released(self) -> None:
        if self.law._native is self.native:
            self.law._native = None

    def poll(self) -> None:
        if not self._error_logged and self.native.failed:
            self._error_logged = True
            _log.error("custom law stopped the arm: %s", self.error())

    def stopped(self, message: str) -> None:
        """A custom law gets no stop from the JTAC's admittance side."""

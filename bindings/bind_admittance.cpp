// pybind11 bindings of the admittance stability check (admittance_stability.hpp): one axis in, its
// verdict and figures out, the struct's fields read-only under the C++ names. Conversion only: the
// math lives in the core, jtac_py.admittance only loops over axes.
#include <pybind11/pybind11.h>

#include <string>

#include "jtac_core/admittance_stability.hpp"

namespace py = pybind11;

void bind_admittance(py::module_& m) {
  py::enum_<jtac::AdmittanceVerdict>(m, "AdmittanceVerdict",
                                     "What the discrete-time stability check concludes about one axis")
      .value("STABLE", jtac::AdmittanceVerdict::kStable)
      .value("LIGHTLY_DAMPED", jtac::AdmittanceVerdict::kLightlyDamped)
      .value("NEAR_BOUND", jtac::AdmittanceVerdict::kNearBound)
      .value("UNSTABLE", jtac::AdmittanceVerdict::kUnstable)
      .value("INVALID_INPUT", jtac::AdmittanceVerdict::kInvalidInput);

  using S = jtac::AxisStability;
  py::class_<S>(m, "AxisStability", "Discrete and continuous figures of one admittance axis")
      .def_readonly("verdict", &S::verdict)
      .def_readonly("mass", &S::mass)
      .def_readonly("stiffness", &S::stiffness)
      .def_readonly("damping", &S::damping)
      .def_readonly("joint_damping_per_s", &S::joint_damping_per_s)
      .def_readonly("period_s", &S::period_s)
      .def_readonly("free_axis", &S::free_axis)
      .def_readonly("spectral_radius", &S::spectral_radius)
      .def_readonly("max_stiffness", &S::max_stiffness)
      .def_readonly("max_damping", &S::max_damping)
      .def_readonly("natural_frequency_rad_s", &S::natural_frequency_rad_s)
      .def_readonly("damping_ratio", &S::damping_ratio)
      .def_readonly("settling_time_s", &S::settling_time_s)
      .def_readonly("discrete_settling_time_s", &S::discrete_settling_time_s)
      .def_property_readonly("accepted", [](const S& s) { return jtac::admittance_accepted(s.verdict); })
      .def("__repr__", [](const S& s) {
        return "AxisStability(verdict=" + std::string(jtac::to_string(s.verdict)) +
               ", spectral_radius=" + std::to_string(s.spectral_radius) +
               ", max_stiffness=" + std::to_string(s.max_stiffness) + ")";
      });

  m.def("check_axis_stability", &jtac::check_axis_stability, py::arg("mass"), py::arg("stiffness"),
        py::arg("damping"), py::arg("period_s"), py::arg("joint_damping_per_s") = 0.0,
        "One axis of M·ë + D·ė + K·e = F as jtac integrates it (semi-implicit Euler at period_s [s])");
  m.def("admittance_stability_message", &jtac::admittance_stability_message, py::arg("stability"),
        py::arg("axis"), "Why the axis (0..5 = x y z rx ry rz) is rejected or warned about; '' when stable");
  m.attr("ADMITTANCE_STABILITY_MARGIN") = jtac::kAdmittanceStabilityMargin;
  m.attr("ADMITTANCE_LOW_DAMPING_RATIO") = jtac::kAdmittanceLowDampingRatio;
}

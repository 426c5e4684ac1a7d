// pybind11 bindings of jtac_core, imported as jtac_py._native. Conversion only: no algorithm.
#include <pybind11/eigen.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <stdexcept>
#include <string>

#include "jtac_core/kinematics.hpp"
#include "jtac_core/result_code.hpp"

namespace py = pybind11;

void bind_trajectory(py::module_& m);  // bind_trajectory.cpp
void bind_jtac(py::module_& m);        // bind_jtac.cpp
void bind_admittance(py::module_& m);  // bind_admittance.cpp
void bind_parameters(py::module_& m);  // bind_parameters.cpp (generated from params/)
void bind_hw(py::module_& m);          // bind_hw.cpp
void bind_loop(py::module_& m);        // bind_loop.cpp
#ifdef JTAC_HAVE_LIBFRANKA
void bind_franka(py::module_& m);  // bind_franka.cpp
#endif

namespace {

jtac::JointVector to_joint_vector(const Eigen::Ref<const Eigen::VectorXd>& q, const jtac::Kinematics& kin) {
  if (q.size() != kin.num_joints()) {
    throw std::invalid_argument("q has " + std::to_string(q.size()) + " entries, the chain has " +
                                std::to_string(kin.num_joints()) + " joints");
  }
  return q;
}

void check(jtac::KinematicsStatus status) {
  switch (status) {
    case jtac::KinematicsStatus::kOk:
      return;
    case jtac::KinematicsStatus::kNotConfigured:
      throw std::logic_error("Kinematics is not configured");
    case jtac::KinematicsStatus::kSizeMismatch:
      throw std::invalid_argument("size mismatch or unknown frame index");
    case jtac::KinematicsStatus::kNonFinite:
      throw std::invalid_argument("q contains NaN or Inf");
  }
}

}  // namespace

PYBIND11_MODULE(_native, m) {
  m.doc() = "jtac_core bindings (C++20 real-time core)";
  m.attr("__version__") = JTAC_VERSION;

  py::enum_<jtac::ResultCode>(m, "ResultCode", "Goal result codes (MoveIt Pro action numbers)")
      .value("SUCCESSFUL", jtac::ResultCode::kSuccessful)
      .value("INVALID_GOAL", jtac::ResultCode::kInvalidGoal)
      .value("INVALID_JOINTS", jtac::ResultCode::kInvalidJoints)
      .value("OLD_HEADER_TIMESTAMP", jtac::ResultCode::kOldHeaderTimestamp)
      .value("PATH_TOLERANCE_VIOLATED", jtac::ResultCode::kPathToleranceViolated)
      .value("GOAL_TOLERANCE_VIOLATED", jtac::ResultCode::kGoalToleranceViolated)
      .value("ADMITTANCE_ERROR", jtac::ResultCode::kAdmittanceError)
      .value("FORCE_TORQUE_THRESHOLD_EXCEEDED", jtac::ResultCode::kForceTorqueThresholdExceeded)
      .value("GOAL_ABORTED_DUE_TO_STITCHING", jtac::ResultCode::kGoalAbortedDueToStitching)
      .value("INVALID_STATE", jtac::ResultCode::kInvalidState);

  py::class_<jtac::Kinematics>(m, "Kinematics", "Forward kinematics and Jacobians of a URDF chain")
      .def(py::init<>())
      .def("configure", &jtac::Kinematics::configure, py::arg("urdf_xml"), py::arg("base_frame"),
           py::arg("joint_names"), "Build the model; joints not named are locked")
      .def("frame_index", &jtac::Kinematics::frame_index, py::arg("frame_name"))
      .def_property_readonly("num_joints", &jtac::Kinematics::num_joints)
      .def(
          "forward",
          [](const jtac::Kinematics& kin, const Eigen::Ref<const Eigen::VectorXd>& q_rad,
             const std::string& frame) {
            Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
            check(kin.forward(to_joint_vector(q_rad, kin), kin.frame_index(frame), T));
            return Eigen::Matrix4d(T.matrix());
          },
          py::arg("q_rad"), py::arg("frame"), "4x4 pose of `frame` in the base frame")
      .def(
          "jacobian",
          [](const jtac::Kinematics& kin, const Eigen::Ref<const Eigen::VectorXd>& q_rad,
             const std::string& frame) {
            jtac::Jacobian J(6, kin.num_joints());
            check(kin.jacobian(to_joint_vector(q_rad, kin), kin.frame_index(frame), J));
            return Eigen::MatrixXd(J);
          },
          py::arg("q_rad"), py::arg("frame"), "6xn Jacobian [v; w] of `frame` in the base frame");

  bind_trajectory(m);
  bind_jtac(m);
  bind_admittance(m);
  bind_parameters(m);
  bind_hw(m);
  bind_loop(m);
#ifdef JTAC_HAVE_LIBFRANKA
  bind_franka(m);
  m.attr("HAVE_LIBFRANKA") = true;
  m.attr("LIBFRANKA_VERSION") = JTAC_LIBFRANKA_VERSION;
#else
  // Built without libfranka (cmake/JtacLibfranka.cmake said why): no FrankaDevice.
  m.attr("HAVE_LIBFRANKA") = false;
  m.attr("LIBFRANKA_VERSION") = py::none();
#endif
}

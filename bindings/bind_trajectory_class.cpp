// pybind11 binding of jtac_core's Trajectory (the piecewise polynomial a goal becomes). Conversion only.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "jtac_core/events.hpp"
#include "jtac_core/interpolation.hpp"
#include "jtac_core/result_code.hpp"
#include "jtac_core/stop_trajectory.hpp"
#include "jtac_core/time_scaling.hpp"
#include "jtac_core/tolerances.hpp"
#include "jtac_core/trajectory.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_core/types.hpp"

#include "bind_trajectory.hpp"

namespace jtac_python {

void bind_trajectory_class(py::module_& m) {
  py::class_<jtac::Trajectory>(m, "Trajectory",
                               "Waypoints with fixed capacity, sampled by piecewise polynomials")
      .def(py::init<>())
      .def(
          "reserve",
          [](jtac::Trajectory& t, int num_joints, int max_points) {
            if (num_joints < 1 || num_joints > jtac::kMaxJoints) {
              throw std::invalid_argument("num_joints = " + std::to_string(num_joints) + ": must be in [1, " +
                                          std::to_string(jtac::kMaxJoints) + "]");
            }
            if (max_points < 1) {
              throw std::invalid_argument("max_points = " + std::to_string(max_points) +
                                          ": must be at least 1");
            }
            t.reserve(num_joints, max_points);
          },
          py::arg("num_joints"), py::arg("max_points"), "Claims storage (allocates)")
      .def("clear", &jtac::Trajectory::clear, "Removes every point; keeps the storage")
      .def(
          "append",
          [](jtac::Trajectory& t, double time_from_start_s, const InputArray& positions_rad,
             const OptionalArray& velocities_rad_s, const OptionalArray& accelerations_rad_s2) {
            if (t.capacity() == 0) {
              throw std::logic_error("Trajectory.append: call reserve() first");
            }
            const Eigen::Index n = t.num_joints();
            const jtac::JointVector q = joint_vector(positions_rad, "positions_rad", n);
            jtac::JointVector v, a;
            if (velocities_rad_s) {
              v = joint_vector(*velocities_rad_s, "velocities_rad_s", n);
            }
            if (accelerations_rad_s2) {
              a = joint_vector(*accelerations_rad_s2, "accelerations_rad_s2", n);
            }
            return t.append(time_from_start_s, q.data(), velocities_rad_s ? v.data() : nullptr,
                            accelerations_rad_s2 ? a.data() : nullptr);
          },
          py::arg("time_from_start_s"), py::arg("positions_rad"), py::arg("velocities_rad_s") = py::none(),
          py::arg("accelerations_rad_s2") = py::none(),
          "Appends a point; False when full or when time does not strictly increase")
      .def(
          "offset_joint",
          [](jtac::Trajectory& t, int joint, double offset_rad) {
            if (joint < 0 || joint >= t.num_joints()) {
              throw std::out_of_range("joint = " + std::to_string(joint) + " is out of range");
            }
            t.offset_joint(joint, offset_rad);
          },
          py::arg("joint"), py::arg("offset_rad"), "Adds offset_rad to every position of `joint`")
      .def(
          "set_start_state",
          [](jtac::Trajectory& t, const InputArray& q, const InputArray& v, const InputArray& a,
             double start_tau_s) {
            const Eigen::Index n = t.num_joints();
            jtac::JointTrajectoryState s;
            s.position_rad = joint_vector(q, "q", n);
            s.velocity_rad_s = joint_vector(v, "v", n);
            s.acceleration_rad_s2 = joint_vector(a, "a", n);
            t.set_start_state(s, start_tau_s);
          },
          py::arg("q"), py::arg("v"), py::arg("a"), py::arg("start_tau") = 0.0,
          "The state the segment before the first point starts from, at trajectory time start_tau [s]")
      .def(
          "sample",
          [](const jtac::Trajectory& t, double tau_s) {
            jtac::JointTrajectoryState s;
            t.sample(tau_s, s);
            return to_triple(s);
          },
          py::arg("tau"), "(q, v, a) at trajectory time tau [s]")
      .def(
          "sample_many",
          [](const jtac::Trajectory& t, const InputArray& taus) {
            if (taus.ndim() != 1) {
              throw std::invalid_argument("taus must be one-dimensional");
            }
            const py::ssize_t count = taus.shape(0);
            const py::ssize_t n = t.num_joints();
            py::array_t<double> q({count, n}), v({count, n}), a({count, n});
            auto qq = q.mutable_unchecked<2>();
            auto vv = v.mutable_unchecked<2>();
            auto aa = a.mutable_unchecked<2>();
            const auto tt = taus.unchecked<1>();
            jtac::JointTrajectoryState s;
            for (py::ssize_t i = 0; i < count; ++i) {
              t.sample(tt(i), s);
              for (py::ssize_t j = 0; j < n; ++j) {
                qq(i, j) = s.position_rad[j];
                vv(i, j) = s.velocity_rad_s[j];
                aa(i, j) = s.acceleration_rad_s2[j];
              }
            }
            return Triple{q, v, a};
          },
          py::arg("taus"),
          "sample() at every time of a 1-D array: (q, v, a), each of shape (len(taus), num_joints)")
      .def(
          "position",
          [](const jtac::Trajectory& t, int index, int joint) {
            if (index < 0 || index >= t.size() || joint < 0 || joint >= t.num_joints()) {
              throw std::out_of_range("point " + std::to_string(index) + ", joint " + std::to_string(joint) +
                                      " is out of range");
            }
            return t.position(index, joint);
          },
          py::arg("index"), py::arg("joint"), "Position of `joint` at point `index` [rad]")
      .def(
          "time_from_start",
          [](const jtac::Trajectory& t, int index) {
            if (index < 0 || index >= t.size()) {
              throw std::out_of_range("point " + std::to_string(index) + " is out of range");
            }
            return t.time_from_start(index);
          },
          py::arg("index"), "time_from_start of point `index` [s]")
      .def("duration", &jtac::Trajectory::duration, "Time of the last point [s]; 0 when empty")
      .def("size", &jtac::Trajectory::size)
      .def("__len__", &jtac::Trajectory::size)
      .def("capacity", &jtac::Trajectory::capacity)
      .def("num_joints", &jtac::Trajectory::num_joints);
}

}  // namespace jtac_python

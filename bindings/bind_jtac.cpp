// pybind11 bindings of the composed controller (JointTrajectoryAdmittanceController) and of the
// force/torque pieces it is built from (signal_processing.hpp). Conversion only: no algorithm here.
//
// Conventions as in bind_trajectory.cpp: every array that reaches a real-time call (update(), the
// filter, the pipeline) is converted strictly (exact shape, else ValueError naming the argument);
// goal fields are passed through as given, because the core's goal validation is what names the
// field, the axis and the value (INVALID_GOAL with a message). ControllerParameters, TrajectoryGoal,
// SubmitResult, Event and the enums are the ones bind_trajectory.cpp registers.
//
// Poses: a 4x4 homogeneous matrix (numpy or nested sequences, last row [0 0 0 1]) or, for a goal's
// ee_pose_control, also a pair (xyz [m], quaternion [x, y, z, w]) in ROS geometry_msgs order. The
// quaternion is not normalised here: one that is not of unit length gives a matrix that is not a
// rotation, which the goal validation refuses ("is not a finite rigid transform").
// Wrenches: rows [Fx Fy Fz Tx Ty Tz] in [N, N·m], one row per tip, in that tip's sensor frame.
//
// Length: over 600 lines because it is the one binding file of the composed controller and its F/T
// pieces (one file per bound module, as ruckig's python.cpp); most of it is the bound surface itself.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "jtac_core/admittance.hpp"
#include "jtac_core/events.hpp"
#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/signal_processing.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_core/types.hpp"

#include "bind_common.hpp"

namespace py = pybind11;

namespace {

using jtac_python::double_list;
using jtac_python::goal_from;
using jtac_python::InputArray;
using jtac_python::joint_vector;
using jtac_python::OptionalArray;
using jtac_python::PolledEvent;
using jtac_python::to_array;

// ------------------------------------------------------------------------------------ conversions

std::string shape_text(const py::array& a) {
  std::string text = "(";
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(a.shape(d));
  }
  return text + (a.ndim() == 1 ? ",)" : ")");
}

/// Any object as an array of doubles; ValueError naming `name` when it is not numeric.
InputArray input_array(const py::handle& obj, const std::string& name) {
  try {
    return obj.cast<InputArray>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + " must be an array of numbers, got " +
                                std::string(py::str(py::type::handle_of(obj).attr("__name__"))));
  }
}

/// A 1-D array of exactly N entries as a fixed-size vector.
template <int N>
Eigen::Matrix<double, N, 1> fixed_vector(const InputArray& a, const std::string& name) {
  if (a.ndim() != 1 || a.shape(0) != N) {
    throw std::invalid_argument(name + " must have shape (" + std::to_string(N) + ",), got " + shape_text(a));
  }
  Eigen::Matrix<double, N, 1> v;
  for (int i = 0; i < N; ++i) {
    v[i] = a.data()[i];
  }
  return v;
}

/// A 2-D array of exactly Rows x Cols entries as a fixed-size matrix.
template <int Rows, int Cols>
Eigen::Matrix<double, Rows, Cols> fixed_matrix(const InputArray& a, const std::string& name) {
  if (a.ndim() != 2 || a.shape(0) != Rows || a.shape(1) != Cols) {
    throw std::invalid_argument(name + " must have shape (" + std::to_string(Rows) + ", " +
                                std::to_string(Cols) + "), got " + shape_text(a));
  }
  Eigen::Matrix<double, Rows, Cols> m;
  for (int r = 0; r < Rows; ++r) {
    for (int c = 0; c < Cols; ++c) {
      m(r, c) = a.data()[r * Cols + c];  // c_style: row-major
    }
  }
  return m;
}

/// A 4x4 homogeneous matrix as an isometry (the rotation is not checked here: the core does).
Eigen::Isometry3d isometry(const InputArray& a, const std::string& name) {
  const Eigen::Matrix4d m = fixed_matrix<4, 4>(a, name);
  if (m(3, 0) != 0.0 || m(3, 1) != 0.0 || m(3, 2) != 0.0 || m(3, 3) != 1.0) {
    throw std::invalid_argument(name + ": the last row of a 4x4 pose must be [0 0 0 1]");
  }
  Eigen::Isometry3d T;
  T.matrix() = m;
  return T;
}

/// A pose from None (identity), a 4x4 matrix, or a pair (xyz, quaternion [x y z w]).
Eigen::Isometry3d pose_from(const py::handle& obj, const std::string& name) {
  if (obj.is_none()) {
    return Eigen::Isometry3d::Identity();
  }
  if ((py::isinstance<py::tuple>(obj) || py::isinstance<py::list>(obj)) && py::len(obj) == 2) {
    const auto pair = obj.cast<py::sequence>();
    const Eigen::Vector3d xyz = fixed_vector<3>(input_array(pair[0], name + " xyz"), name + " xyz");
    const Eigen::Vector4d xyzw =
        fixed_vector<4>(input_array(pair[1], name + " quaternion"), name + " quaternion [x y z w]");
    // The homogeneous form of the rotation (w² + x² − y² − z² on the diagonal, not 1 − 2(y² + z²)):
    // it equals the rotation for a unit quaternion and is |q|² times it otherwise, so a quaternion
    // that is not of unit length (even a scaled identity) is refused by the goal validation instead
    // of being normalised or read as a different rotation.
    const double x = xyzw[0], y = xyzw[1], z = xyzw[2], w = xyzw[3];
    Eigen::Isometry3d T = Eigen::Isometry3d::Identity();
    T.linear() << w * w + x * x - y * y - z * z, 2.0 * (x * y - w * z), 2.0 * (x * z + w * y),  //
        2.0 * (x * y + w * z), w * w - x * x + y * y - z * z, 2.0 * (y * z - w * x),            //
        2.0 * (x * z - w * y), 2.0 * (y * z + w * x), w * w - x * x - y * y + z * z;
    T.translation() = xyz;
    return T;
  }
  return isometry(input_array(obj, name), name);
}

/// A fixed-size vector as a new 1-D numpy array.
template <int N>
py::array_t<double> vector_array(const Eigen::Matrix<double, N, 1>& v) {
  return py::array_t<double>(static_cast<py::ssize_t>(N), v.data());
}

/// A matrix as a new row-major 2-D numpy array.
py::array_t<double> matrix_array(const Eigen::Ref<const Eigen::MatrixXd>& m) {
  py::array_t<double> a({static_cast<py::ssize_t>(m.rows()), static_cast<py::ssize_t>(m.cols())});
  auto aa = a.mutable_unchecked<2>();
  for (Eigen::Index r = 0; r < m.rows(); ++r) {
    for (Eigen::Index c = 0; c < m.cols(); ++c) {
      aa(r, c) = m(r, c);
    }
  }
  return a;
}

/// The first `num_tips` wrenches as a (num_tips, 6) array.
py::array_t<double> wrenches_array(const jtac::TipWrenches& w, int num_tips) {
  py::array_t<double> a({static_cast<py::ssize_t>(num_tips), static_cast<py::ssize_t>(6)});
  auto aa = a.mutable_unchecked<2>();
  for (int k = 0; k < num_tips; ++k) {
    for (int i = 0; i < 6; ++i) {
      aa(k, i) = w[static_cast<std::size_t>(k)][i];
    }
  }
  return a;
}

std::vector<bool> bool_list(const py::handle& value, const std::string& name) {
  if (value.is_none()) {
    return {};
  }
  try {
    return value.cast<std::vector<bool>>();
  } catch (const py::cast_error&) {
    throw std::invalid_argument(name + " must be a sequence of booleans, got " +
                                std::string(py::str(py::type::handle_of(value).attr("__name__"))));
  }
}

// ------------------------------------------------------------------------------------ goals as dicts
//
// Goals are built from their typed pieces (TrajectoryGoal, GoalPoint, TipGoal, JtacGoal; the Python
// side's jtac_py.goals does that, defaults included). The dict forms below are a compatibility path
// only, for the documented Controller.submit(dict) and the core's submit_goal(dict): each field as
// given, no defaults, an unknown key named.

/// A TipGoal from a bound TipGoal or a dict with the same field names (compatibility path).
jtac::TipGoal tip_from(const py::handle& item, std::size_t index) {
  if (py::isinstance<jtac::TipGoal>(item)) {
    return item.cast<jtac::TipGoal>();
  }
  const std::string where = "tips[" + std::to_string(index) + "]";
  if (!py::isinstance<py::dict>(item)) {
    throw std::invalid_argument(where + " must be a TipGoal or a dict");
  }
  jtac::TipGoal tip;
  for (const auto& [key_obj, value] : item.cast<py::dict>()) {
    const auto key = key_obj.cast<std::string>();
    if (key == "end_effector_frame") {
      tip.end_effector_frame = value.cast<std::string>();
    } else if (key == "mass") {
      tip.mass = double_list(value, where + ".mass");
    } else if (key == "stiffness") {
      tip.stiffness = double_list(value, where + ".stiffness");
    } else if (key == "damping") {
      tip.damping = double_list(value, where + ".damping");
    } else if (key == "selected_axes") {
      tip.selected_axes = bool_list(value, where + ".selected_axes");
    } else if (key == "ee_pose_control") {
      tip.T_ee_control = pose_from(value, where + ".ee_pose_control");
    } else if (key == "end_effector_mass_kg") {
      tip.end_effector_mass_kg = value.cast<double>();
    } else if (key == "end_effector_cog_m") {
      tip.end_effector_cog_m = double_list(value, where + ".end_effector_cog_m");
    } else if (key == "absolute_force_torque_threshold") {
      tip.absolute_force_torque_threshold = double_list(value, where + ".absolute_force_torque_threshold");
    } else {
      throw std::invalid_argument(where + ": unknown key '" + key +
                                  "' (end_effector_frame, mass, stiffness, damping, selected_axes, "
                                  "ee_pose_control, end_effector_mass_kg, end_effector_cog_m, "
                                  "absolute_force_torque_threshold)");
    }
  }
  return tip;
}

/// TipGoals from None (none) or a sequence of TipGoals or dicts (compatibility path).
std::vector<jtac::TipGoal> tips_from(const py::handle& obj) {
  std::vector<jtac::TipGoal> tips;
  if (obj.is_none()) {
    return tips;
  }
  std::size_t i = 0;
  for (const auto& item : obj) {
    tips.push_back(tip_from(item, i++));
  }
  return tips;
}

/// A JtacGoal from a bound JtacGoal or a dict {trajectory, tips, joint_damping_per_s,
/// absolute_force_torque_threshold} (compatibility path).
jtac::JtacGoal jtac_goal_from(const py::handle& obj) {
  if (py::isinstance<jtac::JtacGoal>(obj)) {
    return obj.cast<jtac::JtacGoal>();
  }
  if (!py::isinstance<py::dict>(obj)) {
    throw std::invalid_argument("goal must be a JtacGoal or a dict");
  }
  jtac::JtacGoal goal;
  bool has_trajectory = false;
  for (const auto& [key_obj, value] : obj.cast<py::dict>()) {
    const auto key = key_obj.cast<std::string>();
    if (key == "trajectory") {
      goal.trajectory = goal_from(value);
      has_trajectory = true;
    } else if (key == "tips") {
      goal.tips = tips_from(value);
    } else if (key == "joint_damping_per_s") {
      goal.joint_damping_per_s = value.cast<double>();
    } else if (key == "absolute_force_torque_threshold") {
      goal.absolute_force_torque_threshold = double_list(value, "absolute_force_torque_threshold");
    } else {
      throw std::invalid_argument(
          "goal: unknown key '" + key +
          "' (trajectory, tips, joint_damping_per_s, absolute_force_torque_threshold)");
    }
  }
  if (!has_trajectory) {
    throw std::invalid_argument("goal: 'trajectory' is missing");
  }
  return goal;
}

std::vector<jtac::TipFrames> tip_frames_from(const py::handle& obj) {
  std::vector<jtac::TipFrames> tips;
  std::size_t i = 0;
  for (const auto& item : obj) {
    if (py::isinstance<jtac::TipFrames>(item)) {
      tips.push_back(item.cast<jtac::TipFrames>());
    } else {
      const std::string where = "tips[" + std::to_string(i) + "]";
      try {
        const auto pair = item.cast<std::pair<std::string, std::string>>();
        tips.push_back({pair.first, pair.second});
      } catch (const py::cast_error&) {
        throw std::invalid_argument(where + " must be a TipFrames or a pair (sensor_frame, ee_frame)");
      }
    }
    ++i;
  }
  return tips;
}

// ------------------------------------------------------------------------------------ controller

using jtac_python::Controller;

/// What update() returns: its status and a copy of the cycle's output.
struct JtacCycleResult {
  jtac::UpdateStatus status = jtac::UpdateStatus::kOk;
  jtac::JtacOutput output;
  int num_tips = 0;
};

void configure(Controller& c, const jtac::JtacConfig& config, const jtac::JtacParameters& parameters) {
  c.core.configure(config, parameters);  // std::invalid_argument -> ValueError
  c.out = jtac::JtacOutput{};
  c.has_sensor = config.has_force_torque_sensor;
}

jtac::TipWrenches wrenches_from(const Controller& c, const OptionalArray& wrenches) {
  jtac::TipWrenches w{};
  for (auto& row : w) {
    row.setZero();
  }
  const int tips = c.core.num_tips();
  if (!wrenches) {
    if (c.has_sensor) {
      throw std::invalid_argument("wrenches is required: this controller has a force/torque sensor (an (" +
                                  std::to_string(tips) + ", 6) array, one row per tip)");
    }
    return w;
  }
  const InputArray& a = *wrenches;
  if (a.ndim() != 2 || a.shape(0) != tips || a.shape(1) != 6) {
    throw std::invalid_argument("wrenches must have shape (" + std::to_string(tips) +
                                ", 6) (one row [Fx Fy Fz Tx Ty Tz] per tip, sensor frame), got " +
                                shape_text(a));
  }
  const auto aa = a.unchecked<2>();
  for (int k = 0; k < tips; ++k) {
    for (int i = 0; i < 6; ++i) {
      w[static_cast<std::size_t>(k)][i] = aa(k, i);
    }
  }
  return w;
}

// ------------------------------------------------------------------------------------ bindings

void bind_signal_processing(py::module_& m) {
  py::class_<jtac::ButterworthLowPass2>(m, "ButterworthLowPass2",
                                        "Second-order Butterworth low-pass on the six channels of a wrench")
      .def(py::init<>(), "A bypass with zero state")
      .def_readonly_static("BYPASS_RATIO", &jtac::ButterworthLowPass2::kBypassRatio)
      .def("configure", &jtac::ButterworthLowPass2::configure, py::arg("cutoff_ratio"),
           "Cutoff frequency / sample rate; False (nothing changes) unless finite and > 0; >= 0.5 bypasses")
      .def(
          "reset",
          [](jtac::ButterworthLowPass2& f, const InputArray& initial) {
            return f.reset(fixed_vector<6>(initial, "initial"));
          },
          py::arg("initial"), "Steady state at `initial` (6); False (and zero) if not finite")
      .def(
          "shift",
          [](jtac::ButterworthLowPass2& f, const InputArray& delta) {
            f.shift(fixed_vector<6>(delta, "delta"));
          },
          py::arg("delta"), "Moves the state as if every past input had been `delta` (6) larger")
      .def(
          "filter",
          [](jtac::ButterworthLowPass2& f, const InputArray& in) {
            return vector_array<6>(f.filter(fixed_vector<6>(in, "sample")));
          },
          py::arg("sample"), "Filters one 6-vector sample")
      .def(
          "filter_many",
          [](jtac::ButterworthLowPass2& f, const InputArray& samples) {
            if (samples.ndim() != 2 || samples.shape(1) != 6) {
              throw std::invalid_argument("samples must have shape (n, 6), got " + shape_text(samples));
            }
            const py::ssize_t n = samples.shape(0);
            py::array_t<double> out({n, static_cast<py::ssize_t>(6)});
            auto oo = out.mutable_unchecked<2>();
            const auto ss = samples.unchecked<2>();
            for (py::ssize_t i = 0; i < n; ++i) {
              jtac::Vector6 in;
              for (int a = 0; a < 6; ++a) {
                in[a] = ss(i, a);
              }
              const jtac::Vector6 y = f.filter(in);
              for (int a = 0; a < 6; ++a) {
                oo(i, a) = y[a];
              }
            }
            return out;
          },
          py::arg("samples"), "filter() of every row of an (n, 6) array, in order: (n, 6)")
      .def_property_readonly("cutoff_ratio", &jtac::ButterworthLowPass2::cutoff_ratio)
      .def_property_readonly("bypassed", &jtac::ButterworthLowPass2::bypassed)
      .def_property_readonly(
          "last_output", [](const jtac::ButterworthLowPass2& f) { return vector_array<6>(f.last_output()); });

  m.def("deadband", py::vectorize([](double x, double band) { return jtac::deadband(x, band); }),
        py::arg("x"), py::arg("band"),
        "Continuous deadband: |x| <= band -> 0, else x moved toward zero by band");
  m.def(
      "apply_deadband",
      [](const InputArray& wrench, double force_deadband_N, double torque_deadband_Nm) {
        jtac::Vector6 w = fixed_vector<6>(wrench, "wrench");
        jtac::apply_deadband(w, force_deadband_N, torque_deadband_Nm);
        return vector_array<6>(w);
      },
      py::arg("wrench"), py::arg("force_deadband_N"), py::arg("torque_deadband_Nm"),
      "The wrench (6) with the per-axis force and torque deadbands applied (a new array)");
  m.def(
      "first_threshold_violation",
      [](const InputArray& wrench, const InputArray& threshold) {
        return jtac::first_threshold_violation(fixed_vector<6>(wrench, "wrench"),
                                               fixed_vector<6>(threshold, "threshold"));
      },
      py::arg("wrench"), py::arg("threshold"),
      "First axis with |wrench_i| > threshold_i (a non-finite component counts), or -1");
  m.def(
      "payload_gravity_wrench",
      [](double mass_kg, const InputArray& cog_ee_m, const InputArray& gravity_base_m_s2,
         const InputArray& R_base_sensor, const InputArray& T_sensor_ee) {
        return vector_array<6>(jtac::payload_gravity_wrench(
            mass_kg, fixed_vector<3>(cog_ee_m, "cog_ee_m"),
            fixed_vector<3>(gravity_base_m_s2, "gravity_base_m_s2"),
            fixed_matrix<3, 3>(R_base_sensor, "R_base_sensor"), isometry(T_sensor_ee, "T_sensor_ee")));
      },
      py::arg("mass_kg"), py::arg("cog_ee_m"), py::arg("gravity_base_m_s2"), py::arg("R_base_sensor"),
      py::arg("T_sensor_ee"),
      "The payload's weight as the sensor reads it: [R_sensor_base·m·g; p_cog_sensor × R_sensor_base·m·g] "
      "(sensor axes, torque about the sensor origin); R_base_sensor 3x3, T_sensor_ee 4x4");
  m.def(
      "transform_wrench",
      [](const InputArray& wrench_a, const InputArray& T_a_b) {
        return vector_array<6>(
            jtac::transform_wrench(fixed_vector<6>(wrench_a, "wrench_a"), isometry(T_a_b, "T_a_b")));
      },
      py::arg("wrench_a"), py::arg("T_a_b"),
      "The same wrench seen from frame b (b's axes, torque about b's origin); T_a_b is b's 4x4 pose in a");

  py::enum_<jtac::TareStatus>(m, "TareStatus", "Progress of a tare")
      .value("IDLE", jtac::TareStatus::kIdle)
      .value("COLLECTING", jtac::TareStatus::kCollecting)
      .value("DONE", jtac::TareStatus::kDone)
      .value("FAILED_NON_FINITE", jtac::TareStatus::kFailedNonFinite);

  py::class_<jtac::Tare>(m, "Tare", "Sensor tare: the average of num_samples raw readings becomes the offset")
      .def(py::init<>())
      .def("start", &jtac::Tare::start, py::arg("num_samples"),
           "Begins collecting; False for num_samples < 1")
      .def(
          "add_sample",
          [](jtac::Tare& t, const InputArray& wrench) {
            return t.add_sample(fixed_vector<6>(wrench, "wrench"));
          },
          py::arg("wrench"), "Takes one raw reading (6)")
      .def(
          "subtract",
          [](const jtac::Tare& t, const InputArray& wrench) {
            jtac::Vector6 w = fixed_vector<6>(wrench, "wrench");
            t.subtract(w);
            return vector_array<6>(w);
          },
          py::arg("wrench"), "wrench − offset (a new array)")
      .def("clear", &jtac::Tare::clear)
      .def_property_readonly("collecting", &jtac::Tare::collecting)
      .def_property_readonly("offset", [](const jtac::Tare& t) { return vector_array<6>(t.offset()); });

  py::class_<jtac::ForceTorqueParameters> ftp(m, "ForceTorqueParameters",
                                              "Per-sensor settings of the pipeline");
  ftp.def(py::init<>())
      .def_readwrite("cutoff_ratio", &jtac::ForceTorqueParameters::cutoff_ratio)
      .def_readwrite("force_deadband_N", &jtac::ForceTorqueParameters::force_deadband_N)
      .def_readwrite("torque_deadband_Nm", &jtac::ForceTorqueParameters::torque_deadband_Nm)
      .def_readwrite("payload_mass_kg", &jtac::ForceTorqueParameters::payload_mass_kg)
      .def_property(
          "threshold", [](const jtac::ForceTorqueParameters& p) { return vector_array<6>(p.threshold); },
          [](jtac::ForceTorqueParameters& p, const InputArray& v) {
            p.threshold = fixed_vector<6>(v, "threshold");
          },
          "Per-axis limit on the filtered wrench [N, N·m]; inf = none")
      .def_property(
          "payload_cog_ee_m",
          [](const jtac::ForceTorqueParameters& p) { return vector_array<3>(p.payload_cog_ee_m); },
          [](jtac::ForceTorqueParameters& p, const InputArray& v) {
            p.payload_cog_ee_m = fixed_vector<3>(v, "payload_cog_ee_m");
          })
      .def_property(
          "gravity_base_m_s2",
          [](const jtac::ForceTorqueParameters& p) { return vector_array<3>(p.gravity_base_m_s2); },
          [](jtac::ForceTorqueParameters& p, const InputArray& v) {
            p.gravity_base_m_s2 = fixed_vector<3>(v, "gravity_base_m_s2");
          })
      .def_property(
          "T_sensor_ee",
          [](const jtac::ForceTorqueParameters& p) { return matrix_array(p.T_sensor_ee.matrix()); },
          [](jtac::ForceTorqueParameters& p, const InputArray& v) {
            p.T_sensor_ee = isometry(v, "T_sensor_ee");
          })
      .def_property(
          "T_sensor_control",
          [](const jtac::ForceTorqueParameters& p) { return matrix_array(p.T_sensor_control.matrix()); },
          [](jtac::ForceTorqueParameters& p, const InputArray& v) {
            p.T_sensor_control = isometry(v, "T_sensor_control");
          });

  py::enum_<jtac::ForceTorqueStatus>(m, "ForceTorqueStatus", "Why process() may want the caller to act")
      .value("OK", jtac::ForceTorqueStatus::kOk)
      .value("THRESHOLD_EXCEEDED", jtac::ForceTorqueStatus::kThresholdExceeded)
      .value("NON_FINITE", jtac::ForceTorqueStatus::kNonFinite);

  py::class_<jtac::ForceTorqueResult>(m, "ForceTorqueResult",
                                      "One cycle's output of ForceTorquePipeline.process")
      .def_readonly("status", &jtac::ForceTorqueResult::status)
      .def_readonly("violated_axis", &jtac::ForceTorqueResult::violated_axis)
      .def_readonly("tare", &jtac::ForceTorqueResult::tare)
      .def_property_readonly(
          "wrench_filtered_sensor",
          [](const jtac::ForceTorqueResult& r) { return vector_array<6>(r.wrench_filtered_sensor); })
      .def_property_readonly("wrench_control", [](const jtac::ForceTorqueResult& r) {
        return vector_array<6>(r.wrench_control);
      });

  py::class_<jtac::ForceTorquePipeline>(
      m, "ForceTorquePipeline",
      "Tare -> Butterworth -> threshold -> payload weight -> deadband -> control frame")
      .def(py::init<>())
      .def_static(
          "validate",
          [](const jtac::ForceTorqueParameters& p) -> std::optional<std::string> {
            const char* error = jtac::ForceTorquePipeline::validate(p);
            return error == nullptr ? std::nullopt : std::optional<std::string>(error);
          },
          py::arg("parameters"), "None when usable, else the message naming the field")
      .def("configure", &jtac::ForceTorquePipeline::configure, py::arg("parameters"),
           "Takes the parameters if validate() accepts them, else False")
      .def(
          "reset",
          [](jtac::ForceTorquePipeline& p, const InputArray& wrench_raw_sensor) {
            return p.reset(fixed_vector<6>(wrench_raw_sensor, "wrench_raw_sensor"));
          },
          py::arg("wrench_raw_sensor"), "Primes the filter at this reading minus the tare offset")
      .def("start_tare", &jtac::ForceTorquePipeline::start_tare, py::arg("num_samples"))
      .def(
          "process",
          [](jtac::ForceTorquePipeline& p, const InputArray& wrench_raw_sensor,
             const InputArray& R_base_sensor) {
            return p.process(fixed_vector<6>(wrench_raw_sensor, "wrench_raw_sensor"),
                             fixed_matrix<3, 3>(R_base_sensor, "R_base_sensor"));
          },
          py::arg("wrench_raw_sensor"), py::arg("R_base_sensor"),
          "One cycle: the raw reading (6, sensor frame) and the sensor's 3x3 orientation in the base frame")
      .def_property_readonly("tare", &jtac::ForceTorquePipeline::tare, py::return_value_policy::copy)
      .def_property_readonly("parameters", &jtac::ForceTorquePipeline::parameters,
                             py::return_value_policy::copy);
}

void bind_configuration(py::module_& m) {
  py::class_<jtac::TipFrames>(m, "TipFrames",
                              "One tip: the frame its sensor measures in and the frame it controls")
      .def(py::init([](std::string sensor_frame, std::string ee_frame) {
             return jtac::TipFrames{std::move(sensor_frame), std::move(ee_frame)};
           }),
           py::arg("sensor_frame"), py::arg("ee_frame"))
      .def_readwrite("sensor_frame", &jtac::TipFrames::sensor_frame)
      .def_readwrite("ee_frame", &jtac::TipFrames::ee_frame)
      .def("__repr__", [](const jtac::TipFrames& t) {
        return "TipFrames(sensor_frame='" + t.sensor_frame + "', ee_frame='" + t.ee_frame + "')";
      });

  py::class_<jtac::JtacConfig>(m, "JtacConfig", "Configure-time structure (read-only parameters)")
      .def(py::init([](std::vector<std::string> joint_names, std::vector<std::string> continuous_joints,
                       int max_trajectory_points, std::string urdf_xml, std::string base_frame,
                       const py::object& tips, bool has_force_torque_sensor,
                       std::vector<double> max_velocity_rad_s, std::vector<double> max_acceleration_rad_s2,
                       double update_rate_hz, bool check_admittance_stability) {
             jtac::JtacConfig c;
             c.trajectory.joint_names = std::move(joint_names);
             c.trajectory.continuous_joints = std::move(continuous_joints);
             c.trajectory.max_trajectory_points = max_trajectory_points;
             c.trajectory.max_velocity_rad_s = std::move(max_velocity_rad_s);
             c.trajectory.max_acceleration_rad_s2 = std::move(max_acceleration_rad_s2);
             c.urdf_xml = std::move(urdf_xml);
             c.base_frame = std::move(base_frame);
             c.tips = tip_frames_from(tips);
             c.has_force_torque_sensor = has_force_torque_sensor;
             c.update_rate_hz = update_rate_hz;
             c.check_admittance_stability = check_admittance_stability;
             return c;
           }),
           py::arg("joint_names"), py::arg("continuous_joints") = std::vector<std::string>{},
           py::arg("max_trajectory_points") = 10000, py::arg("urdf_xml") = "", py::arg("base_frame") = "",
           py::arg("tips") = py::list(), py::arg("has_force_torque_sensor") = false,
           py::arg("max_velocity_rad_s") = std::vector<double>{},
           py::arg("max_acceleration_rad_s2") = std::vector<double>{}, py::arg("update_rate_hz") = 1000.0,
           py::arg("check_admittance_stability") = true)
      .def_property(
          "max_velocity_rad_s", [](const jtac::JtacConfig& c) { return c.trajectory.max_velocity_rad_s; },
          [](jtac::JtacConfig& c, std::vector<double> v) { c.trajectory.max_velocity_rad_s = std::move(v); },
          "The robot's joint velocity limits [rad/s] bounding the segment to a goal's first point; [] = none")
      .def_property(
          "max_acceleration_rad_s2",
          [](const jtac::JtacConfig& c) { return c.trajectory.max_acceleration_rad_s2; },
          [](jtac::JtacConfig& c, std::vector<double> v) {
            c.trajectory.max_acceleration_rad_s2 = std::move(v);
          },
          "The robot's joint acceleration limits [rad/s²] for the same segment; [] = none")
      .def_property(
          "joint_names", [](const jtac::JtacConfig& c) { return c.trajectory.joint_names; },
          [](jtac::JtacConfig& c, std::vector<std::string> v) { c.trajectory.joint_names = std::move(v); })
      .def_property(
          "continuous_joints", [](const jtac::JtacConfig& c) { return c.trajectory.continuous_joints; },
          [](jtac::JtacConfig& c, std::vector<std::string> v) {
            c.trajectory.continuous_joints = std::move(v);
          })
      .def_property(
          "max_trajectory_points",
          [](const jtac::JtacConfig& c) { return c.trajectory.max_trajectory_points; },
          [](jtac::JtacConfig& c, int v) { c.trajectory.max_trajectory_points = v; })
      .def_readwrite("urdf_xml", &jtac::JtacConfig::urdf_xml)
      .def_readwrite("base_frame", &jtac::JtacConfig::base_frame)
      .def_property(
          "tips", [](const jtac::JtacConfig& c) { return c.tips; },
          [](jtac::JtacConfig& c, const py::object& tips) { c.tips = tip_frames_from(tips); },
          "TipFrames (or (sensor_frame, ee_frame) pairs), one per tip")
      .def_readwrite("has_force_torque_sensor", &jtac::JtacConfig::has_force_torque_sensor)
      .def_readwrite("update_rate_hz", &jtac::JtacConfig::update_rate_hz,
                     "The rate update() runs at [Hz]; goal intake checks admittance stability at it")
      .def_readwrite("check_admittance_stability", &jtac::JtacConfig::check_admittance_stability,
                     "For tests only: False accepts admittance sets the stability check would reject");

  py::class_<jtac::JtacParameters>(m, "JtacParameters", "Run-time parameters, applied at a cycle boundary")
      .def(py::init([](const jtac::ControllerParameters& trajectory, double ft_cutoff_frequency_ratio,
                       double ft_force_deadband_N, double ft_torque_deadband_Nm,
                       const OptionalArray& default_absolute_force_torque_threshold,
                       const OptionalArray& gravity_base_m_s2, double jacobian_damping,
                       int zero_fts_num_samples) {
             jtac::JtacParameters p;
             p.trajectory = trajectory;
             p.ft_cutoff_frequency_ratio = ft_cutoff_frequency_ratio;
             p.ft_force_deadband_N = ft_force_deadband_N;
             p.ft_torque_deadband_Nm = ft_torque_deadband_Nm;
             if (default_absolute_force_torque_threshold) {
               p.default_absolute_force_torque_threshold = fixed_vector<6>(
                   *default_absolute_force_torque_threshold, "default_absolute_force_torque_threshold");
             }
             if (gravity_base_m_s2) {
               p.gravity_base_m_s2 = fixed_vector<3>(*gravity_base_m_s2, "gravity_base_m_s2");
             }
             p.jacobian_damping = jacobian_damping;
             p.zero_fts_num_samples = zero_fts_num_samples;
             return p;
           }),
           py::kw_only(), py::arg("trajectory") = jtac::ControllerParameters{},
           py::arg("ft_cutoff_frequency_ratio") = 1.0, py::arg("ft_force_deadband_N") = 0.0,
           py::arg("ft_torque_deadband_Nm") = 0.0,
           py::arg("default_absolute_force_torque_threshold") = py::none(),
           py::arg("gravity_base_m_s2") = py::none(), py::arg("jacobian_damping") = 0.01,
           py::arg("zero_fts_num_samples") = 10)
      .def_readwrite("trajectory", &jtac::JtacParameters::trajectory, "The engine's ControllerParameters")
      .def_readwrite("ft_cutoff_frequency_ratio", &jtac::JtacParameters::ft_cutoff_frequency_ratio,
                     "Butterworth cutoff / update rate; >= 0.5 (1.0 default) = no filtering")
      .def_readwrite("ft_force_deadband_N", &jtac::JtacParameters::ft_force_deadband_N)
      .def_readwrite("ft_torque_deadband_Nm", &jtac::JtacParameters::ft_torque_deadband_Nm)
      .def_property(
          "default_absolute_force_torque_threshold",
          [](const jtac::JtacParameters& p) {
            return vector_array<6>(p.default_absolute_force_torque_threshold);
          },
          [](jtac::JtacParameters& p, const InputArray& v) {
            p.default_absolute_force_torque_threshold =
                fixed_vector<6>(v, "default_absolute_force_torque_threshold");
          },
          "[Fx Fy Fz Tx Ty Tz] limits of goals that give none [N, N·m]")
      .def_property(
          "gravity_base_m_s2",
          [](const jtac::JtacParameters& p) { return vector_array<3>(p.gravity_base_m_s2); },
          [](jtac::JtacParameters& p, const InputArray& v) {
            p.gravity_base_m_s2 = fixed_vector<3>(v, "gravity_base_m_s2");
          },
          "Gravity in the base frame [m/s²] (payload compensation)")
      .def_readwrite("jacobian_damping", &jtac::JtacParameters::jacobian_damping)
      .def_readwrite("zero_fts_num_samples", &jtac::JtacParameters::zero_fts_num_samples);
}

void bind_goals(py::module_& m) {
  py::class_<jtac::TipGoal>(m, "TipGoal",
                            "Admittance and payload of one tip (lists are copied: assign whole lists); axes "
                            "[x y z rx ry rz] of the control frame. ee_pose_control: a 4x4 matrix or a pair "
                            "(xyz [m], quaternion [x y z w]), the control frame in the ee frame")
      .def(py::init([](std::string end_effector_frame, const py::object& mass, const py::object& stiffness,
                       const py::object& damping, const py::object& selected_axes,
                       const py::object& ee_pose_control, double end_effector_mass_kg,
                       const py::object& end_effector_cog_m,
                       const py::object& absolute_force_torque_threshold) {
             jtac::TipGoal t;
             t.end_effector_frame = std::move(end_effector_frame);
             t.mass = double_list(mass, "mass");
             t.stiffness = double_list(stiffness, "stiffness");
             t.damping = double_list(damping, "damping");
             t.selected_axes = bool_list(selected_axes, "selected_axes");
             t.T_ee_control = pose_from(ee_pose_control, "ee_pose_control");
             t.end_effector_mass_kg = end_effector_mass_kg;
             t.end_effector_cog_m = double_list(end_effector_cog_m, "end_effector_cog_m");
             t.absolute_force_torque_threshold =
                 double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
             return t;
           }),
           py::kw_only(), py::arg("end_effector_frame") = "", py::arg("mass") = py::none(),
           py::arg("stiffness") = py::none(), py::arg("damping") = py::none(),
           py::arg("selected_axes") = py::none(), py::arg("ee_pose_control") = py::none(),
           py::arg("end_effector_mass_kg") = 0.0, py::arg("end_effector_cog_m") = py::none(),
           py::arg("absolute_force_torque_threshold") = py::none())
      .def_readwrite("end_effector_frame", &jtac::TipGoal::end_effector_frame,
                     "One of the configured ee frames; '' = the tip at this position")
      .def_property(
          "mass", [](const jtac::TipGoal& t) { return t.mass; },
          [](jtac::TipGoal& t, const py::object& v) { t.mass = double_list(v, "mass"); },
          "6 or empty [kg, kg·m²]")
      .def_property(
          "stiffness", [](const jtac::TipGoal& t) { return t.stiffness; },
          [](jtac::TipGoal& t, const py::object& v) { t.stiffness = double_list(v, "stiffness"); },
          "6 or empty [N/m, N·m/rad]")
      .def_property(
          "damping", [](const jtac::TipGoal& t) { return t.damping; },
          [](jtac::TipGoal& t, const py::object& v) { t.damping = double_list(v, "damping"); },
          "6 or empty [N·s/m, N·m·s/rad] (absolute, not a ratio)")
      .def_property(
          "selected_axes", [](const jtac::TipGoal& t) { return t.selected_axes; },
          [](jtac::TipGoal& t, const py::object& v) { t.selected_axes = bool_list(v, "selected_axes"); },
          "6 or empty: the compliant axes")
      .def_property(
          "ee_pose_control", [](const jtac::TipGoal& t) { return matrix_array(t.T_ee_control.matrix()); },
          [](jtac::TipGoal& t, const py::object& v) { t.T_ee_control = pose_from(v, "ee_pose_control"); },
          "The control frame in the ee frame: 4x4 out; 4x4 or (xyz, quaternion [x y z w]) in")
      .def_readwrite("end_effector_mass_kg", &jtac::TipGoal::end_effector_mass_kg,
                     "Payload mass [kg]; 0 = none")
      .def_property(
          "end_effector_cog_m", [](const jtac::TipGoal& t) { return t.end_effector_cog_m; },
          [](jtac::TipGoal& t, const py::object& v) {
            t.end_effector_cog_m = double_list(v, "end_effector_cog_m");
          },
          "3 or empty: the payload's centre of gravity in the ee frame [m]")
      .def_property(
          "absolute_force_torque_threshold",
          [](const jtac::TipGoal& t) { return t.absolute_force_torque_threshold; },
          [](jtac::TipGoal& t, const py::object& v) {
            t.absolute_force_torque_threshold = double_list(v, "absolute_force_torque_threshold");
          },
          "6 or empty (= the goal's) [N, N·m]");

  py::class_<jtac::JtacGoal>(m, "JtacGoal", "A trajectory goal with admittance per tip (lists are copied)")
      .def(py::init([](jtac::TrajectoryGoal trajectory, std::vector<jtac::TipGoal> tips,
                       double joint_damping_per_s, const py::object& absolute_force_torque_threshold) {
             jtac::JtacGoal g;
             g.trajectory = std::move(trajectory);
             g.tips = std::move(tips);
             g.joint_damping_per_s = joint_damping_per_s;
             g.absolute_force_torque_threshold =
                 double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
             return g;
           }),
           py::arg("trajectory"), py::kw_only(), py::arg("tips") = std::vector<jtac::TipGoal>{},
           py::arg("joint_damping_per_s") = 0.0, py::arg("absolute_force_torque_threshold") = py::none(),
           "From its typed pieces: a TrajectoryGoal and TipGoal objects (jtac_py.goals builds them)")
      .def(py::init([](const py::object& trajectory, const py::object& tips, double joint_damping_per_s,
                       const py::object& absolute_force_torque_threshold) {
             jtac::JtacGoal g;
             g.trajectory = goal_from(trajectory);
             g.tips = tips_from(tips);
             g.joint_damping_per_s = joint_damping_per_s;
             g.absolute_force_torque_threshold =
                 double_list(absolute_force_torque_threshold, "absolute_force_torque_threshold");
             return g;
           }),
           py::arg("trajectory"), py::kw_only(), py::arg("tips") = py::none(),
           py::arg("joint_damping_per_s") = 0.0, py::arg("absolute_force_torque_threshold") = py::none(),
           "Compatibility path: trajectory a TrajectoryGoal or its dict, tips TipGoal objects or dicts with "
           "the same fields (as given, no defaults)")
      .def_property(
          "trajectory", [](const jtac::JtacGoal& g) { return g.trajectory; },
          [](jtac::JtacGoal& g, const py::object& v) { g.trajectory = goal_from(v); })
      .def_property(
          "tips", [](const jtac::JtacGoal& g) { return g.tips; },
          [](jtac::JtacGoal& g, const py::object& v) { g.tips = tips_from(v); })
      .def_readwrite("joint_damping_per_s", &jtac::JtacGoal::joint_damping_per_s, "[1/s], >= 0")
      .def_property(
          "absolute_force_torque_threshold",
          [](const jtac::JtacGoal& g) { return g.absolute_force_torque_threshold; },
          [](jtac::JtacGoal& g, const py::object& v) {
            g.absolute_force_torque_threshold = double_list(v, "absolute_force_torque_threshold");
          },
          "6 or empty (= default_absolute_force_torque_threshold) [N, N·m]");
}

void bind_controller(py::module_& m) {
  py::class_<JtacCycleResult>(m, "JtacOutput", "What one update() produced, as numpy arrays")
      .def_readonly("status", &JtacCycleResult::status)
      .def_property_readonly(
          "command_position_rad",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.position_rad); })
      .def_property_readonly(
          "command_velocity_rad_s",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.velocity_rad_s); })
      .def_property_readonly(
          "command_acceleration_rad_s2",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.command.acceleration_rad_s2); })
      .def_property_readonly(
          "reference_position_rad",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.reference.position_rad); })
      .def_property_readonly(
          "reference_velocity_rad_s",
          [](const JtacCycleResult& r) { return to_array(r.output.trajectory.reference.velocity_rad_s); })
      .def_property_readonly("reference_acceleration_rad_s2",
                             [](const JtacCycleResult& r) {
                               return to_array(r.output.trajectory.reference.acceleration_rad_s2);
                             })
      .def_property_readonly("error_rad",
                             [](const JtacCycleResult& r) { return to_array(r.output.trajectory.error_rad); })
      .def_property_readonly("mode", [](const JtacCycleResult& r) { return r.output.trajectory.mode; })
      .def_property_readonly("time_scale",
                             [](const JtacCycleResult& r) { return r.output.trajectory.time_scale; })
      .def_property_readonly("trajectory_time_s",
                             [](const JtacCycleResult& r) { return r.output.trajectory.trajectory_time_s; })
      .def_property_readonly("goal_id", [](const JtacCycleResult& r) { return r.output.trajectory.goal_id; })
      .def_property_readonly(
          "wrench_filtered_sensor",
          [](const JtacCycleResult& r) {
            return wrenches_array(r.output.wrench_filtered_sensor, r.num_tips);
          },
          "(num_tips, 6): tared, filtered, deadbanded, payload weight included, sensor frames [N, N·m]")
      .def_property_readonly(
          "wrench_control",
          [](const JtacCycleResult& r) { return wrenches_array(r.output.wrench_control, r.num_tips); },
          "(num_tips, 6): compensated, in the control frames (the admittance's input) [N, N·m]")
      .def_property_readonly(
          "joint_offset_rad", [](const JtacCycleResult& r) { return to_array(r.output.joint_offset_rad); },
          "The admittance's joint offset added to the command [rad]");

  py::class_<Controller>(m, "JointTrajectoryAdmittanceController",
                         "Trajectory tracking with Cartesian admittance at one or more tips")
      .def(py::init<>())
      .def(
          "configure",
          [](Controller& c, const jtac::JtacConfig& config, const jtac::JtacParameters& parameters) {
            configure(c, config, parameters);
          },
          py::arg("config"), py::arg("parameters"),
          "Claims all memory; ValueError naming the offending value")
      .def(
          "configure",
          [](Controller& c, std::vector<std::string> joint_names, std::vector<std::string> continuous_joints,
             int max_trajectory_points, std::string urdf_xml, std::string base_frame, const py::object& tips,
             bool has_force_torque_sensor, const jtac::JtacParameters& parameters) {
            jtac::JtacConfig config;
            config.trajectory.joint_names = std::move(joint_names);
            config.trajectory.continuous_joints = std::move(continuous_joints);
            config.trajectory.max_trajectory_points = max_trajectory_points;
            config.urdf_xml = std::move(urdf_xml);
            config.base_frame = std::move(base_frame);
            config.tips = tip_frames_from(tips);
            config.has_force_torque_sensor = has_force_torque_sensor;
            configure(c, config, parameters);
          },
          py::arg("joint_names"), py::arg("continuous_joints"), py::arg("max_trajectory_points"),
          py::arg("urdf_xml"), py::arg("base_frame"), py::arg("tips"), py::arg("has_force_torque_sensor"),
          py::arg("parameters"), "tips: [(sensor_frame, ee_frame), ...] or TipFrames")
      .def(
          "set_parameters",
          [](Controller& c, const jtac::JtacParameters& parameters) {
            return c.core.set_parameters(parameters);
          },
          py::arg("parameters"), "Publishes new run-time parameters; '' or the validation message")
      .def(
          "submit_goal",
          [](Controller& c, const py::object& goal, double now_s) {
            return c.core.submit_goal(jtac_goal_from(goal), now_s);
          },
          py::arg("goal"), py::arg("now_s"), "Validates and queues a goal (JtacGoal or dict)")
      .def(
          "request_cancel", [](Controller& c, std::uint64_t goal_id) { c.core.request_cancel(goal_id); },
          py::arg("goal_id"))
      .def(
          "request_zero_fts", [](Controller& c, int tip) { return c.core.request_zero_fts(tip); },
          py::arg("tip"),
          "Asks for a tare of tip `tip`'s sensor; '' when queued (the outcome is an event), else why not")
      .def(
          "poll_events",
          [](Controller& c) {
            std::vector<PolledEvent> events;
            jtac::Event e;
            while (c.core.poll_event(e)) {
              events.push_back({e, jtac::describe(e, c.core.joint_names())});
            }
            return events;
          },
          "Every queued event, oldest first")
      .def("dropped_events", [](const Controller& c) { return c.core.trajectory().dropped_events(); })
      .def("activate", [](Controller& c) { c.core.activate(); })
      .def(
          "deactivate", [](Controller& c, double time_s) { c.core.deactivate(time_s); }, py::arg("time_s"))
      .def(
          "update",
          [](Controller& c, double time_s, double period_s, const InputArray& position_rad,
             const InputArray& velocity_rad_s, const OptionalArray& wrenches) {
            const Eigen::Index n = c.core.trajectory().num_joints();
            if (n == 0) {
              throw std::logic_error("JointTrajectoryAdmittanceController.update: call configure() first");
            }
            const jtac::JointVector q = joint_vector(position_rad, "position_rad", n);
            const jtac::JointVector dq = joint_vector(velocity_rad_s, "velocity_rad_s", n);
            const jtac::TipWrenches w = wrenches_from(c, wrenches);
            JtacCycleResult r;
            r.status = c.core.update(time_s, period_s, q, dq, w, c.out);
            r.output = c.out;
            r.num_tips = c.core.num_tips();
            return r;
          },
          py::arg("time_s"), py::arg("period_s"), py::arg("position_rad"), py::arg("velocity_rad_s"),
          py::arg("wrenches") = py::none(),
          "One control cycle; wrenches (num_tips, 6), raw, sensor frames (optional without a sensor): "
          "JtacOutput (with .status)")
      .def_property_readonly("joint_names", [](const Controller& c) { return c.core.joint_names(); })
      .def_property_readonly("num_joints",
                             [](const Controller& c) { return c.core.trajectory().num_joints(); })
      .def_property_readonly("num_tips", [](const Controller& c) { return c.core.num_tips(); })
      .def_property_readonly("ee_frames", [](const Controller& c) { return c.core.ee_frames(); })
      .def_property_readonly("sensor_frames", [](const Controller& c) { return c.core.sensor_frames(); })
      .def_property_readonly("has_force_torque_sensor", [](const Controller& c) { return c.has_sensor; })
      .def_property_readonly("is_active",
                             [](const Controller& c) { return c.core.trajectory().is_active(); });
}

}  // namespace

std::vector<jtac::TipGoal> jtac_python::tip_goals_from(const py::handle& obj) { return tips_from(obj); }

/// Registers the composed controller and the force/torque pieces in `m` (called from PYBIND11_MODULE,
/// after bind_trajectory, whose types it reuses).
void bind_jtac(py::module_& m) {
  bind_signal_processing(m);
  bind_configuration(m);
  bind_goals(m);
  bind_controller(m);
}

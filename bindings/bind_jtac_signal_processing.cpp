// pybind11 bindings of the force/torque pieces the composed controller is built from
// (signal_processing.hpp): the Butterworth filter, the tare, the pipeline. Wrenches are rows
// [Fx Fy Fz Tx Ty Tz] in [N, N·m], in the sensor frame. Conversion only: no algorithm here.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "jtac_core/signal_processing.hpp"

#include "bind_jtac.hpp"

namespace jtac_python {

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

}  // namespace jtac_python

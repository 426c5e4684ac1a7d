// pybind11 binding of the libfranka device (compiled only when JTAC_HAVE_LIBFRANKA): _native.FrankaDevice
// over the ActiveControl object that pylibfranka's Robot.start_joint_position_control() (or
// start_joint_velocity_control()) returns. Conversion only: no algorithm here.
//
// The franka::ActiveControlBase* comes from pylibfranka's Python object through the pybind11 cpp conduit
// (pylibfranka is built with pybind11 3.0; both sides agree on the platform ABI id and compare the
// std::type_info by name). The device holds that Python object, and with it the control, until
// release() (keep_alive could never let go: a Controller still referencing the device would keep the
// robot connected); read_once/write_once come from the Device base (bind_hw.cpp) and release the GIL.
// Nothing may call the control's readOnce/writeOnce from Python while the device is in use.
#include <pybind11/pybind11.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <typeinfo>
#include <utility>

#include "franka_hw/device.hpp"
#include "franka_hw/franka_device.hpp"

namespace py = pybind11;

namespace {

/// The ActiveControlBase inside a pylibfranka object; TypeError for anything else.
franka::ActiveControlBase& active_control_of(const py::object& active_control) {
  // pybind11-internal (pinned pybind11 3.1): the same lookup pybind11 uses for foreign objects.
  void* raw = py::detail::try_raw_pointer_ephemeral_from_cpp_conduit(active_control,
                                                                     &typeid(franka::ActiveControlBase));
  if (raw == nullptr) {
    throw py::type_error(
        "FrankaDevice: active_control must be the pylibfranka object that "
        "Robot.start_joint_position_control() "
        "or Robot.start_joint_velocity_control() returned, got " +
        std::string(py::str(py::type::of(active_control).attr("__qualname__"))));
  }
  return *static_cast<franka::ActiveControlBase*>(raw);
}

/// pylibfranka's libfranka must be the one FrankaDevice was compiled against (RobotState's layout).
void check_pylibfranka_version() {
  const std::string version = py::str(py::module_::import("pylibfranka").attr("__version__"));
  if (version != JTAC_LIBFRANKA_VERSION) {
    throw std::runtime_error("FrankaDevice was built against libfranka " JTAC_LIBFRANKA_VERSION
                             ", but pylibfranka is " +
                             version + ": install pylibfranka==" JTAC_LIBFRANKA_VERSION " or rebuild jtac");
  }
}

/// The device made from Python: it owns the Python object of its control until release().
class OwningFrankaDevice final : public jtac::hw::FrankaDevice {
 public:
  OwningFrankaDevice(py::object active_control, franka::ActiveControlBase& control,
                     const jtac::hw::FrankaDeviceConfig& config)
      : FrankaDevice(control, config), active_control_(std::move(active_control)) {}
  explicit OwningFrankaDevice(const jtac::hw::FrankaDeviceConfig& config) : FrankaDevice(config) {}

  /// Starts the robot's motion through pylibfranka and hands it to the hardware thread, in one
  /// native call with the GIL held throughout: no Python thread runs between the Move being
  /// accepted and attach(), so the first command follows within the hardware thread's next poll.
  void start_motion(const py::object& robot, const py::object& controller_mode) {
    if (released() || holds_control()) {
      throw py::value_error(
          "FrankaDevice.start_motion: this device already had its motion; a motion "
          "needs a new device (FrankaArm makes one per motion)");
    }
    const bool position = mode() == jtac::hw::FrankaControlMode::kJointPosition;
    py::object active = robot.attr(position ? "start_joint_position_control"
                                            : "start_joint_velocity_control")(controller_mode);
    franka::ActiveControlBase& control = active_control_of(active);
    active_control_ = std::move(active);
    attach(control);
  }

  void release_control() {
    release();
    active_control_ = py::none();
  }

 private:
  py::object active_control_;
};

jtac::hw::FrankaControlMode control_mode_of(const std::string& control) {
  if (control == "position") {
    return jtac::hw::FrankaControlMode::kJointPosition;
  }
  if (control == "velocity") {
    return jtac::hw::FrankaControlMode::kJointVelocity;
  }
  throw py::value_error("FrankaDevice: control must be 'position' or 'velocity', got '" + control + "'");
}

}  // namespace

/// Registers FrankaDevice in `m` (after bind_hw, which registers its base Device).
void bind_franka(py::module_& m) {
  using jtac::hw::FrankaControlMode;
  using jtac::hw::FrankaDevice;

  py::class_<FrankaDevice, jtac::hw::Device>(
      m, "FrankaDevice",
      "A Franka arm through libfranka's ActiveControl (joint position or velocity control), 1 kHz")
      .def(py::init([](const py::object& active_control, bool use_estimated_wrench,
                       const std::string& control) {
             check_pylibfranka_version();
             if (active_control.is_none()) {
               return std::unique_ptr<FrankaDevice>(
                   std::make_unique<OwningFrankaDevice>(jtac::hw::FrankaDeviceConfig{
                       .mode = control_mode_of(control), .use_estimated_wrench = use_estimated_wrench}));
             }
             franka::ActiveControlBase& started = active_control_of(active_control);
             const auto mode = jtac::hw::franka_control_mode(started);
             if (!mode) {
               throw py::value_error(
                   "FrankaDevice: the control was not started for joint positions or joint velocities "
                   "(torque and Cartesian control are not supported)");
             }
             return std::unique_ptr<FrankaDevice>(std::make_unique<OwningFrankaDevice>(
                 active_control, started,
                 jtac::hw::FrankaDeviceConfig{.mode = *mode, .use_estimated_wrench = use_estimated_wrench}));
           }),
           py::arg("active_control") = py::none(), py::kw_only(), py::arg("use_estimated_wrench") = false,
           py::arg("control") = "position",
           "active_control: what pylibfranka's Robot.start_joint_position_control() (or "
           "start_joint_velocity_control()) returned, held by the device until release(); None (the default) "
           "= "
           "a device whose motion start_motion() starts once the hardware thread serves it (its reads "
           "return WAITING until then), for `control` 'position' or 'velocity'. "
           "use_estimated_wrench: report the robot's estimate -K_F_ext_hat_K as the F/T reading (stiffness "
           "frame K, our sign)")
      .def(
          "start_motion",
          [](FrankaDevice& d, const py::object& robot, const py::object& controller_mode) {
            static_cast<OwningFrankaDevice&>(d).start_motion(robot, controller_mode);
          },
          py::arg("robot"), py::arg("controller_mode"),
          "Calls robot.start_joint_position_control(controller_mode) (or the velocity one) and hands the "
          "started control to the device in the same native call: start the hardware thread first, so that "
          "the robot's first command leaves within a period of the Move being accepted. ValueError if the "
          "device already had a motion.")
      .def(
          "release",
          [](FrankaDevice& d) {
            // Every FrankaDevice made from Python is an OwningFrankaDevice (the only constructor).
            static_cast<OwningFrankaDevice&>(d).release_control();
          },
          "Lets go of the control (and with it, once the Robot is dropped too, the connection): "
          "read_once/write_once return NOT_CONFIGURED from now on. Only while no thread drives the device "
          "(after Controller.stop()). Idempotent.")
      .def(
          "finish_motion",
          [](FrankaDevice& d) {
            jtac::hw::DeviceState state;
            py::gil_scoped_release release;
            return d.finish_motion(state);
          },
          "Ends the motion with its own last command marked motion_finished (the last positions written, "
          "bit for bit; the robot's echoed q_d when none was; zero velocity in velocity control), after "
          "reading the next state. Only while no thread drives the device. The status of the read or the "
          "write.")
      .def_property_readonly("holds_control", &FrankaDevice::holds_control,
                             "True from the motion's start until release()")
      .def_property_readonly("released", &FrankaDevice::released, "True after release()")
      .def_property_readonly("has_error", &FrankaDevice::has_error)
      .def_property_readonly(
          "last_error",
          [](const FrankaDevice& d) -> py::object {
            if (!d.has_error()) {
              return py::none();
            }
            return py::str(std::string(d.last_error()));
          },
          "The first error libfranka raised in read_once/write_once ('readOnce: <message>'), None without")
      .def_property_readonly(
          "control",
          [](const FrankaDevice& d) {
            return d.mode() == FrankaControlMode::kJointPosition ? "position" : "velocity";
          },
          "'position' (JointPositions) or 'velocity' (JointVelocities)")
      .def_property_readonly("use_estimated_wrench", &FrankaDevice::use_estimated_wrench)
      .def_property_readonly("command_success_rate", &FrankaDevice::command_success_rate,
                             "The robot's control_command_success_rate of the last state [0, 1]");
}

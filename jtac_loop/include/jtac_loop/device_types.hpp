// The franka_hw names the loop layer uses unqualified: the device contract and the asynchronous
// interface it drives (franka_hw knows no loop; the loop layer sits on it).
#pragma once

#include "franka_hw/async_interface.hpp"
#include "franka_hw/device.hpp"

namespace jtac::loop {

using hw::AsyncCounters;
using hw::AsyncInterface;
using hw::AsyncInterfaceConfig;
using hw::Device;
using hw::DeviceState;
using hw::DeviceStatus;
using hw::JointArray;
using hw::kNumJoints;
using hw::WrenchArray;

}  // namespace jtac::loop

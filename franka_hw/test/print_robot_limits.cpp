// Prints the JointLimits that franka_hw's limiters use (every row of kRobotJointLimits) as
// "<robot> <field> <joint> <value>" lines, every value with 17 significant digits (which parse back
// to the same double): check_robot_limits.py compares them with jtac_py/robots/tables.py.
#include <cstdio>

#include <string>

#include "franka_hw/joint_limits.hpp"

namespace {

void print_array(const char* robot, const char* field, const jtac::hw::JointArray& values) {
  for (int i = 0; i < jtac::hw::kNumJoints; ++i) {
    std::printf("%s %s %d %.17g\n", robot, field, i, values[static_cast<std::size_t>(i)]);
  }
}

void print_limits(const char* robot, const jtac::hw::JointLimits& limits) {
  print_array(robot, "dq_max_rad_s", limits.dq_max_rad_s);
  print_array(robot, "ddq_max_rad_s2", limits.ddq_max_rad_s2);
  print_array(robot, "dddq_max_rad_s3", limits.dddq_max_rad_s3);
  std::printf("%s position_based_velocity_limits 0 %d\n", robot,
              limits.position_based_velocity_limits ? 1 : 0);
  print_array(robot, "q_min_rad", limits.q_min_rad);
  print_array(robot, "q_max_rad", limits.q_max_rad);
  print_array(robot, "velocity_offset_rad_s", limits.velocity_offset_rad_s);
  print_array(robot, "deceleration_limit_rad_s2", limits.deceleration_limit_rad_s2);
}

}  // namespace

int main() {
  for (const auto& row : jtac::hw::kRobotJointLimits) {
    print_limits(std::string(row.robot).c_str(), row.limits);
  }
  return 0;
}

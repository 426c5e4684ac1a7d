// The real-time kinematics calls allocate nothing after configure(), from the very first call.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/kinematics.hpp"
#include "jtac_test_support.hpp"
#include "malloc_counter.hpp"

using jtac::test::count_allocations;

namespace {

TEST(KinematicsNoAlloc, ForwardAndJacobianAllocateNothing) {
  jtac::Kinematics kin;
  std::vector<std::string> joints;
  for (int i = 1; i <= 7; ++i) {
    joints.push_back("fr3_joint" + std::to_string(i));
  }
  kin.configure(jtac::test::read_text_file(JTAC_FR3_URDF), "fr3_link0", joints);
  const int flange = kin.frame_index("fr3_link8");
  jtac::JointVector q(7);
  q << 0.1, -0.785, 0.2, -2.356, 0.1, 1.571, 0.785;
  Eigen::Isometry3d T;
  jtac::Jacobian J(6, 7);
  std::int64_t total = 0;
  for (int cycle = 0; cycle < 1000; ++cycle) {
    q[0] = 0.001 * cycle;
    total += count_allocations([&] {
      kin.forward(q, flange, T);
      kin.jacobian(q, flange, J);
    });
  }
  EXPECT_EQ(total, 0) << "allocations in 1000 cycles of forward() + jacobian()";
  // The error paths are real-time paths too.
  q[2] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(count_allocations([&] { kin.forward(q, flange, T); }), 0);
  jtac::JointVector q_short = jtac::JointVector::Zero(3);
  EXPECT_EQ(count_allocations([&] { kin.jacobian(q_short, flange, J); }), 0);
}

}  // namespace

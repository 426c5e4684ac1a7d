// Cost of jtac::Kinematics' real-time calls against Pinocchio called directly on the same URDF
// (the baseline, measured in the same run): the ratio is the price of our wrapper (input checks,
// joint reordering, base-frame transform), independent of how fast this machine is.
#include <pinocchio/algorithm/frames.hpp>
#include <pinocchio/algorithm/jacobian.hpp>
#include <pinocchio/algorithm/kinematics.hpp>
#include <pinocchio/parsers/urdf.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "jtac_core/kinematics.hpp"
#include "jtac_test_support.hpp"

namespace {

template <class F>
jtac::test::LatencyStats measure(F&& f, int n) {
  std::vector<double> samples_us(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    f(i);
    const auto t1 = std::chrono::steady_clock::now();
    samples_us[static_cast<std::size_t>(i)] = std::chrono::duration<double, std::micro>(t1 - t0).count();
  }
  return jtac::test::latency_stats(samples_us);
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::stoi(argv[1]) : 100000;
  const std::string urdf = jtac::test::read_text_file(JTAC_FR3_URDF);
  std::vector<std::string> joints;
  for (int i = 1; i <= 7; ++i) {
    joints.push_back("fr3_joint" + std::to_string(i));
  }

  jtac::Kinematics kin;
  kin.configure(urdf, "fr3_link0", joints);
  const int tcp = kin.frame_index("fr3_tcp");
  jtac::JointVector q(7);
  q << 0.1, -0.785, 0.2, -2.356, 0.1, 1.571, 0.785;
  Eigen::Isometry3d T;
  jtac::Jacobian J(6, 7);

  pinocchio::Model model;
  pinocchio::urdf::buildModelFromXML(urdf, model);
  pinocchio::Data data(model);
  const auto tcp_id = model.getFrameId("fr3_tcp");
  Eigen::VectorXd q_pin = q;
  pinocchio::Data::Matrix6x J_pin = pinocchio::Data::Matrix6x::Zero(6, model.nv);

  double sink = 0.0;  // keeps results alive
  const jtac::test::LatencyStats base = measure(
      [&](int i) {
        q_pin[0] = 1e-6 * i;
        pinocchio::computeJointJacobians(model, data, q_pin);
        pinocchio::updateFramePlacements(model, data);
        pinocchio::getFrameJacobian(model, data, tcp_id, pinocchio::LOCAL_WORLD_ALIGNED, J_pin);
        sink += data.oMf[tcp_id].translation().x() + J_pin(0, 0);
      },
      n);
  const jtac::test::LatencyStats ours = measure(
      [&](int i) {
        q[0] = 1e-6 * i;
        kin.forward(q, tcp, T);
        kin.jacobian(q, tcp, J);
        sink += T.translation().x() + J(0, 0);
      },
      n);

  std::printf("FR3 TCP pose + Jacobian, %d calls each (sink %.3f)\n", n, sink);
  std::printf("%-34s %9s %9s %9s\n", "", "p50 [us]", "p99 [us]", "p99.9 [us]");
  std::printf("%-34s %9.2f %9.2f %9.2f\n", "baseline: Pinocchio direct", base.p50_us, base.p99_us,
              base.p999_us);
  std::printf("%-34s %9.2f %9.2f %9.2f\n", "jtac::Kinematics forward+jacobian", ours.p50_us, ours.p99_us,
              ours.p999_us);
  std::printf("%-34s %9.2f %9.2f %9.2f\n", "ratio (ours / baseline)", ours.p50_us / base.p50_us,
              ours.p99_us / base.p99_us, ours.p999_us / base.p999_us);
  return 0;
}

// Helpers shared by jtac's C++ tests, allocation tests and benchmarks (never by the library).
#pragma once

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace jtac::test {

/// The whole text of a file; throws std::runtime_error naming it when it cannot be read.
inline std::string read_text_file(const char* path) {
  std::ifstream in(path);
  if (!in) {
    throw std::runtime_error(std::string("cannot read ") + path);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// "<arm>_joint1" … "<arm>_joint7" (the FR3 and Panda descriptions' joint names).
inline std::vector<std::string> arm_joint_names(const std::string& arm) {
  std::vector<std::string> names;
  for (int i = 1; i <= 7; ++i) {
    names.push_back(arm + "_joint" + std::to_string(i));
  }
  return names;
}

/// Two arms under one `world` link: the FR3 at the origin and the Panda 1 m along y (14 joints,
/// tips fr3_* and panda_* on separate chains).
inline std::string dual_arm_urdf(const char* fr3_urdf_path, const char* panda_urdf_path) {
  const auto body = [](const char* path) {
    const std::string text = read_text_file(path);
    const auto open = text.find('>', text.find("<robot")) + 1;
    return text.substr(open, text.rfind("</robot>") - open);
  };
  return std::string("<robot name=\"dual\"><link name=\"world\"/>") +
         "<joint name=\"to_fr3\" type=\"fixed\"><parent link=\"world\"/><child link=\"fr3_link0\"/></joint>" +
         "<joint name=\"to_panda\" type=\"fixed\"><parent link=\"world\"/><child link=\"panda_link0\"/>" +
         "<origin xyz=\"0 1 0\" rpy=\"0 0 0\"/></joint>" + body(fr3_urdf_path) + body(panda_urdf_path) +
         "</robot>";
}

/// Percentiles of a latency sample [µs].
struct LatencyStats {
  double p50_us = 0.0;
  double p99_us = 0.0;
  double p999_us = 0.0;
  double max_us = 0.0;
};

/// Sorts `samples_us` and reads its percentiles.
inline LatencyStats latency_stats(std::vector<double>& samples_us) {
  if (samples_us.empty()) {
    return {};
  }
  std::sort(samples_us.begin(), samples_us.end());
  const auto at = [&](double q) {
    return samples_us[static_cast<std::size_t>(q * static_cast<double>(samples_us.size() - 1))];
  };
  return {at(0.5), at(0.99), at(0.999), samples_us.back()};
}

}  // namespace jtac::test

// The conversions of the generated params_mapping.cpp (their table: jtac_py/parameters/mapping.py),
// from the schema's types (std::vector, std::map) to the core's (Eigen vectors, tips). Included by
// params_mapping.cpp only; configure-time code (allocates).
#pragma once

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "jtac_core/joint_trajectory_admittance_controller.hpp"
#include "jtac_core/jtac_parameters.hpp"

namespace jtac::params_conversions {

/// A per-joint array parameter, in joints order.
inline JointVector joint_vector(const std::vector<double>& values) {
  return Eigen::Map<const Eigen::VectorXd>(values.data(), static_cast<Eigen::Index>(values.size()));
}

/// Per joint, in joints order [rad]: the joint's constraints entry when it is set (non-zero), else
/// the global default.
inline JointVector per_joint(const std::vector<std::string>& joints,
                             const std::map<std::string, Params::Constraints::MapJoints>& entries,
                             double Params::Constraints::MapJoints::* tolerance_rad, double default_rad) {
  JointVector out(static_cast<Eigen::Index>(joints.size()));
  for (std::size_t i = 0; i < joints.size(); ++i) {
    const auto it = entries.find(joints[i]);
    const double own_rad = it == entries.end() ? 0.0 : it->second.*tolerance_rad;
    out[static_cast<Eigen::Index>(i)] = own_rad != 0.0 ? own_rad : default_rad;
  }
  return out;
}

/// One tip per sensor frame; validate() keeps ee_frames the same length (size_eq_param).
inline std::vector<TipFrames> tip_frames(const std::vector<std::string>& sensor_frames,
                                         const std::vector<std::string>& ee_frames) {
  std::vector<TipFrames> tips;
  for (std::size_t k = 0; k < sensor_frames.size() && k < ee_frames.size(); ++k) {
    tips.push_back(TipFrames{sensor_frames[k], ee_frames[k]});
  }
  return tips;
}

/// Whether any tip has a sensor name.
inline bool any_sensor(const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [](const std::string& name) { return !name.empty(); });
}

/// A fixed-size vector from an array parameter of that size, else `fallback` (a size validate()
/// refuses never reaches here; the core keeps its default).
template <int N>
inline Eigen::Matrix<double, N, 1> fixed_vector(const std::vector<double>& values,
                                                const Eigen::Matrix<double, N, 1>& fallback) {
  if (values.size() != static_cast<std::size_t>(N)) {
    return fallback;
  }
  return Eigen::Map<const Eigen::Matrix<double, N, 1>>(values.data());
}

}  // namespace jtac::params_conversions

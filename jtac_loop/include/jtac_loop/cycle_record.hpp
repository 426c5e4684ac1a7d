// One controller cycle's fields, written once. Every type that carries a cycle and every place that
// turns one into something else is derived from the two tables below:
//   * LawOutput        = JTAC_LAW_OUTPUT_FIELDS (what a law fills);
//   * CycleRecord      = JTAC_CYCLE_FIELDS: the state the cycle used, the law's output, the update's
//                        status and the cycle's timing (one row of the recording);
//   * LoopSnapshot     = a CycleRecord + validity + the loop's counters (control_loop.hpp);
//   * walking a cycle  = for_each_cycle_field(visit): a member pointer and the Python names per
//                        field; the bindings build the snapshot dict, the recording's columns and
//                        `_native.CYCLE_FIELDS` (name, shape, doc) with it, and jtac_py builds
//                        RECORD_FIELDS and ControllerState from CYCLE_FIELDS.
// Adding a field is one line here (and its value set where the cycle produces it).
//
// A table is an X-macro taking two callbacks:
//   FIELD(type, member, init, python_name, doc) — a scalar or a joint array: one Python name;
//   TIPS(member, init, python_tip0, python_tips, doc) — a TipWrenchArray (every tip's wrench
//     [Fx Fy Fz Tx Ty Tz] [N, N·m], kMaxTips rows, tip 0 first): tip 0's row as `python_tip0` (6,)
//     and every tip as `python_tips` (kMaxTips, 6).
// `init` is the member's brace initializer; `doc` says what it is, with its unit.
//
// Real time: the types are fixed-size aggregates (no heap), copied by value in the controller thread.
#pragma once

#include <array>
#include <cstdint>

#include "franka_hw/device.hpp"
#include "jtac_core/admittance.hpp"
#include "jtac_core/trajectory_controller.hpp"
#include "jtac_loop/device_types.hpp"

namespace jtac::loop {

/// One wrench [Fx Fy Fz Tx Ty Tz] per tip [N, N·m], tip 0 first (the tips of JtacConfig::tips);
/// entries from the law's tip count on are zero.
using TipWrenchArray = std::array<WrenchArray, kMaxTips>;

// clang-format off
/// What a law fills each cycle (LawOutput). A law without a reference or a wrench pipeline fills
/// q_ref/dq_ref with its command and leaves the rest at zero.
#define JTAC_LAW_OUTPUT_FIELDS(FIELD, TIPS)                                                                  \
  FIELD(JointArray, q_cmd_rad, {}, "q_cmd",                                                                  \
        "position command to the hardware (reference + compliance offset) [rad]")                            \
  FIELD(JointArray, dq_cmd_rad_s, {}, "dq_cmd", "velocity command (feed-forward) to the hardware [rad/s]")   \
  FIELD(JointArray, q_ref_rad, {}, "q_ref", "nominal reference, no compliance offset [rad]")                 \
  FIELD(JointArray, dq_ref_rad_s, {}, "dq_ref", "nominal reference velocity [rad/s]")                        \
  FIELD(JointArray, error_rad, {}, "error", "reference - measured [rad]")                                    \
  FIELD(JointArray, joint_offset_rad, {}, "joint_offset", "compliance offset added to the reference [rad]")  \
  FIELD(int, num_tips, {}, "num_tips", "tips the law filled in the wrench arrays (<= kMaxTips)")             \
  TIPS(wrench_raw_N_Nm, {}, "wrench_raw", "wrenches_raw",                                                    \
       "the sensor reading the law took, sensor frame [N, N·m]")                                             \
  TIPS(wrench_filtered_N_Nm, {}, "wrench_filtered", "wrenches_filtered",                                     \
       "tared, filtered, deadbanded (still holds the payload's weight), sensor frame [N, N·m]")              \
  TIPS(wrench_control_N_Nm, {}, "wrench_control", "wrenches_control",                                        \
       "payload-compensated, control frame: the admittance's input [N, N·m]")                                \
  FIELD(ControllerMode, mode, {ControllerMode::kInactive}, "mode", "the controller's mode")                  \
  FIELD(std::uint64_t, goal_id, {}, "goal_id", "active goal, 0 = none")                                      \
  FIELD(double, time_scale, {1.0}, "time_scale", "trajectory speed in [0, 1]")                               \
  FIELD(double, trajectory_time_s, {}, "trajectory_time",                                                    \
        "τ of the sampled reference in the active trajectory [s]")

/// One controller cycle (CycleRecord): the state it used, the law's output, the update's status and
/// the cycle's timing.
#define JTAC_CYCLE_FIELDS(FIELD, TIPS)                                                                       \
  FIELD(double, time_s, {}, "time", "controller time = robot time of the state used [s]")                    \
  FIELD(std::uint64_t, tick, {}, "tick", "device tick of that state")                                        \
  FIELD(double, host_time_s, {}, "host_time",                                                                \
        "host steady clock (time.monotonic) when that state arrived [s]: one clock for several arms")       \
  FIELD(JointArray, q_rad, {}, "q", "measured position [rad]")                                               \
  FIELD(JointArray, dq_rad_s, {}, "dq", "measured velocity [rad/s]")                                         \
  JTAC_LAW_OUTPUT_FIELDS(FIELD, TIPS)                                                                        \
  FIELD(UpdateStatus, status, {UpdateStatus::kInactive}, "status", "what the law's update returned")         \
  FIELD(double, cycle_duration_us, {}, "cycle_duration_us", "state read -> command submitted [µs]")          \
  FIELD(double, interval_us, {}, "interval_us", "read-to-read interval, 0 on the first cycle [µs]")
// clang-format on

/// A table's FIELD and TIPS as member declarations.
#define JTAC_DECLARE_FIELD(type, member, init, python_name, doc) type member init;
#define JTAC_DECLARE_TIPS(member, init, python_tip0, python_tips, doc) TipWrenchArray member init;

/// What a law produces in one cycle: the command, and what the loop shows in its snapshot and
/// record (fields: JTAC_LAW_OUTPUT_FIELDS).
struct LawOutput {
  JTAC_LAW_OUTPUT_FIELDS(JTAC_DECLARE_FIELD, JTAC_DECLARE_TIPS)
};

/// One recorded controller cycle, fixed size (every tip's wrenches, kMaxTips of them; fields:
/// JTAC_CYCLE_FIELDS).
struct CycleRecord {
  JTAC_CYCLE_FIELDS(JTAC_DECLARE_FIELD, JTAC_DECLARE_TIPS)
};

/// One cycle field as the Python side names it.
struct CycleFieldInfo {
  const char* python_name;  ///< the snapshot's key and the recording's column
  const char* python_tip0;  ///< every tip's wrench (TipWrenchArray): tip 0's row's name; else nullptr
  const char* doc;          ///< what it is, with its unit
};

/// Calls `visit(info, &CycleRecord::member)` for every field of JTAC_CYCLE_FIELDS, in table order:
/// how the bindings and the tests walk a cycle without naming its fields.
template <class Visitor>
void for_each_cycle_field(Visitor&& visit) {
#define JTAC_VISIT_FIELD(type, member, init, python_name, doc) \
  visit(CycleFieldInfo{python_name, nullptr, doc}, &CycleRecord::member);
#define JTAC_VISIT_TIPS(member, init, python_tip0, python_tips, doc) \
  visit(CycleFieldInfo{python_tips, python_tip0, doc}, &CycleRecord::member);
  JTAC_CYCLE_FIELDS(JTAC_VISIT_FIELD, JTAC_VISIT_TIPS)
#undef JTAC_VISIT_FIELD
#undef JTAC_VISIT_TIPS
}

/// Fills `row` with one cycle: the state it used, the law's output, the update's `status`, the
/// cycle's duration (read → command submitted) [µs] and read-to-read interval [µs]. Real-time safe.
inline void fill_cycle_record(const DeviceState& state, const LawOutput& out, UpdateStatus status,
                              double cycle_duration_us, double interval_us, CycleRecord& row) noexcept {
#define JTAC_COPY_FIELD(type, member, init, python_name, doc) row.member = out.member;
#define JTAC_COPY_TIPS(member, init, python_tip0, python_tips, doc) row.member = out.member;
  JTAC_LAW_OUTPUT_FIELDS(JTAC_COPY_FIELD, JTAC_COPY_TIPS)
#undef JTAC_COPY_FIELD
#undef JTAC_COPY_TIPS
  row.time_s = state.time_s;
  row.tick = state.tick;
  row.host_time_s = static_cast<double>(state.host_receive_ns) * 1e-9;
  row.q_rad = state.q_rad;
  row.dq_rad_s = state.dq_rad_s;
  row.status = status;
  row.cycle_duration_us = cycle_duration_us;
  row.interval_us = interval_us;
}

}  // namespace jtac::loop

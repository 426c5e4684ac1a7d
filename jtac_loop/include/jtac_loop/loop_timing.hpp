// The controller loop's timing counters, written once. Every type and conversion is derived from the
// table below (the model is cycle_record.hpp):
//   * LoopTiming         = the table's fields as plain values (one reading, any thread);
//   * LoopTimingCounters = the loop's own fields as atomics (the controller thread counts, any thread
//                          reads);
//   * read_loop_timing() = one LoopTiming from the atomics and the interface's AsyncCounters;
//   * for_each_timing_field(visit) = a name and a member pointer per field (the bindings' dict).
// Adding a counter is one line here (and where the loop counts it).
//
// The table is an X-macro taking two callbacks:
//   LOOP(type, member, doc) — counted by the loop itself (an atomic in LoopTimingCounters);
//   DEVICE(type, member, counter, scale, doc) — read from AsyncCounters::counter; a double field
//     is the counter times scale (a unit change), a count is copied (scale 1).
// `member` is also the Python dict's key; `doc` says what it is, with its unit.
//
// Real time: the counters are lock-free atomics updated with relaxed order; each field is read
// atomically, the set is not one instant.
#pragma once

#include <atomic>
#include <cstdint>
#include <type_traits>

#include "jtac_loop/device_types.hpp"

namespace jtac::loop {

// clang-format off
#define JTAC_LOOP_TIMING_FIELDS(LOOP, DEVICE)                                                           \
  LOOP(std::uint64_t, cycles, "controller updates run")                                                 \
  LOOP(std::uint64_t, cycles_without_state, "cycles skipped: no state yet")                             \
  LOOP(std::uint64_t, stale_states, "looks that found no new state (real time: a poll)")                \
  LOOP(std::uint64_t, overruns, "read-to-read interval > 1.5 × the nominal period")                    \
  LOOP(std::uint64_t, update_not_ok, "updates that returned other than UpdateStatus::kOk")              \
  LOOP(std::uint64_t, commands_refused, "submit_command() refusals (non-finite command)")               \
  DEVICE(std::uint64_t, largest_command_gap, largest_command_gap, 1,                                    \
         "AsyncCounters::largest_command_gap [packets]")                                                \
  LOOP(std::uint64_t, unserved_cycles, "device ticks without a new command (newest state)")             \
  DEVICE(double, max_device_command_gap_us, max_write_interval_ns, 1e-3,                                \
         "AsyncCounters::max_write_interval_ns [µs]")                                                   \
  LOOP(double, last_cycle_duration_us, "read → command submitted, last cycle [µs]")                     \
  LOOP(double, max_cycle_duration_us, "largest of those [µs]")                                          \
  LOOP(double, last_interval_us, "read-to-read interval, last cycle [µs]")                              \
  LOOP(double, max_interval_us, "largest of those [µs]")
// clang-format on

#define JTAC_TIMING_VALUE(type, member, ...) type member{};
#define JTAC_TIMING_ATOMIC(type, member, doc) std::atomic<type> member{};
#define JTAC_TIMING_NONE(...)

/// Loop-timing counters, one reading (fields: JTAC_LOOP_TIMING_FIELDS).
struct LoopTiming {
  JTAC_LOOP_TIMING_FIELDS(JTAC_TIMING_VALUE, JTAC_TIMING_VALUE)
};

/// The counters the loop keeps itself, as atomics (the LOOP fields of JTAC_LOOP_TIMING_FIELDS).
struct LoopTimingCounters {
  JTAC_LOOP_TIMING_FIELDS(JTAC_TIMING_ATOMIC, JTAC_TIMING_NONE)
};

#undef JTAC_TIMING_VALUE
#undef JTAC_TIMING_ATOMIC
#undef JTAC_TIMING_NONE

/// A DEVICE field's value: a count copied, a figure converted to the field's unit.
template <class To, class From>
constexpr To timing_from_counter(From counter, double scale) noexcept {
  if constexpr (std::is_floating_point_v<To>) {
    return static_cast<To>(static_cast<double>(counter) * scale);
  } else {
    return static_cast<To>(counter);
  }
}

/// One LoopTiming: the loop's own counters and the interface's. Any thread; real-time safe.
inline LoopTiming read_loop_timing(const LoopTimingCounters& own, const AsyncCounters& device) noexcept {
  LoopTiming t;
#define JTAC_TIMING_LOAD_LOOP(type, member, doc) t.member = own.member.load(std::memory_order_relaxed);
#define JTAC_TIMING_LOAD_DEVICE(type, member, counter, scale, doc) \
  t.member = timing_from_counter<type>(device.counter, scale);
  JTAC_LOOP_TIMING_FIELDS(JTAC_TIMING_LOAD_LOOP, JTAC_TIMING_LOAD_DEVICE)
#undef JTAC_TIMING_LOAD_LOOP
#undef JTAC_TIMING_LOAD_DEVICE
  return t;
}

/// Calls `visit(name, &LoopTiming::member)` for every field, in table order (the bindings' dict).
template <class Visitor>
void for_each_timing_field(Visitor&& visit) {
#define JTAC_TIMING_VISIT_LOOP(type, member, doc) visit(#member, &LoopTiming::member);
#define JTAC_TIMING_VISIT_DEVICE(type, member, counter, scale, doc) visit(#member, &LoopTiming::member);
  JTAC_LOOP_TIMING_FIELDS(JTAC_TIMING_VISIT_LOOP, JTAC_TIMING_VISIT_DEVICE)
#undef JTAC_TIMING_VISIT_LOOP
#undef JTAC_TIMING_VISIT_DEVICE
}

}  // namespace jtac::loop

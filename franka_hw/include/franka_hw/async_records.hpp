// What the asynchronous interface reports, each record written once as a field table (an X-macro, as
// jtac_loop/cycle_record.hpp does for the controller cycle) from which everything else is derived:
//   * AsyncCounters        = JTAC_ASYNC_COUNTER_FIELDS; AsyncCounterAtomics holds the same fields as
//                            atomics (written by the real-time thread) and load()s them into one;
//   * PacketRecord         = JTAC_PACKET_RECORD_FIELDS (one packet of the flight recorder);
//   * for_each_*_field     = the member pointers with their Python names: the bindings build the
//                            counters' dict and the flight recorder's columns with them.
// Adding a field is one line in its table (and its value set where the packet produces it).
//
// Tables: COUNT(member, doc) — a std::uint64_t count, the same name in Python; PEAK_NS(member,
// python_name, doc) — a std::int64_t duration [ns], in Python in seconds under `python_name`;
// FIELD(type, member, init, python_name, doc) — a scalar or a joint array.
#pragma once

#include <atomic>
#include <cstdint>

#include "franka_hw/device.hpp"

namespace jtac::hw {

// clang-format off
/// Packet counters since construction or reset (AsyncCounters).
#define JTAC_ASYNC_COUNTER_FIELDS(COUNT, PEAK_NS)                                                          \
  COUNT(packets, "commands written (packets served)")                                                      \
  COUNT(commands_received, "controller samples taken by the real-time side")                               \
  COUNT(commands_refused, "non-finite samples refused by submit_command()")                                \
  COUNT(held_packets, "packets with no sample in force (timed out or none)")                               \
  COUNT(limiter_activations, "packets where a limit shaped the command")                                   \
  COUNT(largest_command_gap, "most packets between two controller samples (since the start or reset_peaks())") \
  COUNT(anomalous_ticks, "states whose tick delta was not 1")                                              \
  COUNT(late_commands, "commands known to have missed their cycle: written more than one period after "    \
        "their state was read, or followed by skipped ticks")                                              \
  COUNT(late_reads, "states read after the robot's next cycles had passed although the previous command "  \
        "went out on time (the reader preempted between write and read): the robot substituted the "      \
        "missed cycles")                                                                                   \
  COUNT(echo_resyncs, "packets whose echoed q_d showed the robot's history for that tick was not the one " \
        "the tick handling assumed (a command lost on the wire or dropped as late; a lost state taken "    \
        "for a late command): the reference continued from the history the echo named")                   \
  COUNT(device_errors, "read/write calls that returned an error")                                          \
  PEAK_NS(max_write_interval_ns, "max_write_interval_s", "largest wall-clock time between two consecutive " \
          "device commands (write_once calls) since the start or reset_peaks(): what the robot would see " \
          "as a late packet; meaningful in real time")                                                     \
  PEAK_NS(max_latency_ns, "max_latency_s", "largest read-to-write latency (dEXT) since the start or "       \
          "reset_peaks()")

/// One packet of the flight recorder (PacketRecord): what was read, what went out.
#define JTAC_PACKET_RECORD_FIELDS(FIELD)                                                                   \
  FIELD(std::uint64_t, packet, = 0, "packet", "packet index since construction")                           \
  FIELD(std::uint64_t, tick, = 0, "tick", "the state's tick [device periods]")                             \
  FIELD(std::int64_t, read_ns, = 0, "read_ns", "host steady clock when read_once returned [ns]")           \
  FIELD(std::int64_t, write_ns, = 0, "write_ns", "host steady clock when write_once returned [ns]")        \
  FIELD(std::uint64_t, step_periods, = 1, "step_periods", "periods the reference advanced over")           \
  FIELD(std::uint8_t, flags, = 0, "flags", "what shaped this packet (PacketRecord::Flags bits)")           \
  FIELD(JointArray, q_d_echo_rad, {}, "q_d_echo", "the robot's echoed q_d in the state [rad]")             \
  FIELD(JointArray, q_cmd_rad, {}, "q_cmd", "the position command written [rad]")                          \
  FIELD(JointArray, dq_cmd_rad_s, {}, "dq_cmd", "the velocity command written [rad/s]")
// clang-format on

/// Packet counters since construction or reset(); any thread (fields: JTAC_ASYNC_COUNTER_FIELDS).
struct AsyncCounters {
#define JTAC_HW_DECLARE_COUNT(member, doc) std::uint64_t member = 0;
#define JTAC_HW_DECLARE_PEAK_NS(member, python_name, doc) std::int64_t member = 0;
  JTAC_ASYNC_COUNTER_FIELDS(JTAC_HW_DECLARE_COUNT, JTAC_HW_DECLARE_PEAK_NS)
#undef JTAC_HW_DECLARE_COUNT
#undef JTAC_HW_DECLARE_PEAK_NS
};

/// AsyncCounters as atomics: the real-time thread bumps them (relaxed), any thread load()s them.
struct AsyncCounterAtomics {
#define JTAC_HW_DECLARE_ATOMIC_COUNT(member, doc) std::atomic<std::uint64_t> member{0};
#define JTAC_HW_DECLARE_ATOMIC_PEAK_NS(member, python_name, doc) std::atomic<std::int64_t> member{0};
  JTAC_ASYNC_COUNTER_FIELDS(JTAC_HW_DECLARE_ATOMIC_COUNT, JTAC_HW_DECLARE_ATOMIC_PEAK_NS)
#undef JTAC_HW_DECLARE_ATOMIC_COUNT
#undef JTAC_HW_DECLARE_ATOMIC_PEAK_NS

  /// Every counter's current value. Any thread, real-time safe.
  AsyncCounters load() const noexcept {
    AsyncCounters result;
#define JTAC_HW_LOAD_COUNT(member, doc) result.member = member.load(std::memory_order_relaxed);
#define JTAC_HW_LOAD_PEAK_NS(member, python_name, doc) result.member = member.load(std::memory_order_relaxed);
    JTAC_ASYNC_COUNTER_FIELDS(JTAC_HW_LOAD_COUNT, JTAC_HW_LOAD_PEAK_NS)
#undef JTAC_HW_LOAD_COUNT
#undef JTAC_HW_LOAD_PEAK_NS
    return result;
  }
};

/// Read-to-write latency (dEXT) over the last AsyncInterface::kLatencyWindow packets [s].
struct LatencyStats {
  std::uint64_t samples = 0;
  double min_s = 0.0;
  double median_s = 0.0;
  double p99_s = 0.0;
  double max_s = 0.0;
};

/// One packet of the flight recorder (AsyncInterface::packet_trace): what was read, what went out
/// (fields: JTAC_PACKET_RECORD_FIELDS).
struct PacketRecord {
  /// What shaped this packet (bit mask).
  enum Flags : std::uint8_t {
    kAnomalousTick = 1,  ///< the state's tick delta was not 1
    kLate = 2,           ///< the previous command was judged late (the reference was continued)
    kSample = 4,         ///< a controller sample was taken
    kHeld = 8,           ///< no sample in force: the reference braked
    kLimited = 16,       ///< a limit shaped the command
    kLateRead = 32,      ///< read after missed cycles; the previous command was on time
    kResynced = 64,      ///< the robot's echo named the other history for this tick: continued from it
    kDisturbed = 128,    ///< a test disturbance was added to the command (AsyncInterface::inject_disturbance)
  };
  JTAC_PACKET_RECORD_FIELDS(JTAC_HW_DECLARE_FIELD)
};

/// Calls `count(python_name, value)` for every count and `peak_s(python_name, value_s)` for every peak
/// (converted to seconds) of `counters`, in table order.
template <class Count, class PeakS>
void for_each_counter(const AsyncCounters& counters, Count&& count, PeakS&& peak_s) {
#define JTAC_HW_VISIT_COUNT(member, doc) count(#member, counters.member);
#define JTAC_HW_VISIT_PEAK_NS(member, python_name, doc) \
  peak_s(python_name, static_cast<double>(counters.member) * 1e-9);
  JTAC_ASYNC_COUNTER_FIELDS(JTAC_HW_VISIT_COUNT, JTAC_HW_VISIT_PEAK_NS)
#undef JTAC_HW_VISIT_COUNT
#undef JTAC_HW_VISIT_PEAK_NS
}

/// Calls `visit(python_name, &PacketRecord::member)` for every field, in table order.
template <class Visitor>
void for_each_packet_record_field(Visitor&& visit) {
#define JTAC_HW_VISIT_FIELD(type, member, init, python_name, doc) visit(python_name, &PacketRecord::member);
  JTAC_PACKET_RECORD_FIELDS(JTAC_HW_VISIT_FIELD)
#undef JTAC_HW_VISIT_FIELD
}

}  // namespace jtac::hw

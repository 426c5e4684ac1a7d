// LoopTiming's table (loop_timing.hpp): the fields the Python `timing` dict has always had, in that
// order, and the reading that combines the loop's atomics with the interface's counters.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "jtac_loop/loop_timing.hpp"

namespace {

using jtac::loop::LoopTiming;
using jtac::loop::LoopTimingCounters;

TEST(LoopTiming, TheTableNamesEveryFieldOnceInTheDictsOrder) {
  std::vector<std::string> names;
  jtac::loop::for_each_timing_field([&](const char* name, auto) { names.emplace_back(name); });
  const std::vector<std::string> expected = {"cycles",
                                             "cycles_without_state",
                                             "stale_states",
                                             "overruns",
                                             "update_not_ok",
                                             "commands_refused",
                                             "largest_command_gap",
                                             "unserved_cycles",
                                             "max_device_command_gap_us",
                                             "last_cycle_duration_us",
                                             "max_cycle_duration_us",
                                             "last_interval_us",
                                             "max_interval_us"};
  EXPECT_EQ(names, expected);
}

TEST(LoopTiming, AReadingTakesTheLoopsCountersAndTheInterfacesInTheirUnits) {
  LoopTimingCounters own;
  own.cycles.store(12);
  own.overruns.store(2);
  own.max_interval_us.store(1500.5);
  jtac::hw::AsyncCounters device{};
  device.largest_command_gap = 3;            // [packets]
  device.max_write_interval_ns = 2'250'000;  // [ns]
  const LoopTiming t = jtac::loop::read_loop_timing(own, device);
  EXPECT_EQ(t.cycles, 12U);
  EXPECT_EQ(t.overruns, 2U);
  EXPECT_EQ(t.stale_states, 0U);
  EXPECT_DOUBLE_EQ(t.max_interval_us, 1500.5);
  EXPECT_EQ(t.largest_command_gap, 3U);
  EXPECT_DOUBLE_EQ(t.max_device_command_gap_us, 2250.0);  // [µs]
}

}  // namespace

// Scheduling of jtac's own real-time threads: ask for SCHED_FIFO and a CPU, warn and go on when
// refused (no real-time kernel, no rtprio limit). Call it from the thread itself, before its loop:
// the only place such a thread prints.
#pragma once

namespace jtac::hw {

/// Applies SCHED_FIFO at `fifo_priority` (0 = leave the policy) and pins to `cpu` (−1 = don't) for
/// the calling thread; each refusal prints one warning naming `who` and the reason.
void configure_realtime_thread(const char* who, int fifo_priority, int cpu) noexcept;

}  // namespace jtac::hw

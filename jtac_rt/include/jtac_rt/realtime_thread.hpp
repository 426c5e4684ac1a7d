// Scheduling of jtac's own real-time threads: ask for SCHED_FIFO and a CPU, warn and go on when
// refused (no real-time kernel, no rtprio limit). Call it from the thread itself, before its loop:
// the only place such a thread prints.
#pragma once

#include <pthread.h>
#include <sched.h>

#include <cstdio>
#include <cstring>

namespace jtac::rt {

/// Applies SCHED_FIFO at `fifo_priority` (0 = leave the policy) and pins to `cpu` (−1 = don't) for
/// the calling thread; each refusal prints one warning naming `who` and the reason.
inline void configure_realtime_thread(const char* who, int fifo_priority, int cpu) noexcept {
  if (fifo_priority > 0) {
    sched_param param{};
    param.sched_priority = fifo_priority;
    const int error = pthread_setschedparam(pthread_self(), SCHED_FIFO, &param);
    if (error != 0) {
      std::fprintf(stderr, "%s: SCHED_FIFO %d refused (%s); running at normal priority\n", who, fifo_priority,
                   std::strerror(error));
    }
  }
  if (cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(static_cast<std::size_t>(cpu), &set);
    const int error = pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    if (error != 0) {
      std::fprintf(stderr, "%s: pinning to CPU %d refused (%s); running unpinned\n", who, cpu,
                   std::strerror(error));
    }
  }
}

}  // namespace jtac::rt

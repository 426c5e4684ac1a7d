// Counts heap allocations made by the calling thread while a ScopedAllocationCount is alive.
//
// malloc_counter.cpp replaces malloc, calloc, realloc, reallocarray, memalign, aligned_alloc,
// posix_memalign, valloc, pvalloc and every operator new (plain, array, nothrow, aligned) in the
// test executable; calls from shared libraries (libpinocchio, libstdc++) resolve to these too.
// Link it into a test executable only.
#pragma once

#include <cstdint>

namespace jtac::test {

/// Allocations seen so far on this thread while counting was armed.
std::int64_t allocation_count() noexcept;

/// Arms counting on this thread for the object's lifetime; nests.
class ScopedAllocationCount {
 public:
  ScopedAllocationCount() noexcept;
  ~ScopedAllocationCount();
  ScopedAllocationCount(const ScopedAllocationCount&) = delete;
  ScopedAllocationCount& operator=(const ScopedAllocationCount&) = delete;

  /// Allocations made on this thread since construction.
  std::int64_t allocations() const noexcept;

 private:
  std::int64_t start_;
};

/// Runs f() with counting armed and returns how many allocations it made.
template <class F>
std::int64_t count_allocations(F&& f) {
  ScopedAllocationCount scope;
  f();
  return scope.allocations();
}

}  // namespace jtac::test

// Replacement allocation functions that count while armed (see malloc_counter.hpp).
// They forward to glibc's __libc_* entry points, so the real allocator still does the work.
#include "malloc_counter.hpp"

#include <malloc.h>

#include <cerrno>
#include <cstddef>
#include <cstdlib>
#include <new>

extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
void __libc_free(void* ptr);
}

namespace {

// Thread-local: another thread (a logger, gtest) allocating must not fail this thread's check.
thread_local int t_armed = 0;
thread_local std::int64_t t_count = 0;

inline void note() noexcept {
  if (t_armed > 0) {
    ++t_count;
  }
}

void* aligned_or_null(std::size_t alignment, std::size_t size) noexcept {
  return __libc_memalign(alignment, size == 0 ? 1 : size);
}

void* new_or_throw(std::size_t size) {
  note();
  if (void* p = __libc_malloc(size == 0 ? 1 : size)) {
    return p;
  }
  throw std::bad_alloc();
}

void* aligned_new_or_throw(std::size_t size, std::align_val_t alignment) {
  note();
  if (void* p = aligned_or_null(static_cast<std::size_t>(alignment), size)) {
    return p;
  }
  throw std::bad_alloc();
}

}  // namespace

namespace jtac::test {

std::int64_t allocation_count() noexcept { return t_count; }

ScopedAllocationCount::ScopedAllocationCount() noexcept : start_(t_count) { ++t_armed; }

ScopedAllocationCount::~ScopedAllocationCount() { --t_armed; }

std::int64_t ScopedAllocationCount::allocations() const noexcept { return t_count - start_; }

}  // namespace jtac::test

extern "C" {

void* malloc(std::size_t size) {
  note();
  return __libc_malloc(size);
}

void* calloc(std::size_t count, std::size_t size) {
  note();
  return __libc_calloc(count, size);
}

void* realloc(void* ptr, std::size_t size) {
  note();
  return __libc_realloc(ptr, size);
}

void* reallocarray(void* ptr, std::size_t count, std::size_t size) {
  note();
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(ptr, bytes);
}

void free(void* ptr) { __libc_free(ptr); }

void* memalign(std::size_t alignment, std::size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

void* aligned_alloc(std::size_t alignment, std::size_t size) {
  note();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) {
  note();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) {
    return ENOMEM;
  }
  *out = p;
  return 0;
}

void* valloc(std::size_t size) {
  note();
  return __libc_valloc(size);
}

void* pvalloc(std::size_t size) {
  note();
  return __libc_pvalloc(size);
}

}  // extern "C"

void* operator new(std::size_t size) { return new_or_throw(size); }
void* operator new[](std::size_t size) { return new_or_throw(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  note();
  return __libc_malloc(size == 0 ? 1 : size);
}
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  note();
  return __libc_malloc(size == 0 ? 1 : size);
}
void* operator new(std::size_t size, std::align_val_t alignment) {
  return aligned_new_or_throw(size, alignment);
}
void* operator new[](std::size_t size, std::align_val_t alignment) {
  return aligned_new_or_throw(size, alignment);
}
void* operator new(std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  note();
  return aligned_or_null(static_cast<std::size_t>(alignment), size);
}
void* operator new[](std::size_t size, std::align_val_t alignment, const std::nothrow_t&) noexcept {
  note();
  return aligned_or_null(static_cast<std::size_t>(alignment), size);
}

void operator delete(void* ptr) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, std::size_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, std::size_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, std::size_t, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, std::size_t, std::align_val_t) noexcept { __libc_free(ptr); }
void operator delete(void* ptr, const std::nothrow_t&) noexcept { __libc_free(ptr); }
void operator delete[](void* ptr, const std::nothrow_t&) noexcept { __libc_free(ptr); }

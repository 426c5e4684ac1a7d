// Lock-free crossings between the non-real-time side and the real-time thread.
//
// Three preallocated buffers and one atomic word: the writer owns one buffer, the reader one, and
// the third (the "middle") is handed over by atomic exchange. Neither side ever waits, locks or
// allocates. Two flavours:
//   * Mailbox<T>: nothing is ever lost. publish() refuses while the reader has not taken the
//     previous value (the writer retries later); the reader may inspect a pending value in place
//     and then take it or hand it back, because the writer cannot touch a pending buffer.
//   * LatestValue<T>: the newest value wins (parameters); publish() always succeeds.
// One writer thread and one reader thread per object. SpscRing<T, N> / SpscRingBuffer<T>: a queue
// of values (events, record rows) that drops and counts when full, never waits.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

namespace jtac {

namespace detail {

// The middle buffer's index in the low bits, and whether it holds an unread value.
inline constexpr std::uint32_t kPendingBit = 0x4;
inline constexpr std::uint32_t kIndexMask = 0x3;

}  // namespace detail

/// Single-writer single-reader mailbox that never drops a value.
template <class T>
class Mailbox {
 public:
  /// The writer's buffer: fill it, then publish(). Writer thread only.
  T& write_buffer() noexcept { return buffers_[back_]; }

  /// Hands the write buffer to the reader; false (and nothing changes) while the previous value is
  /// still pending. Writer thread only.
  bool publish() noexcept {
    std::uint32_t expected = middle_.load(std::memory_order_acquire);
    if (expected & detail::kPendingBit) {
      return false;
    }
    const std::uint32_t desired = back_ | detail::kPendingBit;
    if (!middle_.compare_exchange_strong(expected, desired, std::memory_order_acq_rel)) {
      return false;  // only the reader changes middle_, and it never sets the pending bit
    }
    back_ = expected & detail::kIndexMask;
    return true;
  }

  /// True while a published value waits for the reader (either thread).
  bool pending() const noexcept { return middle_.load(std::memory_order_acquire) & detail::kPendingBit; }

  /// The pending value, or nullptr. The reader may read and modify it until take() or decline().
  T* peek() noexcept {
    const std::uint32_t m = middle_.load(std::memory_order_acquire);
    return (m & detail::kPendingBit) ? &buffers_[m & detail::kIndexMask] : nullptr;
  }

  /// Makes the pending value the reader's buffer (returned); the reader's old buffer goes back to
  /// the pool. Reader thread only, after peek() returned non-null.
  T& take() noexcept {
    const std::uint32_t m = middle_.exchange(front_, std::memory_order_acq_rel);
    front_ = m & detail::kIndexMask;
    return buffers_[front_];
  }

  /// Drops the pending value and frees its buffer for the writer. Reader thread only.
  void decline() noexcept { middle_.fetch_and(detail::kIndexMask, std::memory_order_acq_rel); }

  /// The reader's current buffer. Reader thread only.
  T& read_buffer() noexcept { return buffers_[front_]; }

  /// All three buffers, for preallocation at configure (no thread may run yet).
  std::array<T, 3>& buffers() noexcept { return buffers_; }

 private:
  std::array<T, 3> buffers_{};
  std::uint32_t back_ = 0;                // writer-owned index
  std::uint32_t front_ = 1;               // reader-owned index
  std::atomic<std::uint32_t> middle_{2};  // exchanged index + pending bit
};

/// Single-writer single-reader "newest value wins" buffer.
template <class T>
class LatestValue {
 public:
  /// The writer's buffer: fill it, then publish(). Writer thread only.
  T& write_buffer() noexcept { return buffers_[back_]; }

  /// Publishes the write buffer, replacing any value the reader has not taken yet.
  void publish() noexcept {
    const std::uint32_t old = middle_.exchange(back_ | detail::kPendingBit, std::memory_order_acq_rel);
    back_ = old & detail::kIndexMask;
  }

  /// The newest value if one arrived since the last call, else nullptr. Reader thread only.
  const T* take_new() noexcept {
    if (!(middle_.load(std::memory_order_acquire) & detail::kPendingBit)) {
      return nullptr;
    }
    const std::uint32_t m = middle_.exchange(front_, std::memory_order_acq_rel);
    front_ = m & detail::kIndexMask;
    return &buffers_[front_];
  }

  /// All three buffers, for preallocation at configure.
  std::array<T, 3>& buffers() noexcept { return buffers_; }

 private:
  std::array<T, 3> buffers_{};
  std::uint32_t back_ = 0;
  std::uint32_t front_ = 1;
  std::atomic<std::uint32_t> middle_{2};
};

namespace detail {

/// Storage of a ring whose capacity is a compile-time constant: no heap at all.
template <class T, std::size_t Capacity>
struct FixedSlots {
  std::array<T, Capacity> slots{};
  static constexpr std::size_t capacity() noexcept { return Capacity; }
  T& operator[](std::size_t i) noexcept { return slots[i]; }
};

/// Storage of a ring whose capacity is chosen at construction: one heap block, allocated then.
template <class T>
struct HeapSlots {
  explicit HeapSlots(std::size_t capacity) : slots(std::make_unique<T[]>(capacity)), size(capacity) {}
  std::unique_ptr<T[]> slots;
  std::size_t size;
  std::size_t capacity() const noexcept { return size; }
  T& operator[](std::size_t i) noexcept { return slots[i]; }
};

/// Single-producer single-consumer ring over `Slots`; a full ring drops and counts.
template <class T, class Slots>
class SpscRingOver {
 public:
  template <class... Args>
  explicit SpscRingOver(Args&&... args) : slots_(std::forward<Args>(args)...) {}

  /// Appends a copy of `value`; false (counted in dropped()) when full. Producer thread only.
  bool push(const T& value) noexcept {
    const std::size_t head = head_.load(std::memory_order_relaxed);
    if (head - tail_.load(std::memory_order_acquire) >= slots_.capacity()) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
    slots_[head % slots_.capacity()] = value;
    head_.store(head + 1, std::memory_order_release);
    return true;
  }

  /// Removes the oldest value into `out`; false when empty. Consumer thread only.
  bool pop(T& out) noexcept {
    const std::size_t tail = tail_.load(std::memory_order_relaxed);
    if (tail == head_.load(std::memory_order_acquire)) {
      return false;
    }
    out = slots_[tail % slots_.capacity()];
    tail_.store(tail + 1, std::memory_order_release);
    return true;
  }

  /// Values lost because the ring was full.
  std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }
  /// How many values the ring holds at most.
  std::size_t capacity() const noexcept { return slots_.capacity(); }
  /// Values waiting to be popped (exact from the consumer thread, a snapshot from any other).
  std::size_t size() const noexcept {
    return head_.load(std::memory_order_acquire) - tail_.load(std::memory_order_acquire);
  }

 private:
  Slots slots_;
  std::atomic<std::size_t> head_{0};
  std::atomic<std::size_t> tail_{0};
  std::atomic<std::uint64_t> dropped_{0};
};

}  // namespace detail

/// Fixed-capacity single-producer single-consumer ring (no heap); a full ring drops and counts.
template <class T, std::size_t Capacity>
class SpscRing : public detail::SpscRingOver<T, detail::FixedSlots<T, Capacity>> {
  static_assert((Capacity & (Capacity - 1)) == 0, "capacity must be a power of two");
};

/// The same ring with its capacity chosen at construction (allocated then, once; push and pop never
/// allocate): for a size that is a parameter, e.g. the controller's record ring.
template <class T>
class SpscRingBuffer : public detail::SpscRingOver<T, detail::HeapSlots<T>> {
 public:
  /// `capacity` ≥ 1 values (0 is taken as 1). Allocates. Not real-time safe.
  explicit SpscRingBuffer(std::size_t capacity)
      : detail::SpscRingOver<T, detail::HeapSlots<T>>(capacity > 0 ? capacity : 1) {}
};

}  // namespace jtac

// Positive controls: the counter must see every kind of allocation, including one made inside a
// shared library, or a zero count elsewhere in malloc_tests would prove nothing.
#include <gtest/gtest.h>
#include <malloc.h>

#include <Eigen/Core>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "jtac_core/kinematics.hpp"
#include "malloc_counter.hpp"

using jtac::test::count_allocations;

namespace {

// Keeps the optimiser from eliding an allocation whose result is unused.
template <class T>
void keep(T* p) {
  asm volatile("" : : "r"(p) : "memory");
}

struct alignas(64) OverAligned {
  double values[8];
};

TEST(MallocCounterControls, SeesCAllocators) {
  EXPECT_EQ(count_allocations([] {
              void* p = std::malloc(64);
              keep(p);
              std::free(p);
            }),
            1);
  EXPECT_EQ(count_allocations([] {
              void* p = std::calloc(4, 16);
              keep(p);
              std::free(p);
            }),
            1);
  EXPECT_EQ(count_allocations([] {
              void* p = std::malloc(8);
              p = std::realloc(p, 4096);
              keep(p);
              std::free(p);
            }),
            2);
  EXPECT_EQ(count_allocations([] {
              void* p = nullptr;
              ASSERT_EQ(posix_memalign(&p, 64, 128), 0);
              keep(p);
              std::free(p);
              p = std::aligned_alloc(64, 128);
              keep(p);
              std::free(p);
              p = memalign(64, 128);
              keep(p);
              std::free(p);
            }),
            3);
}

TEST(MallocCounterControls, SeesEveryOperatorNew) {
  EXPECT_EQ(count_allocations([] {
              auto* p = new int(3);
              keep(p);
              delete p;
              auto* a = new int[10];
              keep(a);
              delete[] a;
              auto* n = new (std::nothrow) double(1.0);
              keep(n);
              delete n;
              auto* o = new OverAligned();
              keep(o);
              delete o;
            }),
            4);
}

TEST(MallocCounterControls, SeesLibraryContainersAndEigenTemporaries) {
  EXPECT_GE(count_allocations([] {
              std::vector<double> v(100);
              keep(v.data());
            }),
            1);
  EXPECT_GE(count_allocations([] {
              std::string s(200, 'x');  // longer than the small-string buffer
              keep(s.data());
            }),
            1);
  Eigen::VectorXd q = Eigen::VectorXd::Ones(7);
  EXPECT_GE(count_allocations([&] {
              Eigen::VectorXd tmp = q * 2.0;
              keep(tmp.data());
            }),
            1);
}

TEST(MallocCounterControls, SeesAllocationsInsideASharedLibrary) {
  // Pinocchio's URDF parser lives in libpinocchio_parsers.so and urdfdom: a configure() there
  // must be counted, which proves interposition reaches code we did not compile.
  jtac::Kinematics kin;
  const std::int64_t n = count_allocations([&] {
    kin.configure(R"(<robot name="r"><link name="a"/><link name="b"/>
      <joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>
      <limit lower="-1" upper="1" effort="1" velocity="1"/></joint></robot>)",
                  "a", {"j"});
  });
  EXPECT_GT(n, 10);
}

TEST(MallocCounterControls, OnlyCountsTheArmedThread) {
  // A thread started before counting is armed allocates while this thread counts: those
  // allocations are not this thread's. The handshake spins on atomics, which allocate nothing.
  std::atomic<int> phase{0};
  std::thread other([&] {
    while (phase.load() != 1) {
    }
    std::vector<int> v(1000);
    keep(v.data());
    phase.store(2);
  });
  const std::int64_t n = count_allocations([&] {
    phase.store(1);
    while (phase.load() != 2) {
    }
  });
  other.join();
  EXPECT_EQ(n, 0);
  // ... while the same allocation on this thread is counted.
  EXPECT_EQ(count_allocations([] {
              std::vector<int> v(1000);
              keep(v.data());
            }),
            1);
}

TEST(MallocCounterControls, StackAndFixedCapacityEigenDoNotAllocate) {
  EXPECT_EQ(count_allocations([] {
              jtac::JointVector q = jtac::JointVector::Constant(7, 0.5);
              jtac::JointVector r = q * 2.0 + q;
              keep(r.data());
            }),
            0);
}

}  // namespace

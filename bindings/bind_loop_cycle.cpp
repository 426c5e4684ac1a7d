// pybind11 conversions of jtac_loop's records: one controller cycle (cycle_record.hpp's table, walked
// with for_each_cycle_field; the conversion follows the member's type) and the loop's timing
// (loop_timing.hpp, for_each_timing_field). Conversion only: no algorithm here.
//
// Arrays: joints as (7,) float64, wrenches [Fx Fy Fz Tx Ty Tz] as (6,) [N, N·m] (tip 0: wrench_*) and
// as (kMaxTips, 6) (every tip, tip 0 first: wrenches_*); a drained recording is a dict of column
// arrays, one row per controller cycle.
#include "bind_loop_cycle.hpp"

#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "jtac_loop/cycle_record.hpp"
#include "jtac_loop/loop_timing.hpp"

#include "bind_hw_arrays.hpp"

namespace py = pybind11;

namespace {

using jtac::hw::WrenchArray;
using jtac_python::array_of;

/// Every tip's wrench as a (kMaxTips, 6) array (rows from the law's tip count on are zero).
py::array_t<double> tips_of(const jtac::loop::TipWrenchArray& w) {
  py::array_t<double> a({static_cast<py::ssize_t>(w.size()), py::ssize_t{6}});
  auto v = a.mutable_unchecked<2>();
  for (py::ssize_t k = 0; k < v.shape(0); ++k) {
    for (py::ssize_t i = 0; i < 6; ++i) {
      v(k, i) = w[static_cast<std::size_t>(k)][static_cast<std::size_t>(i)];
    }
  }
  return a;
}

using jtac::loop::CycleRecord;
using jtac::loop::TipWrenchArray;

template <class T>
constexpr bool kIsTips = std::is_same_v<T, TipWrenchArray>;

// The Python shape of one value: () for a number or an enum, (N,) for an array, (kMaxTips, 6) for
// every tip's wrench.
template <class T>
std::vector<py::ssize_t> cycle_shape() {
  if constexpr (kIsTips<T>) {
    return {static_cast<py::ssize_t>(jtac::kMaxTips), py::ssize_t{6}};
  } else if constexpr (std::is_class_v<T>) {
    return {static_cast<py::ssize_t>(std::tuple_size_v<T>)};
  } else {
    return {};
  }
}

// One value as Python: a number, the bound enum, or an array of its shape.
template <class T>
py::object cycle_value(const T& v) {
  if constexpr (kIsTips<T>) {
    return tips_of(v);
  } else if constexpr (std::is_class_v<T>) {
    return array_of(v);
  } else {
    return py::cast(v);
  }
}

// One field over `rows` as a column: (n,) float64 for a real number, (n,) int64 for an integer or an
// enum (its value), (n, shape...) float64 for an array (contiguous doubles, copied row by row).
template <class T, class Get>
py::array cycle_column(const std::vector<CycleRecord>& rows, Get get) {
  const auto n = static_cast<py::ssize_t>(rows.size());
  if constexpr (std::is_class_v<T>) {
    static_assert(sizeof(T) % sizeof(double) == 0);
    std::vector<py::ssize_t> shape = cycle_shape<T>();
    shape.insert(shape.begin(), n);
    py::array_t<double> a(shape);
    double* out = a.mutable_data();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      std::memcpy(out + i * (sizeof(T) / sizeof(double)), static_cast<const void*>(&get(rows[i])), sizeof(T));
    }
    return a;
  } else {
    using Column = std::conditional_t<std::is_floating_point_v<T>, double, std::int64_t>;
    py::array_t<Column> a(n);
    Column* out = a.mutable_data();
    for (std::size_t i = 0; i < rows.size(); ++i) {
      out[i] = static_cast<Column>(get(rows[i]));
    }
    return a;
  }
}

/// A cycle as a dict: {"time": float, "q": (7,), "wrench_raw": (6,), "wrenches_raw": (kMaxTips, 6), ...}.
py::dict cycle_dict(const CycleRecord& r) {
  py::dict d;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    const auto& value = r.*member;
    if constexpr (kIsTips<std::decay_t<decltype(value)>>) {
      d[f.python_tip0] = array_of(value[0]);
    }
    d[f.python_name] = cycle_value(value);
  });
  return d;
}

/// The cycle's fields for Python, in table order: ((name, shape, doc), ...); the keys of a snapshot
/// (less "timing") and the columns of a recording.
py::tuple cycle_fields() {
  py::list fields;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    using T = std::decay_t<decltype(std::declval<const CycleRecord&>().*member)>;
    if constexpr (kIsTips<T>) {
      fields.append(py::make_tuple(f.python_tip0, py::tuple(py::cast(cycle_shape<WrenchArray>())),
                                   std::string("tip 0: ") + f.doc));
      fields.append(py::make_tuple(f.python_name, py::tuple(py::cast(cycle_shape<T>())),
                                   std::string("every tip, tip 0 first: ") + f.doc));
    } else {
      fields.append(py::make_tuple(f.python_name, py::tuple(py::cast(cycle_shape<T>())), f.doc));
    }
  });
  return py::tuple(fields);
}
}  // namespace

namespace jtac_python {

py::dict loop_timing_dict(const jtac::loop::LoopTiming& t) {
  py::dict d;
  jtac::loop::for_each_timing_field([&](const char* name, auto member) { d[name] = t.*member; });
  return d;
}

py::dict loop_snapshot_dict(const jtac::loop::LoopSnapshot& s) {
  py::dict d = cycle_dict(s);
  d["timing"] = loop_timing_dict(s.timing);
  return d;
}

py::dict cycle_columns(const std::vector<CycleRecord>& rows) {
  py::dict d;
  jtac::loop::for_each_cycle_field([&](const jtac::loop::CycleFieldInfo& f, auto member) {
    using T = std::decay_t<decltype(rows.front().*member)>;
    if constexpr (kIsTips<T>) {
      d[f.python_tip0] = cycle_column<WrenchArray>(
          rows, [&](const CycleRecord& r) -> const WrenchArray& { return (r.*member)[0]; });
    }
    d[f.python_name] = cycle_column<T>(rows, [&](const CycleRecord& r) -> const T& { return r.*member; });
  });
  return d;
}

void bind_loop_cycle(py::module_& m) {
  m.attr("MAX_TIPS") = jtac::kMaxTips;  // tips one controller handles (wrenches_* rows)
  // One controller cycle's fields ((name, shape, doc), ...): the snapshot's keys and the recording's
  // columns; jtac_py builds RECORD_FIELDS and ControllerState from them.
  m.attr("CYCLE_FIELDS") = cycle_fields();
  // The values of a cycle no controller has run yet (the defaults of ControllerState's fields).
  m.attr("CYCLE_DEFAULTS") = cycle_dict(jtac::loop::CycleRecord{});
}

}  // namespace jtac_python

// The controller cycle and the loop's timing as Python values (bind_loop_cycle.cpp), walked field by
// field over jtac_loop's record tables (cycle_record.hpp, loop_timing.hpp): no field is named here.
#pragma once

#include <pybind11/pybind11.h>

#include <vector>

#include "jtac_loop/control_loop.hpp"

namespace jtac_python {

/// The loop's timing as a dict, one key per field of JTAC_LOOP_TIMING_FIELDS.
pybind11::dict loop_timing_dict(const jtac::loop::LoopTiming& t);
/// The snapshot: the cycle's dict and its loop timing under "timing".
pybind11::dict loop_snapshot_dict(const jtac::loop::LoopSnapshot& s);
/// The drained rows as columns: {"time": (n,), "q": (n, 7), "wrenches_raw": (n, kMaxTips, 6), ...}.
pybind11::dict cycle_columns(const std::vector<jtac::loop::CycleRecord>& rows);
/// Registers MAX_TIPS, CYCLE_FIELDS and CYCLE_DEFAULTS in `m`.
void bind_loop_cycle(pybind11::module_& m);

}  // namespace jtac_python

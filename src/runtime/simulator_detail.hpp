// Simulator's private helpers shared by its implementation files (simulator.cpp: stepping
// and controls; simulator_worlds.cpp: resets, snapshots, counters, parameters;
// simulator_views.cpp: observation views).
#pragma once

#include "sap/data.hpp"

namespace sap::simulator_detail {

// A read-only slab of a batched array.
template <class T>
Slab<const T> cs(const BatchedArray<T>& a) {
  return a.slab();
}
// Per-world counters (Simulator::counters_), one record of kNumCounters ints per world.
enum CounterSlot : int { kCountFailures = 0, kCountRetries, kCountRescued, kNumCounters };

}  // namespace sap::simulator_detail

// Device side of the fp64 retry of failed fp32 steps (SolverSAP::retry_in_fp64, docs/solver.md):
// the worlds to repeat get consecutive slots of a compact fp64 solver, in world order; their
// inputs are gathered into the slots, the compact solver steps the slots, and the outcome is
// merged back. No host reads: the same launches run inside a CUDA graph. No dynamics here.
//
// Slot assignment is a two-pass scan over chunks of kRetryChunk worlds (deterministic, no
// atomics): RetryChunkCountKernel counts the chunk's worlds to repeat, RetrySlotKernel gives
// each of them its rank among all (the earlier chunks' counts plus its place in the chunk), and
// rank r < capacity takes slot r. A merged world carries kStatusFp64Retry and is not ranked
// again, so the next round (outside CUDA graphs) takes the next worlds the same way.
#pragma once

#include "sap/data.hpp"
#include "sap/status.hpp"

namespace sap {

constexpr int kRetryChunk = 256;

// A world is repeated when its fp32 step ended with a retry bit, it was not skipped and this
// step has not repeated it yet (status is zeroed at the start of every step).
SAP_HDI bool needs_fp64_retry(int status) {
  return !(status & (kStatusSkipped | kStatusFp64Retry)) && (status & kStatusFp64RetryOn);
}

// chunk_count[c] = worlds of chunk c to repeat. Launched over the chunks.
struct RetryChunkCountKernel {
  const int* status;
  int nworld;
  int* chunk_count;
  SAP_HD void operator()(int c, int) const {
    const int end = min_(nworld, (c + 1) * kRetryChunk);
    int n = 0;
    for (int w = c * kRetryChunk; w < end; ++w) n += needs_fp64_retry(status[w]) ? 1 : 0;
    chunk_count[c] = n;
  }
};

// Slots of one round. world_of[s] = the world in slot s or -1, slot_active[s] = 1 or 0 (the
// compact solver skips inactive slots). The last chunk also clears the slots past the round's
// last world. overflow (per world, may be null): +1 for a world ranked past the capacity (a CUDA
// graph runs one round).
struct RetrySlotKernel {
  const int* status;
  int nworld, nchunk;
  const int* chunk_count;
  int capacity;
  int* world_of;
  int* slot_active;
  int* overflow;
  SAP_HD void operator()(int c, int) const {
    int rank = 0;
    for (int k = 0; k < c; ++k) rank += chunk_count[k];
    const int end = min_(nworld, (c + 1) * kRetryChunk);
    for (int w = c * kRetryChunk; w < end; ++w) {
      if (!needs_fp64_retry(status[w])) continue;
      const int slot = rank++;
      if (slot < capacity) {
        world_of[slot] = w;
        slot_active[slot] = 1;
      } else if (overflow) {
        overflow[w] += 1;
      }
    }
    if (c + 1 < nchunk) return;
    for (int s = rank; s < capacity; ++s) {  // rank: the last chunk's end rank, every world to repeat
      world_of[s] = -1;
      slot_active[s] = 0;
    }
  }
};

// dst(s)[i] = src(world_of[s])[i] for the occupied slots. Launched over (slot, i).
template <class T>
struct GatherWorldsKernel {
  Slab<T> dst;
  Slab<const T> src;
  const int* world_of;
  SAP_HD void operator()(int s, int i) const {
    const int w = world_of[s];
    if (w >= 0) dst(s)[i] = src(w)[i];
  }
};

// The compact solver's outcome back into the worlds: state, status (with kStatusFp64Retry) and
// the per-world counters (retries; rescued: the fp64 step has no retry bit and no failure bit).
// Launched over the slots; a world has at most one slot.
struct RetryMergeKernel {
  const int* world_of;
  int nq, nv;
  ConstStateView trial;  // per slot
  const int* status64;   // per slot
  StateView out;         // per world
  int* status;           // per world
  int* retries;          // per world
  int* rescued;          // per world
  int na = 0;            // activations
  SAP_HD void operator()(int s, int) const {
    const int w = world_of[s];
    if (w < 0) return;
    for (int i = 0; i < nq; ++i) out.qpos(w)[i] = trial.qpos(s)[i];
    for (int i = 0; i < nv; ++i) out.qvel(w)[i] = trial.qvel(s)[i];
    for (int i = 0; i < na; ++i) out.act(w)[i] = trial.act(s)[i];
    status[w] = status64[s] | kStatusFp64Retry;
    retries[w] += 1;
    if (!(status64[s] & (kStatusFp64RetryOn | kStatusFailed))) rescued[w] += 1;
  }
};

}  // namespace sap

// Types of the rollout API of Simulator (docs/rollouts.md): array views of the simulator's
// buffers (exportable as DLPack tensors), world selections for subset resets and snapshots,
// reset sources, snapshots, retry options and per-world parameters.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "sap/backend/buffer.hpp"

struct DLManagedTensor;  // <dlpack/dlpack.h>

namespace sap {

enum class DType : int { F32 = 0, F64 = 1, I32 = 2 };
// Where a caller's pointer lives. Device pointers are accepted only by a CUDA simulator.
enum class Memory : int { Host = 0, Device = 1 };

// A strided view of a simulator buffer: element (i0, i1, i2) is at
// data + i0 * strides[0] + i1 * strides[1] + i2 * strides[2] (strides in elements, DLPack's
// convention). backend says where data lives (CPU heap or CUDA device memory). A view stays
// valid (same pointer) for the simulator's lifetime; its content changes with the simulation.
struct ArrayView {
  void* data = nullptr;
  DType dtype = DType::F64;
  Backend backend = Backend::CPU;
  int ndim = 0;
  std::array<long long, 3> shape{0, 0, 0};
  std::array<long long, 3> strides{0, 0, 0};
  long long size() const {
    long long n = 1;
    for (int i = 0; i < ndim; ++i) n *= shape[static_cast<std::size_t>(i)];
    return n;
  }
  // A DLPack tensor aliasing this view (no copy). The caller owns the returned tensor and
  // releases it with tensor->deleter(tensor) (which frees the metadata, never the data); the
  // simulator must outlive it. Throws std::runtime_error in a build without <dlpack/dlpack.h>.
  DLManagedTensor* to_dlpack() const;
  // DLPack device id: the CUDA device holding the data (0 for host memory).
  int device_id() const;
  // Host copy of the elements in index order (the simulator's views are contiguous, row-major);
  // a synchronising copy when the data is in CUDA device memory. T is the element type of
  // dtype (double for F64, float for F32, int for I32); another T throws std::invalid_argument.
  template <class T>
  std::vector<T> to_host() const;
};

// A set of worlds: an index list or a per-world mask (int32, or uint8 with bytes = true), on
// the host or, for a CUDA simulator, on the device. Out-of-range indices are ignored.
struct WorldSelection {
  enum class Kind { All, Indices, Mask };
  Kind kind = Kind::All;
  const void* data = nullptr;
  int count = 0;  // indices: number of entries; mask: must be nworld
  Memory memory = Memory::Host;
  bool bytes = false;  // mask of uint8
  static WorldSelection all() { return {}; }
  static WorldSelection indices(const int* idx, int count, Memory mem = Memory::Host) {
    return {Kind::Indices, idx, count, mem, false};
  }
  static WorldSelection indices(const std::vector<int>& idx) {
    return indices(idx.data(), static_cast<int>(idx.size()));
  }
  static WorldSelection mask(const int* m, int nworld, Memory mem = Memory::Host) {
    return {Kind::Mask, m, nworld, mem, false};
  }
  static WorldSelection mask(const std::uint8_t* m, int nworld, Memory mem = Memory::Host) {
    return {Kind::Mask, m, nworld, mem, true};
  }
  static WorldSelection mask(const std::vector<int>& m) { return mask(m.data(), static_cast<int>(m.size())); }
};

// Where reset worlds take their state from, and optional seeded noise on top of it.
struct ResetOptions {
  enum class Source { Initial, Keyframe, States };
  Source source = Source::Initial;  // Initial: the scene's initial state of each world (qpos0,
                                    // qvel0 plus the scene's per-world perturbation)
  int keyframe = 0;                 // Keyframe: index returned by Simulator::add_keyframe
  // States: nworld x nq and nworld x nv fp64 arrays (world-major, all worlds' rows present; only
  // the selected rows are read), on the host or the device.
  const double* qpos = nullptr;
  const double* qvel = nullptr;
  Memory memory = Memory::Host;
  // Gaussian noise added to the reset worlds (quaternions renormalised): a pure function of
  // (seed, world, coordinate), so the same seed gives the same states.
  double qpos_noise = 0, qvel_noise = 0;
  std::uint64_t seed = 0;
};

// Dynamic state of all worlds saved by Simulator::save: qpos, qvel, the control arrays, the
// per-world counters and the time. Lives on the simulator's backend (device to device).
class Snapshot {
 public:
  Snapshot();
  ~Snapshot();
  Snapshot(Snapshot&&) noexcept;
  Snapshot& operator=(Snapshot&&) noexcept;
  bool empty() const;
  double time() const;

 private:
  friend class Simulator;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Per-world step retry (STARK-style step halving): a world whose step status has any bit of
// `on` repeats that step as 2, 4, ... 2^depth sub-steps of dt/2, dt/4, ... from the same start
// state; the first level whose sub-steps all succeed replaces the failed step. Worlds that
// still fail keep the full step's outcome (the state at the start for rejected steps) and
// count a failure; with auto_reset they are reset to their initial state.
struct RetryOptions {
  int depth = 0;  // 0: off
  int on = 0;     // 0: kStatusFailed | kStatusLineSearchFailed | kStatusIterationLimit
  bool auto_reset = false;
};

// Per-world counters since the world's last reset (host copies).
struct WorldCounters {
  std::vector<int> failures;  // steps whose final outcome had a failure bit (after retries)
  std::vector<int> retries;   // steps retried with smaller sub-steps
  std::vector<int> rescued;   // retried steps rescued by a smaller step
};

// Per-world energy diagnostic (host, fp64): kinetic 1/2 v^T (M - armature) v, gravity and
// joint-spring potential. Joules.
struct WorldEnergy {
  double kinetic = 0, gravity = 0, spring = 0;
  double total() const { return kinetic + gravity + spring; }
};

// Per-world physical parameters for domain randomisation. Each kind is a world-major array
// (host or device) given to Simulator::set_world_params; a kind never set costs no per-world
// memory (every world reads the model's value). For the model kinds (mass, gains, gravity) only
// the worlds whose values differ from the model's get a copy of their own (a slot); the worlds
// with default values share the model.
enum class WorldParam : int {
  ContactScale = 0,  // 3 per world: factors on friction, contact stiffness, dissipation (both the
                     // SAP time scale tau_d and the Hunt-Crossley d, whichever the model uses)
  MassScale,         // 1 per world: factor on every body's mass and rotational inertia
  ActuatorGainScale, // 3 per world: factors on every actuator's kp, kd and gear
  Gravity,           // 3 per world: gravity vector (m/s^2)
};
// Values per world of a kind (3, 1, 3, 3).
inline int world_param_count(WorldParam k) { return k == WorldParam::MassScale ? 1 : 3; }

}  // namespace sap

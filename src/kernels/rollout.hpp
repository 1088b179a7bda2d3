// Per-world data movement of the rollout API (subset resets, snapshots, controls from a
// caller's pointer, observations, per-world contact parameters). No dynamics: these kernels
// copy, select and sum; body poses reuse forward_kinematics. One launch shape:
// parallel_for(exec, nworld, n, f) -> f(world, i).
#pragma once

#include <cstdint>

#include "kernels/kinematics.hpp"
#include "sap/contacts.hpp"
#include "sap/data.hpp"
#include "sap/model.hpp"
#include "sap/status.hpp"

namespace sap {

// flags[idx[i]] = 1 for every entry (out-of-range entries are ignored). Launched over count.
struct SelectIndexKernel {
  const int* idx;
  int nworld;
  int* flags;
  SAP_HD void operator()(int i, int) const {
    const int w = idx[i];
    if (w >= 0 && w < nworld) flags[w] = 1;
  }
};

// flags[w] = mask[w] != 0 (mask as int32 or uint8).
struct SelectMaskKernel {
  const void* mask;
  bool bytes;  // uint8 mask
  int* flags;
  SAP_HD void operator()(int w, int) const {
    flags[w] = bytes ? (static_cast<const std::uint8_t*>(mask)[w] != 0) : (static_cast<const int*>(mask)[w] != 0);
  }
};

// dst(w)[i] = src(w)[i] for the flagged worlds (all when flags is null); src.stride 0 broadcasts
// one block to every world.
template <class T>
struct MaskedCopyKernel {
  Slab<T> dst;
  Slab<const T> src;
  const int* flags;
  SAP_HD void operator()(int w, int i) const {
    if (!flags || flags[w]) dst(w)[i] = src(w)[i];
  }
};

// dst(w)[i] = 0 for the flagged worlds.
template <class T>
struct MaskedZeroKernel {
  Slab<T> dst;
  const int* flags;
  SAP_HD void operator()(int w, int i) const {
    if (!flags || flags[w]) dst(w)[i] = T(0);
  }
};

// Counter-based random numbers: a pure function of (seed, world, index), the same on every
// backend up to the last bits of log/cos (deterministic for a seed on one backend).
SAP_HDI std::uint64_t mix64(std::uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
SAP_HDI double uniform01(std::uint64_t seed, std::uint64_t world, std::uint64_t k) {
  const std::uint64_t h = mix64(seed ^ mix64(world * 0x632BE59BD9B4E019ull + k));
  return (static_cast<double>(h >> 11) + 0.5) * (1.0 / 9007199254740992.0);  // (0, 1)
}
SAP_HDI double gaussian(std::uint64_t seed, int world, int k) {
  const double u1 = uniform01(seed, static_cast<std::uint64_t>(world), 2ull * static_cast<std::uint64_t>(k));
  const double u2 = uniform01(seed, static_cast<std::uint64_t>(world), 2ull * static_cast<std::uint64_t>(k) + 1);
  return ::sqrt(-2.0 * ::log(u1)) * ::cos(6.283185307179586 * u2);
}

// Adds seeded Gaussian noise to the flagged worlds' qpos and qvel, then renormalises the
// quaternions of free and ball joints.
struct ResetNoiseKernel {
  ModelView m;
  StateView state;
  const int* flags;
  double qpos_std, qvel_std;
  std::uint64_t seed;
  SAP_HD void operator()(int w, int) const {
    if (flags && !flags[w]) return;
    double* q = state.qpos(w);
    double* v = state.qvel(w);
    if (qpos_std > 0)
      for (int i = 0; i < m.nq; ++i) q[i] += qpos_std * gaussian(seed, w, i);
    if (qvel_std > 0)
      for (int i = 0; i < m.nv; ++i) v[i] += qvel_std * gaussian(seed, w, m.nq + i);
    for (int j = 0; j < m.njnt; ++j) {
      const int t = m.jnt_type[j];
      if (t != kJointFree && t != kJointBall) continue;
      double* qq = q + m.jnt_qposadr[j] + (t == kJointFree ? 3 : 0);
      const double n = ::sqrt(qq[0] * qq[0] + qq[1] * qq[1] + qq[2] * qq[2] + qq[3] * qq[3]);
      if (n > 0)
        for (int k = 0; k < 4; ++k) qq[k] /= n;
    }
  }
};

enum class ElemType : int { F32 = 0, F64 = 1, I32 = 2 };

// dst(w)[i] = src[w * stride + i] converted to double (controls from a caller's pointer).
struct ConvertInKernel {
  Slab<double> dst;
  const void* src;
  ElemType type;
  long long stride;
  SAP_HD void operator()(int w, int i) const {
    const long long k = static_cast<long long>(w) * stride + i;
    dst(w)[i] = type == ElemType::F32 ? static_cast<double>(static_cast<const float*>(src)[k])
                                      : static_cast<const double*>(src)[k];
  }
};

// Body poses of the current state: position (3) and quaternion (w, x, y, z) per body, fp64.
struct BodyPoseKernel {
  ModelView m;
  Slab<const double> qpos;
  Slab<double> pos, quat, scratch;  // scratch: nbody * 12 + njnt * 6
  SAP_HD void operator()(int w, int) const {
    double* s = scratch(w);
    forward_kinematics<double>(m, qpos(w), pos(w), quat(w), s, s + 9 * m.nbody, s + 12 * m.nbody,
                               s + 12 * m.nbody + 3 * m.njnt);
  }
};

// Per-body contact force (world frame, N: impulse / dt, summed over the last step's contacts;
// the normal points from body[0] to body[1], body[1] receives +R_WC gamma / dt, body[0] the
// opposite) and contact flag (1 when any contact of the body carried a normal impulse > 0).
struct BodyContactKernel {
  int nbody;
  ConstContactsView contacts;
  Slab<const int> con_count;
  Slab<const double> gamma, frame;
  double inv_dt;
  Slab<double> force;
  Slab<int> flag;
  SAP_HD void operator()(int w, int) const {
    double* f = force(w);
    int* fl = flag(w);
    for (int b = 0; b < nbody; ++b) {
      f[3 * b] = f[3 * b + 1] = f[3 * b + 2] = 0;
      fl[b] = 0;
    }
    const int n = contacts.capacity > 0 ? con_count(w)[0] : 0;
    for (int c = 0; c < n; ++c) {
      const double* g = gamma(w) + 3 * c;
      const double* R = frame(w) + 9 * c;
      const int b0 = contacts.body(w)[2 * c], b1 = contacts.body(w)[2 * c + 1];
      for (int i = 0; i < 3; ++i) {
        const double fi = (R[3 * i] * g[0] + R[3 * i + 1] * g[1] + R[3 * i + 2] * g[2]) * inv_dt;
        f[3 * b1 + i] += fi;
        f[3 * b0 + i] -= fi;
      }
      if (g[2] > 0) fl[b0] = fl[b1] = 1;
    }
  }
};

// Per-world contact parameters: scales the friction, stiffness and dissipation of the
// contacts of world w by scale(w)[0..2] (applied after collision, before the solve). The
// torsional and rolling coefficients of contacts that carry them are scaled by
// FrictionExtScaleKernel, a launch of its own (on CUDA their loop in this kernel cost every
// model registers: 30 -> 48).
struct ContactScaleKernel {
  ContactsView contacts;
  Slab<const double> scale;
  SAP_HD void operator()(int w, int) const {
    const double* s = scale(w);
    const int n = contacts.count[w] < contacts.capacity ? contacts.count[w] : contacts.capacity;
    for (int c = 0; c < n; ++c) {
      contacts.friction(w)[c] *= s[0];
      for (int k = 0; k < 3; ++k) contacts.stiffness(w)[3 * c + k] *= s[1];
      contacts.dissipation(w)[c] *= s[2];     // tau_d (s), the SAP models
      contacts.hc_dissipation(w)[c] *= s[2];  // d (s/m), the Hunt-Crossley models (similar, lagged)
    }
  }
};

// The friction scale scale(w)[0] on the other friction coefficients (t2, spin, roll1, roll2) of
// contacts with torsional or rolling friction (ContactsView::angular(): launched only then).
struct FrictionExtScaleKernel {
  ContactsView contacts;
  Slab<const double> scale;
  SAP_HD void operator()(int w, int) const {
    const double s = scale(w)[0];
    const int n = contacts.count[w] < contacts.capacity ? contacts.count[w] : contacts.capacity;
    for (int c = 0; c < n; ++c)
      for (int k = 0; k < 4; ++k) contacts.friction_ext(w)[4 * c + k] *= s;
  }
};

// Failure accounting of one step: acc(w)[0] += 1 when the world's status has a bit of mask.
struct AccumulateStatusKernel {
  const int* status;
  int mask;
  Slab<int> acc;
  SAP_HD void operator()(int w, int) const {
    if (status[w] & mask) acc(w)[0] += 1;
  }
};

// Worlds not flagged active are marked skipped (their step keeps the state; see status.hpp).
struct MarkSkippedKernel {
  const int* active;
  int* status;
  SAP_HD void operator()(int w, int) const { status[w] = active[w] ? 0 : kStatusSkipped; }
};

// Retry bookkeeping on the host-visible per-world arrays is done by the simulator; this marks
// in `bad` the worlds whose status has any of `mask`'s bits (bad[w] |= ...).
struct OrStatusKernel {
  const int* status;
  int mask;
  int* bad;
  SAP_HD void operator()(int w, int) const {
    if (status[w] & mask) bad[w] = 1;
  }
};

}  // namespace sap

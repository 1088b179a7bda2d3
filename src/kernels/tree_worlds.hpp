// The tree passes (kernels/dynamics.hpp) of several worlds at once, one world per lane of a SIMD
// register: the CPU's free motion runs body velocities, the bias forces, the composite inertias
// and the mass matrix's rows of kWorldLanes worlds of one model side by side. Why: the passes
// walk the same tree with the same control flow in every world (the model's indices decide every
// branch), and each body's work is short chains of 3- and 6-vector arithmetic, so one world's
// pass leaves most of the arithmetic units idle; four worlds in the four lanes of an SSE register
// (fp32) share the loop control, the index loads and the latency chains.
//
// LaneScalar<S> is kWorldLanes values of S with S's arithmetic (+, -, *, unary -) lane by lane,
// so the passes' own code instantiated with S = LaneScalar<S> computes each lane exactly as the
// one-lane code computes that world (IEEE single operations, no contraction on the x86-64
// baseline: the same bits). S(x) of a model parameter x is x rounded to S in every lane; the
// worlds' data (qvel, cdof, cinert) are gathered into lanes first and the results scattered back.
// Host code only, with the compiler's vector types: never compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)

#include <cstddef>
#include <type_traits>

#include "kernels/cholesky_worlds.hpp"
#include "kernels/dynamics.hpp"

namespace sap {

template <class S>
struct LaneScalar {
  static_assert(kWorldLanes == 4, "four worlds per vector");
  typedef typename WorldLanes<S>::V V;
  V v;

  LaneScalar() = default;
  // A model parameter (or a literal): S(x) in every lane, as the one-lane code's S(x).
  template <class A, class = typename std::enable_if<std::is_arithmetic<A>::value>::type>
  explicit LaneScalar(A x) {
    const S s = S(x);
    v = V{s, s, s, s};
  }
  static LaneScalar of(V x) {
    LaneScalar r;
    r.v = x;
    return r;
  }
  LaneScalar& operator+=(const LaneScalar& b) {
    v += b.v;
    return *this;
  }
  LaneScalar& operator-=(const LaneScalar& b) {
    v -= b.v;
    return *this;
  }
  LaneScalar& operator*=(const LaneScalar& b) {
    v *= b.v;
    return *this;
  }
  friend LaneScalar operator+(const LaneScalar& a, const LaneScalar& b) { return of(a.v + b.v); }
  friend LaneScalar operator-(const LaneScalar& a, const LaneScalar& b) { return of(a.v - b.v); }
  friend LaneScalar operator*(const LaneScalar& a, const LaneScalar& b) { return of(a.v * b.v); }
  friend LaneScalar operator-(const LaneScalar& a) { return of(-a.v); }
};

// out[i] lane k = S(src[k][i]) for i < n, k < count (1 .. kWorldLanes); lanes past count repeat
// world 0 (their results are dropped).
template <class S, class T>
inline void gather_lanes(LaneScalar<S>* out, const T* const* src, int count, int n) {
  const T* s0 = src[0];
  const T* s1 = src[count > 1 ? 1 : 0];
  const T* s2 = src[count > 2 ? 2 : 0];
  const T* s3 = src[count > 3 ? 3 : 0];
  for (int i = 0; i < n; ++i) out[i].v = typename LaneScalar<S>::V{S(s0[i]), S(s1[i]), S(s2[i]), S(s3[i])};
}

// dst[k][i] = T(lane k of in[i]) for i < n, k < count.
template <class S, class T>
inline void scatter_lanes(const LaneScalar<S>* in, T* const* dst, int count, int n) {
  for (int k = 0; k < count; ++k) {
    T* d = dst[k];
    for (int i = 0; i < n; ++i) d[i] = T(in[i].v[k]);
  }
}

// The lanes scratch of the tree passes: per-world inputs (qvel, cdof, cinert), the passes'
// per-body and per-dof scratch, and their outputs (bias, one row of M).
template <class S>
struct TreeWorlds {
  using L = LaneScalar<S>;
  L *qvel, *cdof, *cinert, *cvel, *cdof_dot, *cacc, *cfrc, *crb, *bias, *row;

  static std::size_t count(const ModelView& m) {
    return static_cast<std::size_t>(2 * m.nv + 12 * m.nv + 20 * m.nbody + 18 * m.nbody + m.nv_pad);
  }
  static std::size_t bytes(const ModelView& m) { return count(m) * sizeof(L); }
  static TreeWorlds at(void* scratch, const ModelView& m) {
    L* p = static_cast<L*>(scratch);
    TreeWorlds t;
    auto take = [&p](L*& a, int n) {
      a = p;
      p += n;
    };
    take(t.qvel, m.nv);
    take(t.bias, m.nv);
    take(t.cdof, 6 * m.nv);
    take(t.cdof_dot, 6 * m.nv);
    take(t.cinert, 10 * m.nbody);
    take(t.crb, 10 * m.nbody);
    take(t.cvel, 6 * m.nbody);
    take(t.cacc, 6 * m.nbody);
    take(t.cfrc, 6 * m.nbody);
    take(t.row, m.nv_pad);
    return t;
  }
};

}  // namespace sap

#endif  // !__CUDACC__

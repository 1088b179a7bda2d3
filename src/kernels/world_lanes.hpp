// Several worlds at once, one world per lane of a SIMD register: the CPU's one-lane code for
// kWorldLanes worlds of one model whose work has the same control flow (the factorisations of
// kernels/cholesky_worlds.hpp, the tree passes of kernels/tree_worlds.hpp, the Newton loop's
// products with A in kernels/newton.hpp). Each lane computes exactly what the one-lane code
// computes for its world (IEEE operations lane by lane, no contraction on the x86-64 baseline:
// the same bits). Host code only, with the compiler's vector types: never compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)

#include <type_traits>

namespace sap {

constexpr int kWorldLanes = 4;

// S x kWorldLanes in one vector (fp32: one SSE register; fp64: two on the x86-64 baseline).
template <class S>
struct WorldLanes;
template <>
struct WorldLanes<float> {
  typedef float V __attribute__((vector_size(4 * kWorldLanes)));
};
template <>
struct WorldLanes<double> {
  typedef double V __attribute__((vector_size(8 * kWorldLanes)));
};

// kWorldLanes values of S with S's arithmetic (+, -, *, unary -) lane by lane: code templated
// on the scalar, instantiated with S = LaneScalar<S>, runs the worlds side by side. Held as SSE
// registers (fp32: one of four lanes; fp64: two of two), each operation one instruction per
// register: a single vector of four doubles is wider than the x86-64 baseline's registers, and
// the compiler then keeps its values on the stack between operations.
template <class S>
struct LaneScalar {
  static_assert(kWorldLanes == 4, "four worlds per value");
  static constexpr int kPer = 16 / static_cast<int>(sizeof(S));  // lanes per register
  static constexpr int kParts = kWorldLanes / kPer;
  typedef S P __attribute__((vector_size(16)));
  P p[kParts];

  LaneScalar() = default;
  // A model parameter (or a literal): S(x) in every lane, as the one-lane code's S(x).
  template <class A, class = typename std::enable_if<std::is_arithmetic<A>::value>::type>
  explicit LaneScalar(A x) {
    const S s = S(x);
    for (int i = 0; i < kParts; ++i)
      for (int l = 0; l < kPer; ++l) p[i][l] = s;
  }
  static LaneScalar lanes(S a, S b, S c, S d) {
    LaneScalar r;
    r.set(0, a);
    r.set(1, b);
    r.set(2, c);
    r.set(3, d);
    return r;
  }
  S lane(int l) const { return p[l / kPer][l % kPer]; }
  void set(int l, S x) { p[l / kPer][l % kPer] = x; }

  LaneScalar& operator+=(const LaneScalar& b) {
    for (int i = 0; i < kParts; ++i) p[i] += b.p[i];
    return *this;
  }
  LaneScalar& operator-=(const LaneScalar& b) {
    for (int i = 0; i < kParts; ++i) p[i] -= b.p[i];
    return *this;
  }
  LaneScalar& operator*=(const LaneScalar& b) {
    for (int i = 0; i < kParts; ++i) p[i] *= b.p[i];
    return *this;
  }
  friend LaneScalar operator+(LaneScalar a, const LaneScalar& b) { return a += b; }
  friend LaneScalar operator-(LaneScalar a, const LaneScalar& b) { return a -= b; }
  friend LaneScalar operator*(LaneScalar a, const LaneScalar& b) { return a *= b; }
  friend LaneScalar operator-(LaneScalar a) {
    for (int i = 0; i < kParts; ++i) a.p[i] = -a.p[i];
    return a;
  }
};

// out[i] lane k = S(src[k][i]) for i < n, k < count (1 .. kWorldLanes); lanes past count repeat
// world 0 (their results are dropped).
template <class S, class T>
inline void gather_lanes(LaneScalar<S>* out, const T* const* src, int count, int n) {
  const T* s0 = src[0];
  const T* s1 = src[count > 1 ? 1 : 0];
  const T* s2 = src[count > 2 ? 2 : 0];
  const T* s3 = src[count > 3 ? 3 : 0];
  for (int i = 0; i < n; ++i) out[i] = LaneScalar<S>::lanes(S(s0[i]), S(s1[i]), S(s2[i]), S(s3[i]));
}

// dst[k][i] = T(lane k of in[i]) for i < n, k < count (none where dst[k] is null).
template <class S, class T>
inline void scatter_lanes(const LaneScalar<S>* in, T* const* dst, int count, int n) {
  for (int k = 0; k < count; ++k) {
    T* d = dst[k];
    if (d)
      for (int i = 0; i < n; ++i) d[i] = T(in[i].lane(k));
  }
}

}  // namespace sap

#endif  // !__CUDACC__

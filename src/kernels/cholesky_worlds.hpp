// The envelope Cholesky factorisation and solve of several worlds at once, one world per lane
// of a SIMD register: the CPU's one-lane path (kernels/cholesky.hpp) for kWorldLanes systems that
// share their envelope. Why: a one-lane factor of the humanoid's H (n = 27, ~220 entries in the
// envelope, dot products of ~5 terms) is bound by each entry's fixed work (loop control, the
// chains' sum, the subtraction and the scaling), not by its multiply-adds; four worlds in the
// lanes of one register share that work. A stand-alone harness (fp32, the humanoid's tree with
// contact chains): 1.23 us per world alone, 0.44 us per world four at a time.
//
// Each lane runs exactly the one-lane arithmetic (cholesky_factor's column form with dot_range's
// four chains; cholesky_solve's row forms with the pivots' reciprocals), so each world's factor
// and solution are bitwise those of cholesky_factor + cholesky_solve on its own, provided the
// worlds' envelopes (`first`) are equal: dot_range's chains start at each row's envelope, so
// worlds whose envelopes differ are not put together (load_world_lanes refuses). Host code only,
// with the compiler's vector types: never compiled by nvcc.
#pragma once

#if !defined(__CUDACC__)

#include <cstddef>
#include <cstdint>

#include "kernels/cholesky.hpp"
#include "kernels/world_lanes.hpp"

namespace sap {

// Bytes of the lanes scratch for matrices of leading dimension ld in S: ld * ld + ld vectors.
template <class S>
inline std::size_t world_lanes_bytes(int ld) {
  return static_cast<std::size_t>(ld) * (ld + 1) * sizeof(typename WorldLanes<S>::V);
}

// dot_range on lanes: the same four chains and the same final sum, lane by lane. The sum goes
// to `out` (fp64 lanes fill two SSE registers: a vector return value would change the ABI).
template <class V>
__attribute__((always_inline)) inline void dot_range_lanes(const V* x, const V* y, int p0, int p1, V& out) {
  V s0 = {}, s1 = {}, s2 = {}, s3 = {};
  int p = p0;
  for (; p + 4 <= p1; p += 4) {
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += x[p + 3] * y[p + 3];
  }
  for (; p < p1; ++p) s0 += x[p] * y[p];
  out = (s0 + s1) + (s2 + s3);
}

// cholesky_factor (one lane) on kWorldLanes interleaved systems (a[i * ld + j] holds entry (i, j)
// of every lane) with the common envelope `first`. Returns false when any lane meets a pivot that
// is not positive and finite (the factor is then incomplete; the caller factors each world alone,
// which fails where it fails, with its own status).
template <class S>
__attribute__((always_inline)) inline bool cholesky_factor_lanes_in(typename WorldLanes<S>::V* a, int n, int ld,
                                                                    const int* first) {
  using V = typename WorldLanes<S>::V;
  for (int j = 0; j < n; ++j) {
    V* lj = a + j * ld;
    V d;
    dot_range_lanes(lj, lj, first[j], j, d);
    d = lj[j] - d;
    V ljj;
    for (int l = 0; l < kWorldLanes; ++l) {
      if (!(d[l] > S(0) && isfinite_(d[l]))) return false;
      ljj[l] = sqrt_(d[l]);
    }
    lj[j] = ljj;
    const V inv = S(1) / ljj;
    for (int i = j + 1; i < n; ++i) {
      if (first[i] > j) continue;  // outside the envelope: L[i][j] = 0
      V* li = a + i * ld;
      const int p0 = first[i] > first[j] ? first[i] : first[j];
      V dot;
      dot_range_lanes(li, lj, p0, j, dot);
      li[j] = (li[j] - dot) * inv;
    }
  }
  return true;
}

// cholesky_solve's one-lane form on the lanes: L L^T x = b in place (x holds b on entry).
template <class S>
__attribute__((always_inline)) inline void cholesky_solve_lanes_in(const typename WorldLanes<S>::V* l,
                                                                   typename WorldLanes<S>::V* x, int n, int ld,
                                                                   const int* first) {
  using V = typename WorldLanes<S>::V;
  for (int i = 0; i < n; ++i) {  // forward: L y = b
    V dot;
    dot_range_lanes(l + i * ld, x, first[i], i, dot);
    x[i] = (x[i] - dot) * (S(1) / l[i * ld + i]);
  }
  for (int i = n - 1; i >= 0; --i) {  // backward: L^T x = y
    const V xi = x[i] * (S(1) / l[i * ld + i]);
    x[i] = xi;
    const V* li = l + i * ld;
    for (int p = first[i]; p < i; ++p) x[p] -= li[p] * xi;
  }
}

// fp64 lanes are four doubles: two SSE registers per operation on the x86-64 baseline, one AVX
// register where the processor has AVX2 (checked once, at run time). The same operations lane by
// lane (AVX2 without FMA: nothing contracts), so the same bits either way. The AVX2 form loads
// whole 32-byte vectors, aligned: the executor's scratch is 64-byte aligned, but the baseline
// ABI aligns these vectors to 16 only (a std::vector of them, say), so other memory takes the
// baseline form.
inline bool lanes_have_avx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}
inline bool lanes_avx2_for(const void* a, const void* b) {
  return lanes_have_avx2() && reinterpret_cast<std::uintptr_t>(a) % 32 == 0 && reinterpret_cast<std::uintptr_t>(b) % 32 == 0;
}
__attribute__((target("avx2"))) inline bool cholesky_factor_lanes_avx2(WorldLanes<double>::V* a, int n, int ld,
                                                                       const int* first) {
  return cholesky_factor_lanes_in<double>(a, n, ld, first);
}
__attribute__((target("avx2"))) inline void cholesky_solve_lanes_avx2(const WorldLanes<double>::V* l,
                                                                      WorldLanes<double>::V* x, int n, int ld,
                                                                      const int* first) {
  cholesky_solve_lanes_in<double>(l, x, n, ld, first);
}
template <class S>
bool cholesky_factor_lanes(typename WorldLanes<S>::V* a, int n, int ld, const int* first) {
  if constexpr (sizeof(S) == sizeof(double)) {
    if (lanes_avx2_for(a, a)) return cholesky_factor_lanes_avx2(a, n, ld, first);
  }
  return cholesky_factor_lanes_in<S>(a, n, ld, first);
}
template <class S>
void cholesky_solve_lanes(const typename WorldLanes<S>::V* l, typename WorldLanes<S>::V* x, int n, int ld,
                          const int* first) {
  if constexpr (sizeof(S) == sizeof(double)) {
    if (lanes_avx2_for(l, x)) return cholesky_solve_lanes_avx2(l, x, n, ld, first);
  }
  cholesky_solve_lanes_in<S>(l, x, n, ld, first);
}

// The common envelope of `count` (1 .. kWorldLanes) matrices (n x n lower triangles; entry (i, j)
// of matrix k is at(k, i, j), an S) into first (row i's: its first non-zero column j < i, else i,
// as cholesky_factor's scan finds it), and their envelope entries into lanes (ld * ld vectors;
// lanes past `count` repeat matrix 0, their results dropped). False, with lanes unwritten, when
// the envelopes differ.
template <class S, class At>
bool load_world_lanes_of(int count, int n, int ld, typename WorldLanes<S>::V* lanes, int* first, const At& at) {
  static_assert(kWorldLanes == 4, "four matrices per vector");
  const int k1 = count > 1 ? 1 : 0, k2 = count > 2 ? 2 : 0, k3 = count > 3 ? 3 : 0;
  for (int i = 0; i < n; ++i) {  // one scan for the four rows: they agree where the first non-zero
    int f = 0;                   // of any is a non-zero of all (every entry before it is zero)
    while (f < i && at(0, i, f) == S(0) && at(k1, i, f) == S(0) && at(k2, i, f) == S(0) && at(k3, i, f) == S(0)) ++f;
    if (f < i && !(at(0, i, f) != S(0) && at(k1, i, f) != S(0) && at(k2, i, f) != S(0) && at(k3, i, f) != S(0)))
      return false;
    first[i] = f;
  }
  for (int i = 0; i < n; ++i)
    for (int j = first[i]; j <= i; ++j)
      lanes[i * ld + j] = typename WorldLanes<S>::V{at(0, i, j), at(k1, i, j), at(k2, i, j), at(k3, i, j)};
  return true;
}

// load_world_lanes_of the matrices a[k] (leading dimension ld).
template <class S>
bool load_world_lanes(S* const* a, int count, int n, int ld, typename WorldLanes<S>::V* lanes, int* first) {
  return load_world_lanes_of<S>(count, n, ld, lanes, first, [&](int k, int i, int j) { return a[k][i * ld + j]; });
}

// load_world_lanes of the matrices that cholesky_load_reversed makes of src[k] (n x n lower
// triangles in storage T, leading dimension ld), read in place: entry (i, j) of a reversed
// matrix is S(src[(n - 1 - j) * ld + n - 1 - i]). The same envelope and lanes as loading the
// reversed copies, without forming them.
template <class S, class T>
bool load_world_lanes_reversed_large(const T* const* src, int count, int n, int ld, typename WorldLanes<S>::V* lanes,
                                     int* first);

template <class S, class T>
bool load_world_lanes_reversed(const T* const* src, int count, int n, int ld, typename WorldLanes<S>::V* lanes,
                               int* first) {
  if (n >= kCholeskyRowOrderMin) return load_world_lanes_reversed_large<S>(src, count, n, ld, lanes, first);
  return load_world_lanes_of<S>(count, n, ld, lanes, first,
                                [&](int k, int i, int j) { return S(src[k][(n - 1 - j) * ld + (n - 1 - i)]); });
}

// load_world_lanes_reversed for large n (a model of many free bodies), the same envelope and
// lanes read from the sources' rows in order: reversed row i is source column n - 1 - i, so
// read row by row it was a cache line per entry (most of a 64-sphere pile's step). Row i's
// first non-zero j < i is n - 1 - r for the last source row r > c = n - 1 - i with a non-zero
// in column c in any matrix (a pass over the lower triangles in row order, skipping words of
// zeros), and the envelope entries are copied in square tiles of the sources.
template <class S, class T>
__attribute__((noinline)) bool load_world_lanes_reversed_large(const T* const* src, int count, int n, int ld,
                                                               typename WorldLanes<S>::V* lanes, int* first) {
  static_assert(kWorldLanes == 4, "four matrices per vector");
  const T* a[4] = {src[0], src[count > 1 ? 1 : 0], src[count > 2 ? 2 : 0], src[count > 3 ? 3 : 0]};
  for (int i = 0; i < n; ++i) first[i] = i;
  constexpr int per = 8 / static_cast<int>(sizeof(T));
  for (int r = 1; r < n; ++r) {  // a later source row r: a smaller first column n - 1 - r
    const T* rows[4] = {a[0] + r * ld, a[1] + r * ld, a[2] + r * ld, a[3] + r * ld};
    for (int c = 0; c < r;) {
      if (c + per <= r && (magnitude_bits(rows[0] + c) | magnitude_bits(rows[1] + c) | magnitude_bits(rows[2] + c) |
                           magnitude_bits(rows[3] + c)) == 0) {
        c += per;  // a word of +-0 entries in each matrix
        continue;
      }
      if (S(rows[0][c]) != S(0) || S(rows[1][c]) != S(0) || S(rows[2][c]) != S(0) || S(rows[3][c]) != S(0))
        first[n - 1 - c] = n - 1 - r;
      ++c;
    }
  }
  auto at = [&](int k, int i, int j) { return S(a[k][(n - 1 - j) * ld + (n - 1 - i)]); };
  for (int i = 0; i < n; ++i) {  // every matrix non-zero where the first of any is
    const int f = first[i];
    if (f < i && !(at(0, i, f) != S(0) && at(1, i, f) != S(0) && at(2, i, f) != S(0) && at(3, i, f) != S(0)))
      return false;
  }
  for_each_lower_in_tiles<false>(n, [&](int r, int c) {
    const int i = n - 1 - c, j = n - 1 - r;
    if (j >= first[i])
      lanes[i * ld + j] = typename WorldLanes<S>::V{S(a[0][r * ld + c]), S(a[1][r * ld + c]), S(a[2][r * ld + c]),
                                                    S(a[3][r * ld + c])};
  });
  return true;
}

// cholesky_factor of `count` (1 .. kWorldLanes) matrices together: each a[k] then holds bitwise
// its own factor, and first their common envelope (as cholesky_factor leaves them), and true is
// returned. False, with no matrix changed, when the envelopes differ or a pivot fails: the
// caller then factors each alone. lanes: scratch of ld * ld vectors.
template <class S>
bool cholesky_factor_worlds(S* const* a, int count, int n, int ld, typename WorldLanes<S>::V* lanes, int* first) {
  if (!load_world_lanes<S>(a, count, n, ld, lanes, first) || !cholesky_factor_lanes<S>(lanes, n, ld, first))
    return false;
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i)
      for (int j = first[i]; j <= i; ++j) a[k][i * ld + j] = lanes[i * ld + j][k];
  return true;
}

// cholesky_factor and cholesky_solve of `count` (1 .. kWorldLanes) systems together. sys[k] is
// system k as cholesky_factor takes it, its right-hand side at sys[k] + ld * ld; lanes: scratch
// of ld * ld + ld vectors. Each system's solution replaces its right-hand side, bitwise the
// one-lane solution, and true is returned (the factors stay in lanes). False, having changed no
// system, when the envelopes differ or a pivot fails: the caller then solves each alone. `first`
// (n ints) receives the common envelope.
template <class S>
bool cholesky_factor_solve_worlds(S* const* sys, int count, int n, int ld, typename WorldLanes<S>::V* lanes,
                                  int* first) {
  if (!load_world_lanes<S>(sys, count, n, ld, lanes, first)) return false;
  typename WorldLanes<S>::V* x = lanes + ld * ld;
  for (int i = 0; i < n; ++i)
    for (int l = 0; l < kWorldLanes; ++l) x[i][l] = sys[l < count ? l : 0][ld * ld + i];
  if (!cholesky_factor_lanes<S>(lanes, n, ld, first)) return false;
  cholesky_solve_lanes<S>(lanes, x, n, ld, first);
  for (int k = 0; k < count; ++k)
    for (int i = 0; i < n; ++i) sys[k][ld * ld + i] = x[i][k];
  return true;
}

}  // namespace sap

#endif  // !__CUDACC__

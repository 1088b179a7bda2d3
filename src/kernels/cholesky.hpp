// Dense per-world Cholesky factorisation A = L L^T and solves, team-cooperative: on the CPU
// the team has one member and these are plain loops; on CUDA a warp (or a block) shares the
// work with lane = row, one sync per column in the factor and none inside the solves. Matrices are row-major with leading dimension ld; only
// the lower triangle is read and L overwrites it.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

// One-lane forms for large n (a model of many free bodies): cholesky_factor_rows, and the
// reversed load and M's symmetrisation (dynamics.hpp) in cache tiles.
constexpr int kCholeskyRowOrderMin = 64;

// Copies the n x n lower triangle of src (any scalar) into dst (scalar S), both with leading
// dimension ld. Used to move a fp64 matrix into the precision of the linear solve.
template <class S, class T, class Team>
SAP_HD void cholesky_load(Team& team, const T* src, S* dst, int n, int ld) {
  for (int i = team.rank(); i < n; i += team.size())
    for (int j = 0; j <= i; ++j) dst[i * ld + j] = S(src[i * ld + j]);
  team.sync();
}

// The same copy in reversed order, P A P^T with P: i -> n - 1 - i (dst[i][j] = src[n-1-i][n-1-j]).
// Why: dofs come in tree order (a body's dofs after its parent's, a subtree contiguous), so
// row i of M = A - h D is non-zero at its ancestors only, and the root's dofs couple with every
// dof: in tree order every row's envelope starts at column 0 and the factor is dense. Reversed,
// row i's entries left of the diagonal are its descendants, one contiguous block (the subtree),
// and the envelope factorisation below touches no zero and creates no fill (MuJoCo factors M
// from the leaves for the same reason: L^T D L). Contacts add the coupling of their two bodies'
// chains to H, which widens a few envelopes only. Solve with the right-hand side reversed too.
#if !defined(__CUDA_ARCH__)
// Host helpers of the one-lane forms for large n.
// The bits of the eight bytes at p without their signs: zero iff every entry there is +-0.
template <class T>
inline unsigned long long magnitude_bits(const T* p) {
  unsigned long long x;
  __builtin_memcpy(&x, p, 8);
  return x & (sizeof(T) == 8 ? 0x7fffffffffffffffULL : 0x7fffffff7fffffffULL);
}

// f(r, c) for every entry c <= r (c < r when kStrict) of an n x n lower triangle, in square
// tiles: a copy that transposes then reads and writes a few cache lines per tile, where a row
// of one side is a column of the other (a cache line per entry, row by row).
template <bool kStrict, class F>
inline void for_each_lower_in_tiles(int n, const F& f) {
  constexpr int kTile = 16;
  for (int r0 = 0; r0 < n; r0 += kTile)
    for (int c0 = 0; c0 <= r0; c0 += kTile) {
      const int r1 = r0 + kTile < n ? r0 + kTile : n;
      for (int r = r0; r < r1; ++r) {
        const int c1 = c0 + kTile < r + (kStrict ? 0 : 1) ? c0 + kTile : r + (kStrict ? 0 : 1);
        for (int c = c0; c < c1; ++c) f(r, c);
      }
    }
}

// cholesky_load_reversed on one lane for large n, in tiles. Out of line, as the other large-n
// forms: the small models' code stays as it was.
template <class S, class T>
__attribute__((noinline)) void cholesky_load_reversed_tiled(const T* src, S* dst, int n, int ld) {
  for_each_lower_in_tiles<false>(n, [&](int i, int j) { dst[i * ld + j] = S(src[(n - 1 - j) * ld + n - 1 - i]); });
}
#endif

template <class S, class T, class Team>
SAP_HD void cholesky_load_reversed(Team& team, const T* src, S* dst, int n, int ld) {
#if !defined(__CUDA_ARCH__)
  if constexpr (one_lane_team<Team>()) {
    if (n >= kCholeskyRowOrderMin) return cholesky_load_reversed_tiled(src, dst, n, ld);
  }
#endif
  for (int i = team.rank(); i < n; i += team.size()) {
    const int si = n - 1 - i;  // dst row i is src column si, rows si .. n-1 (lower triangle)
    for (int j = 0; j <= i; ++j) dst[i * ld + j] = S(src[(n - 1 - j) * ld + si]);
  }
  team.sync();
}

// sum_{p0 <= p < p1} term(p) in four interleaved partial sums (term p0 + 4k + c into sum c,
// the remainder into sum 0, then (s0 + s1) + (s2 + s3)): dot_range's order for any term. Four
// independent chains of additions where one sum would wait on each term's predecessor.
template <class S, class Term>
SAP_HDI S interleaved_sum(int p0, int p1, Term&& term) {
  S s0 = S(0), s1 = S(0), s2 = S(0), s3 = S(0);
  int p = p0;
  for (; p + 4 <= p1; p += 4) {
    s0 += term(p);
    s1 += term(p + 1);
    s2 += term(p + 2);
    s3 += term(p + 3);
  }
  for (; p < p1; ++p) s0 += term(p);
  return (s0 + s1) + (s2 + s3);
}

// N sums in one pass: terms(p, t) writes term p of each sum into t[0 .. N-1]; out[n] is
// interleaved_sum of the n-th terms (the same order and bits as N separate passes).
template <class S, int N, class Terms>
SAP_HDI void interleaved_sums(int p0, int p1, Terms&& terms, S* out) {
  S s[4][N], t[N];
  for (int q = 0; q < 4; ++q)
    for (int n = 0; n < N; ++n) s[q][n] = S(0);
  int p = p0;
  for (; p + 4 <= p1; p += 4)
    for (int q = 0; q < 4; ++q) {
      terms(p + q, t);
      for (int n = 0; n < N; ++n) s[q][n] += t[n];
    }
  for (; p < p1; ++p) {
    terms(p, t);
    for (int n = 0; n < N; ++n) s[0][n] += t[n];
  }
  for (int n = 0; n < N; ++n) out[n] = (s[0][n] + s[1][n]) + (s[2][n] + s[3][n]);
}

// sum_{p0 <= p < p1} x[p] y[p] with four interleaved partial sums: a fixed summation order
// (identical on every backend and thread count) whose independent chains vectorise.
// The same order as interleaved_sum, kept written out: the kernel report measured this form.
template <class S>
SAP_HDI S dot_range(const S* x, const S* y, int p0, int p1) {
  S s0 = S(0), s1 = S(0), s2 = S(0), s3 = S(0);
  int p = p0;
  for (; p + 4 <= p1; p += 4) {
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += x[p + 3] * y[p + 3];
  }
  for (; p < p1; ++p) s0 += x[p] * y[p];
  return (s0 + s1) + (s2 + s3);
}

// dot_range(x, y, p0, p1) with its last term x[p1-1] y[p1-1] taken as xl yl (p0 < p1): the
// same four chains in the same order, so the same bits as dot_range once x[p1-1] = xl and
// y[p1-1] = yl are stored. Lets a lane use an entry it computed before it is in memory.
template <class S>
SAP_HDI S dot_range_last(const S* x, const S* y, int p0, int p1, S xl, S yl) {
  S s0 = S(0), s1 = S(0), s2 = S(0), s3 = S(0);
  const int q = p1 - 1;
  int p = p0;
  for (; p + 4 <= q; p += 4) {  // the groups of four before the one holding q
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += x[p + 3] * y[p + 3];
  }
  if (p + 4 == p1) {  // q closes a group of four: its last chain
    s0 += x[p] * y[p];
    s1 += x[p + 1] * y[p + 1];
    s2 += x[p + 2] * y[p + 2];
    s3 += xl * yl;
  } else {  // q ends the remainder, summed into s0
    for (; p < q; ++p) s0 += x[p] * y[p];
    s0 += xl * yl;
  }
  return (s0 + s1) + (s2 + s3);
}

#if !defined(__CUDA_ARCH__)
// The first non-zero of row[0 .. i) (i when none): row[j] != 0, IEEE (-0 is zero, NaN is not),
// tested for eight bytes at a time on the bits without the sign.
template <class S>
inline int first_nonzero_host(const S* row, int i) {
  constexpr int per = 8 / static_cast<int>(sizeof(S));
  int j = 0;
  for (; j + 4 * per <= i; j += 4 * per)
    if ((magnitude_bits(row + j) | magnitude_bits(row + j + per) | magnitude_bits(row + j + 2 * per) |
         magnitude_bits(row + j + 3 * per)) != 0)
      break;
  for (; j < i; ++j)
    if (row[j] != S(0)) return j;
  return i;
}

// One lane, n >= kCholeskyRowOrderMin: the same entries in row order, each row's envelope
// found and factored before the next (Crout by rows). L[i][j] needs rows j < i, complete, and
// L[i][p < j], both done; it is computed by the same expression as in column order (the pivot's
// reciprocal formed again from the stored L[j][j]: the same bits), so the factor is bitwise the
// column order's. Why: column order visits every row below each column to find the few in its
// envelope, n^2 / 2 checks, and scans each row's zeros left of its envelope, as many again; a
// model of many free bodies (nv = 384 for 64 of them) has block-diagonal A and H with small
// envelopes, and those quadratic loops were most of its factor's time. Rows here skip the
// zeros in words of eight bytes. Small n keeps column order, whose independent rows overlap
// (row order waits on each entry's predecessor in the row).
template <class S>
__attribute__((noinline)) bool cholesky_factor_rows(S* a, int n, int ld, int* first) {
  for (int i = 0; i < n; ++i) {
    S* li = a + i * ld;
    const int fi = first_nonzero_host(li, i);
    first[i] = fi;
    for (int j = fi; j < i; ++j) {
      const S* lj = a + j * ld;
      const int p0 = fi > first[j] ? fi : first[j];
      li[j] = (li[j] - dot_range(li, lj, p0, j)) * (S(1) / lj[j]);
    }
    const S d = li[i] - dot_range(li, li, fi, i);
    const S lii = (d > S(0) && isfinite_(d)) ? sqrt_(d) : S(0);
    li[i] = lii;
    if (!(lii > S(0))) return false;
  }
  return true;
}
#endif

// Row-oriented (Crout) factorisation on the rows' envelopes. first[i] = the first column with a
// non-zero entry in row i (j <= i); Cholesky keeps every entry left of it zero, so
//   L[i][j] = (A[i][j] - sum_{p = max(first_i, first_j)}^{j-1} L[i][p] L[j][p]) / L[j][j]
// touches only contiguous row segments (vectorisable dot products) and skips the zero blocks
// of A = M + h D (one block per kinematic tree) and of H where contacts do not couple trees.
// Returns false (on every member) at a non-positive or non-finite pivot; the factor is then
// incomplete. `first` is scratch of n ints.
//
// A team of several lanes (one warp on CUDA) owns the rows i = rank, rank + size, ... and
// factors two columns j, k = j + 1 per step. Every lane computes the 2 x 2 diagonal block
//   L[j][j] = sqrt(A[j][j] - sum_p L[j][p]^2),  L[k][j] = (A[k][j] - sum_p L[k][p] L[j][p]) / L[j][j],
//   L[k][k] = sqrt(A[k][k] - sum_p L[k][p]^2)
// itself from rows j and k (the same dot products, so the same bits on every lane: no
// broadcast, no one-lane step), then the entries L[i][j], L[i][k] of its own rows i > k. The
// only cross-lane data are the finished rows that the next steps read, so one sync per two
// columns suffices (before: two per column, pivot on one lane, then rows): ceil(n / 2) + 2 in
// all with the envelope's and the closing one. The block's three entries are stored by their
// rows' owners one step later, after the sync that ends every lane's read of the unfactored
// A entries there; until then a lane takes L[k][j] from its register (dot_range_last). Each
// entry is computed by one lane (the block: by every lane alike) in the one-lane order: the
// factor is bitwise that of one lane.
template <class S, class Team>
SAP_HD bool cholesky_factor(Team& team, S* a, int n, int ld, int* first) {
#if !defined(__CUDA_ARCH__)
  if constexpr (one_lane_team<Team>()) {
    if (n >= kCholeskyRowOrderMin) return cholesky_factor_rows(a, n, ld, first);
  }
#endif
  const int rank = team.rank(), size = team.size();
  for (int i = rank; i < n; i += size) {
    int f = i;
    for (int j = 0; j < i; ++j)
      if (a[i * ld + j] != S(0)) {
        f = j;
        break;
      }
    first[i] = f;
  }
  team.sync();
  if (size == 1) {  // one lane (the CPU): column by column, every entry stored at once
    for (int j = 0; j < n; ++j) {
      const S* lj = a + j * ld;
      const S d = lj[j] - dot_range(lj, lj, first[j], j);
      const S ljj = (d > S(0) && isfinite_(d)) ? sqrt_(d) : S(0);
      a[j * ld + j] = ljj;
      if (!(ljj > S(0))) return false;
      const S inv = S(1) / ljj;
      for (int i = j + 1; i < n; ++i) {
        if (first[i] > j) continue;  // outside the envelope: L[i][j] = 0
        S* li = a + i * ld;
        const int p0 = first[i] > first[j] ? first[i] : first[j];
        li[j] = (li[j] - dot_range(li, lj, p0, j)) * inv;
      }
    }
    return true;
  }
  // The previous step's diagonal block, stored by its rows' owners after the step's sync.
  int pend_j = -1;
  S pend_jj = S(0), pend_kj = S(0), pend_kk = S(0);
  auto store_pending = [&]() {
    if (pend_j < 0) return;
    const int pj = pend_j, pk = pend_j + 1;
    if (pj % size == rank) a[pj * ld + pj] = pend_jj;
    if (pk < n && pk % size == rank) {
      if (first[pk] <= pj) a[pk * ld + pj] = pend_kj;
      a[pk * ld + pk] = pend_kk;
    }
  };
  for (int j = 0; j < n; j += 2) {
    const int k = j + 1;
    const S* lj = a + j * ld;
    const S dj = lj[j] - dot_range(lj, lj, first[j], j);  // every lane, the same bits
    const S ljj = (dj > S(0) && isfinite_(dj)) ? sqrt_(dj) : S(0);
    store_pending();
    if (!(ljj > S(0))) return false;  // every lane computed the same pivot
    const S invj = S(1) / ljj;
    S lkj = S(0), lkk = S(0), invk = S(0);
    if (k < n) {
      const S* lk = a + k * ld;
      const int fk = first[k];
      if (fk <= j) {
        const int p0 = fk > first[j] ? fk : first[j];
        lkj = (lk[j] - dot_range(lk, lj, p0, j)) * invj;
      }
      const S dk = lk[k] - (fk <= j ? dot_range_last(lk, lk, fk, k, lkj, lkj) : S(0));
      lkk = (dk > S(0) && isfinite_(dk)) ? sqrt_(dk) : S(0);
      if (!(lkk > S(0))) return false;
      invk = S(1) / lkk;
      // This lane's rows i > k: the first one is k + 1 + ((rank - k - 1) mod size).
      for (int i = k + 1 + ((rank - k - 1) % size + size) % size; i < n; i += size) {
        const int fi = first[i];
        if (fi > k) continue;  // outside the envelope: L[i][j] = L[i][k] = 0
        S* li = a + i * ld;
        S lij = S(0);
        if (fi <= j) {
          const int p0 = fi > first[j] ? fi : first[j];
          lij = (li[j] - dot_range(li, lj, p0, j)) * invj;
          li[j] = lij;
        }
        const int p0 = fi > fk ? fi : fk;  // column k: row k's entry j is still in lkj
        li[k] = (li[k] - (p0 < k ? dot_range_last(li, lk, p0, k, lij, lkj) : S(0))) * invk;
      }
    }
    pend_j = j;
    pend_jj = ljj;
    pend_kj = lkj;
    pend_kk = lkk;
    // Rows > k are read by every lane in the next step; every lane has read the block's A.
    team.sync();
  }
  store_pending();
  team.sync();  // the factor is complete for every lane
  return true;
}

// Solves L L^T x = b in place (x holds b on entry) with the factor's envelope `first`.
// One lane (the CPU, one_lane_team) uses the row forms (contiguous dot products and axpys on
// rows of L) and multiplies by each pivot's reciprocal.
// A team of lanes eliminates column by column with lane = row (rows rank, rank + size,
// ...): x[i] is read and written only by its row's owner, and the solved entry x[j] goes from
// its owner to every lane by a broadcast (a shuffle in one warp), so there is no sync inside
// the solve, only one at the end that publishes x. It divides by the pivots, and its forward
// sweep subtracts the terms L[i][p] y[p] one by one in p order where one lane sums them with
// four interleaved partial sums (dot_range), so its solution differs from one lane's by
// rounding only: each is the exact solution of (L + dL) y = b with |dL| <= gamma_n |L|
// entrywise (any summation order; gamma_n = n u / (1 - n u); a reciprocal adds one rounding
// per pivot), so |y_team - y_one| <= 2 gamma_n |L^-1| |L| |y| to first order.
template <class S, class Team>
SAP_HD void cholesky_solve(Team& team, const S* l, S* x, int n, int ld, const int* first) {
  const int rank = team.rank(), size = team.size();
  if constexpr (one_lane_team<Team>()) {
    // Times the pivot's reciprocal rather than over the pivot: the reciprocal depends on L only,
    // so it is formed off the chain x[i] -> x[i+1] that the divisions lay on (each solve is
    // a chain of 2n dependent steps); another rounding than a team's division.
    for (int i = 0; i < n; ++i)  // forward: L y = b
      x[i] = (x[i] - dot_range(l + i * ld, x, first[i], i)) * (S(1) / l[i * ld + i]);
    for (int i = n - 1; i >= 0; --i) {  // backward: L^T x = y
      const S xi = x[i] * (S(1) / l[i * ld + i]);
      x[i] = xi;
      const S* li = l + i * ld;
      for (int p = first[i]; p < i; ++p) x[p] -= li[p] * xi;
    }
    return;
  }
  // Entry j is solved by its row's owner (x_j / L_jj, stored) and sent to every lane.
  auto solve_entry = [&](int j) {
    const int owner = j % size;
    S xj = S(0);
    if (rank == owner) {
      xj = x[j] / l[j * ld + j];
      x[j] = xj;
    }
    return team.broadcast(xj, owner);
  };
  for (int j = 0; j < n; ++j) {  // forward: L y = b
    const S xj = solve_entry(j);
    for (int i = j + 1 + ((rank - j - 1) % size + size) % size; i < n; i += size)
      if (first[i] <= j) x[i] -= l[i * ld + j] * xj;
  }
  for (int j = n - 1; j >= 0; --j) {  // backward: L^T x = y
    const S xj = solve_entry(j);
    for (int i = first[j] + ((rank - first[j]) % size + size) % size; i < j; i += size)
      x[i] -= l[j * ld + i] * xj;
  }
  team.sync();
}

}  // namespace sap

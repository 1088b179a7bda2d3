// Dense per-world Cholesky factorisation A = L L^T and solves, team-cooperative: on the CPU
// the team has one member and these are plain loops; on CUDA a warp (or a block) shares the
// work with lane = row, one sync per column in the factor and none inside the solves. Matrices are row-major with leading dimension ld; only
// the lower triangle is read and L overwrites it.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

// Copies the n x n lower triangle of src (any scalar) into dst (scalar S), both with leading
// dimension ld. Used to move a fp64 matrix into the precision of the linear solve.
template <class S, class T, class Team>
SAP_HD void cholesky_load(Team& team, const T* src, S* dst, int n, int ld) {
  for (int i = team.rank(); i < n; i += team.size())
    for (int j = 0; j <= i; ++j) dst[i * ld + j] = S(src[i * ld + j]);
  team.sync();
}

// sum_{p0 <= p < p1} x[p] y[p] with four interleaved partial sums: a fixed summation order
// (identical on every backend and thread count) whose independent chains vectorise.
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

// Row-oriented (Crout) factorisation on the rows' envelopes. first[i] = the first column with a
// non-zero entry in row i (j <= i); Cholesky keeps every entry left of it zero, so
//   L[i][j] = (A[i][j] - sum_{p = max(first_i, first_j)}^{j-1} L[i][p] L[j][p]) / L[j][j]
// touches only contiguous row segments (vectorisable dot products) and skips the zero blocks
// of A = M + h D (one block per kinematic tree) and of H where contacts do not couple trees.
// Returns false (on every member) at a non-positive or non-finite pivot; the factor is then
// incomplete. `first` is scratch of n ints.
//
// A team of several lanes (one warp on CUDA) owns the rows i = rank, rank + size, ... Column j's
// entries are independent given the columns < j. Every lane computes the pivot
//   L[j][j] = sqrt(A[j][j] - sum_p L[j][p]^2)
// itself from row j (the same dot_range, so the same bits on every lane: no broadcast, no
// one-lane step), then the entries L[i][j] of its own rows. The only cross-lane data are the
// finished rows j that the next columns read, so one sync per column suffices (before: two,
// pivot on one lane, then rows), n + 2 in all with the envelope's and the closing one. The diagonal entry is stored by its row's owner one column
// later, after the sync that ends every lane's read of the unfactored A[j][j]. Each entry is
// computed by one lane in the one-lane order: the factor is bitwise that of one lane.
template <class S, class Team>
SAP_HD bool cholesky_factor(Team& team, S* a, int n, int ld, int* first) {
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
  if (size == 1) {  // one lane (the CPU): the pivot is stored at once, no deferred store
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
  S pivot_prev = S(0);  // L[j-1][j-1], stored by row j-1's owner at column j
  for (int j = 0; j < n; ++j) {
    const S* lj = a + j * ld;
    const S d = lj[j] - dot_range(lj, lj, first[j], j);  // every lane, the same bits
    const S ljj = (d > S(0) && isfinite_(d)) ? sqrt_(d) : S(0);
    if (j > 0 && (j - 1) % size == rank) a[(j - 1) * ld + j - 1] = pivot_prev;
    if (!(ljj > S(0))) return false;  // every lane computed the same pivot
    const S inv = S(1) / ljj;
    // This lane's rows i > j: the first one is j + 1 + ((rank - j - 1) mod size).
    for (int i = j + 1 + ((rank - j - 1) % size + size) % size; i < n; i += size) {
      if (first[i] > j) continue;  // outside the envelope: L[i][j] = 0
      S* li = a + i * ld;
      const int p0 = first[i] > first[j] ? first[i] : first[j];
      li[j] = (li[j] - dot_range(li, lj, p0, j)) * inv;
    }
    pivot_prev = ljj;
    // Rows j + 1 .. are read by every lane in the next column; every lane has read A[j][j].
    team.sync();
  }
  if (n > 0 && (n - 1) % size == rank) a[(n - 1) * ld + n - 1] = pivot_prev;
  team.sync();  // the factor is complete for every lane
  return true;
}

// Solves L L^T x = b in place (x holds b on entry) with the factor's envelope `first`.
// A single member uses the row forms (contiguous dot products and axpys on rows of L).
// A team of several lanes eliminates column by column with lane = row (rows rank, rank + size,
// ...): x[i] is read and written only by its row's owner, and the solved entry x[j] goes from
// its owner to every lane by a broadcast (a shuffle in one warp), so there is no sync inside
// the solve, only one at the end that publishes x. The backward sweep updates each x[i] in the
// one-lane order (bitwise equal given the same y); the forward sweep subtracts the terms
// L[i][p] y[p] one by one in p order where one lane sums them with four interleaved partial
// sums (dot_range), so y differs from the one-lane y by rounding only:
// |y_team - y_one| <= 2 gamma_n |L| |y| entrywise (gamma_n = n u / (1 - n u)), the standard
// bound of two summation orders of one triangular solve.
template <class S, class Team>
SAP_HD void cholesky_solve(Team& team, const S* l, S* x, int n, int ld, const int* first) {
  const int rank = team.rank(), size = team.size();
  if (size == 1) {
    for (int i = 0; i < n; ++i)  // forward: L y = b
      x[i] = (x[i] - dot_range(l + i * ld, x, first[i], i)) / l[i * ld + i];
    for (int i = n - 1; i >= 0; --i) {  // backward: L^T x = y
      const S xi = x[i] / l[i * ld + i];
      x[i] = xi;
      const S* li = l + i * ld;
      for (int p = first[i]; p < i; ++p) x[p] -= li[p] * xi;
    }
    return;
  }
  for (int j = 0; j < n; ++j) {  // forward: L y = b
    const int owner = j % size;
    S xj = S(0);
    if (rank == owner) {
      xj = x[j] / l[j * ld + j];
      x[j] = xj;
    }
    xj = team.broadcast(xj, owner);
    for (int i = j + 1 + ((rank - j - 1) % size + size) % size; i < n; i += size)
      if (first[i] <= j) x[i] -= l[i * ld + j] * xj;
  }
  for (int j = n - 1; j >= 0; --j) {  // backward: L^T x = y
    const int owner = j % size;
    S xj = S(0);
    if (rank == owner) {
      xj = x[j] / l[j * ld + j];
      x[j] = xj;
    }
    xj = team.broadcast(xj, owner);
    for (int i = first[j] + ((rank - first[j]) % size + size) % size; i < j; i += size)
      x[i] -= l[j * ld + i] * xj;
  }
  team.sync();
}

}  // namespace sap

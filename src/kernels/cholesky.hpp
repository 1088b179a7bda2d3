// Dense per-world Cholesky factorisation A = L L^T and solves, team-cooperative: on the CPU
// the team has one member and these are plain loops; on CUDA a thread block shares the work
// and synchronises between columns. Matrices are row-major with leading dimension ld; only
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
// Column j's entries are independent given columns < j: the team shares them, with two
// synchronisations per column. Returns false (on every member) at a non-positive or non-finite
// pivot. `first` is scratch of n ints.
template <class S, class Team>
SAP_HD bool cholesky_factor(Team& team, S* a, int n, int ld, int* first) {
  for (int i = team.rank(); i < n; i += team.size()) {
    int f = i;
    for (int j = 0; j < i; ++j)
      if (a[i * ld + j] != S(0)) {
        f = j;
        break;
      }
    first[i] = f;
  }
  team.sync();
  for (int j = 0; j < n; ++j) {
    const S* lj = a + j * ld;
    if (team.rank() == 0) {  // one-lane: the pivot of column j (one dot product)
      const S d = lj[j] - dot_range(lj, lj, first[j], j);
      a[j * ld + j] = (d > S(0) && isfinite_(d)) ? sqrt_(d) : S(0);
    }
    team.sync();
    const S ljj = lj[j];
    if (!(ljj > S(0))) return false;  // every member reads the same pivot
    const S inv = S(1) / ljj;
    for (int i = j + 1 + team.rank(); i < n; i += team.size()) {
      if (first[i] > j) continue;  // outside the envelope: L[i][j] = 0
      S* li = a + i * ld;
      const int p0 = first[i] > first[j] ? first[i] : first[j];
      li[j] = (li[j] - dot_range(li, lj, p0, j)) * inv;
    }
    team.sync();
  }
  return true;
}

// Solves L L^T x = b in place (x holds b on entry) with the factor's envelope `first`.
// A single member uses the row forms (contiguous dot products and axpys on rows of L); a
// larger team eliminates column by column, sharing each step.
template <class S, class Team>
SAP_HD void cholesky_solve(Team& team, const S* l, S* x, int n, int ld, const int* first) {
  if (team.size() == 1) {
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
    const S xj = x[j] / l[j * ld + j];
    team.sync();
    if (team.rank() == 0) x[j] = xj;  // one-lane: store of the solved entry
    for (int i = j + 1 + team.rank(); i < n; i += team.size())
      if (first[i] <= j) x[i] -= l[i * ld + j] * xj;
    team.sync();
  }
  for (int j = n - 1; j >= 0; --j) {  // backward: L^T x = y
    if (team.rank() == 0) x[j] /= l[j * ld + j];  // one-lane: the solved entry
    team.sync();
    const S xj = x[j];
    for (int i = first[j] + team.rank(); i < j; i += team.size()) x[i] -= l[j * ld + i] * xj;
    team.sync();
  }
}

}  // namespace sap

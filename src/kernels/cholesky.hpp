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
  for (int idx = team.rank(); idx < n * n; idx += team.size()) {
    const int i = idx / n, j = idx % n;
    if (j <= i) dst[i * ld + j] = S(src[i * ld + j]);
  }
  team.sync();
}

// Right-looking factorisation. Returns false (on every team member) when a pivot is not
// positive and finite: the matrix is not SPD, or the input holds NaN/Inf.
// With `nz` (n ints of scratch) each column's update touches only the rows whose entry in that
// column is non-zero: A = M + h D is block diagonal per kinematic tree and contacts couple
// trees sparsely, so most of the trailing update is skipped. Skipping exact zeros subtracts
// nothing, so the factor is bitwise the dense one.
template <class S, class Team>
SAP_HD bool cholesky_factor(Team& team, S* a, int n, int ld, int* nz = nullptr) {
  bool ok = true;
  for (int k = 0; k < n; ++k) {
    const S d = a[k * ld + k];
    if (!(d > S(0)) || !isfinite_(d)) ok = false;
    const S lkk = ok ? sqrt_(d) : S(1);
    team.sync();  // everybody has read a[k][k] before it changes
    if (team.rank() == 0) a[k * ld + k] = lkk;
    const S inv = S(1) / lkk;
    if (nz) {
      // Rows below k with a non-zero entry in column k, in increasing order.
      if (team.rank() == 0) {
        int count = 0;
        for (int i = k + 1; i < n; ++i)
          if (a[i * ld + k] != S(0)) nz[++count] = i;
        nz[0] = count;
      }
      team.sync();
      const int count = nz[0];
      for (int r = 1 + team.rank(); r <= count; r += team.size()) a[nz[r] * ld + k] *= inv;
      team.sync();
      // a[i][j] -= l_ik l_jk for i >= j, both in the list (no other entry changes).
      for (int r = 1 + team.rank(); r <= count; r += team.size()) {
        const int i = nz[r];
        const S lik = a[i * ld + k];
        for (int c = 1; c <= r; ++c) a[i * ld + nz[c]] -= lik * a[nz[c] * ld + k];
      }
      team.sync();
      continue;
    }
    for (int i = k + 1 + team.rank(); i < n; i += team.size()) a[i * ld + k] *= inv;
    team.sync();
    // Trailing update of the lower triangle: a[i][j] -= l_ik l_jk for k < j <= i.
    for (int i = k + 1 + team.rank(); i < n; i += team.size()) {
      const S lik = a[i * ld + k];
      for (int j = k + 1; j <= i; ++j) a[i * ld + j] -= lik * a[j * ld + k];
    }
    team.sync();
  }
  return ok;
}

// Solves L L^T x = b in place (x holds b on entry), column-oriented so the team can share
// each elimination step.
template <class S, class Team>
SAP_HD void cholesky_solve(Team& team, const S* l, S* x, int n, int ld) {
  for (int j = 0; j < n; ++j) {  // forward: L y = b
    const S xj = x[j] / l[j * ld + j];
    team.sync();
    if (team.rank() == 0) x[j] = xj;
    for (int i = j + 1 + team.rank(); i < n; i += team.size()) x[i] -= l[i * ld + j] * xj;
    team.sync();
  }
  for (int j = n - 1; j >= 0; --j) {  // backward: L^T x = y
    if (team.rank() == 0) x[j] /= l[j * ld + j];
    team.sync();
    const S xj = x[j];
    for (int i = team.rank(); i < j; i += team.size()) x[i] -= l[j * ld + i] * xj;
    team.sync();
  }
}

}  // namespace sap

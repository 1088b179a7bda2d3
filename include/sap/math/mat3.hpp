// Fixed-size 3x3 matrix (row-major) for host and device physics bodies.
#pragma once

#include "sap/math/vec3.hpp"

namespace sap {

template <class S>
struct Mat3 {
  S m[9];  // row-major: m[3*r + c]

  SAP_HDI S& operator()(int r, int c) { return m[3 * r + c]; }
  SAP_HDI const S& operator()(int r, int c) const { return m[3 * r + c]; }

  SAP_HDI static Mat3 zero() { return {{S(0), S(0), S(0), S(0), S(0), S(0), S(0), S(0), S(0)}}; }
  SAP_HDI static Mat3 identity() { return {{S(1), S(0), S(0), S(0), S(1), S(0), S(0), S(0), S(1)}}; }
  SAP_HDI static Mat3 diagonal(const Vec3<S>& d) { return {{d[0], S(0), S(0), S(0), d[1], S(0), S(0), S(0), d[2]}}; }
  // Symmetric matrix from (xx, yy, zz, xy, xz, yz), MuJoCo's fullinertia order.
  SAP_HDI static Mat3 symmetric(S xx, S yy, S zz, S xy, S xz, S yz) { return {{xx, xy, xz, xy, yy, yz, xz, yz, zz}}; }
  // The matrix [a]x with [a]x b = a x b.
  SAP_HDI static Mat3 skew(const Vec3<S>& a) { return {{S(0), -a[2], a[1], a[2], S(0), -a[0], -a[1], a[0], S(0)}}; }
  SAP_HDI static Mat3 from_columns(const Vec3<S>& c0, const Vec3<S>& c1, const Vec3<S>& c2) {
    return {{c0[0], c1[0], c2[0], c0[1], c1[1], c2[1], c0[2], c1[2], c2[2]}};
  }
  template <class T>
  SAP_HDI static Mat3 load(const T* p) {
    Mat3 r;
    for (int i = 0; i < 9; ++i) r.m[i] = S(p[i]);
    return r;
  }
  template <class T>
  SAP_HDI void store(T* p) const {
    for (int i = 0; i < 9; ++i) p[i] = T(m[i]);
  }
  SAP_HDI Vec3<S> col(int c) const { return {{m[c], m[3 + c], m[6 + c]}}; }
  SAP_HDI Vec3<S> row(int r) const { return {{m[3 * r], m[3 * r + 1], m[3 * r + 2]}}; }
};

template <class S>
SAP_HDI Vec3<S> operator*(const Mat3<S>& a, const Vec3<S>& x) {
  return {{a.m[0] * x[0] + a.m[1] * x[1] + a.m[2] * x[2], a.m[3] * x[0] + a.m[4] * x[1] + a.m[5] * x[2],
           a.m[6] * x[0] + a.m[7] * x[1] + a.m[8] * x[2]}};
}
// a^T x without forming the transpose.
template <class S>
SAP_HDI Vec3<S> mul_transpose(const Mat3<S>& a, const Vec3<S>& x) {
  return {{a.m[0] * x[0] + a.m[3] * x[1] + a.m[6] * x[2], a.m[1] * x[0] + a.m[4] * x[1] + a.m[7] * x[2],
           a.m[2] * x[0] + a.m[5] * x[1] + a.m[8] * x[2]}};
}
template <class S>
SAP_HDI Mat3<S> operator*(const Mat3<S>& a, const Mat3<S>& b) {
  Mat3<S> r;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j)
      r.m[3 * i + j] = a.m[3 * i] * b.m[j] + a.m[3 * i + 1] * b.m[3 + j] + a.m[3 * i + 2] * b.m[6 + j];
  return r;
}
template <class S>
SAP_HDI Mat3<S> operator+(const Mat3<S>& a, const Mat3<S>& b) {
  Mat3<S> r;
  for (int i = 0; i < 9; ++i) r.m[i] = a.m[i] + b.m[i];
  return r;
}
template <class S>
SAP_HDI Mat3<S> operator-(const Mat3<S>& a, const Mat3<S>& b) {
  Mat3<S> r;
  for (int i = 0; i < 9; ++i) r.m[i] = a.m[i] - b.m[i];
  return r;
}
template <class S>
SAP_HDI Mat3<S> operator*(S s, const Mat3<S>& a) {
  Mat3<S> r;
  for (int i = 0; i < 9; ++i) r.m[i] = s * a.m[i];
  return r;
}
template <class S>
SAP_HDI Mat3<S> transpose(const Mat3<S>& a) {
  return {{a.m[0], a.m[3], a.m[6], a.m[1], a.m[4], a.m[7], a.m[2], a.m[5], a.m[8]}};
}
template <class S>
SAP_HDI S determinant(const Mat3<S>& a) {
  return a.m[0] * (a.m[4] * a.m[8] - a.m[5] * a.m[7]) - a.m[1] * (a.m[3] * a.m[8] - a.m[5] * a.m[6]) +
         a.m[2] * (a.m[3] * a.m[7] - a.m[4] * a.m[6]);
}
// Inverse by the adjugate; the caller guarantees a is invertible (inertia tensors are SPD).
template <class S>
SAP_HDI Mat3<S> inverse(const Mat3<S>& a) {
  const S inv_det = S(1) / determinant(a);
  Mat3<S> r;
  r.m[0] = (a.m[4] * a.m[8] - a.m[5] * a.m[7]) * inv_det;
  r.m[1] = (a.m[2] * a.m[7] - a.m[1] * a.m[8]) * inv_det;
  r.m[2] = (a.m[1] * a.m[5] - a.m[2] * a.m[4]) * inv_det;
  r.m[3] = (a.m[5] * a.m[6] - a.m[3] * a.m[8]) * inv_det;
  r.m[4] = (a.m[0] * a.m[8] - a.m[2] * a.m[6]) * inv_det;
  r.m[5] = (a.m[2] * a.m[3] - a.m[0] * a.m[5]) * inv_det;
  r.m[6] = (a.m[3] * a.m[7] - a.m[4] * a.m[6]) * inv_det;
  r.m[7] = (a.m[1] * a.m[6] - a.m[0] * a.m[7]) * inv_det;
  r.m[8] = (a.m[0] * a.m[4] - a.m[1] * a.m[3]) * inv_det;
  return r;
}

}  // namespace sap

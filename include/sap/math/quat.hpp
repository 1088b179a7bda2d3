// Unit quaternions (w, x, y, z) for rotations: q rotates body-frame vectors into the parent frame.
#pragma once

#include "sap/math/mat3.hpp"

namespace sap {

template <class S>
struct Quat {
  S w, x, y, z;

  SAP_HDI static Quat identity() { return {S(1), S(0), S(0), S(0)}; }
  template <class T>
  SAP_HDI static Quat load(const T* p) {
    return {S(p[0]), S(p[1]), S(p[2]), S(p[3])};
  }
  template <class T>
  SAP_HDI void store(T* p) const {
    p[0] = T(w);
    p[1] = T(x);
    p[2] = T(y);
    p[3] = T(z);
  }
  SAP_HDI Vec3<S> vec() const { return {{x, y, z}}; }
};

template <class S>
SAP_HDI Quat<S> operator*(const Quat<S>& a, const Quat<S>& b) {
  return {a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
          a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}
template <class S>
SAP_HDI Quat<S> conjugate(const Quat<S>& q) {
  return {q.w, -q.x, -q.y, -q.z};
}
template <class S>
SAP_HDI S squared_norm(const Quat<S>& q) {
  return q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z;
}
template <class S>
SAP_HDI S norm(const Quat<S>& q) {
  return sqrt_(squared_norm(q));
}
// Component-wise division (host code normalises as q / |q|, dividing, see src/import/rotation.hpp).
template <class S>
SAP_HDI Quat<S> operator/(const Quat<S>& q, S s) {
  return {q.w / s, q.x / s, q.y / s, q.z / s};
}
// q / |q|; the identity when q is zero (an uninitialised quaternion must not produce NaN).
template <class S>
SAP_HDI Quat<S> normalized(const Quat<S>& q) {
  const S n2 = squared_norm(q);
  if (!(n2 > S(0))) return Quat<S>::identity();
  const S inv = S(1) / sqrt_(n2);
  return {q.w * inv, q.x * inv, q.y * inv, q.z * inv};
}
// Rotation of v by unit q: v' = q v q*, written as v + 2 w (u x v) + 2 u x (u x v).
template <class S>
SAP_HDI Vec3<S> rotate(const Quat<S>& q, const Vec3<S>& v) {
  const Vec3<S> u = q.vec();
  const Vec3<S> t = S(2) * cross(u, v);
  return v + q.w * t + cross(u, t);
}
template <class S>
SAP_HDI Vec3<S> rotate_inverse(const Quat<S>& q, const Vec3<S>& v) {
  return rotate(conjugate(q), v);
}
template <class S>
SAP_HDI Mat3<S> to_matrix(const Quat<S>& q) {
  const S ww = q.w * q.w, xx = q.x * q.x, yy = q.y * q.y, zz = q.z * q.z;
  const S xy = q.x * q.y, xz = q.x * q.z, yz = q.y * q.z, wx = q.w * q.x, wy = q.w * q.y, wz = q.w * q.z;
  return {{ww + xx - yy - zz, S(2) * (xy - wz), S(2) * (xz + wy), S(2) * (xy + wz), ww - xx + yy - zz, S(2) * (yz - wx),
           S(2) * (xz - wy), S(2) * (yz + wx), ww - xx - yy + zz}};
}
// Rotation by `angle` about the unit `axis`.
template <class S>
SAP_HDI Quat<S> from_axis_angle(const Vec3<S>& axis, S angle) {
  const S s = sin_(S(0.5) * angle);
  return {cos_(S(0.5) * angle), axis[0] * s, axis[1] * s, axis[2] * s};
}
// Exponential map exp(r/2) of a rotation vector r (angle |r| about r/|r|); exact for any |r|.
template <class S>
SAP_HDI Quat<S> quat_exp(const Vec3<S>& r) {
  const S angle = norm(r);
  if (angle < S(1e-8)) {  // second-order Taylor expansion avoids 0/0
    return normalized(Quat<S>{S(1) - angle * angle / S(8), S(0.5) * r[0], S(0.5) * r[1], S(0.5) * r[2]});
  }
  return from_axis_angle(r * (S(1) / angle), angle);
}
// Rotation vector r with exp(r/2) = q (angle in [0, pi]).
template <class S>
SAP_HDI Vec3<S> quat_log(const Quat<S>& qin) {
  const Quat<S> q = qin.w < S(0) ? Quat<S>{-qin.w, -qin.x, -qin.y, -qin.z} : qin;
  const S s = norm(q.vec());
  if (s < S(1e-12)) return S(2) * q.vec();
  const S angle = S(2) * atan2_(s, q.w);
  return q.vec() * (angle / s);
}
// Rotation matrix to quaternion by Shepperd's method: the branch on the largest of the trace and
// the diagonal terms keeps the divisor s = 4 |q_k| away from zero. Unit up to rounding; see
// from_matrix for the normalised form.
template <class S>
SAP_HDI Quat<S> from_matrix_unnormalized(const Mat3<S>& r) {
  const S tr = r(0, 0) + r(1, 1) + r(2, 2);
  Quat<S> q;
  if (tr > S(0)) {
    const S s = sqrt_(tr + S(1)) * S(2);
    q = {S(0.25) * s, (r(2, 1) - r(1, 2)) / s, (r(0, 2) - r(2, 0)) / s, (r(1, 0) - r(0, 1)) / s};
  } else if (r(0, 0) > r(1, 1) && r(0, 0) > r(2, 2)) {
    const S s = sqrt_(S(1) + r(0, 0) - r(1, 1) - r(2, 2)) * S(2);
    q = {(r(2, 1) - r(1, 2)) / s, S(0.25) * s, (r(0, 1) + r(1, 0)) / s, (r(0, 2) + r(2, 0)) / s};
  } else if (r(1, 1) > r(2, 2)) {
    const S s = sqrt_(S(1) + r(1, 1) - r(0, 0) - r(2, 2)) * S(2);
    q = {(r(0, 2) - r(2, 0)) / s, (r(0, 1) + r(1, 0)) / s, S(0.25) * s, (r(1, 2) + r(2, 1)) / s};
  } else {
    const S s = sqrt_(S(1) + r(2, 2) - r(0, 0) - r(1, 1)) * S(2);
    q = {(r(1, 0) - r(0, 1)) / s, (r(0, 2) + r(2, 0)) / s, (r(1, 2) + r(2, 1)) / s, S(0.25) * s};
  }
  return q;
}
template <class S>
SAP_HDI Quat<S> from_matrix(const Mat3<S>& r) {
  return normalized(from_matrix_unnormalized(r));
}

}  // namespace sap

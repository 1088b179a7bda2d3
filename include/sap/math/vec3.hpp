// Fixed-size 3-vector for host and device physics bodies.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

template <class S>
struct Vec3 {
  S v[3];

  SAP_HDI S& operator[](int i) { return v[i]; }
  SAP_HDI const S& operator[](int i) const { return v[i]; }
  SAP_HDI S x() const { return v[0]; }
  SAP_HDI S y() const { return v[1]; }
  SAP_HDI S z() const { return v[2]; }

  SAP_HDI static Vec3 zero() { return {{S(0), S(0), S(0)}}; }
  SAP_HDI static Vec3 unit(int i) {
    Vec3 r = zero();
    r.v[i] = S(1);
    return r;
  }
  // Loads three scalars of any type (the storage precision may differ from S).
  template <class T>
  SAP_HDI static Vec3 load(const T* p) {
    return {{S(p[0]), S(p[1]), S(p[2])}};
  }
  template <class T>
  SAP_HDI void store(T* p) const {
    p[0] = T(v[0]);
    p[1] = T(v[1]);
    p[2] = T(v[2]);
  }
  template <class T>
  SAP_HDI Vec3<T> cast() const {
    return {{T(v[0]), T(v[1]), T(v[2])}};
  }

  SAP_HDI Vec3& operator+=(const Vec3& b) {
    v[0] += b.v[0];
    v[1] += b.v[1];
    v[2] += b.v[2];
    return *this;
  }
  SAP_HDI Vec3& operator-=(const Vec3& b) {
    v[0] -= b.v[0];
    v[1] -= b.v[1];
    v[2] -= b.v[2];
    return *this;
  }
  SAP_HDI Vec3& operator*=(S s) {
    v[0] *= s;
    v[1] *= s;
    v[2] *= s;
    return *this;
  }
};

template <class S>
SAP_HDI Vec3<S> operator+(const Vec3<S>& a, const Vec3<S>& b) {
  return {{a[0] + b[0], a[1] + b[1], a[2] + b[2]}};
}
template <class S>
SAP_HDI Vec3<S> operator-(const Vec3<S>& a, const Vec3<S>& b) {
  return {{a[0] - b[0], a[1] - b[1], a[2] - b[2]}};
}
template <class S>
SAP_HDI Vec3<S> operator-(const Vec3<S>& a) {
  return {{-a[0], -a[1], -a[2]}};
}
template <class S>
SAP_HDI Vec3<S> operator*(S s, const Vec3<S>& a) {
  return {{s * a[0], s * a[1], s * a[2]}};
}
template <class S>
SAP_HDI Vec3<S> operator*(const Vec3<S>& a, S s) {
  return {{s * a[0], s * a[1], s * a[2]}};
}
// Component-wise division (not a * (1/s): host code that divided keeps its exact results).
template <class S>
SAP_HDI Vec3<S> operator/(const Vec3<S>& a, S s) {
  return {{a[0] / s, a[1] / s, a[2] / s}};
}
template <class S>
SAP_HDI S dot(const Vec3<S>& a, const Vec3<S>& b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
template <class S>
SAP_HDI Vec3<S> cross(const Vec3<S>& a, const Vec3<S>& b) {
  return {{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]}};
}
template <class S>
SAP_HDI S squared_norm(const Vec3<S>& a) {
  return dot(a, a);
}
template <class S>
SAP_HDI S norm(const Vec3<S>& a) {
  return sqrt_(dot(a, a));
}
// Returns a / |a|, or the zero vector when |a| is zero.
template <class S>
SAP_HDI Vec3<S> normalized(const Vec3<S>& a) {
  const S n = norm(a);
  return n > S(0) ? a * (S(1) / n) : Vec3<S>::zero();
}
template <class S>
SAP_HDI Vec3<S> cwise_mul(const Vec3<S>& a, const Vec3<S>& b) {
  return {{a[0] * b[0], a[1] * b[1], a[2] * b[2]}};
}

// Two unit vectors t1, t2 completing n to a right-handed orthonormal frame [t1, t2, n].
// Uses the branch-free construction of Duff et al. 2017 (continuous except at n_z = -1 sign).
template <class S>
SAP_HDI void orthonormal_basis(const Vec3<S>& n, Vec3<S>& t1, Vec3<S>& t2) {
  const S sign = n[2] >= S(0) ? S(1) : S(-1);
  const S a = S(-1) / (sign + n[2]);
  const S b = n[0] * n[1] * a;
  t1 = {{S(1) + sign * n[0] * n[0] * a, sign * b, -sign * n[0]}};
  t2 = {{b, sign + n[1] * n[1] * a, -n[1]}};
}

}  // namespace sap

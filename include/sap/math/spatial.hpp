// Spatial algebra in the MuJoCo "com-based" convention: every spatial quantity of a kinematic
// tree is expressed in world orientation about one reference point P of that tree (we use the
// world position of the tree's root body). Motion vectors are [angular; linear-at-P], force
// vectors [moment-about-P; force]. Because all bodies of a tree share P, composite inertias
// are plain sums and no frame transforms are needed in CRBA/RNEA.
#pragma once

#include "sap/math/mat3.hpp"

namespace sap {

template <class S>
struct Vec6 {
  Vec3<S> ang, lin;

  SAP_HDI static Vec6 zero() { return {Vec3<S>::zero(), Vec3<S>::zero()}; }
  template <class T>
  SAP_HDI static Vec6 load(const T* p) {
    return {Vec3<S>::load(p), Vec3<S>::load(p + 3)};
  }
  template <class T>
  SAP_HDI void store(T* p) const {
    ang.store(p);
    lin.store(p + 3);
  }
  SAP_HDI Vec6& operator+=(const Vec6& b) {
    ang += b.ang;
    lin += b.lin;
    return *this;
  }
};

template <class S>
SAP_HDI Vec6<S> operator+(const Vec6<S>& a, const Vec6<S>& b) {
  return {a.ang + b.ang, a.lin + b.lin};
}
template <class S>
SAP_HDI Vec6<S> operator*(S s, const Vec6<S>& a) {
  return {s * a.ang, s * a.lin};
}
// Pairing of a motion and a force vector (power).
template <class S>
SAP_HDI S dot(const Vec6<S>& a, const Vec6<S>& b) {
  return dot(a.ang, b.ang) + dot(a.lin, b.lin);
}
// Motion cross product v x m = [w x a; w x b + u x a] for v = [w; u], m = [a; b].
template <class S>
SAP_HDI Vec6<S> cross_motion(const Vec6<S>& v, const Vec6<S>& m) {
  return {cross(v.ang, m.ang), cross(v.ang, m.lin) + cross(v.lin, m.ang)};
}
// Force cross product v x* f = [w x n + u x f; w x f] for v = [w; u], f = [n; f].
template <class S>
SAP_HDI Vec6<S> cross_force(const Vec6<S>& v, const Vec6<S>& f) {
  return {cross(v.ang, f.ang) + cross(v.lin, f.lin), cross(v.ang, f.lin)};
}
// Velocity at world point x of a rigid motion whose linear part is taken at P.
template <class S>
SAP_HDI Vec3<S> point_velocity(const Vec6<S>& v, const Vec3<S>& x_minus_p) {
  return v.lin + cross(v.ang, x_minus_p);
}

// Spatial inertia about P: rotational inertia I_P (symmetric, about P), first moment m c
// (c = com - P), mass m. Momentum of motion [w; u]: [I_P w + m c x u; m u - m c x w].
// Stored as 10 scalars: I_xx I_yy I_zz I_xy I_xz I_yz, m c_x m c_y m c_z, m.
template <class S>
struct SpatialInertia {
  S i[6];
  Vec3<S> mc;
  S m;

  SAP_HDI static SpatialInertia zero() { return {{S(0), S(0), S(0), S(0), S(0), S(0)}, Vec3<S>::zero(), S(0)}; }
  // Body of mass m, rotational inertia I_com (world orientation) about its com at offset c from P.
  SAP_HDI static SpatialInertia from_body(S mass, const Mat3<S>& inertia_com, const Vec3<S>& c) {
    // Parallel axis theorem: I_P = I_com + m (|c|^2 1 - c c^T).
    const S cc = dot(c, c);
    SpatialInertia r;
    r.i[0] = inertia_com(0, 0) + mass * (cc - c[0] * c[0]);
    r.i[1] = inertia_com(1, 1) + mass * (cc - c[1] * c[1]);
    r.i[2] = inertia_com(2, 2) + mass * (cc - c[2] * c[2]);
    r.i[3] = inertia_com(0, 1) - mass * c[0] * c[1];
    r.i[4] = inertia_com(0, 2) - mass * c[0] * c[2];
    r.i[5] = inertia_com(1, 2) - mass * c[1] * c[2];
    r.mc = mass * c;
    r.m = mass;
    return r;
  }
  template <class T>
  SAP_HDI static SpatialInertia load(const T* p) {
    return {{S(p[0]), S(p[1]), S(p[2]), S(p[3]), S(p[4]), S(p[5])}, Vec3<S>::load(p + 6), S(p[9])};
  }
  template <class T>
  SAP_HDI void store(T* p) const {
    for (int k = 0; k < 6; ++k) p[k] = T(i[k]);
    mc.store(p + 6);
    p[9] = T(m);
  }
  SAP_HDI SpatialInertia& operator+=(const SpatialInertia& b) {
    for (int k = 0; k < 6; ++k) i[k] += b.i[k];
    mc += b.mc;
    m += b.m;
    return *this;
  }
  SAP_HDI Mat3<S> rotational() const { return Mat3<S>::symmetric(i[0], i[1], i[2], i[3], i[4], i[5]); }
  SAP_HDI Vec6<S> operator*(const Vec6<S>& v) const {
    return {rotational() * v.ang + cross(mc, v.lin), m * v.lin - cross(mc, v.ang)};
  }
};

}  // namespace sap

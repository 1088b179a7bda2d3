// Helpers for the collision tests: geom frames from Eigen poses, rigid transforms of contacts,
// and independent geometry (surface distances, projections, distance between convex shapes by
// alternating projections) used as the reference the narrow phase is checked against.
#pragma once

#include <gtest/gtest.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "kernels/collision_world.hpp"

namespace sap::test {

using V3 = Eigen::Vector3d;
using M3 = Eigen::Matrix3d;

struct Shape {
  int type = kGeomSphere;
  V3 pos = V3::Zero();
  M3 rot = M3::Identity();
  V3 size = V3::Zero();
};

inline GeomFrame<double> frame(const Shape& s) {
  GeomFrame<double> f;
  for (int i = 0; i < 3; ++i) {
    f.pos[i] = s.pos[i];
    f.size[i] = s.size[i];
    for (int j = 0; j < 3; ++j) f.rot(i, j) = s.rot(i, j);
  }
  return f;
}
inline GeomFrame<float> frame_f(const Shape& s) {
  GeomFrame<float> f;
  for (int i = 0; i < 3; ++i) {
    f.pos[i] = float(s.pos[i]);
    f.size[i] = float(s.size[i]);
    for (int j = 0; j < 3; ++j) f.rot(i, j) = float(s.rot(i, j));
  }
  return f;
}

inline V3 ev(const Vec3<double>& v) { return V3(v[0], v[1], v[2]); }
template <class S>
inline V3 evs(const Vec3<S>& v) {
  return V3(double(v[0]), double(v[1]), double(v[2]));
}

struct Contact {
  V3 x0, x1, n;
  double phi;
};

inline std::vector<Contact> collide(const Shape& a, const Shape& b, double margin) {
  ContactGeom<double> out[kMaxPairContacts];
  const int n = collide_geoms(a.type, frame(a), b.type, frame(b), margin, out);
  std::vector<Contact> r;
  for (int i = 0; i < n; ++i) r.push_back({ev(out[i].x0), ev(out[i].x1), ev(out[i].normal), out[i].phi});
  return r;
}

inline std::vector<Contact> collide_f(const Shape& a, const Shape& b, double margin) {
  ContactGeom<float> out[kMaxPairContacts];
  const int n = collide_geoms(a.type, frame_f(a), b.type, frame_f(b), float(margin), out);
  std::vector<Contact> r;
  for (int i = 0; i < n; ++i) r.push_back({evs(out[i].x0), evs(out[i].x1), evs(out[i].normal), double(out[i].phi)});
  return r;
}

inline Shape plane(const V3& p = V3::Zero(), const M3& R = M3::Identity()) { return {kGeomPlane, p, R, V3::Zero()}; }
inline Shape sphere(const V3& p, double r) { return {kGeomSphere, p, M3::Identity(), V3(r, 0, 0)}; }
inline Shape capsule(const V3& p, const M3& R, double r, double half) { return {kGeomCapsule, p, R, V3(r, half, 0)}; }
inline Shape cylinder(const V3& p, const M3& R, double r, double half) { return {kGeomCylinder, p, R, V3(r, half, 0)}; }
inline Shape box(const V3& p, const M3& R, const V3& half) { return {kGeomBox, p, R, half}; }

inline M3 rot_axis(const V3& axis, double angle) {
  return Eigen::AngleAxisd(angle, axis.normalized()).toRotationMatrix();
}

inline M3 random_rotation(std::mt19937& rng) {
  std::normal_distribution<double> g(0, 1);
  Eigen::Quaterniond q(g(rng), g(rng), g(rng), g(rng));
  return q.normalized().toRotationMatrix();
}

// A rigid transform x -> R x + t applied to shapes and contacts.
struct Rigid {
  M3 R = M3::Identity();
  V3 t = V3::Zero();
  V3 point(const V3& x) const { return R * x + t; }
  Shape shape(Shape s) const {
    s.pos = point(s.pos);
    s.rot = R * s.rot;
    return s;
  }
  Contact contact(const Contact& c) const { return {point(c.x0), point(c.x1), R * c.n, c.phi}; }
};

inline Rigid random_rigid(std::mt19937& rng, double tscale = 3.0) {
  std::uniform_real_distribution<double> u(-tscale, tscale);
  return {random_rotation(rng), V3(u(rng), u(rng), u(rng))};
}

// ---- Independent geometry ------------------------------------------------------------------

inline V3 closest_on_segment(const V3& a, const V3& b, const V3& x) {
  const V3 d = b - a;
  const double dd = d.squaredNorm();
  const double t = dd > 0 ? std::clamp((x - a).dot(d) / dd, 0.0, 1.0) : 0.0;
  return a + t * d;
}

// Distance from x to a rectangle (center c, half-axes u, v).
inline double rect_distance(const V3& c, const V3& u, const V3& v, const V3& x) {
  const double su = std::clamp((x - c).dot(u) / u.squaredNorm(), -1.0, 1.0);
  const double sv = std::clamp((x - c).dot(v) / v.squaredNorm(), -1.0, 1.0);
  return (x - (c + su * u + sv * v)).norm();
}

// Unsigned distance from x to the surface of a shape (0 on the surface).
inline double surface_distance(const Shape& s, const V3& x) {
  switch (s.type) {
    case kGeomPlane: return std::abs(s.rot.col(2).dot(x - s.pos));
    case kGeomSphere: return std::abs((x - s.pos).norm() - s.size[0]);
    case kGeomCapsule: {
      const V3 h = s.size[1] * s.rot.col(2);
      return std::abs((x - closest_on_segment(s.pos - h, s.pos + h, x)).norm() - s.size[0]);
    }
    case kGeomBox: {  // minimum over the 6 face rectangles
      double best = 1e300;
      for (int k = 0; k < 3; ++k)
        for (int sg = -1; sg <= 1; sg += 2) {
          const V3 c = s.pos + sg * s.size[k] * s.rot.col(k);
          const int i = (k + 1) % 3, j = (k + 2) % 3;
          best = std::min(best, rect_distance(c, s.size[i] * s.rot.col(i), s.size[j] * s.rot.col(j), x));
        }
      return best;
    }
    case kGeomCylinder: {
      const V3 q = s.rot.transpose() * (x - s.pos);
      const double rho = std::hypot(q[0], q[1]), r = s.size[0], h = s.size[1];
      const double side = std::abs(rho - r) + std::max(0.0, std::abs(q[2]) - h);
      const double cap = std::abs(std::abs(q[2]) - h) + std::max(0.0, rho - r);
      return std::min(side, cap);
    }
  }
  return 1e300;
}

// Euclidean projection onto the solid shape (planes: the half-space below).
inline V3 project(const Shape& s, const V3& x) {
  switch (s.type) {
    case kGeomPlane: {
      const V3 n = s.rot.col(2);
      const double h = n.dot(x - s.pos);
      return h > 0 ? V3(x - h * n) : x;
    }
    case kGeomSphere: {
      const V3 d = x - s.pos;
      return d.norm() > s.size[0] ? V3(s.pos + d * (s.size[0] / d.norm())) : x;
    }
    case kGeomCapsule: {
      const V3 h = s.size[1] * s.rot.col(2);
      const V3 c = closest_on_segment(s.pos - h, s.pos + h, x);
      const V3 d = x - c;
      return d.norm() > s.size[0] ? V3(c + d * (s.size[0] / d.norm())) : x;
    }
    case kGeomBox: {
      V3 q = s.rot.transpose() * (x - s.pos);
      for (int i = 0; i < 3; ++i) q[i] = std::clamp(q[i], -s.size[i], s.size[i]);
      return s.pos + s.rot * q;
    }
  }
  return x;
}

// Distance between two convex shapes by alternating projections (converges to a closest pair
// for disjoint closed convex sets, slowly when the closest features are nearly parallel: use it
// to classify configurations, and support_gap for exact checks); ~0 when they intersect.
inline double convex_distance(const Shape& a, const Shape& b) {
  V3 y = b.type == kGeomPlane ? project(b, a.pos) : b.pos;
  V3 x = project(a, y);
  double prev = 1e300;
  for (int it = 0; it < 200000; ++it) {
    y = project(b, x);
    x = project(a, y);
    const double d = (x - y).norm();
    if (d == prev || d < 1e-12) break;
    prev = d;
  }
  return (x - y).norm();
}

// Support function h(u) = max over the solid shape of u . x (+inf for a plane unless u is its
// outward normal).
inline double support(const Shape& s, const V3& u) {
  switch (s.type) {
    case kGeomPlane: return u.dot(s.rot.col(2)) > 1 - 1e-12 ? u.dot(s.pos) : 1e300;
    case kGeomSphere: return u.dot(s.pos) + s.size[0] * u.norm();
    case kGeomCapsule: return u.dot(s.pos) + s.size[1] * std::abs(u.dot(s.rot.col(2))) + s.size[0] * u.norm();
    case kGeomBox: {
      double h = u.dot(s.pos);
      for (int i = 0; i < 3; ++i) h += s.size[i] * std::abs(u.dot(s.rot.col(i)));
      return h;
    }
  }
  return 1e300;
}

// Gap between a and b along the unit n (from a to b): min over b of n.y - max over a of n.x.
// A contact with normal n and witnesses |x1 - x0| = phi = support_gap(n) certifies that phi is
// the distance between the shapes (a pair of points at distance phi and a slab of width phi).
inline double support_gap(const Shape& a, const Shape& b, const V3& n) { return -support(b, -n) - support(a, n); }

// Expects the same contacts as `expected` (any order: each expected contact is matched to the
// actual contact with the nearest x1), for the configuration as given and moved by random
// rigid transforms (the answer moves with it).
inline void expect_contacts(const Shape& a, const Shape& b, double margin, const std::vector<Contact>& expected,
                            double tol = 1e-9, unsigned seed = 7) {
  std::mt19937 rng(seed);
  for (int trial = 0; trial < 4; ++trial) {
    const Rigid T = trial == 0 ? Rigid{} : random_rigid(rng);
    SCOPED_TRACE("transform " + std::to_string(trial));
    const auto got = collide(T.shape(a), T.shape(b), margin);
    ASSERT_EQ(got.size(), expected.size());
    std::vector<bool> used(got.size(), false);
    for (const Contact& e0 : expected) {
      const Contact e = T.contact(e0);
      int best = -1;
      for (std::size_t i = 0; i < got.size(); ++i)
        if (!used[i] &&
            (best < 0 || (got[i].x1 - e.x1).norm() < (got[static_cast<std::size_t>(best)].x1 - e.x1).norm()))
          best = static_cast<int>(i);
      ASSERT_GE(best, 0);
      used[static_cast<std::size_t>(best)] = true;
      const Contact& g = got[static_cast<std::size_t>(best)];
      EXPECT_NEAR(g.phi, e.phi, tol);
      EXPECT_LT((g.n - e.n).norm(), tol) << "normal " << g.n.transpose() << " expected " << e.n.transpose();
      EXPECT_LT((g.x0 - e.x0).norm(), tol) << "x0 " << g.x0.transpose() << " expected " << e.x0.transpose();
      EXPECT_LT((g.x1 - e.x1).norm(), tol) << "x1 " << g.x1.transpose() << " expected " << e.x1.transpose();
    }
  }
}

inline Contact along(const V3& x0, const V3& x1, const V3& n) { return {x0, x1, n, (x1 - x0).dot(n)}; }

}  // namespace sap::test

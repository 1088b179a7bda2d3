// Narrow phase for the smooth primitives: plane, sphere, capsule (and cylinder against a plane),
// plus the contact record and material rules shared by every pair. Boxes: collision_box.hpp.
//
// Conventions of every narrow-phase function collide_<t0>_<t1>(g0, g1, margin, out):
//   - g0 and g1 are world poses (GeomFrame); the normal points from geom 0 to geom 1;
//   - x0 lies on the surface of geom 0 and x1 on the surface of geom 1 (world), and
//       phi = (x1 - x0) . normal            (negative when the geoms overlap);
//   - a contact is written only when phi < margin (margin = margin0 + margin1, the rigid gap),
//     so approaching contacts reach the solver before they overlap;
//   - the return value is the number of contacts written to out[0..n), at most
//     kMaxPairContacts; the order of the contacts depends only on the inputs.
// A plane is the half-space z <= 0 of its frame (outward normal = local +z), unbounded.
// Capsules and cylinders are aligned with their local z axis, size = (radius, half-length).
#pragma once

#include "sap/backend/hd.hpp"
#include "sap/math/mat3.hpp"
#include "sap/model.hpp"

namespace sap {

constexpr int kMaxPairContacts = 8;  // box-box manifold

// World pose and size of one geom; rot columns are the geom's local axes in world.
template <class S>
struct GeomFrame {
  Vec3<S> pos;
  Mat3<S> rot;
  Vec3<S> size;
  // kGeomMesh: the hull (vertices in the geom frame, 3 per vertex), and its adjacency: the
  // neighbours of vertex v are edge[vert_edgeadr[v] .. + vert_edgenum[v]) (mesh-local ids).
  const double* vert = nullptr;
  const int* vert_edgeadr = nullptr;
  const int* vert_edgenum = nullptr;
  const int* edge = nullptr;
  int nvert = 0;
  // kGeomHfield: elevation data (nrow x ncol, row-major) and hfield_size (4).
  const double* hdata = nullptr;
  const double* hsize = nullptr;
  int nrow = 0, ncol = 0;
};

// One narrow-phase contact (see the conventions above).
template <class S>
struct ContactGeom {
  Vec3<S> x0, x1, normal;
  S phi;
};

// Combined contact material of two geoms (see docs/collision.md):
//   stiffness   series springs  k = k0 k1 / (k0 + k1); an infinite k acts as rigid (k = the other)
//   dissipation Drake's rule for the SAP relaxation time  tau_d = tau0 + tau1
//   friction    Drake's rule    mu = 2 mu0 mu1 / (mu0 + mu1)  (0 when both are 0)
template <class S>
SAP_HDI S combine_stiffness(S k0, S k1) {
  if (!isfinite_(k0)) return k1;
  if (!isfinite_(k1)) return k0;
  const S sum = k0 + k1;
  return sum > S(0) ? k0 * k1 / sum : S(0);
}
template <class S>
SAP_HDI S combine_dissipation(S tau0, S tau1) {
  return tau0 + tau1;
}
// Hunt-Crossley dissipation (s/m), Drake's rule: each geom's d weighted by the other's stiffness,
//   d = (k1 d0 + k0 d1) / (k0 + k1)   (the softer geom deforms more and dominates); a rigid
// (infinite-k) geom takes no part, two rigid geoms average.
template <class S>
SAP_HDI S combine_hc_dissipation(S k0, S k1, S d0, S d1) {
  if (!isfinite_(k0) && !isfinite_(k1)) return S(0.5) * (d0 + d1);
  if (!isfinite_(k0)) return d1;
  if (!isfinite_(k1)) return d0;
  const S sum = k0 + k1;
  return sum > S(0) ? (k1 * d0 + k0 * d1) / sum : S(0.5) * (d0 + d1);
}
template <class S>
SAP_HDI S combine_friction(S mu0, S mu1) {
  const S sum = mu0 + mu1;
  return sum > S(0) ? S(2) * mu0 * mu1 / sum : S(0);
}

// Largest number of contacts a pair of geom types can produce (0: no narrow phase).
SAP_HDI int pair_max_contacts(int t0, int t1) {
  if (t0 > t1) {
    const int t = t0;
    t0 = t1;
    t1 = t;
  }
  if (t1 == kGeomHfield) return t0 == kGeomPlane || t0 == kGeomHfield ? 0 : 7;  // collision_hfield.hpp
  if (t0 == kGeomPlane && t1 == kGeomEllipsoid) return 1;
  if (t1 >= kGeomCylinder) return 4;  // cylinder, ellipsoid, mesh: GJK/EPA manifold (<= 4)
  if (t0 == kGeomPlane) return t1 == kGeomSphere ? 1 : t1 == kGeomCapsule ? 2 : t1 == kGeomBox ? 4 : 0;
  if (t0 == kGeomSphere) return 1;
  if (t0 == kGeomCapsule) return 2;  // capsule-capsule (parallel axes), capsule-box (along a face)
  return 8;                          // box-box
}

// Writes one contact from its witnesses and normal; returns 1 when phi < margin, else 0.
template <class S>
SAP_HDI int emit_contact(const Vec3<S>& x0, const Vec3<S>& x1, const Vec3<S>& n, S margin, ContactGeom<S>* out) {
  const S phi = dot(x1 - x0, n);
  if (!(phi < margin)) return 0;  // also rejects NaN
  out->x0 = x0;
  out->x1 = x1;
  out->normal = n;
  out->phi = phi;
  return 1;
}

// A unit vector orthogonal to the unit vector a (deterministic in a).
template <class S>
SAP_HDI Vec3<S> any_perpendicular(const Vec3<S>& a) {
  Vec3<S> t1, t2;
  orthonormal_basis(a, t1, t2);
  return t1;
}

// Sphere (c0, r0) against sphere (c1, r1): normal along c1 - c0, phi = |c1 - c0| - r0 - r1.
// Concentric spheres have no defined direction; `fallback` (unit) is used then.
template <class S>
SAP_HD int collide_spheres(const Vec3<S>& c0, S r0, const Vec3<S>& c1, S r1, const Vec3<S>& fallback, S margin,
                           ContactGeom<S>* out) {
  const Vec3<S> d = c1 - c0;
  const S dist = norm(d);
  if (!(dist - r0 - r1 < margin)) return 0;
  const Vec3<S> n = dist > S(0) ? d * (S(1) / dist) : fallback;
  return emit_contact(c0 + r0 * n, c1 - r1 * n, n, margin, out);
}

// Parameter in [0, 1] of the point of segment p + t d closest to x.
template <class S>
SAP_HDI S closest_on_segment(const Vec3<S>& p, const Vec3<S>& d, const Vec3<S>& x) {
  const S dd = dot(d, d);
  return dd > S(0) ? clamp_(dot(x - p, d) / dd, S(0), S(1)) : S(0);
}

// Closest points P(s) = p + s dp, Q(t) = q + t dq of two segments, s, t in [0, 1]: minimize
// |P(s) - Q(t)|^2, a convex quadratic; the unconstrained stationary point is clamped to the
// square and the other parameter re-solved (the classical closed form; degenerate segments are
// points). Parallel segments (a e - b^2 = 0) take s = 0.
template <class S>
SAP_HD void closest_segment_segment(const Vec3<S>& p, const Vec3<S>& dp, const Vec3<S>& q, const Vec3<S>& dq, S& s,
                                    S& t) {
  const Vec3<S> r = p - q;
  const S a = dot(dp, dp), e = dot(dq, dq), f = dot(dq, r);
  if (!(a > S(0)) && !(e > S(0))) {
    s = t = S(0);
    return;
  }
  if (!(a > S(0))) {
    s = S(0);
    t = clamp_(f / e, S(0), S(1));
    return;
  }
  const S c = dot(dp, r);
  if (!(e > S(0))) {
    t = S(0);
    s = clamp_(-c / a, S(0), S(1));
    return;
  }
  const S b = dot(dp, dq);
  const S denom = a * e - b * b;
  s = denom > S(0) ? clamp_((b * f - c * e) / denom, S(0), S(1)) : S(0);
  t = (b * s + f) / e;
  if (t < S(0)) {
    t = S(0);
    s = clamp_(-c / a, S(0), S(1));
  } else if (t > S(1)) {
    t = S(1);
    s = clamp_((b - c) / a, S(0), S(1));
  }
}

// ------------------------------------------------------------------------------------------
// plane (geom 0) against a convex shape (geom 1): the normal is the plane's +z; x1 is a point
// of the shape, x0 its projection on the plane, phi its height above the plane.

template <class S>
SAP_HDI int plane_point_contact(const GeomFrame<S>& plane, const Vec3<S>& x1, S margin, ContactGeom<S>* out) {
  const Vec3<S> n = plane.rot.col(2);
  const S h = dot(x1 - plane.pos, n);
  return emit_contact(x1 - h * n, x1, n, margin, out);
}

template <class S>
SAP_HD int collide_plane_sphere(const GeomFrame<S>& plane, const GeomFrame<S>& sph, S margin, ContactGeom<S>* out) {
  const Vec3<S> n = plane.rot.col(2);
  return plane_point_contact(plane, sph.pos - sph.size[0] * n, margin, out);
}

// Point of a capsule's surface generated by the axis point p that is farthest along the unit
// `dir`. end = -1 / +1 marks p as the start / end of the axis (outward direction end * a, a
// the unit axis), 0 an interior point. Through an end cap it is the end sphere's point
// p + r dir; otherwise the point of the circle around the axis at p, in the direction of dir
// without its axial part (so the point is on the capsule's surface, not inside the body).
template <class S>
SAP_HDI Vec3<S> capsule_surface_toward(const Vec3<S>& p, int end, const Vec3<S>& a, S r, const Vec3<S>& dir) {
  if (end != 0 && S(end) * dot(dir, a) >= S(0)) return p + r * dir;
  const Vec3<S> radial = dir - dot(dir, a) * a;
  const S len = norm(radial);
  return p + r * (len > S(0) ? radial * (S(1) / len) : any_perpendicular(a));
}

// The capsule's lowest surface point at each end of its axis: the lower end gives the true
// deepest point; the upper one, its end sphere's bottom when the capsule lies flat or the
// bottom of the rim circle when tilted, completes a 2-point line contact.
template <class S>
SAP_HD int collide_plane_capsule(const GeomFrame<S>& plane, const GeomFrame<S>& cap, S margin, ContactGeom<S>* out) {
  const Vec3<S> down = -plane.rot.col(2);
  const Vec3<S> axis = cap.rot.col(2);
  const Vec3<S> half = cap.size[1] * axis;
  int k = plane_point_contact(plane, capsule_surface_toward(cap.pos - half, -1, axis, cap.size[0], down), margin, out);
  k += plane_point_contact(plane, capsule_surface_toward(cap.pos + half, 1, axis, cap.size[0], down), margin, out + k);
  return k;
}

// Keeps at most `keep` of the n candidate heights h[i] < margin, the lowest ones (ties: the
// earlier index), and returns them as a bit mask over i; deterministic in the inputs.
template <class S>
SAP_HDI unsigned lowest_points_mask(const S* h, int n, int keep, S margin) {
  unsigned mask = 0;
  int count = 0;
  for (int i = 0; i < n; ++i)
    if (h[i] < margin) {
      mask |= 1u << i;
      ++count;
    }
  while (count > keep) {  // drop the highest (the later one on ties)
    int worst = -1;
    for (int i = 0; i < n; ++i)
      if ((mask >> i & 1u) && (worst < 0 || !(h[i] < h[worst]))) worst = i;
    mask &= ~(1u << worst);
    --count;
  }
  return mask;
}

// Corners of the box below plane + margin; the 4 lowest are kept (a box resting on a face
// touches with its 4 corners; more than 4 can be within a large margin of a thin box).
template <class S>
SAP_HD int collide_plane_box(const GeomFrame<S>& plane, const GeomFrame<S>& box, S margin, ContactGeom<S>* out) {
  const Vec3<S> n = plane.rot.col(2);
  Vec3<S> corner[8];
  S h[8];
  for (int i = 0; i < 8; ++i) {
    const S sx = (i & 1) ? S(1) : S(-1), sy = (i & 2) ? S(1) : S(-1), sz = (i & 4) ? S(1) : S(-1);
    corner[i] = box.pos + (sx * box.size[0]) * box.rot.col(0) + (sy * box.size[1]) * box.rot.col(1) +
                (sz * box.size[2]) * box.rot.col(2);
    h[i] = dot(corner[i] - plane.pos, n);
  }
  const unsigned mask = lowest_points_mask(h, 8, 4, margin);
  int k = 0;
  for (int i = 0; i < 8; ++i)
    if (mask >> i & 1u) k += plane_point_contact(plane, corner[i], margin, out + k);
  return k;
}

// Cylinder: on each end disk, the rim point lowest along the plane normal and the two rim
// points 120 degrees away from it (a tripod when the cylinder stands on an end face, the two
// lowest rim points when it lies on its side); the 4 lowest below plane + margin are kept.
template <class S>
SAP_HD int collide_plane_cylinder(const GeomFrame<S>& plane, const GeomFrame<S>& cyl, S margin, ContactGeom<S>* out) {
  const Vec3<S> n = plane.rot.col(2);
  const Vec3<S> axis = cyl.rot.col(2);
  const S r = cyl.size[0], hl = cyl.size[1];
  // Lowest rim direction: -(n projected on the disk plane), normalized; when the axis is along
  // n every rim point is equally low and the local x axis is used.
  Vec3<S> v = n - dot(n, axis) * axis;
  const S vn = norm(v);
  const Vec3<S> u0 = vn > S(1e-6) ? v * (S(-1) / vn) : cyl.rot.col(0);
  const Vec3<S> w0 = cross(axis, u0);
  const S c120 = S(-0.5), s120 = S(0.86602540378443864676);
  const Vec3<S> u[3] = {u0, c120 * u0 + s120 * w0, c120 * u0 - s120 * w0};
  Vec3<S> pts[6];
  S h[6];
  for (int e = 0; e < 2; ++e)
    for (int j = 0; j < 3; ++j) {
      const int i = 3 * e + j;
      pts[i] = cyl.pos + (e == 0 ? -hl : hl) * axis + r * u[j];
      h[i] = dot(pts[i] - plane.pos, n);
    }
  const unsigned mask = lowest_points_mask(h, 6, 4, margin);
  int k = 0;
  for (int i = 0; i < 6; ++i)
    if (mask >> i & 1u) k += plane_point_contact(plane, pts[i], margin, out + k);
  return k;
}

// ------------------------------------------------------------------------------------------
// sphere and capsule pairs: closest points of the core point/segments, then spheres.

template <class S>
SAP_HD int collide_sphere_sphere(const GeomFrame<S>& a, const GeomFrame<S>& b, S margin, ContactGeom<S>* out) {
  return collide_spheres(a.pos, a.size[0], b.pos, b.size[0], Vec3<S>::unit(2), margin, out);
}

template <class S>
SAP_HD int collide_sphere_capsule(const GeomFrame<S>& sph, const GeomFrame<S>& cap, S margin, ContactGeom<S>* out) {
  const Vec3<S> axis = cap.rot.col(2);
  const Vec3<S> p = cap.pos - cap.size[1] * axis, d = (S(2) * cap.size[1]) * axis;
  const Vec3<S> q = p + closest_on_segment(p, d, sph.pos) * d;
  return collide_spheres(sph.pos, sph.size[0], q, cap.size[0], any_perpendicular(axis), margin, out);
}

// Axes closer to parallel than this (sin^2 of the angle) get the two-point line contact.
template <class S>
SAP_HDI S capsule_parallel_sin2() {
  return S(1e-6);
}

// On the host in fp64, the distance between the two axes' lines: a lower bound of the segments'
// distance (their points lie on the lines). True when it exceeds r0 + r1 + margin by a slack
// far above the rounding of either test: then collide_capsule_segments has no contact either.
// The bounding spheres pass most of a humanoid's limb pairs (25 capsule pairs per world-step,
// 1 in 6,000 with a contact); three in four end here. False on a GPU lane (the kernel report
// counts its registers), in fp32, and for axes within 0.6 degrees of parallel.
template <class S>
SAP_HDI bool capsule_lines_apart(const GeomFrame<S>& c0, const GeomFrame<S>& c1, S margin) {
#if !defined(__CUDA_ARCH__)
  if constexpr (sizeof(S) == sizeof(double)) {
    const Vec3<S> n = cross(c0.rot.col(2), c1.rot.col(2));
    const S nn = dot(n, n);  // sin^2 of the axes' angle
    if (nn > S(1e-4)) {
      const Vec3<S> d = c1.pos - c0.pos;
      const S reach = c0.size[0] + c1.size[0] + margin + S(1e-9) * (norm(d) + c0.size[0] + c1.size[0] + abs_(margin));
      const S sep = dot(d, n);  // |n| times the lines' distance
      return sep * sep > reach * reach * nn;
    }
  }
#endif
  (void)c0, (void)c1, (void)margin;
  return false;
}

// The closest points of the two axis segments. When the axes are parallel (within
// capsule_parallel_sin2) and their projections overlap, the closest points are not unique: the
// two ends of the overlap on capsule 0's axis, each with its closest point on capsule 1's axis,
// give a line contact of 2 points (as MuJoCo does for parallel capsules).
template <class S>
SAP_HDI int collide_capsule_segments(const GeomFrame<S>& c0, const GeomFrame<S>& c1, S margin, ContactGeom<S>* out) {
  const Vec3<S> a0 = c0.rot.col(2), a1 = c1.rot.col(2);
  const Vec3<S> p = c0.pos - c0.size[1] * a0, dp = (S(2) * c0.size[1]) * a0;
  const Vec3<S> q = c1.pos - c1.size[1] * a1, dq = (S(2) * c1.size[1]) * a1;
  const S r0 = c0.size[0], r1 = c1.size[0];
  const Vec3<S> fallback = any_perpendicular(a0);
  const S a = dot(dp, dp), e = dot(dq, dq), b = dot(dp, dq);
  if (a > S(0) && e > S(0) && a * e - b * b <= capsule_parallel_sin2<S>() * a * e) {
    const S t0 = dot(q - p, dp) / a, t1 = dot(q + dq - p, dp) / a;
    const S lo = max_(S(0), min_(t0, t1)), hi = min_(S(1), max_(t0, t1));
    // A common stretch longer than a relative tolerance: two contacts at its ends.
    if (hi - lo > S(1e-4)) {
      int k = 0;
      const S ends[2] = {lo, hi};
      for (int i = 0; i < 2; ++i) {
        const Vec3<S> x = p + ends[i] * dp;
        const Vec3<S> y = q + closest_on_segment(q, dq, x) * dq;
        k += collide_spheres(x, r0, y, r1, fallback, margin, out + k);
      }
      return k;
    }
  }
  S s, t;
  closest_segment_segment(p, dp, q, dq, s, t);
  return collide_spheres(p + s * dp, r0, q + t * dq, r1, fallback, margin, out);
}

// Capsule-capsule: the segments' narrow phase, after the lines' bound on the host.
template <class S>
SAP_HD int collide_capsule_capsule(const GeomFrame<S>& c0, const GeomFrame<S>& c1, S margin, ContactGeom<S>* out) {
  if (capsule_lines_apart(c0, c1, margin)) return 0;
  return collide_capsule_segments(c0, c1, margin, out);
}

}  // namespace sap

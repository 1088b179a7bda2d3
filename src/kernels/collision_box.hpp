// Narrow phase for boxes: sphere-box, capsule-box, box-box (plane-box is in
// collision_primitives.hpp). Same conventions as there: normal from geom 0 to geom 1, witnesses
// on the two surfaces, phi = (x1 - x0) . normal, contacts only while phi < margin.
//
// Box-local coordinates: p_local = R^T (p - c); the box is [-s, s] (s = half-extents).
#pragma once

#include "kernels/collision_primitives.hpp"

namespace sap {

// Signed distance from a box-local point p to the box surface: outside, the Euclidean distance
// to the clamped point; inside, max_i (|p_i| - s_i) (minus the distance to the nearest face).
// The signed distance of a convex set is a convex function of p.
template <class S>
SAP_HDI S box_signed_distance(const Vec3<S>& s, const Vec3<S>& p) {
  S out2 = S(0), inside = -ScalarTraits<S>::huge;
  for (int i = 0; i < 3; ++i) {
    const S e = abs_(p[i]) - s[i];
    if (e > S(0)) out2 += e * e;
    inside = max_(inside, e);
  }
  return out2 > S(0) ? sqrt_(out2) : inside;
}

// Same, with the nearest surface point q and the outward unit normal m at q (box-local), so
// that p = q + sd m. Inside, the nearest face is the first axis of largest |p_i| - s_i.
template <class S>
SAP_HD S box_closest_point(const Vec3<S>& s, const Vec3<S>& p, Vec3<S>& q, Vec3<S>& m) {
  bool outside = false;
  for (int i = 0; i < 3; ++i) {
    q[i] = clamp_(p[i], -s[i], s[i]);
    outside = outside || abs_(p[i]) > s[i];
  }
  if (outside) {
    const Vec3<S> d = p - q;
    const S dist = norm(d);
    m = d * (S(1) / dist);
    return dist;
  }
  int k = 0;
  S best = abs_(p[0]) - s[0];
  for (int i = 1; i < 3; ++i)
    if (abs_(p[i]) - s[i] > best) {
      best = abs_(p[i]) - s[i];
      k = i;
    }
  const S sign = p[k] < S(0) ? S(-1) : S(1);
  q = p;
  q[k] = sign * s[k];
  m = Vec3<S>::zero();
  m[k] = sign;
  return best;
}

template <class S>
SAP_HDI void segment_box_try(const Vec3<S>& s, const Vec3<S>& a, const Vec3<S>& d, S t, S& best, S& t_best) {
  if (!(t > S(0) && t < S(1))) return;
  const S v = box_signed_distance(s, a + t * d);
  if (v < best) {
    best = v;
    t_best = t;
  }
}

// Minimum over t in [0, 1] of sd(t) = box_signed_distance(a + t d), exactly, and its argument.
// sd(t) is convex and piecewise smooth, so its minimum is at an end, at a kink or at a
// stationary point of a smooth piece; every such t is a candidate:
//   - kinks where a coordinate crosses a face plane or zero:  a_i + t d_i in {-s_i, 0, s_i};
//   - inside, sd = max_i (sigma_i p_i - s_i) is piecewise linear with kinks where two of these
//     lines cross:  sigma_i p_i - s_i = sigma_j p_j - s_j;
//   - outside, sd^2 = sum_{i in A} (sigma_i p_i - s_i)^2 over the clamped axes A (signs
//     sigma_i) is quadratic, stationary at t = sum_A d_i (sigma_i s_i - a_i) / sum_A d_i^2;
//     one-axis sets are kinks above, the 20 sets of 2 or 3 axes are tried here.
// Ties keep the first candidate (t = 0 first), so the result is a function of the inputs.
template <class S>
SAP_HD S segment_box_min(const Vec3<S>& s, const Vec3<S>& a, const Vec3<S>& d, S& t_best) {
  S best = box_signed_distance(s, a);
  t_best = S(0);
  {
    const S v = box_signed_distance(s, a + d);
    if (v < best) {
      best = v;
      t_best = S(1);
    }
  }
  for (int i = 0; i < 3; ++i) {
    if (d[i] == S(0)) continue;
    const S inv = S(1) / d[i];
    segment_box_try(s, a, d, (s[i] - a[i]) * inv, best, t_best);
    segment_box_try(s, a, d, (-s[i] - a[i]) * inv, best, t_best);
    segment_box_try(s, a, d, -a[i] * inv, best, t_best);
  }
  for (int i = 0; i < 3; ++i)
    for (int j = i + 1; j < 3; ++j)
      for (int c = 0; c < 4; ++c) {
        const S si = (c & 1) ? S(-1) : S(1), sj = (c & 2) ? S(-1) : S(1);
        const S den = si * d[i] - sj * d[j];
        if (den == S(0)) continue;
        segment_box_try(s, a, d, (s[i] - s[j] - si * a[i] + sj * a[j]) / den, best, t_best);
      }
  for (int pattern = 0; pattern < 27; ++pattern) {  // base-3 digits: 0 free, 1 at +s, 2 at -s
    int code = pattern, nactive = 0;
    S num = S(0), den = S(0);
    for (int i = 0; i < 3; ++i, code /= 3) {
      const int digit = code % 3;
      if (digit == 0) continue;
      const S sigma = digit == 1 ? S(1) : S(-1);
      ++nactive;
      num += d[i] * (sigma * s[i] - a[i]);
      den += d[i] * d[i];
    }
    if (nactive >= 2 && den > S(0)) segment_box_try(s, a, d, num / den, best, t_best);
  }
  return best;
}

// Box-local contact of a point p of geom 0 inflated by radius r, against the box (geom 1):
// x0 = p - r m on the sphere, x1 = q on the box, normal -m (from the sphere into the box).
template <class S>
SAP_HD int box_local_point_contact(const GeomFrame<S>& box, const Vec3<S>& p_local, S r, S margin,
                                   ContactGeom<S>* out) {
  Vec3<S> q, m;
  box_closest_point(box.size, p_local, q, m);
  const Vec3<S> mw = box.rot * m;
  const Vec3<S> pw = box.pos + box.rot * p_local;
  return emit_contact(pw - r * mw, box.pos + box.rot * q, -mw, margin, out);
}

template <class S>
SAP_HD int collide_sphere_box(const GeomFrame<S>& sph, const GeomFrame<S>& box, S margin, ContactGeom<S>* out) {
  const Vec3<S> c = mul_transpose(box.rot, sph.pos - box.pos);
  return box_local_point_contact(box, c, sph.size[0], margin, out);
}

// Clips the segment a + t d, t in [t0, t1], to the slab |x_i| <= lim (Liang-Barsky).
template <class S>
SAP_HDI bool clip_segment_slab(S a, S d, S lim, S& t0, S& t1) {
  if (d == S(0)) return abs_(a) <= lim;
  S ta = (-lim - a) / d, tb = (lim - a) / d;
  if (ta > tb) {
    const S tmp = ta;
    ta = tb;
    tb = tmp;
  }
  t0 = max_(t0, ta);
  t1 = min_(t1, tb);
  return t0 <= t1;
}

// Contact of the capsule axis point p (box-local; end flag as capsule_surface_toward) with the
// box: the box point q nearest to p, normal -m (m outward at q: from the capsule into the box),
// and the capsule's surface point at p farthest along that normal.
template <class S>
SAP_HD int capsule_box_point_contact(const GeomFrame<S>& box, const Vec3<S>& p, int end, const Vec3<S>& axis, S r,
                                     S margin, ContactGeom<S>* out) {
  Vec3<S> q, m;
  box_closest_point(box.size, p, q, m);
  const Vec3<S> x0 = capsule_surface_toward(p, end, axis, r, -m);
  return emit_contact(box.pos + box.rot * x0, box.pos + box.rot * q, -(box.rot * m), margin, out);
}

SAP_HDI int segment_end_flag(float t) { return t == 0.0f ? -1 : t == 1.0f ? 1 : 0; }
SAP_HDI int segment_end_flag(double t) { return t == 0.0 ? -1 : t == 1.0 ? 1 : 0; }

// Capsule (geom 0) - box (geom 1). The deepest point of the axis segment, t* (segment_box_min),
// gives the exact closest pair. When the nearest box feature is a face, the contact is a line:
// the segment is clipped to that face's side slabs and both clipped ends become contacts
// measured along the face normal (a capsule lying on a face gets 2 points, like box-box face
// clipping); when the feature is an edge the segment runs along, it is clipped to the edge's
// length the same way. Otherwise the single closest pair is the contact.
// Which face: outside the box, the one face slab p* is beyond; when the axis touches or enters
// the box, the face along which the capsule needs the least push to clear it (a separating-axis
// choice over the box's face normals, stable where p* sits on the box's medial surface).
template <class S>
SAP_HD int collide_capsule_box(const GeomFrame<S>& cap, const GeomFrame<S>& box, S margin, ContactGeom<S>* out) {
  const Vec3<S> axis = mul_transpose(box.rot, cap.rot.col(2));  // box-local unit axis
  const Vec3<S> a = mul_transpose(box.rot, cap.pos - box.pos) - cap.size[1] * axis;
  const Vec3<S> d = (S(2) * cap.size[1]) * axis;
  const S r = cap.size[0];
  const Vec3<S>& s = box.size;
  S t_star;
  const S sd = segment_box_min(s, a, d, t_star);
  if (!(sd - r < margin)) return 0;
  const Vec3<S> p = a + t_star * d;
  const S len = norm(d);
  const S tol = sqrt_(ScalarTraits<S>::eps) * (s[0] + s[1] + s[2] + len);
  int nout = 0, kout = -1;
  for (int i = 0; i < 3; ++i)
    if (abs_(p[i]) > s[i] + tol) {
      ++nout;
      kout = i;
    }
  int k = 0;
  if (nout <= 1 && len > S(0)) {
    int f = kout;
    S sigma = S(1);
    if (nout == 1) {
      sigma = p[f] < S(0) ? S(-1) : S(1);
    } else {
      S best_push = ScalarTraits<S>::huge;
      for (int i = 0; i < 3; ++i)
        for (int sg = 0; sg < 2; ++sg) {
          const S sgn = sg ? S(-1) : S(1);
          const S push = s[i] - min_(sgn * a[i], sgn * (a[i] + d[i]));
          if (push < best_push) {
            best_push = push;
            f = i;
            sigma = sgn;
          }
        }
    }
    S t0 = S(0), t1 = S(1);
    bool hit = true;
    for (int i = 0; i < 3; ++i)
      if (i != f) hit = hit && clip_segment_slab(a[i], d[i], s[i], t0, t1);
    if (hit) {
      Vec3<S> n = Vec3<S>::zero();  // box-local, from the capsule into the face
      n[f] = -sigma;
      const int nend = (t1 - t0) * len > tol ? 2 : 1;
      for (int e = 0; e < nend; ++e) {
        const S t = e == 0 ? t0 : t1;
        const Vec3<S> x0 = capsule_surface_toward(a + t * d, segment_end_flag(t), axis, r, n);
        Vec3<S> x1 = x0;  // x0 projected on the face plane (clamped to the face)
        x1[f] = sigma * s[f];
        for (int i = 0; i < 3; ++i)
          if (i != f) x1[i] = clamp_(x1[i], -s[i], s[i]);
        k += emit_contact(box.pos + box.rot * x0, box.pos + box.rot * x1, box.rot * n, margin, out + k);
      }
    }
  } else if (nout == 2 && len > S(0)) {
    // Edge feature along the free axis e: if the segment runs along it, clip to the edge length.
    int e = 0;
    while (e < 2 && abs_(p[e]) > s[e] + tol) ++e;
    if (abs_(d[e]) >= (S(1) - S(1e-6)) * len) {
      S t0 = S(0), t1 = S(1);
      if (clip_segment_slab(a[e], d[e], s[e], t0, t1) && (t1 - t0) * len > tol) {
        k += capsule_box_point_contact(box, a + t0 * d, segment_end_flag(t0), axis, r, margin, out + k);
        k += capsule_box_point_contact(box, a + t1 * d, segment_end_flag(t1), axis, r, margin, out + k);
      }
    }
  }
  // Vertex feature, or a clipped contact set that came out empty: the closest pair itself.
  if (k == 0) k = capsule_box_point_contact(box, p, segment_end_flag(t_star), axis, r, margin, out);
  return k;
}

// ------------------------------------------------------------------------------------------
// box-box: separating-axis test over the 15 axes (3 + 3 face normals, 9 edge cross products),
// then either a face manifold (Sutherland-Hodgman clipping of the incident face against the
// reference face's side planes, up to 8 points) or one edge-edge contact.

// Box-box contact with the reference face on box `ref` (local axis k, outward sign sigma) and
// the incident face on box `inc`. Points of the clipped incident face are measured along the
// reference normal; `ref_is_geom0` says which geom the reference box is.
template <class S>
SAP_HD int box_face_manifold(const GeomFrame<S>& ref, int kf, S sigma, const GeomFrame<S>& inc, bool ref_is_geom0,
                             S margin, ContactGeom<S>* out) {
  const Vec3<S> nref = sigma * ref.rot.col(kf);  // outward normal of the reference face (world)
  // Incident face: the face of `inc` most anti-parallel to nref.
  int j = 0;
  S best = abs_(dot(inc.rot.col(0), nref));
  for (int i = 1; i < 3; ++i) {
    const S v = abs_(dot(inc.rot.col(i), nref));
    if (v > best) {
      best = v;
      j = i;
    }
  }
  const S sj = dot(inc.rot.col(j), nref) > S(0) ? S(-1) : S(1);
  const int j1 = (j + 1) % 3, j2 = (j + 2) % 3;
  const Vec3<S> fc = inc.pos + (sj * inc.size[j]) * inc.rot.col(j);
  const Vec3<S> u = inc.size[j1] * inc.rot.col(j1), v = inc.size[j2] * inc.rot.col(j2);
  // Polygon in the reference box's local frame (cyclic order).
  Vec3<S> poly[8], next[8];
  int n = 4;
  const Vec3<S> corners[4] = {fc + u + v, fc - u + v, fc - u - v, fc + u - v};
  for (int i = 0; i < 4; ++i) poly[i] = mul_transpose(ref.rot, corners[i] - ref.pos);
  // Clip against the 4 side planes  sign * x_axis <= s_axis  of the reference face. Points
  // within `ctol` of a plane count as inside, so edges of equal-size faces that coincide up to
  // rounding are not cut at arbitrary points.
  const S scale = ref.size[0] + ref.size[1] + ref.size[2] + inc.size[0] + inc.size[1] + inc.size[2];
  const S ctol = S(64) * ScalarTraits<S>::eps * scale;
  for (int plane = 0; plane < 4 && n > 0; ++plane) {
    const int ax = (kf + 1 + (plane >> 1)) % 3;
    const S sg = (plane & 1) ? S(-1) : S(1);
    const S lim = ref.size[ax];
    int m = 0;
    for (int i = 0; i < n; ++i) {
      const Vec3<S>& P = poly[i];
      const Vec3<S>& Q = poly[(i + 1) % n];
      const S dp = sg * P[ax] - lim, dq = sg * Q[ax] - lim;
      const bool in_p = dp <= ctol, in_q = dq <= ctol;
      if (in_p) next[m++] = P;
      if (in_p != in_q) next[m++] = P + clamp_(dp / (dp - dq), S(0), S(1)) * (Q - P);
    }
    n = m;
    for (int i = 0; i < n; ++i) poly[i] = next[i];
  }
  // Points of the clipped polygon: depth along the reference normal; near-duplicates are merged.
  const S dup2 = sqr_(sqrt_(ScalarTraits<S>::eps) * scale);
  int k = 0;
  for (int i = 0; i < n; ++i) {
    bool dup = false;
    for (int q = 0; q < i; ++q) dup = dup || squared_norm(poly[i] - poly[q]) <= dup2;
    if (dup) continue;
    Vec3<S> on_ref = poly[i];  // projection on the reference face (clamped onto it)
    for (int ax = 0; ax < 3; ++ax) on_ref[ax] = clamp_(on_ref[ax], -ref.size[ax], ref.size[ax]);
    on_ref[kf] = sigma * ref.size[kf];
    const Vec3<S> xi = ref.pos + ref.rot * poly[i], xr = ref.pos + ref.rot * on_ref;
    k += ref_is_geom0 ? emit_contact(xr, xi, nref, margin, out + k) : emit_contact(xi, xr, -nref, margin, out + k);
  }
  return k;
}

// Exact closest pair of two disjoint boxes (fallback when the separating axis does not give
// touching features, e.g. corner against corner): the closest points are on an edge of A or,
// when A's point is inside a face, at a corner of B; so the minimum over A's 12 edges against
// box B (segment_box_min) and B's 8 corners against box A is the distance.
template <class S>
SAP_HD int box_box_closest(const GeomFrame<S>& A, const GeomFrame<S>& B, S margin, ContactGeom<S>* out) {
  S best = ScalarTraits<S>::huge;
  int best_kind = -1;  // 0..11 edge of A, 12..19 corner of B
  S best_t = S(0);
  for (int e = 0; e < 12; ++e) {
    const int ax = e >> 2, o1 = (ax + 1) % 3, o2 = (ax + 2) % 3;
    const S s1 = (e & 1) ? S(-1) : S(1), s2 = (e & 2) ? S(-1) : S(1);
    const Vec3<S> ea = A.pos + (s1 * A.size[o1]) * A.rot.col(o1) + (s2 * A.size[o2]) * A.rot.col(o2) -
                       A.size[ax] * A.rot.col(ax);
    const Vec3<S> a = mul_transpose(B.rot, ea - B.pos);
    const Vec3<S> d = mul_transpose(B.rot, (S(2) * A.size[ax]) * A.rot.col(ax));
    S t;
    const S v = segment_box_min(B.size, a, d, t);
    if (v < best) {
      best = v;
      best_kind = e;
      best_t = t;
    }
  }
  for (int c = 0; c < 8; ++c) {
    const Vec3<S> corner = B.pos + (((c & 1) ? S(-1) : S(1)) * B.size[0]) * B.rot.col(0) +
                           (((c & 2) ? S(-1) : S(1)) * B.size[1]) * B.rot.col(1) +
                           (((c & 4) ? S(-1) : S(1)) * B.size[2]) * B.rot.col(2);
    const S v = box_signed_distance(A.size, mul_transpose(A.rot, corner - A.pos));
    if (v < best) {
      best = v;
      best_kind = 12 + c;
    }
  }
  if (!(best < margin)) return 0;
  if (best_kind < 12) {
    const int e = best_kind, ax = e >> 2, o1 = (ax + 1) % 3, o2 = (ax + 2) % 3;
    const S s1 = (e & 1) ? S(-1) : S(1), s2 = (e & 2) ? S(-1) : S(1);
    const Vec3<S> ea = A.pos + (s1 * A.size[o1]) * A.rot.col(o1) + (s2 * A.size[o2]) * A.rot.col(o2) +
                       ((S(2) * best_t - S(1)) * A.size[ax]) * A.rot.col(ax);
    return box_local_point_contact(B, mul_transpose(B.rot, ea - B.pos), S(0), margin, out);
  }
  const int c = best_kind - 12;
  const Vec3<S> corner = B.pos + (((c & 1) ? S(-1) : S(1)) * B.size[0]) * B.rot.col(0) +
                         (((c & 2) ? S(-1) : S(1)) * B.size[1]) * B.rot.col(1) +
                         (((c & 4) ? S(-1) : S(1)) * B.size[2]) * B.rot.col(2);
  Vec3<S> q, m;
  box_closest_point(A.size, mul_transpose(A.rot, corner - A.pos), q, m);
  return emit_contact(A.pos + A.rot * q, corner, A.rot * m, margin, out);
}

template <class S>
SAP_HD int collide_box_box(const GeomFrame<S>& A, const GeomFrame<S>& B, S margin, ContactGeom<S>* out) {
  const Vec3<S> t = B.pos - A.pos;
  const Vec3<S>& a = A.size;
  const Vec3<S>& b = B.size;
  const Mat3<S> C = transpose(A.rot) * B.rot;  // C(i, j) = uA_i . uB_j
  const Vec3<S> ta = mul_transpose(A.rot, t), tb = mul_transpose(B.rot, t);
  // Separation along an axis L: |t.L| - (projected half-width of A) - (of B). The largest
  // separation over the 15 axes is the least penetration (or a lower bound on the distance).
  S face_sep = -ScalarTraits<S>::huge;
  int face = -1;  // 0..2 faces of A, 3..5 faces of B
  for (int i = 0; i < 3; ++i) {
    const S sep = abs_(ta[i]) - a[i] - (b[0] * abs_(C(i, 0)) + b[1] * abs_(C(i, 1)) + b[2] * abs_(C(i, 2)));
    if (sep > face_sep) {
      face_sep = sep;
      face = i;
    }
  }
  for (int j = 0; j < 3; ++j) {
    const S sep = abs_(tb[j]) - b[j] - (a[0] * abs_(C(0, j)) + a[1] * abs_(C(1, j)) + a[2] * abs_(C(2, j)));
    if (sep > face_sep) {
      face_sep = sep;
      face = 3 + j;
    }
  }
  S edge_sep = -ScalarTraits<S>::huge;
  int edge = -1;                        // 3 i + j: uA_i x uB_j
  Vec3<S> edge_axis = Vec3<S>::zero();  // A-local, unit
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const Vec3<S> L = cross(Vec3<S>::unit(i), C.col(j));  // A-local
      const S len2 = squared_norm(L);
      if (len2 < S(1e-6)) continue;  // (nearly) parallel edges: covered by the face axes
      const Vec3<S> Ln = L * (S(1) / sqrt_(len2));
      const Vec3<S> Lb = mul_transpose(C, Ln);  // B-local
      const S sep = abs_(dot(ta, Ln)) - (a[0] * abs_(Ln[0]) + a[1] * abs_(Ln[1]) + a[2] * abs_(Ln[2])) -
                    (b[0] * abs_(Lb[0]) + b[1] * abs_(Lb[1]) + b[2] * abs_(Lb[2]));
      if (sep > edge_sep) {
        edge_sep = sep;
        edge = 3 * i + j;
        edge_axis = Ln;
      }
    }
  if (!(max_(face_sep, edge_sep) < margin)) return 0;
  // Face axes are preferred unless an edge axis is clearly better (5% less penetration, as in
  // ODE's box-box), which keeps face manifolds for resting contact.
  const S scale = a[0] + a[1] + a[2] + b[0] + b[1] + b[2];
  const S bias = S(1e-5) * scale;
  const bool use_edge = edge >= 0 &&
                        (face_sep >= S(0) ? edge_sep > face_sep + bias : edge_sep > S(0.95) * face_sep + bias);
  const S sep = use_edge ? edge_sep : face_sep;
  int k = 0;
  if (!use_edge) {
    if (face < 3) k = box_face_manifold(A, face, ta[face] < S(0) ? S(-1) : S(1), B, true, margin, out);
    else k = box_face_manifold(B, face - 3, tb[face - 3] < S(0) ? S(1) : S(-1), A, false, margin, out);
  } else {
    const int i = edge / 3, j = edge % 3;
    Vec3<S> L = A.rot * edge_axis;  // world, oriented from A to B
    if (dot(L, t) < S(0)) L = -L;
    // Edge of A farthest along L (parallel to uA_i), edge of B farthest along -L (parallel to uB_j).
    Vec3<S> ca = A.pos, cb = B.pos;
    for (int m = 0; m < 3; ++m) {
      if (m != i) ca += ((dot(A.rot.col(m), L) < S(0) ? S(-1) : S(1)) * a[m]) * A.rot.col(m);
      if (m != j) cb += ((dot(B.rot.col(m), L) > S(0) ? S(-1) : S(1)) * b[m]) * B.rot.col(m);
    }
    const Vec3<S> pa = ca - a[i] * A.rot.col(i), da = (S(2) * a[i]) * A.rot.col(i);
    const Vec3<S> pb = cb - b[j] * B.rot.col(j), db = (S(2) * b[j]) * B.rot.col(j);
    S sa, sb;
    closest_segment_segment(pa, da, pb, db, sa, sb);
    const bool interior = sa > S(0) && sa < S(1) && sb > S(0) && sb < S(1);
    // Interior closest points: the edges touch and L is their common normal. Otherwise (only
    // possible while separated or for grazing overlaps) use the exact distance below.
    if (interior || sep <= S(0)) k = emit_contact(pa + sa * da, pb + sb * db, L, margin, out);
  }
  if (sep > S(0) && !(use_edge && k > 0)) {
    // Separated: the best axis only bounds the distance from below; it is exact when its
    // features touch (face-corner, face-face). Corner-edge or corner-corner configurations
    // leave the face manifold empty or too shallow: then the exact closest pair replaces it.
    ContactGeom<S> exact;
    if (box_box_closest(A, B, margin, &exact) == 0) return k;
    S kmin = ScalarTraits<S>::huge;
    for (int i = 0; i < k; ++i) kmin = min_(kmin, out[i].phi);
    if (k == 0 || kmin > exact.phi + sqrt_(ScalarTraits<S>::eps) * scale) {
      out[0] = exact;
      return 1;
    }
    return k;
  }
  if (k > 0) return k;
  // Overlapping but the face clipping came out empty (deep, skewed overlap): the deepest corner
  // of the incident box along the reference normal.
  if (use_edge) return 0;
  const bool ref_a = face < 3;
  const GeomFrame<S>& R = ref_a ? A : B;
  const GeomFrame<S>& I = ref_a ? B : A;
  const int kf = ref_a ? face : face - 3;
  const S sigma = ref_a ? (ta[kf] < S(0) ? S(-1) : S(1)) : (tb[kf] < S(0) ? S(1) : S(-1));
  const Vec3<S> nref = sigma * R.rot.col(kf);
  Vec3<S> corner = I.pos;
  for (int m = 0; m < 3; ++m) corner += ((dot(I.rot.col(m), nref) > S(0) ? S(-1) : S(1)) * I.size[m]) * I.rot.col(m);
  const S h = dot(corner - R.pos, nref) - R.size[kf];
  const Vec3<S> on_ref = corner - h * nref;
  return ref_a ? emit_contact(on_ref, corner, nref, margin, out) : emit_contact(corner, on_ref, -nref, margin, out);
}

}  // namespace sap

// General convex narrow phase, the query: support functions of every convex shape, GJK
// (distance of separated shapes) and EPA (penetration of overlapping ones), with the
// support-function polish of the penetration direction. The contact manifold built on the
// query is in collision_manifold.hpp, heightfields in collision_hfield.hpp. Same conventions as
// collision_primitives.hpp: normal from geom 0 to geom 1, x0 / x1 on the two surfaces,
// phi = (x1 - x0) . normal, contacts only while phi < margin.
//
// Algorithms (docs/collision.md has the long form):
//   - Support s_X(d) = argmax_{x in X} d . x. Sphere and capsule enter GJK/EPA as their core
//     (a point, a segment) and their radius is added back afterwards (exact and faster than
//     rounding the support). Mesh hulls climb the vertex adjacency (mesh_edge): on a convex
//     polytope a vertex no neighbour of which improves d . x is a global maximum.
//   - GJK on the Minkowski difference D = B - A (w = b - a): the closest point v of the current
//     simplex to the origin (Ericson's region tests), the next vertex w = s_D(-v); the distance
//     is bracketed by  (v . w) / |v| <= dist <= |v|,  which also gives the early exit when the
//     lower bound already exceeds the margin.
//   - EPA when the origin is inside D: a polytope (at most kEpaMaxVerts vertices) is grown
//     towards the face nearest the origin until the support along its normal m adds less than
//     a tolerance; depth = that face's distance d, contact normal n = -m (B leaves A along n),
//     witnesses from the barycentric coordinates of d m on the face.
#pragma once

#include "kernels/collision_primitives.hpp"

// The convex pairs keep their scratch (EPA polytope, feature polygons) in their own frames:
// not inlined on the device, so the collision kernel's stack is the deepest call chain, not
// the sum of every pair's locals (and the analytic pairs keep their small frames).
#if defined(__CUDACC__)
#define SAP_CONVEX_NOINLINE __noinline__
#else
#define SAP_CONVEX_NOINLINE
#endif

namespace sap {

#ifndef SAP_EPA_MAX_VERTS
#define SAP_EPA_MAX_VERTS 16
#endif
constexpr int kEpaMaxVerts = SAP_EPA_MAX_VERTS;  // EPA polytope capacity (faces: 2 V - 4)
constexpr int kEpaMaxFaces = 2 * kEpaMaxVerts - 4;
constexpr int kMaxFeature = 8;          // points of a support feature (cylinder cap: octagon)
constexpr int kGjkMaxIter = 64;
constexpr int kConvexPoints = 100;  // ConvexShape type: a point set (heightfield prism)

// sin of the angle within which a face or edge counts as facing the contact normal.
template <class S>
SAP_HDI S feature_sin() {
  return S(0.035);  // 2 degrees
}
SAP_HDI float floor_s(float x) { return ::floorf(x); }
SAP_HDI double floor_s(double x) { return ::floor(x); }

template <class S>
SAP_HDI S gjk_rel_tol() {
  return sizeof(S) == 4 ? S(1e-5) : S(1e-10);
}

// One convex operand of GJK/EPA: a geom (type, frame) or a world point set.
template <class S>
struct ConvexShape {
  int type = kGeomSphere;
  const GeomFrame<S>* frame = nullptr;
  const Vec3<S>* pts = nullptr;  // kConvexPoints: world points
  int npts = 0;
};

// Radius added around the GJK core (sphere: a point, capsule: a segment); 0 for the rest.
template <class S>
SAP_HDI S core_radius(const ConvexShape<S>& s) {
  return (s.type == kGeomSphere || s.type == kGeomCapsule) ? s.frame->size[0] : S(0);
}

template <class S>
SAP_HDI Vec3<S> mesh_vertex(const GeomFrame<S>& g, int v) {
  return Vec3<S>::load(g.vert + 3 * v);
}

// Mesh support in the geom frame: hill climbing over the hull adjacency from vertex `start`
// (strictly increasing d . x, so it terminates; on a convex hull the local maximum is global),
// or a scan of all vertices when the mesh has no adjacency.
template <class S>
SAP_HD int mesh_support_vertex(const GeomFrame<S>& g, const Vec3<S>& d, int start) {
  int best = start;
  S best_val = dot(mesh_vertex(g, best), d);
  if (g.vert_edgeadr == nullptr || g.edge == nullptr) {
    for (int v = 0; v < g.nvert; ++v) {
      const S val = dot(mesh_vertex(g, v), d);
      if (val > best_val) {
        best_val = val;
        best = v;
      }
    }
    return best;
  }
  for (int it = 0; it < g.nvert; ++it) {
    int next = -1;
    const int adr = g.vert_edgeadr[best], num = g.vert_edgenum[best];
    for (int e = 0; e < num; ++e) {
      const int u = g.edge[adr + e];
      const S val = dot(mesh_vertex(g, u), d);
      if (val > best_val) {
        best_val = val;
        next = u;
      }
    }
    if (next < 0) break;
    best = next;
  }
  return best;
}

// Support point of a geom in its own frame, direction d (local, not necessarily unit). With
// core = true, a sphere is its center and a capsule its axis segment.
template <class S>
SAP_HD Vec3<S> support_local(int type, const GeomFrame<S>& g, const Vec3<S>& d, bool core) {
  const Vec3<S>& s = g.size;
  switch (type) {
    case kGeomSphere: {
      if (core) return Vec3<S>::zero();
      const S n = norm(d);
      return n > S(0) ? d * (s[0] / n) : Vec3<S>{{S(0), S(0), -s[0]}};
    }
    case kGeomCapsule: {
      Vec3<S> p{{S(0), S(0), d[2] >= S(0) ? s[1] : -s[1]}};
      if (core) return p;
      const S n = norm(d);
      return n > S(0) ? p + d * (s[0] / n) : p;
    }
    case kGeomBox:
      return {{d[0] >= S(0) ? s[0] : -s[0], d[1] >= S(0) ? s[1] : -s[1], d[2] >= S(0) ? s[2] : -s[2]}};
    case kGeomCylinder: {
      const S rho = sqrt_(d[0] * d[0] + d[1] * d[1]);
      const S z = d[2] >= S(0) ? s[1] : -s[1];
      if (!(rho > S(0))) return {{S(0), S(0), z}};
      return {{d[0] * (s[0] / rho), d[1] * (s[0] / rho), z}};
    }
    case kGeomEllipsoid: {
      // max of d . x over x^T A^-2 x <= 1 (A = diag(s)): x = A^2 d / |A d|
      const Vec3<S> ad = cwise_mul(s, d);
      const S n = norm(ad);
      if (!(n > S(0))) return {{S(0), S(0), -s[2]}};
      return cwise_mul(s, ad) * (S(1) / n);
    }
    case kGeomMesh: return mesh_vertex(g, mesh_support_vertex(g, d, 0));
    default: return Vec3<S>::zero();
  }
}

// World support point of a convex operand along the world direction d.
template <class S>
SAP_HD Vec3<S> support_world(const ConvexShape<S>& sh, const Vec3<S>& d, bool core) {
  if (sh.type == kConvexPoints) {
    int best = 0;
    S best_val = dot(sh.pts[0], d);
    for (int i = 1; i < sh.npts; ++i) {
      const S val = dot(sh.pts[i], d);
      if (val > best_val) {
        best_val = val;
        best = i;
      }
    }
    return sh.pts[best];
  }
  const GeomFrame<S>& g = *sh.frame;
  return g.pos + g.rot * support_local(sh.type, g, mul_transpose(g.rot, d), core);
}

// ------------------------------------------------------------------------------------------
// GJK

template <class S>
struct GjkSimplex {
  Vec3<S> w[4], b[4];  // Minkowski vertex w = b - a and the support point b of shape B
  S lambda[4];         // barycentric coordinates of the closest point
  int n = 0;
};

template <class S>
SAP_HDI void simplex_keep(GjkSimplex<S>& sx, int i0, int i1, int i2, S l0, S l1, S l2, int n) {
  const int ids[3] = {i0, i1, i2};
  const S ls[3] = {l0, l1, l2};
  Vec3<S> w[3], b[3];
  for (int k = 0; k < n; ++k) {
    w[k] = sx.w[ids[k]];
    b[k] = sx.b[ids[k]];
  }
  for (int k = 0; k < n; ++k) {
    sx.w[k] = w[k];
    sx.b[k] = b[k];
    sx.lambda[k] = ls[k];
  }
  sx.n = n;
}

// Closest point of triangle (i0, i1, i2) of the simplex to the origin (Ericson, Real-Time
// Collision Detection 5.1.5: Voronoi regions by the signs of d1..d6 and the barycentric areas).
// Writes the barycentric coordinates and the vertices that carry them; returns |v|^2.
template <class S>
SAP_HD S closest_on_triangle(const Vec3<S>& a, const Vec3<S>& b, const Vec3<S>& c, S* l, int* region) {
  const Vec3<S> ab = b - a, ac = c - a, ap = -a;
  const S d1 = dot(ab, ap), d2 = dot(ac, ap);
  Vec3<S> v;
  if (d1 <= S(0) && d2 <= S(0)) {
    l[0] = S(1), l[1] = l[2] = S(0), *region = 1;
    return squared_norm(a);
  }
  const Vec3<S> bp = -b;
  const S d3 = dot(ab, bp), d4 = dot(ac, bp);
  if (d3 >= S(0) && d4 <= d3) {
    l[1] = S(1), l[0] = l[2] = S(0), *region = 2;
    return squared_norm(b);
  }
  const S vc = d1 * d4 - d3 * d2;
  if (vc <= S(0) && d1 >= S(0) && d3 <= S(0)) {
    const S t = d1 / (d1 - d3);
    l[0] = S(1) - t, l[1] = t, l[2] = S(0), *region = 3;
    v = a + t * ab;
    return squared_norm(v);
  }
  const Vec3<S> cp = -c;
  const S d5 = dot(ab, cp), d6 = dot(ac, cp);
  if (d6 >= S(0) && d5 <= d6) {
    l[2] = S(1), l[0] = l[1] = S(0), *region = 4;
    return squared_norm(c);
  }
  const S vb = d5 * d2 - d1 * d6;
  if (vb <= S(0) && d2 >= S(0) && d6 <= S(0)) {
    const S t = d2 / (d2 - d6);
    l[0] = S(1) - t, l[2] = t, l[1] = S(0), *region = 5;
    v = a + t * ac;
    return squared_norm(v);
  }
  const S va = d3 * d6 - d5 * d4;
  if (va <= S(0) && (d4 - d3) >= S(0) && (d5 - d6) >= S(0)) {
    const S t = (d4 - d3) / ((d4 - d3) + (d5 - d6));
    l[1] = S(1) - t, l[2] = t, l[0] = S(0), *region = 6;
    v = b + t * (c - b);
    return squared_norm(v);
  }
  const S denom = va + vb + vc;
  if (!(abs_(denom) > S(0))) {  // degenerate triangle: best edge
    l[0] = S(1), l[1] = l[2] = S(0), *region = 1;
    return squared_norm(a);
  }
  const S inv = S(1) / denom;
  l[1] = vb * inv, l[2] = vc * inv, l[0] = S(1) - l[1] - l[2], *region = 7;
  v = l[0] * a + l[1] * b + l[2] * c;
  return squared_norm(v);
}

// The triangle case of simplex_closest (n = 3): keeps the feature of the closest point.
template <class S>
SAP_HDI void simplex_closest_triangle(GjkSimplex<S>& sx) {
  S l[3];
  int region;
  closest_on_triangle(sx.w[0], sx.w[1], sx.w[2], l, &region);
  switch (region) {
    case 1: simplex_keep(sx, 0, 0, 0, S(1), S(0), S(0), 1); break;
    case 2: simplex_keep(sx, 1, 0, 0, S(1), S(0), S(0), 1); break;
    case 3: simplex_keep(sx, 0, 1, 0, l[0], l[1], S(0), 2); break;
    case 4: simplex_keep(sx, 2, 0, 0, S(1), S(0), S(0), 1); break;
    case 5: simplex_keep(sx, 0, 2, 0, l[0], l[2], S(0), 2); break;
    case 6: simplex_keep(sx, 1, 2, 0, l[1], l[2], S(0), 2); break;
    default: sx.lambda[0] = l[0], sx.lambda[1] = l[1], sx.lambda[2] = l[2];
  }
}

// Reduces the simplex to the face of its closest point to the origin and sets lambda. Returns
// false when the origin is inside the tetrahedron (n = 4 kept). Not recursive (the flat
// tetrahedron falls back to simplex_closest_triangle): a recursive device function's stack is not
// in ptxas's cumulative stack size, so the driver reserves too little and the GPU overflows it.
template <class S>
SAP_HD bool simplex_closest(GjkSimplex<S>& sx) {
  if (sx.n == 1) {
    sx.lambda[0] = S(1);
    return true;
  }
  if (sx.n == 2) {
    const Vec3<S> e = sx.w[1] - sx.w[0];
    const S ee = dot(e, e);
    const S t = ee > S(0) ? -dot(sx.w[0], e) / ee : S(0);
    if (t <= S(0)) simplex_keep(sx, 0, 0, 0, S(1), S(0), S(0), 1);
    else if (t >= S(1)) simplex_keep(sx, 1, 0, 0, S(1), S(0), S(0), 1);
    else sx.lambda[0] = S(1) - t, sx.lambda[1] = t;
    return true;
  }
  if (sx.n == 3) {
    simplex_closest_triangle(sx);
    return true;
  }
  // A flat tetrahedron (the new vertex in the plane of the other three, up to rounding) has no
  // inside: drop the new vertex and keep the triangle's answer (GJK then stops: no progress).
  {
    const Vec3<S> e1 = sx.w[1] - sx.w[0], e2 = sx.w[2] - sx.w[0], e3 = sx.w[3] - sx.w[0];
    const S vol = abs_(dot(cross(e1, e2), e3));
    const S ext = max_(squared_norm(e1), max_(squared_norm(e2), squared_norm(e3)));
    if (!(vol > S(100) * ScalarTraits<S>::eps * ext * sqrt_(ext))) {
      sx.n = 3;
      simplex_closest_triangle(sx);
      return true;
    }
  }
  // Tetrahedron: the faces whose plane separates the origin from the opposite vertex.
  const int face[4][4] = {{0, 1, 2, 3}, {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 3, 2, 0}};
  S best = ScalarTraits<S>::huge;
  int best_face = -1, best_region = 0;
  S best_l[3] = {S(1), S(0), S(0)};
  for (int f = 0; f < 4; ++f) {
    const Vec3<S>&a = sx.w[face[f][0]], &b = sx.w[face[f][1]], &c = sx.w[face[f][2]], &o = sx.w[face[f][3]];
    const Vec3<S> nrm = cross(b - a, c - a);
    const S side_origin = -dot(nrm, a), side_other = dot(nrm, o - a);
    if (!(side_origin * side_other < S(0))) continue;  // origin on the inner side of this face
    S l[3];
    int region;
    const S d2 = closest_on_triangle(a, b, c, l, &region);
    if (d2 < best) {
      best = d2;
      best_face = f;
      best_region = region;
      best_l[0] = l[0], best_l[1] = l[1], best_l[2] = l[2];
    }
  }
  if (best_face < 0) return false;
  const int* f = face[best_face];
  switch (best_region) {
    case 1: simplex_keep(sx, f[0], 0, 0, S(1), S(0), S(0), 1); break;
    case 2: simplex_keep(sx, f[1], 0, 0, S(1), S(0), S(0), 1); break;
    case 3: simplex_keep(sx, f[0], f[1], 0, best_l[0], best_l[1], S(0), 2); break;
    case 4: simplex_keep(sx, f[2], 0, 0, S(1), S(0), S(0), 1); break;
    case 5: simplex_keep(sx, f[0], f[2], 0, best_l[0], best_l[2], S(0), 2); break;
    case 6: simplex_keep(sx, f[1], f[2], 0, best_l[1], best_l[2], S(0), 2); break;
    default: simplex_keep(sx, f[0], f[1], f[2], best_l[0], best_l[1], best_l[2], 3);
  }
  return true;
}

// Support of D = B - A (cores) along d: w = s_B(d) - s_A(-d), with s_B(d) kept.
template <class S>
SAP_HDI void minkowski_support(const ConvexShape<S>& A, const ConvexShape<S>& B, const Vec3<S>& d, Vec3<S>& w,
                               Vec3<S>& b) {
  b = support_world(B, d, true);
  w = b - support_world(A, -d, true);
}

// Result of the core query: separated (dist > 0, normal = v/|v|) or penetrating (dist < 0).
template <class S>
struct ConvexQuery {
  Vec3<S> a, b, normal;  // core witness points and the unit normal from A to B
  S dist;                // signed core distance
  int status;            // 0 no contact (beyond the margin), 1 contact, -1 failure
  bool converged;        // EPA stopped on its tolerance (not on its capacity)
  Vec3<S> alt[2];        // EPA: normals of the next nearest faces (other starts for the polish)
  int nalt;
};

template <class S>
SAP_HD SAP_CONVEX_NOINLINE bool epa(const ConvexShape<S>& A, const ConvexShape<S>& B, GjkSimplex<S>& sx, S scale, ConvexQuery<S>& q);

// Penetration depth is the minimum of the support function of D = B - A over unit directions,
//   depth = min_|m|=1 h_D(m),  h_D(m) = h_B(m) + h_A(-m),
// and any m gives an upper bound (EPA's face distance is a lower bound). On curved shapes a
// bounded EPA polytope leaves the direction off by up to ~0.2 rad; this polishes it: along
// each tangent axis of m, a parabola through h_D at m and m +- delta t, a step to its vertex
// (at most 2 delta), kept only if h_D decreases; delta shrinks when nothing improves. On a
// kink (a face normal of a polyhedral D) nothing improves and m stays. Witnesses become the
// support points s_A(-m), s_B(m), exact for strictly convex shapes.
template <class S>
SAP_HDI S support_gap(const ConvexShape<S>& A, const ConvexShape<S>& B, const Vec3<S>& m, Vec3<S>& a, Vec3<S>& b) {
  b = support_world(B, m, true);
  a = support_world(A, -m, true);
  return dot(b - a, m);
}

// Local descent of h_D on the unit sphere from m (see above), at most max_iter iterations from
// step delta (updated); returns h_D at the end.
template <class S>
SAP_HD SAP_CONVEX_NOINLINE S polish_direction(const ConvexShape<S>& A, const ConvexShape<S>& B, Vec3<S>& m, Vec3<S>& a,
                                              Vec3<S>& b, S& delta, int max_iter, bool& moved) {
  S f = support_gap(A, B, m, a, b);
  const S min_delta = sizeof(S) == 4 ? S(1e-4) : S(1e-6);
  for (int it = 0; it < max_iter && delta > min_delta; ++it) {
    Vec3<S> t[2];
    orthonormal_basis(m, t[0], t[1]);
    bool improved = false;
    for (int k = 0; k < 2; ++k) {
      Vec3<S> ap, bp, am, bm, an, bn;
      const Vec3<S> mp = normalized(m + delta * t[k]), mm = normalized(m - delta * t[k]);
      const S fp = support_gap(A, B, mp, ap, bp), fm = support_gap(A, B, mm, am, bm);
      const S curv = fp - S(2) * f + fm;
      S step = fp < fm ? delta : -delta;
      if (curv > S(0)) step = clamp_(delta * (fm - fp) / (S(2) * curv), S(-2) * delta, S(2) * delta);
      const Vec3<S> mn = normalized(m + step * t[k]);
      const S fn = support_gap(A, B, mn, an, bn);
      // The best of the probes, only when it decreases h_D.
      if (fn < f && fn <= fp && fn <= fm) m = mn, f = fn, a = an, b = bn, improved = true;
      else if (fp < f && fp <= fm) m = mp, f = fp, a = ap, b = bp, improved = true;
      else if (fm < f) m = mm, f = fm, a = am, b = bm, improved = true;
    }
    moved = moved || improved;
    if (!improved) delta *= S(0.25);
  }
  return f;
}

// h_D is not convex on the sphere (a cylinder's rim and its cap are separate basins): a short
// descent (8 iterations) from EPA's nearest face and from the next two, then the lowest one
// continues to convergence.
template <class S>
SAP_HD SAP_CONVEX_NOINLINE void refine_penetration(const ConvexShape<S>& A, const ConvexShape<S>& B,
                                                   ConvexQuery<S>& q) {
  Vec3<S> m = -q.normal, a, b;
  bool moved = false;
  S delta = S(0.1);
  S f = polish_direction(A, B, m, a, b, delta, 8, moved);
  for (int k = 0; k < q.nalt; ++k) {
    Vec3<S> mk = q.alt[k], ak, bk;
    bool mv = false;
    S dk = S(0.1);
    const S fk = polish_direction(A, B, mk, ak, bk, dk, 8, mv);
    if (fk < f) f = fk, m = mk, a = ak, b = bk, delta = dk, moved = true;
  }
  f = polish_direction(A, B, m, a, b, delta, 40, moved);
  if (!moved) return;  // EPA's answer stands (a kink: face contact of polyhedral parts)
  q.normal = -m;
  q.dist = -f;
  q.a = a;
  q.b = b;
}

// GJK on the cores of A and B; contacts are wanted while core distance < reach (= margin plus
// the core radii). Falls through to EPA when the cores overlap.
template <class S>
SAP_HD SAP_CONVEX_NOINLINE ConvexQuery<S> convex_query(const ConvexShape<S>& A, const ConvexShape<S>& B, S reach) {
  ConvexQuery<S> q;
  q.status = 0;
  q.dist = ScalarTraits<S>::huge;
  q.converged = true;
  q.nalt = 0;
  const Vec3<S> ca = A.type == kConvexPoints ? A.pts[0] : A.frame->pos;
  const Vec3<S> cb = B.type == kConvexPoints ? B.pts[0] : B.frame->pos;
  Vec3<S> v = cb - ca;
  if (!(squared_norm(v) > S(0))) v = Vec3<S>::unit(2);
  GjkSimplex<S> sx;
  minkowski_support(A, B, -v, sx.w[0], sx.b[0]);
  sx.n = 1;
  sx.lambda[0] = S(1);
  v = sx.w[0];
  // Length scale for the absolute tolerances: the extent of the first support points.
  const S scale = max_(norm(sx.w[0]), norm(cb - ca)) + S(1e-9);
  const S tol = gjk_rel_tol<S>();
  S prev = ScalarTraits<S>::huge;
  bool overlap = false;
  for (int it = 0; it < kGjkMaxIter; ++it) {
    const S vv = squared_norm(v);
    if (vv <= sqr_(tol * scale)) {
      overlap = true;
      break;
    }
    Vec3<S> w, b;
    minkowski_support(A, B, -v, w, b);
    const S vw = dot(v, w);
    if (vw > S(0) && vw * vw >= reach * reach * vv) return q;  // lower bound (v . w)/|v| >= reach
    if (vv - vw <= tol * vv) break;  // converged: w adds nothing
    bool dup = false;
    for (int k = 0; k < sx.n; ++k) dup = dup || squared_norm(sx.w[k] - w) <= sqr_(tol * scale);
    // The two exits below stop on rounding. Separation is certified only by v . w >= |v|^2 (1 -
    // tol): w, the support point along -v, then adds nothing beyond v's plane. When w lies beyond
    // it but is already a vertex of the simplex (exact arithmetic forbids this: v is the
    // simplex's closest point to the origin), or the simplex with w gets no closer, |v| is at the
    // rounding level of the simplex and the origin lies on or inside D: touching or
    // overlapping, and EPA decides. (|v| above sqrt(tol) scale is never rounding: separated.)
    const bool certified = vw >= vv * (S(1) - tol) || vv > tol * scale * scale;
    if (dup) {
      overlap = !certified;
      break;
    }
    sx.w[sx.n] = w;
    sx.b[sx.n] = b;
    ++sx.n;
    if (!simplex_closest(sx)) {
      overlap = true;
      break;
    }
    v = Vec3<S>::zero();
    for (int k = 0; k < sx.n; ++k) v += sx.lambda[k] * sx.w[k];
    const S nv = squared_norm(v);
    if (!(nv < prev)) {  // no progress (rounding)
      overlap = !certified;
      break;
    }
    prev = nv;
  }
  if (!overlap) {
    const S dist = norm(v);
    if (!(dist < reach)) return q;
    q.b = Vec3<S>::zero();
    Vec3<S> a = Vec3<S>::zero();
    for (int k = 0; k < sx.n; ++k) {
      q.b += sx.lambda[k] * sx.b[k];
      a += sx.lambda[k] * (sx.b[k] - sx.w[k]);
    }
    q.a = a;
    q.normal = v * (S(1) / dist);
    q.dist = dist;
    q.status = 1;
    return q;
  }
  if (!epa(A, B, sx, scale, q)) {
    q.status = -1;
    return q;
  }
  const bool curved = A.type == kGeomCylinder || A.type == kGeomEllipsoid || B.type == kGeomCylinder ||
                      B.type == kGeomEllipsoid;
  if (curved || !q.converged) refine_penetration(A, B, q);
  q.status = q.dist < reach ? 1 : 0;
  return q;
}

// ------------------------------------------------------------------------------------------
// EPA

template <class S>
struct EpaFace {
  Vec3<S> n;  // outward unit normal
  S d;        // distance of the face plane from the origin (n . w0)
  unsigned char v[3];
};

template <class S>
SAP_HDI void epa_make_face(const Vec3<S>* w, const Vec3<S>& inner, int i0, int i1, int i2, EpaFace<S>& f) {
  Vec3<S> n = cross(w[i1] - w[i0], w[i2] - w[i0]);
  const S len = norm(n);
  f.v[0] = static_cast<unsigned char>(i0);
  f.v[1] = static_cast<unsigned char>(i1);
  f.v[2] = static_cast<unsigned char>(i2);
  if (!(len > S(0))) {  // degenerate: never the nearest face
    f.n = Vec3<S>::unit(2);
    f.d = ScalarTraits<S>::huge;
    return;
  }
  n = n * (S(1) / len);
  if (dot(n, w[i0] - inner) < S(0)) {  // orient outward (away from an interior point)
    n = -n;
    f.v[1] = static_cast<unsigned char>(i2);
    f.v[2] = static_cast<unsigned char>(i1);
  }
  f.n = n;
  f.d = dot(n, w[i0]);
}

// Completes the GJK simplex to a tetrahedron (the origin lies in it or on its boundary when
// GJK stopped on |v| ~ 0) and expands it. Returns false when D is flat (no tetrahedron).
template <class S>
SAP_HD SAP_CONVEX_NOINLINE bool epa(const ConvexShape<S>& A, const ConvexShape<S>& B, GjkSimplex<S>& sx, S scale, ConvexQuery<S>& q) {
  const S tiny = (sizeof(S) == 4 ? S(10) : S(100)) * gjk_rel_tol<S>() * scale;
  // Complete the simplex.
  for (int guard = 0; guard < 3 && sx.n < 4; ++guard) {
    Vec3<S> dirs[6];
    int ndir = 0;
    if (sx.n == 1) {
      for (int k = 0; k < 3; ++k) {
        dirs[ndir++] = Vec3<S>::unit(k);
        dirs[ndir++] = -Vec3<S>::unit(k);
      }
    } else if (sx.n == 2) {
      const Vec3<S> e = normalized(sx.w[1] - sx.w[0]);
      Vec3<S> t1, t2;
      orthonormal_basis(e, t1, t2);
      dirs[0] = t1, dirs[1] = -t1, dirs[2] = t2, dirs[3] = -t2;
      ndir = 4;
    } else {
      const Vec3<S> nrm = normalized(cross(sx.w[1] - sx.w[0], sx.w[2] - sx.w[0]));
      dirs[0] = nrm, dirs[1] = -nrm;
      ndir = 2;
    }
    bool added = false;
    for (int k = 0; k < ndir && !added; ++k) {
      Vec3<S> w, b;
      minkowski_support(A, B, dirs[k], w, b);
      // Accept when w leaves the affine hull of the simplex by more than tiny.
      S off;
      if (sx.n == 1) off = norm(w - sx.w[0]);
      else if (sx.n == 2) {
        const Vec3<S> e = normalized(sx.w[1] - sx.w[0]);
        off = norm(cross(w - sx.w[0], e));
      } else off = abs_(dot(w - sx.w[0], normalized(cross(sx.w[1] - sx.w[0], sx.w[2] - sx.w[0]))));
      if (off > tiny) {
        sx.w[sx.n] = w;
        sx.b[sx.n] = b;
        ++sx.n;
        added = true;
      }
    }
    if (!added) return false;
  }
  if (sx.n < 4) return false;

  Vec3<S> w[kEpaMaxVerts], bs[kEpaMaxVerts];
  EpaFace<S> face[kEpaMaxFaces];
  int nv = 4, nf = 4;
  for (int k = 0; k < 4; ++k) w[k] = sx.w[k], bs[k] = sx.b[k];
  const Vec3<S> inner = S(0.25) * (w[0] + w[1] + w[2] + w[3]);
  epa_make_face(w, inner, 0, 1, 2, face[0]);
  epa_make_face(w, inner, 0, 3, 1, face[1]);
  epa_make_face(w, inner, 0, 2, 3, face[2]);
  epa_make_face(w, inner, 1, 3, 2, face[3]);
  int best = 0;
  q.converged = false;
  for (int it = 0; it < 2 * kEpaMaxVerts; ++it) {
    best = 0;
    for (int f = 1; f < nf; ++f)
      if (face[f].d < face[best].d) best = f;
    Vec3<S> wn, bn;
    minkowski_support(A, B, face[best].n, wn, bn);
    const S gain = dot(wn, face[best].n) - face[best].d;
    if (!(gain > tiny)) {
      q.converged = true;
      break;
    }
    if (nv == kEpaMaxVerts) break;  // capacity: keep the current (lower-bound) face
    // Faces that see wn, and the horizon: edges of seen faces whose neighbour is not seen.
    unsigned long long seen = 0;
    for (int f = 0; f < nf; ++f)
      if (dot(face[f].n, wn) - face[f].d > S(0)) seen |= 1ull << f;
    unsigned char edge[2 * kEpaMaxFaces][2];
    int nedge = 0;
    for (int f = 0; f < nf; ++f) {
      if (!(seen >> f & 1ull)) continue;
      for (int e = 0; e < 3; ++e) {
        const int a = face[f].v[e], b = face[f].v[(e + 1) % 3];
        bool neighbour_seen = false;
        for (int g = 0; g < nf; ++g) {
          if (g == f || !(seen >> g & 1ull)) continue;
          for (int k = 0; k < 3; ++k)
            if (face[g].v[k] == b && face[g].v[(k + 1) % 3] == a) neighbour_seen = true;
        }
        if (!neighbour_seen) {
          edge[nedge][0] = static_cast<unsigned char>(a);
          edge[nedge][1] = static_cast<unsigned char>(b);
          ++nedge;
        }
      }
    }
    int nseen = 0;
    for (int f = 0; f < nf; ++f) nseen += int(seen >> f & 1ull);
    if (nf - nseen + nedge > kEpaMaxFaces) break;
    int keep = 0;
    for (int f = 0; f < nf; ++f)
      if (!(seen >> f & 1ull)) face[keep++] = face[f];
    nf = keep;
    w[nv] = wn;
    bs[nv] = bn;
    for (int e = 0; e < nedge; ++e) epa_make_face(w, inner, edge[e][0], edge[e][1], nv, face[nf++]);
    ++nv;
  }
  best = 0;
  for (int f = 1; f < nf; ++f)
    if (face[f].d < face[best].d) best = f;
  // The next two nearest faces whose normals differ from the best by more than ~8 degrees.
  q.nalt = 0;
  for (int k = 0; k < 2; ++k) {
    int alt = -1;
    for (int f = 0; f < nf; ++f) {
      if (f == best || !(face[f].d < ScalarTraits<S>::huge) || dot(face[f].n, face[best].n) > S(0.99)) continue;
      if (k == 1 && dot(face[f].n, q.alt[0]) > S(0.99)) continue;
      if (alt < 0 || face[f].d < face[alt].d) alt = f;
    }
    if (alt < 0) break;
    q.alt[q.nalt++] = face[alt].n;
  }
  const EpaFace<S>& F = face[best];
  if (!(F.d < ScalarTraits<S>::huge)) return false;
  // Barycentric coordinates of p = d n on the face (areas of the sub-triangles, clamped).
  const Vec3<S> p = F.d * F.n;
  const Vec3<S>&w0 = w[F.v[0]], &w1 = w[F.v[1]], &w2 = w[F.v[2]];
  S l0 = dot(cross(w1 - p, w2 - p), F.n), l1 = dot(cross(w2 - p, w0 - p), F.n), l2 = dot(cross(w0 - p, w1 - p), F.n);
  l0 = max_(l0, S(0)), l1 = max_(l1, S(0)), l2 = max_(l2, S(0));
  const S sum = l0 + l1 + l2;
  if (sum > S(0)) l0 /= sum, l1 /= sum, l2 /= sum;
  else l0 = S(1), l1 = l2 = S(0);
  q.b = l0 * bs[F.v[0]] + l1 * bs[F.v[1]] + l2 * bs[F.v[2]];
  q.a = l0 * (bs[F.v[0]] - w0) + l1 * (bs[F.v[1]] - w1) + l2 * (bs[F.v[2]] - w2);
  q.normal = -F.n;
  q.dist = -F.d;
  return true;
}

}  // namespace sap

// General convex narrow phase: support functions of every convex shape, GJK (distance of
// separated shapes), EPA (penetration of overlapping ones), multi-point manifolds for face
// contacts, plane-mesh / plane-ellipsoid, and heightfields (triangular prisms) against any
// convex shape. Same conventions as collision_primitives.hpp: normal from geom 0 to geom 1,
// x0 / x1 on the two surfaces, phi = (x1 - x0) . normal, contacts only while phi < margin.
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
//   - Manifold: the support features of A along n and of B along -n (vertex, edge or face
//     polygon, at most kMaxFeature points, faces taken within kFeatureSin of the normal);
//     when one is a face, the other feature is clipped to it (Sutherland-Hodgman in the plane
//     normal to n) and every clipped point gets its own depth against the face's support
//     plane; at most 4 points are kept (deepest, farthest from it, the two largest triangle
//     areas on either side).
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

// Reduces the simplex to the face of its closest point to the origin and sets lambda. Returns
// false when the origin is inside the tetrahedron (n = 4 kept).
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
      simplex_closest(sx);
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
    if (dup) break;
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
    if (!(nv < prev)) break;  // no progress (rounding)
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

// ------------------------------------------------------------------------------------------
// Support features and the contact manifold

// Orders points counter-clockwise about their centroid in the plane normal to n (insertion
// sort of the angle; n <= kMaxFeature).
template <class S>
SAP_HD void order_polygon(Vec3<S>* p, int np, const Vec3<S>& n) {
  if (np < 3) return;
  Vec3<S> t1, t2;
  orthonormal_basis(n, t1, t2);
  Vec3<S> c = Vec3<S>::zero();
  for (int i = 0; i < np; ++i) c += p[i];
  c = c * (S(1) / S(np));
  S ang[kMaxFeature];
  for (int i = 0; i < np; ++i) ang[i] = atan2_(dot(p[i] - c, t2), dot(p[i] - c, t1));
  for (int i = 1; i < np; ++i)
    for (int j = i; j > 0 && ang[j] < ang[j - 1]; --j) {
      const S ta = ang[j];
      ang[j] = ang[j - 1], ang[j - 1] = ta;
      const Vec3<S> tp = p[j];
      p[j] = p[j - 1], p[j - 1] = tp;
    }
}

// Vertices of a point set (mesh in its frame, or world points) that lie on the support
// feature along d: within kFeatureSin of the support plane as seen from the support vertex.
// More than kMaxFeature: the farthest from the centroid in each of kMaxFeature angular bins.
template <class S>
SAP_HD int point_set_feature(const Vec3<S>* pts, const double* vert, int nvert, const Vec3<S>& d, Vec3<S>* out,
                             int start_hint, const GeomFrame<S>* mesh) {
  auto at = [&](int i) { return pts ? pts[i] : Vec3<S>::load(vert + 3 * i); };
  int s = start_hint;
  if (mesh) s = mesh_support_vertex(*mesh, d, start_hint);
  else {
    S bv = dot(at(0), d);
    s = 0;
    for (int i = 1; i < nvert; ++i)
      if (dot(at(i), d) > bv) bv = dot(at(i), d), s = i;
  }
  const Vec3<S> ps = at(s);
  const S hs = dot(ps, d), sn = feature_sin<S>();
  int count = 0;
  Vec3<S> c = Vec3<S>::zero();
  for (int i = 0; i < nvert; ++i) {
    const Vec3<S> p = at(i);
    if (hs - dot(p, d) <= sn * norm(p - ps)) {
      if (count < kMaxFeature) out[count] = p;
      c += p;
      ++count;
    }
  }
  if (count <= kMaxFeature) {
    order_polygon(out, count, d);
    return count;
  }
  c = c * (S(1) / S(count));
  Vec3<S> t1, t2;
  orthonormal_basis(d, t1, t2);
  S far[kMaxFeature];
  for (int k = 0; k < kMaxFeature; ++k) far[k] = S(-1);
  for (int i = 0; i < nvert; ++i) {
    const Vec3<S> p = at(i);
    if (!(hs - dot(p, d) <= sn * norm(p - ps))) continue;
    const S x = dot(p - c, t1), y = dot(p - c, t2);
    const S a = atan2_(y, x);  // (-pi, pi]
    int bin = int((a + S(3.14159265358979)) * (S(kMaxFeature) / S(6.28318530717959)));
    bin = bin < 0 ? 0 : bin >= kMaxFeature ? kMaxFeature - 1 : bin;
    const S r2 = x * x + y * y;
    if (r2 > far[bin]) far[bin] = r2, out[bin] = p;
  }
  int n = 0;
  for (int k = 0; k < kMaxFeature; ++k)
    if (far[k] >= S(0)) out[n++] = out[k];
  return n;
}

// Points (world) of the support feature of a shape along the world unit direction d: a vertex
// (1), an edge (2) or a face polygon (>= 3, ordered around its centroid).
template <class S>
SAP_HD int support_feature(const ConvexShape<S>& sh, const Vec3<S>& d, Vec3<S>* out) {
  if (sh.type == kConvexPoints) return point_set_feature<S>(sh.pts, nullptr, sh.npts, d, out, 0, nullptr);
  const GeomFrame<S>& g = *sh.frame;
  const Vec3<S> dl = mul_transpose(g.rot, d);
  const S sn = feature_sin<S>();
  const Vec3<S>& s = g.size;
  int n = 0;
  switch (sh.type) {
    case kGeomCapsule:
      if (abs_(dl[2]) < sn) {
        const Vec3<S> radial = normalized(Vec3<S>{{dl[0], dl[1], S(0)}}) * s[0];
        out[n++] = radial + Vec3<S>{{S(0), S(0), -s[1]}};
        out[n++] = radial + Vec3<S>{{S(0), S(0), s[1]}};
      } else out[n++] = support_local(sh.type, g, dl, false);
      break;
    case kGeomCylinder: {
      const S rho = sqrt_(dl[0] * dl[0] + dl[1] * dl[1]);
      if (rho < sn) {  // end disk: octagon inscribed in the rim
        const S z = dl[2] >= S(0) ? s[1] : -s[1];
        for (int k = 0; k < 8; ++k) {
          const S a = S(k) * S(0.785398163397448);
          out[n++] = {{s[0] * cos_(a), s[0] * sin_(a), z}};
        }
      } else if (abs_(dl[2]) < sn) {  // side line
        const Vec3<S> radial{{dl[0] * (s[0] / rho), dl[1] * (s[0] / rho), S(0)}};
        out[n++] = radial + Vec3<S>{{S(0), S(0), -s[1]}};
        out[n++] = radial + Vec3<S>{{S(0), S(0), s[1]}};
      } else out[n++] = support_local(sh.type, g, dl, false);
      break;
    }
    case kGeomBox: {
      int fixed_sign[3], nfree = 0, free_axis[3];
      for (int i = 0; i < 3; ++i) {
        fixed_sign[i] = dl[i] >= S(0) ? 1 : -1;
        if (abs_(dl[i]) < sn) free_axis[nfree++] = i;
      }
      Vec3<S> base{{S(fixed_sign[0]) * s[0], S(fixed_sign[1]) * s[1], S(fixed_sign[2]) * s[2]}};
      if (nfree == 0) out[n++] = base;
      else if (nfree == 1) {
        const int k = free_axis[0];
        base[k] = -s[k];
        out[n++] = base;
        base[k] = s[k];
        out[n++] = base;
      } else {
        const int j = free_axis[0], k = free_axis[1];
        const S sj[4] = {S(-1), S(1), S(1), S(-1)}, sk[4] = {S(-1), S(-1), S(1), S(1)};
        for (int c = 0; c < 4; ++c) {
          Vec3<S> p = base;
          p[j] = sj[c] * s[j];
          p[k] = sk[c] * s[k];
          out[n++] = p;
        }
      }
      break;
    }
    case kGeomMesh: n = point_set_feature<S>(nullptr, g.vert, g.nvert, dl, out, 0, &g); break;
    default: out[n++] = support_local(sh.type, g, dl, false);  // sphere, ellipsoid: a point
  }
  for (int i = 0; i < n; ++i) out[i] = g.pos + g.rot * out[i];
  return n;
}

// Keeps at most 4 of the np candidate points (x, depth): the deepest, the farthest from it,
// then the largest-area triangles on either side of that line. Writes the kept indices.
template <class S>
SAP_HD int reduce_manifold(const Vec3<S>* x, const S* phi, int np, const Vec3<S>& n, int* keep) {
  if (np <= 4) {
    for (int i = 0; i < np; ++i) keep[i] = i;
    return np;
  }
  int i0 = 0;
  for (int i = 1; i < np; ++i)
    if (phi[i] < phi[i0]) i0 = i;
  int i1 = -1;
  S far = S(-1);
  for (int i = 0; i < np; ++i) {
    const S d2 = squared_norm(x[i] - x[i0]);
    if (d2 > far) far = d2, i1 = i;
  }
  int k = 0;
  keep[k++] = i0;
  if (i1 == i0) return k;
  keep[k++] = i1;
  int ip = -1, im = -1;
  S ap = S(0), am = S(0);
  for (int i = 0; i < np; ++i) {
    const S a = dot(cross(x[i1] - x[i0], x[i] - x[i0]), n);
    if (a > ap) ap = a, ip = i;
    if (a < am) am = a, im = i;
  }
  if (ip >= 0) keep[k++] = ip;
  if (im >= 0) keep[k++] = im;
  return k;
}

// Contact manifold of A and B near the core query q (normal n from A to B). Falls back to the
// single contact of q when neither feature is a face (or clipping leaves nothing).
template <class S>
SAP_HD SAP_CONVEX_NOINLINE int convex_manifold(const ConvexShape<S>& A, const ConvexShape<S>& B, const ConvexQuery<S>& q, S margin,
                           ContactGeom<S>* out) {
  Vec3<S> n = q.normal;
  const S ra = core_radius(A), rb = core_radius(B);
  Vec3<S> x0 = q.a + ra * n, x1 = q.b - rb * n;
  const S phi = q.dist - ra - rb;
  Vec3<S> fa[kMaxFeature], fb[kMaxFeature];
  const int na = support_feature(A, n, fa);
  const int nb = support_feature(B, -n, fb);
  // Single contact: the witnesses sit where the features meet. A unique extreme point (vertex,
  // sphere, ellipsoid, rim point) anchors the contact and the other witness is offset by phi
  // along n; crossing edges meet at their closest points; otherwise GJK/EPA's witnesses.
  if (na == 1) x0 = fa[0], x1 = fa[0] + phi * n;
  else if (nb == 1) x1 = fb[0], x0 = fb[0] - phi * n;
  else if (na == 2 && nb == 2) {
    S s, t;
    closest_segment_segment(fa[0], fa[1] - fa[0], fb[0], fb[1] - fb[0], s, t);
    const Vec3<S> mid = S(0.5) * (fa[0] + s * (fa[1] - fa[0]) + fb[0] + t * (fb[1] - fb[0]));
    x0 = mid - (S(0.5) * phi) * n, x1 = mid + (S(0.5) * phi) * n;
  }
  const bool parallel_edges =
      na == 2 && nb == 2 &&
      norm(cross(normalized(fa[1] - fa[0]), normalized(fb[1] - fb[0]))) < feature_sin<S>();
  if (!((na >= 3 && nb >= 2) || (nb >= 3 && na >= 2) || parallel_edges))
    return emit_contact(x0, x1, n, margin, out);
  // Reference (patch): the feature with more points (A on ties); the other one is clipped to it.
  const bool ref_is_a = na >= nb;
  const Vec3<S>* ref = ref_is_a ? fa : fb;
  const Vec3<S>* inc = ref_is_a ? fb : fa;
  const int nr = ref_is_a ? na : nb, ni = ref_is_a ? nb : na;
  // A reference face sets the normal (Newell's polygon normal, on n's side), as box-box's face
  // axes and MuJoCo's multi-contact do: the patch's depths are measured along it.
  if (nr >= 3) {
    Vec3<S> nf = Vec3<S>::zero();
    for (int i = 0; i < nr; ++i) nf += cross(ref[i], ref[(i + 1) % nr]);
    nf = normalized(nf);
    if (dot(nf, n) < S(0)) nf = -nf;
    if (dot(nf, n) > S(0.9)) n = nf;
  }
  // Support planes: A's extreme along n (h_a), B's extreme along -n (h_b).
  S h_a = dot(fa[0], n), h_b = dot(fb[0], n);
  for (int i = 1; i < na; ++i) h_a = max_(h_a, dot(fa[i], n));
  for (int i = 1; i < nb; ++i) h_b = min_(h_b, dot(fb[i], n));
  Vec3<S> t1, t2;
  orthonormal_basis(n, t1, t2);
  auto px = [&](const Vec3<S>& p) { return dot(p, t1); };
  auto py = [&](const Vec3<S>& p) { return dot(p, t2); };
  // Half-planes of the reference: for a polygon its edges (orientation from the signed area),
  // for a segment the slab between its ends.
  Vec3<S> buf0[2 * kMaxFeature], buf1[2 * kMaxFeature];
  int nc = ni;
  for (int i = 0; i < ni; ++i) buf0[i] = inc[i];
  Vec3<S>* cur = buf0;
  Vec3<S>* nxt = buf1;
  const S tol = gjk_rel_tol<S>() * S(100);
  int nplanes;
  S orient = S(1);
  if (nr >= 3) {
    S area = S(0);
    for (int i = 0; i < nr; ++i) {
      const Vec3<S>&p = ref[i], &r = ref[(i + 1) % nr];
      area += px(p) * py(r) - px(r) * py(p);
    }
    orient = area >= S(0) ? S(1) : S(-1);
    nplanes = nr;
  } else nplanes = 2;
  S scale = S(0);
  for (int i = 0; i < nr; ++i) scale = max_(scale, norm(ref[i] - ref[0]));
  for (int e = 0; e < nplanes && nc > 0; ++e) {
    // Inside test value s(p) >= 0 (linear in p).
    S ex, ey, ox, oy;
    if (nr >= 3) {
      const Vec3<S>&p = ref[e], &r = ref[(e + 1) % nr];
      ox = px(p), oy = py(p);
      ex = px(r) - ox, ey = py(r) - oy;
      // inward normal of the edge (left side for CCW): (-ey, ex) * orient
      const S nx = -ey * orient, ny = ex * orient;
      ex = nx, ey = ny;
    } else {
      const Vec3<S>& p = e == 0 ? ref[0] : ref[1];
      const Vec3<S>& r = e == 0 ? ref[1] : ref[0];
      ox = px(p), oy = py(p);
      ex = px(r) - ox, ey = py(r) - oy;
    }
    auto side = [&](const Vec3<S>& p) { return (px(p) - ox) * ex + (py(p) - oy) * ey; };
    const S slack = tol * scale * sqrt_(ex * ex + ey * ey);
    int m = 0;
    if (nc == 1) {
      if (side(cur[0]) >= -slack) nxt[m++] = cur[0];
    } else if (nc == 2) {  // segment: clip its ends
      const S s0 = side(cur[0]), s1 = side(cur[1]);
      if (s0 >= -slack && s1 >= -slack) nxt[m++] = cur[0], nxt[m++] = cur[1];
      else if (s0 >= -slack) nxt[m++] = cur[0], nxt[m++] = cur[0] + (s0 / (s0 - s1)) * (cur[1] - cur[0]);
      else if (s1 >= -slack) nxt[m++] = cur[0] + (s0 / (s0 - s1)) * (cur[1] - cur[0]), nxt[m++] = cur[1];
    } else {
      for (int i = 0; i < nc && m < 2 * kMaxFeature - 1; ++i) {
        const Vec3<S>&p = cur[i], &r = cur[(i + 1) % nc];
        const S sp = side(p), sr = side(r);
        if (sp >= -slack) nxt[m++] = p;
        if ((sp >= -slack) != (sr >= -slack)) nxt[m++] = p + (sp / (sp - sr)) * (r - p);
      }
    }
    nc = m;
    Vec3<S>* t = cur;
    cur = nxt;
    nxt = t;
  }
  // Depth of every clipped point against the reference's support plane.
  S depth[2 * kMaxFeature] = {};
  for (int i = 0; i < nc; ++i) depth[i] = ref_is_a ? dot(cur[i], n) - h_a : h_b - dot(cur[i], n);
  int keep[4];
  const int nk = reduce_manifold(cur, depth, nc, n, keep);
  int k = 0;
  for (int i = 0; i < nk; ++i) {
    const Vec3<S>& p = cur[keep[i]];
    const S ph = depth[keep[i]];
    const Vec3<S> y0 = ref_is_a ? p - ph * n : p;
    const Vec3<S> y1 = ref_is_a ? p : p + ph * n;
    k += emit_contact(y0, y1, n, margin, out + k);
  }
  if (k == 0) return emit_contact(x0, x1, q.normal, margin, out);
  return k;
}

// Any convex geom pair (types t0 <= t1 among sphere..mesh), through GJK/EPA and the manifold.
template <class S>
SAP_HD int collide_convex_shapes(const ConvexShape<S>& A, const ConvexShape<S>& B, S margin, ContactGeom<S>* out,
                                 bool manifold) {
  const S ra = core_radius(A), rb = core_radius(B);
  const ConvexQuery<S> q = convex_query(A, B, margin + ra + rb);
  if (q.status != 1) return 0;
  if (!manifold) {
    const Vec3<S> n = q.normal;
    return emit_contact(q.a + ra * n, q.b - rb * n, n, margin, out);
  }
  return convex_manifold(A, B, q, margin, out);
}

template <class S>
SAP_HD SAP_CONVEX_NOINLINE int collide_convex(int t0, const GeomFrame<S>& g0, int t1, const GeomFrame<S>& g1, S margin,
                          ContactGeom<S>* out) {
  ConvexShape<S> A, B;
  A.type = t0, A.frame = &g0;
  B.type = t1, B.frame = &g1;
  return collide_convex_shapes(A, B, margin, out, true);
}

// Plane against a mesh or an ellipsoid. Ellipsoid: its lowest point. Mesh: like plane-box,
// every hull vertex below plane + margin is a candidate (so a tilted mesh box keeps the
// corners inside the margin, not only the lowest edge); of those, the deepest and the extremes
// along +-t1, +-t2, +-(t1 + t2) in the plane (streamed, at most 7, deduplicated), then at most
// 4 kept as for the other manifolds.
template <class S>
SAP_HD SAP_CONVEX_NOINLINE int collide_plane_convex(int t1, const GeomFrame<S>& plane, const GeomFrame<S>& g, S margin,
                                                    ContactGeom<S>* out) {
  const Vec3<S> n = plane.rot.col(2);
  if (t1 != kGeomMesh) {
    ConvexShape<S> B;
    B.type = t1, B.frame = &g;
    return plane_point_contact(plane, support_world(B, -n, false), margin, out);
  }
  Vec3<S> t[2];
  orthonormal_basis(n, t[0], t[1]);
  const Vec3<S> nl = mul_transpose(g.rot, n);
  const S h0 = dot(g.pos - plane.pos, n);
  int slot[7] = {-1, -1, -1, -1, -1, -1, -1};
  S score[7] = {S(0), S(0), S(0), S(0), S(0), S(0), S(0)};
  for (int v = 0; v < g.nvert; ++v) {
    const Vec3<S> pl = mesh_vertex(g, v);
    const S h = h0 + dot(pl, nl);
    if (!(h < margin)) continue;
    const Vec3<S> pw = g.rot * pl;
    const S a = dot(pw, t[0]), b = dot(pw, t[1]);
    const S sc[7] = {-h, a, -a, b, -b, a + b, -a - b};
    for (int k = 0; k < 7; ++k)
      if (slot[k] < 0 || sc[k] > score[k]) slot[k] = v, score[k] = sc[k];
  }
  Vec3<S> f[7];
  S h[7];
  int nf = 0;
  for (int k = 0; k < 7; ++k) {
    if (slot[k] < 0) continue;
    bool dup = false;
    for (int j = 0; j < k; ++j) dup = dup || slot[j] == slot[k];
    if (dup) continue;
    f[nf] = g.pos + g.rot * mesh_vertex(g, slot[k]);
    h[nf] = dot(f[nf] - plane.pos, n);
    ++nf;
  }
  int keep[4];
  const int nk = reduce_manifold(f, h, nf, n, keep);
  int k = 0;
  for (int i = 0; i < nk; ++i) k += plane_point_contact(plane, f[keep[i]], margin, out + k);
  return k;
}

// ------------------------------------------------------------------------------------------
// Heightfield (geom 1) against a convex geom (geom 0). The cells under the geom's bounding box
// (in the heightfield frame) are split into two triangles each; the prism under a triangle
// (its three surface points and the same points at the base depth -size[3]) is a convex shape
// collided by GJK/EPA and the manifold. Of all prism contacts (in row-major cell order) the
// deepest and the extremes along +-x, +-y, +-(x+y) of the heightfield frame are kept (at most 7;
// stable patches on flat ground, deterministic).

template <class S>
SAP_HDI Vec3<S> hfield_point(const GeomFrame<S>& h, int r, int c) {
  const S sx = S(h.hsize[0]), sy = S(h.hsize[1]), sz = S(h.hsize[2]);
  const S x = (S(2) * S(c) / S(h.ncol - 1) - S(1)) * sx;
  const S y = (S(2) * S(r) / S(h.nrow - 1) - S(1)) * sy;
  return {{x, y, sz * S(h.hdata[r * h.ncol + c])}};
}

// Upward unit normal (heightfield frame) of triangle `tri` of cell (r, c), split as below.
template <class S>
SAP_HDI Vec3<S> hfield_tri_normal(const GeomFrame<S>& h, int r, int c, int tri) {
  const Vec3<S> p0 = hfield_point(h, r, c);
  const Vec3<S> p1 = tri == 0 ? hfield_point(h, r + 1, c + 1) : hfield_point(h, r, c + 1);
  const Vec3<S> p2 = tri == 0 ? hfield_point(h, r + 1, c) : hfield_point(h, r + 1, c + 1);
  const Vec3<S> n = normalized(cross(p1 - p0, p2 - p0));
  return n[2] < S(0) ? -n : n;
}

template <class S>
SAP_HD SAP_CONVEX_NOINLINE int collide_convex_hfield(int t0, const GeomFrame<S>& g, const GeomFrame<S>& h, S margin,
                                 ContactGeom<S>* out) {
  if (h.hdata == nullptr || h.nrow < 2 || h.ncol < 2) return 0;
  ConvexShape<S> A;
  A.type = t0, A.frame = &g;
  // Bounding box of the geom in the heightfield frame (supports along its axes), plus margin.
  S lo[3], hi[3];
  for (int k = 0; k < 3; ++k) {
    const Vec3<S> ax = h.rot.col(k);
    hi[k] = dot(support_world(A, ax, false) - h.pos, ax) + margin;
    lo[k] = dot(support_world(A, -ax, false) - h.pos, ax) - margin;
  }
  const S sx = S(h.hsize[0]), sy = S(h.hsize[1]), sz = S(h.hsize[2]), base = S(h.hsize[3]);
  if (lo[2] > sz || hi[2] < -base) return 0;
  const S cx = S(h.ncol - 1) / (S(2) * sx), cy = S(h.nrow - 1) / (S(2) * sy);
  const int c0 = max_(0, int(floor_s((lo[0] + sx) * cx))), c1 = min_(h.ncol - 2, int(floor_s((hi[0] + sx) * cx)));
  const int r0 = max_(0, int(floor_s((lo[1] + sy) * cy))), r1 = min_(h.nrow - 2, int(floor_s((hi[1] + sy) * cy)));
  if (c0 > c1 || r0 > r1) return 0;
  // Kept contacts: slot 0 deepest, then extremes along the 6 directions (at most 7).
  const S dirx[6] = {S(1), S(-1), S(0), S(0), S(1), S(-1)}, diry[6] = {S(0), S(0), S(1), S(-1), S(1), S(-1)};
  ContactGeom<S> slot[7];
  S score[7] = {S(0), S(0), S(0), S(0), S(0), S(0), S(0)};
  bool used[7] = {false, false, false, false, false, false, false};
  int nfound = 0;
  for (int r = r0; r <= r1; ++r)
    for (int c = c0; c <= c1; ++c)
      for (int tri = 0; tri < 2; ++tri) {
        // Cell corners (r,c) (r,c+1) (r+1,c) (r+1,c+1); triangles (00,11,10) and (00,01,11).
        Vec3<S> top[3];
        top[0] = hfield_point(h, r, c);
        top[1] = tri == 0 ? hfield_point(h, r + 1, c + 1) : hfield_point(h, r, c + 1);
        top[2] = tri == 0 ? hfield_point(h, r + 1, c) : hfield_point(h, r + 1, c + 1);
        const S zmax = max_(top[0][2], max_(top[1][2], top[2][2]));
        if (lo[2] > zmax) continue;
        Vec3<S> pts[6];
        for (int k = 0; k < 3; ++k) {
          pts[k] = h.pos + h.rot * top[k];
          Vec3<S> b = top[k];
          b[2] = -base;
          pts[3 + k] = h.pos + h.rot * b;
        }
        ConvexShape<S> P;
        P.type = kConvexPoints, P.pts = pts, P.npts = 6;
        ContactGeom<S> cand[4];
        const int nc = collide_convex_shapes(P, A, margin, cand, true);
        if (nc == 0) continue;
        // Normal cone: a prism's side walls are not terrain. A contact normal is accepted when
        // it is no farther from this triangle's normal than the neighbouring triangles' normals
        // are (flat ground: only the face normal; a ridge: the normals across it). Contacts
        // through a side wall belong to the neighbouring prism, which reports them itself.
        const Vec3<S> nt = hfield_tri_normal(h, r, c, tri);
        S cone = S(1);
        if (tri == 0) {
          cone = min_(cone, dot(nt, hfield_tri_normal(h, r, c, 1)));
          if (r + 2 < h.nrow) cone = min_(cone, dot(nt, hfield_tri_normal(h, r + 1, c, 1)));
          if (c >= 1) cone = min_(cone, dot(nt, hfield_tri_normal(h, r, c - 1, 1)));
        } else {
          cone = min_(cone, dot(nt, hfield_tri_normal(h, r, c, 0)));
          if (r >= 1) cone = min_(cone, dot(nt, hfield_tri_normal(h, r - 1, c, 0)));
          if (c + 2 < h.ncol) cone = min_(cone, dot(nt, hfield_tri_normal(h, r, c + 1, 0)));
        }
        const Vec3<S> ntw = h.rot * nt;
        for (int i = 0; i < nc; ++i, ++nfound) {
          if (dot(cand[i].normal, ntw) < cone - S(1e-3)) continue;
          // Candidate order in a prism: B = geom; mirror to (geom, hfield) below.
          const Vec3<S> pl = mul_transpose(h.rot, cand[i].x1 - h.pos);
          for (int s = 0; s < 7; ++s) {
            const S sc = s == 0 ? -cand[i].phi : dirx[s - 1] * pl[0] + diry[s - 1] * pl[1];
            if (!used[s] || sc > score[s]) used[s] = true, score[s] = sc, slot[s] = cand[i];
          }
        }
      }
  int k = 0;
  for (int s = 0; s < 7; ++s) {
    if (!used[s]) continue;
    bool dup = false;
    for (int j = 0; j < k; ++j)
      dup = dup || (squared_norm(out[j].x0 - slot[s].x1) == S(0) && out[j].phi == slot[s].phi);
    if (dup) continue;
    // Mirror: geom 0 is the convex geom, geom 1 the heightfield.
    out[k].x0 = slot[s].x1;
    out[k].x1 = slot[s].x0;
    out[k].normal = -slot[s].normal;
    out[k].phi = slot[s].phi;
    ++k;
  }
  return k;
}

}  // namespace sap

// General convex narrow phase, the contact manifold (docs/collision.md): the support features
// of two convex shapes along the normal of their query (collision_gjk_epa.hpp), clipped into
// at most 4 points, plane-mesh and plane-ellipsoid contacts, and the convex pair's entry points
// (collide_convex, collide_plane_convex).
//
// The manifold: the support features of A along n and of B along -n (vertex, edge or face
// polygon, at most kMaxFeature points, faces taken within kFeatureSin of the normal); when one
// is a face, the other feature is clipped to it (Sutherland-Hodgman in the plane normal to n)
// and every clipped point gets its own depth against the face's support plane; at most 4 points
// are kept (deepest, farthest from it, the two largest triangle areas on either side).
#pragma once

#include "kernels/collision_gjk_epa.hpp"

namespace sap {

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

}  // namespace sap

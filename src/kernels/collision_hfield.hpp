// General convex narrow phase, heightfields: a heightfield against any convex shape, cell
// by cell as triangular prisms collided by GJK/EPA (collision_gjk_epa.hpp) and the manifold
// (collision_manifold.hpp).
#pragma once

#include "kernels/collision_manifold.hpp"

namespace sap {

// ------------------------------------------------------------------------------------------
// Heightfield (geom 1) against a convex geom (geom 0). The cells under the geom's bounding box
// (in the heightfield frame) are split into two triangles each; the prism under a triangle
// (its three surface points and the same points at the base depth -size[3]) is a convex shape
// collided by GJK/EPA and the manifold. Of all prism contacts (in row-major cell order) the
// deepest and the extremes along +-x, +-y, +-(x+y) of the heightfield frame are kept (at most 7;
// stable patches on flat ground, deterministic: near-ties go to the first prism).

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
  // Kept contacts: slot 0 deepest, then extremes along the 6 directions (at most 7). A later
  // candidate replaces a kept one only when it is better by more than `tie`: a point on a grid
  // line is found by the prisms on both sides, with scores equal up to rounding, and which one
  // wins must not depend on rounding (CPU and GPU round differently: contraction into FMAs).
  // Ties go to the first prism in cell order. tie = 1e-6 of a cell, above the rounding of
  // the scores (64 eps of the heightfield's extent covers fp32).
  const S cell = min_(S(2) * sx / S(h.ncol - 1), S(2) * sy / S(h.nrow - 1));
  const S tie = S(1e-6) * cell + S(64) * ScalarTraits<S>::eps * (sx + sy + sz + base);
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
            if (!used[s] || sc > score[s] + tie) used[s] = true, score[s] = sc, slot[s] = cand[i];
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

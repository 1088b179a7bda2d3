// Which feature of a convex mesh hull faces a direction: a face, an edge or a vertex, decided
// from the hull's adjacency around the support vertex (docs/collision.md, "Contact manifold").
// Written once for host and device.
//
// The manifold clips the support features of the two shapes against each other, so a face must
// be the hull's face, not "every vertex nearly level with the support vertex": on a long slab
// whose edges are chamfered, the chamfer vertices at the far end lie within a 2 degree cone of
// the support plane as seen from the near end (8 mm over 0.38 m is 1.2 degrees) although they
// are 45 degrees off the face as seen from their own neighbours. The test here is local:
//   - from the support vertex p0, each hull neighbour q descends below the support plane with
//     slope s(q) = -(q - p0) . d / |q - p0| (>= 0);
//   - the face: the plane through p0 and the two neighbours of least slope that are not
//     collinear; it faces d when its normal is within the feature angle of d (cos >= sqrt(1 -
//     sin^2)). Its vertices are the hull vertices within a plane tolerance of it (triangulated
//     coplanar facets of one face share the plane to rounding);
//   - else the edge (p0, q) of least slope when that slope is below the feature sine;
//   - else the vertex p0.
#pragma once

#include "kernels/collision_primitives.hpp"

namespace sap {

enum MeshFeatureKind : int { kMeshFeatureVertex = 1, kMeshFeatureEdge = 2, kMeshFeatureFace = 3 };

template <class S>
struct MeshFeature {
  int kind = kMeshFeatureVertex;
  int v0 = 0;          // the support vertex
  int v1 = -1;         // edge: its other end
  Vec3<S> normal;      // face: unit normal (towards d), geom frame
  S plane_tol = S(0);  // face: a vertex p is on it when |(p - p0) . normal| <= plane_tol
};

// Relative thickness of a hull face: coplanar facets agree to rounding; a bevel or chamfer
// smaller than this fraction of the face's size merges into it.
template <class S>
SAP_HDI S mesh_face_plane_rel_tol() {
  return S(1e-4);
}

// d: unit direction in the geom frame; p0: the support vertex along d (mesh_support_vertex);
// sin_tol: the feature angle's sine. Needs the hull adjacency (vert_edgeadr, edge); without it
// the vertex alone is returned.
template <class S>
SAP_HD MeshFeature<S> mesh_support_feature(const GeomFrame<S>& g, const Vec3<S>& d, int p0, S sin_tol) {
  MeshFeature<S> f;
  f.v0 = p0;
  if (g.vert_edgeadr == nullptr || g.edge == nullptr) return f;
  const Vec3<S> x0 = Vec3<S>::load(g.vert + 3 * p0);
  const int adr = g.vert_edgeadr[p0], num = g.vert_edgenum[p0];
  // Least-slope neighbour, then the least-slope neighbour not collinear with it.
  int q1 = -1, q2 = -1;
  S s1 = S(2), s2 = S(2);
  Vec3<S> u1 = Vec3<S>::zero();
  S l1 = S(0), l2 = S(0);
  for (int e = 0; e < num; ++e) {
    const int q = g.edge[adr + e];
    const Vec3<S> dq = Vec3<S>::load(g.vert + 3 * q) - x0;
    const S len = norm(dq);
    if (!(len > S(0))) continue;
    const S s = -dot(dq, d) / len;
    if (s < s1) s1 = s, q1 = q, l1 = len, u1 = dq * (S(1) / len);
  }
  if (q1 < 0) return f;
  for (int e = 0; e < num; ++e) {
    const int q = g.edge[adr + e];
    if (q == q1) continue;
    const Vec3<S> dq = Vec3<S>::load(g.vert + 3 * q) - x0;
    const S len = norm(dq);
    if (!(len > S(0))) continue;
    // Collinear with q1 (either way): the two would not span a plane. Consecutive rim edges of a
    // finely tessellated round face meet at nearly 180 degrees (5.6 for 64 sides): still a plane.
    if (norm(cross(u1, dq * (S(1) / len))) < S(1e-3)) continue;
    const S s = -dot(dq, d) / len;
    if (s < s2) s2 = s, q2 = q, l2 = len;
  }
  if (q2 >= 0) {
    Vec3<S> n = cross(Vec3<S>::load(g.vert + 3 * q1) - x0, Vec3<S>::load(g.vert + 3 * q2) - x0);
    const S nn = norm(n);
    if (nn > S(0)) {
      n = n * (S(1) / nn);
      if (dot(n, d) < S(0)) n = -n;
      if (dot(n, d) >= sqrt_(S(1) - sin_tol * sin_tol)) {
        f.kind = kMeshFeatureFace;
        f.normal = n;
        f.plane_tol = mesh_face_plane_rel_tol<S>() * max_(max_(l1, l2), norm(x0));
        return f;
      }
    }
  }
  if (s1 <= sin_tol) {
    f.kind = kMeshFeatureEdge;
    f.v1 = q1;
  }
  return f;
}

}  // namespace sap

// Collision of one world by a team: forward kinematics (level-parallel), geom world poses
// (strided over the lanes), then the candidate pairs a chunk at a time, one pair per lane
// (bounding-sphere prune, narrow phase, material), each lane's contacts written at its offset
// in the chunk (a shuffle prefix sum of the lanes' counts). The contact order is the pair order
// whatever the team size, the thread count or the batch size: the CPU's one-lane team is the
// serial loop over pairs.
#pragma once

#include "kernels/collision_box.hpp"
#include "kernels/collision_hfield.hpp"
#include "kernels/collision_manifold.hpp"
#include "kernels/collision_primitives.hpp"
#include "kernels/kinematics.hpp"
#include "kernels/team_scan.hpp"
#include "sap/contacts.hpp"

namespace sap {

// Candidate pairs with a narrow phase, in model pair order, and their combined constants
// (computed once on the host under the model's contact rule: pair_contact_params,
// model/contact_pairs.hpp).
struct CollisionPairsView {
  int npair = 0;
  const int* geom0 = nullptr;
  const int* geom1 = nullptr;
  const double* margin = nullptr;       // detection distance: contacts while dist < margin
  const double* shift = nullptr;        // the contact's phi = dist - shift
  const double* stiffness = nullptr;    // 3 per pair: combined k, k0, k1
  const double* dissipation = nullptr;  // tau_d
  const double* hc_dissipation = nullptr;  // Hunt-Crossley d
  const double* friction = nullptr;     // Coulomb mu (0: frictionless)
  // The bounding-sphere prune's bound (pair_prune_bound): (reach0 + reach1 + margin) (1 + 1e-6), a plane
  // pair's (rbound1 + margin) (1 + 1e-6), as bounds_overlap computes it in fp64.
  const double* bound = nullptr;
  // Contacts with torsional/rolling friction (ContactsView::angular()): condim and
  // t2, spin, roll1, roll2 per pair; null otherwise.
  const int* condim = nullptr;
  const double* friction_ext = nullptr;
  // Body-pair broad phase (one lane, fp64; nbody_pair = 0: none): the pairs grouped by their
  // geoms' two bodies, a group of two or more behind one sphere test. A group's bodies are stood
  // for by one geom each (body_pair_geom0/1: the body's geom nearest the middle of its collision
  // geoms, so no pose to form), and its bound is the largest over its pairs of
  //   bound_p + |pos_g0 - pos_ref0| + |pos_g1 - pos_ref1|   (geom_pos in the body frame),
  // times kBodyPairSlack: by the triangle inequality a pair that passes its own prune passes its
  // group's, so the contacts are those of the pair-by-pair loop. body_pair_adr (nbody_pair + 1)
  // indexes body_pair_pair, each group's pair indices ascending; body_pair_always: a bit per pair
  // of the untested groups (one pair; a plane). The survivors are walked in pair order.
  int nbody_pair = 0;
  const int* body_pair_geom0 = nullptr;
  const int* body_pair_geom1 = nullptr;
  const double* body_pair_bound = nullptr;
  const int* body_pair_adr = nullptr;
  const int* body_pair_pair = nullptr;
  const unsigned long long* body_pair_always = nullptr;
  // Bytes of the one-lane team's scratch the broad phase uses (a bit per pair).
  SAP_HDI long long broad_phase_bytes() const { return nbody_pair > 0 ? 8LL * ((npair + 63) / 64) : 0; }
};

// Per-world workspace owned by the pipeline.
struct CollisionWorkspaceView {
  Slab<double> xpos, xquat, xmat, xipos, xanchor, xaxis;  // body kinematics (forward_kinematics)
  Slab<double> geom_xpos, geom_xmat;                      // geom world poses (3, 9 per geom)
  Slab<int> seq;  // per contact slot: rank of the contact in the world's generation order
};

// Pairs with a closed-form or clipping narrow phase (plane, sphere, capsule, box with each other,
// and plane-cylinder). Every other supported pair runs the convex solvers of
// collision_gjk_epa.hpp, collision_manifold.hpp and collision_hfield.hpp (GJK/EPA, its manifold, the heightfield cells), which set the
// register count and the stack frame of any kernel that contains them.
SAP_HDI bool pair_is_analytic(int t0, int t1) {
  if (t0 > t1) {
    const int t = t0;
    t0 = t1;
    t1 = t;
  }
  return t1 <= kGeomBox || (t0 == kGeomPlane && t1 == kGeomCylinder);
}

// Narrow phase for geoms ordered by type (t0 <= t1); 0 contacts for pairs without one.
// kConvexSolvers = false compiles the analytic pairs only (pair_is_analytic): the collision
// kernel launched for models with no other pair, which then carries none of the convex
// solvers' registers and stack.
template <class S, bool kConvexSolvers = true>
SAP_HD int collide_ordered(int t0, const GeomFrame<S>& g0, int t1, const GeomFrame<S>& g1, S margin,
                           ContactGeom<S>* out) {
  switch (t0 * kNumGeomTypes + t1) {
    case kGeomPlane* kNumGeomTypes + kGeomSphere: return collide_plane_sphere(g0, g1, margin, out);
    case kGeomPlane* kNumGeomTypes + kGeomCapsule: return collide_plane_capsule(g0, g1, margin, out);
    case kGeomPlane* kNumGeomTypes + kGeomBox: return collide_plane_box(g0, g1, margin, out);
    case kGeomPlane* kNumGeomTypes + kGeomCylinder: return collide_plane_cylinder(g0, g1, margin, out);
    case kGeomSphere* kNumGeomTypes + kGeomSphere: return collide_sphere_sphere(g0, g1, margin, out);
    case kGeomSphere* kNumGeomTypes + kGeomCapsule: return collide_sphere_capsule(g0, g1, margin, out);
    case kGeomSphere* kNumGeomTypes + kGeomBox: return collide_sphere_box(g0, g1, margin, out);
    case kGeomCapsule* kNumGeomTypes + kGeomCapsule: return collide_capsule_capsule(g0, g1, margin, out);
    case kGeomCapsule* kNumGeomTypes + kGeomBox: return collide_capsule_box(g0, g1, margin, out);
    case kGeomBox* kNumGeomTypes + kGeomBox: return collide_box_box(g0, g1, margin, out);
    default:
      if constexpr (!kConvexSolvers) {
        return 0;  // not launched for a model with such a pair (CollisionPipeline checks)
      } else {
        if (t0 == kGeomPlane && (t1 == kGeomEllipsoid || t1 == kGeomMesh))
          return collide_plane_convex(t1, g0, g1, margin, out);
        if (t0 == kGeomPlane || t0 == kGeomHfield) return 0;
        // Every other pair of convex shapes (cylinder, ellipsoid, mesh with anything): GJK/EPA.
        if (t1 == kGeomHfield) return collide_convex_hfield(t0, g0, g1, margin, out);
        return collide_convex(t0, g0, t1, g1, margin, out);
      }
  }
}

// Narrow phase for any order of the two geoms: a pair given as (type 1, type 0) is computed in
// type order and mirrored (normal negated, witnesses swapped).
template <class S>
SAP_HD int collide_geoms(int t0, const GeomFrame<S>& g0, int t1, const GeomFrame<S>& g1, S margin,
                         ContactGeom<S>* out) {
  if (t0 <= t1) return collide_ordered(t0, g0, t1, g1, margin, out);
  const int n = collide_ordered(t1, g1, t0, g0, margin, out);
  for (int i = 0; i < n; ++i) {
    const Vec3<S> x = out[i].x0;
    out[i].x0 = out[i].x1;
    out[i].x1 = x;
    out[i].normal = -out[i].normal;
  }
  return n;
}

template <class S>
SAP_HDI GeomFrame<S> load_geom_frame(const ModelView& m, const double* geom_xpos, const double* geom_xmat, int g) {
  GeomFrame<S> f{Vec3<S>::load(geom_xpos + 3 * g), Mat3<S>::load(geom_xmat + 9 * g),
                 Vec3<S>::load(m.geom_size + 3 * g)};
  const int type = m.geom_type[g], id = m.geom_dataid ? m.geom_dataid[g] : -1;
  if (type == kGeomMesh && id >= 0) {
    const int adr = m.mesh_vertadr[id];
    f.vert = m.mesh_vert + 3 * adr;
    f.nvert = m.mesh_vertnum[id];
    f.vert_edgeadr = m.mesh_vert_edgeadr + adr;
    f.vert_edgenum = m.mesh_vert_edgenum + adr;
    f.edge = m.mesh_edge;
  } else if (type == kGeomHfield && id >= 0) {
    f.hdata = m.hfield_data + m.hfield_adr[id];
    f.hsize = m.hfield_size + 4 * id;
    f.nrow = m.hfield_nrow[id];
    f.ncol = m.hfield_ncol[id];
  }
  return f;
}

// Bounding radius of a geom about its center: geom_rbound, or for a heightfield its extent.
SAP_HDI double geom_reach(const ModelView& m, int g) {
  if (m.geom_type[g] != kGeomHfield || m.geom_dataid == nullptr || m.geom_dataid[g] < 0) return m.geom_rbound[g];
  const double* s = m.hfield_size + 4 * m.geom_dataid[g];
  const double z = s[2] > s[3] ? s[2] : s[3];
  return ::sqrt(s[0] * s[0] + s[1] * s[1] + z * z);
}

// The body-pair broad phase's bound factor (CollisionPairsView::body_pair_bound).
constexpr double kBodyPairSlack = 1 + 1e-6;

// The bounding-sphere prune's slack factor and bound of a pair: the two geoms' reaches plus the
// margin (a plane is unbounded: the other geom's sphere against its half-space, rbound1 + margin).
template <class S>
SAP_HDI S bounds_slack() {
  return S(1) + S(1e-6);
}
template <class S>
SAP_HDI S pair_prune_bound(const ModelView& m, int g0, int g1, S margin) {
  if (m.geom_type[g0] == kGeomPlane) return (S(m.geom_rbound[g1]) + margin) * bounds_slack<S>();
  return (S(geom_reach(m, g0)) + S(geom_reach(m, g1)) + margin) * bounds_slack<S>();
}

// Bounding-sphere prune (geom_rbound about the geom center); a plane is unbounded, so the
// other geom's sphere is tested against its half-space instead. Reads only the two geoms'
// positions (and a plane's normal, the third column of its rotation) and, in fp64, the pair's
// bound computed once (CollisionPairsView::bound; in fp32 it is computed here in fp32, as
// before): most candidate pairs end here, before their frames are loaded.
template <class S>
SAP_HDI bool bounds_overlap(const ModelView& m, const CollisionPairsView& pairs, int p, int g0, int g1,
                            const double* geom_xpos, const double* geom_xmat, S margin) {
  S bound;
  if constexpr (sizeof(S) == sizeof(double)) bound = S(pairs.bound[p]);
  else bound = pair_prune_bound<S>(m, g0, g1, margin);
  const Vec3<S> d = Vec3<S>::load(geom_xpos + 3 * g1) - Vec3<S>::load(geom_xpos + 3 * g0);
  if (m.geom_type[g0] == kGeomPlane) {
    const double* R = geom_xmat + 9 * g0;
    const Vec3<S> normal{{S(R[2]), S(R[5]), S(R[8])}};
    return dot(d, normal) <= bound;
  }
  return squared_norm(d) <= bound * bound;
}

// Swaps two contact slots of world w (all arrays and the generation rank). kAngular (here and
// below): the contacts carry condim and the extra friction coefficients (ContactsView::angular(),
// models with a pair of condim 4 or 6; the kernel's instantiation of its own, CollisionKernel).
template <bool kAngular>
SAP_HDI void swap_contact_slots(const ContactsView& c, const Slab<int>& seq, int w, int i, int j) {
#define SAP_X(name, type, dim)       \
  for (int k = 0; k < (dim); ++k) {  \
    type* p = c.name(w);             \
    const type tmp = p[(dim)*i + k]; \
    p[(dim)*i + k] = p[(dim)*j + k]; \
    p[(dim)*j + k] = tmp;            \
  }
  SAP_CONTACT_ARRAYS(SAP_X)
  if constexpr (kAngular) {
    if (c.angular()) {
      SAP_CONTACT_ANGULAR_ARRAYS(SAP_X)
    }
  }
#undef SAP_X
  const int tmp = seq(w)[i];
  seq(w)[i] = seq(w)[j];
  seq(w)[j] = tmp;
}

template <bool kAngular, class S>
SAP_HD void write_contact_slot(const ContactsView& c, const ModelView& m, const CollisionPairsView& pairs, int w,
                               int slot, int pair, const ContactGeom<S>& g) {
  const int g0 = pairs.geom0[pair], g1 = pairs.geom1[pair];
  c.geom(w)[2 * slot] = g0;
  c.geom(w)[2 * slot + 1] = g1;
  c.body(w)[2 * slot] = m.geom_bodyid[g0];
  c.body(w)[2 * slot + 1] = m.geom_bodyid[g1];
  g.x0.store(c.x0(w) + 3 * slot);
  g.x1.store(c.x1(w) + 3 * slot);
  g.normal.store(c.normal(w) + 3 * slot);
  c.phi(w)[slot] = double(g.phi) - pairs.shift[pair];
  for (int k = 0; k < 3; ++k) c.stiffness(w)[3 * slot + k] = pairs.stiffness[3 * pair + k];
  c.dissipation(w)[slot] = pairs.dissipation[pair];
  c.hc_dissipation(w)[slot] = pairs.hc_dissipation[pair];
  c.friction(w)[slot] = pairs.friction[pair];
  if constexpr (kAngular) {
    if (c.angular()) {
      c.condim(w)[slot] = pairs.condim[pair];
      for (int k = 0; k < 4; ++k) c.friction_ext(w)[4 * slot + k] = pairs.friction_ext[4 * pair + k];
    }
  }
}

// A contact generated past the capacity (rank `rank` in generation order) replaces the
// shallowest kept one (largest phi, the latest rank on ties) when it is strictly deeper (with
// no slot at all, it is only counted as dropped).
template <bool kAngular, class S>
SAP_HD void replace_shallowest(const ContactsView& c, const ModelView& m, const CollisionPairsView& pairs,
                               const Slab<int>& seq_slab, int w, int pair, int rank, const ContactGeom<S>& g) {
  const int cap = c.capacity;
  if (cap == 0) return;
  const double* phi_slot = c.phi(w);
  int* seq = seq_slab(w);
  int worst = 0;
  for (int k = 1; k < cap; ++k)
    if (phi_slot[k] > phi_slot[worst] || (phi_slot[k] == phi_slot[worst] && seq[k] > seq[worst])) worst = k;
  if (double(g.phi) - pairs.shift[pair] < phi_slot[worst]) {
    write_contact_slot<kAngular>(c, m, pairs, w, worst, pair, g);
    seq[worst] = rank;
  }
}

// One lane's running totals in the world's generation order (the body-pair path).
struct PairContactTotals {
  int count = 0, dropped = 0, rank = 0;
};

// One lane keeps pair p's n contacts: collide_world's rule (below) for a chunk of one lane.
template <bool kAngular, class S>
SAP_HD void keep_pair_contacts(const ModelView& m, const CollisionWorkspaceView& ws, const CollisionPairsView& pairs,
                               const ContactsView& c, int w, int p, const ContactGeom<S>* found, int n,
                               PairContactTotals& t) {
  const int cap = c.capacity;
  for (int i = 0; i < n; ++i, ++t.rank) {
    if (t.count < cap) {
      write_contact_slot<kAngular>(c, m, pairs, w, t.count, p, found[i]);
      ws.seq(w)[t.count++] = t.rank;
    } else {
      replace_shallowest<kAngular>(c, m, pairs, ws.seq, w, p, t.rank, found[i]);
      ++t.dropped;
    }
  }
}

// The narrow phase of pair p (0 contacts when its bounding spheres miss).
template <class S, bool kConvexSolvers>
SAP_HDI int collide_pair(const ModelView& m, const CollisionPairsView& pairs, const double* gpos, const double* gmat,
                         int p, ContactGeom<S>* found) {
  const int g0 = pairs.geom0[p], g1 = pairs.geom1[p];
  const S margin = S(pairs.margin[p]);
  if (!bounds_overlap(m, pairs, p, g0, g1, gpos, gmat, margin)) return 0;
  const GeomFrame<S> f0 = load_geom_frame<S>(m, gpos, gmat, g0);
  const GeomFrame<S> f1 = load_geom_frame<S>(m, gpos, gmat, g1);
  return collide_ordered<S, kConvexSolvers>(m.geom_type[g0], f0, m.geom_type[g1], f1, margin, found);
}

// One lane, fp64, with body pairs (CollisionPairsView::nbody_pair): a bit per pair for the pairs
// of every body pair whose spheres overlap and of the untested ones, then those pairs in pair
// order, each through its own prune and narrow phase. `mask`: the team's scratch (broad_phase_bytes()).
template <class S, bool kConvexSolvers, bool kAngular>
SAP_HD void collide_body_pairs(const ModelView& m, const CollisionWorkspaceView& ws,
                               const CollisionPairsView& pairs, const ContactsView& c, int w,
                               unsigned long long* mask, PairContactTotals& t) {
  const double* gpos = ws.geom_xpos(w);
  const double* gmat = ws.geom_xmat(w);
  const int nword = (pairs.npair + 63) / 64;
  for (int k = 0; k < nword; ++k) mask[k] = pairs.body_pair_always[k];
  for (int q = 0; q < pairs.nbody_pair; ++q) {
    const Vec3<double> d = Vec3<double>::load(gpos + 3 * pairs.body_pair_geom1[q]) -
                           Vec3<double>::load(gpos + 3 * pairs.body_pair_geom0[q]);
    const double bound = pairs.body_pair_bound[q];
    if (squared_norm(d) > bound * bound) continue;  // NaN poses go on to the pairs' own prune, which rejects them
    for (int k = pairs.body_pair_adr[q]; k < pairs.body_pair_adr[q + 1]; ++k) {
      const int p = pairs.body_pair_pair[k];
      mask[p >> 6] |= 1ULL << (p & 63);
    }
  }
  for (int k = 0; k < nword; ++k)
    for (unsigned long long bits = mask[k]; bits != 0; bits &= bits - 1) {
      const int p = 64 * k + count_trailing_zeros(bits);
      ContactGeom<S> found[kMaxPairContacts];
      const int n = collide_pair<S, kConvexSolvers>(m, pairs, gpos, gmat, p, found);
      if (n > 0) keep_pair_contacts<kAngular>(m, ws, pairs, c, w, p, found, n, t);
    }
}

template <class S, bool kConvexSolvers, bool kAngular, class Team>
SAP_HD void collide_world(Team& team, const ModelView& m, const double* qpos, const CollisionWorkspaceView& ws,
                          const CollisionPairsView& pairs, const ContactsView& c, int w) {
  double* xpos = ws.xpos(w);
  double* xmat = ws.xmat(w);
  forward_kinematics<S>(team, m, qpos, xpos, ws.xquat(w), xmat, ws.xipos(w), ws.xanchor(w), ws.xaxis(w));
  team.sync();
  double* gpos = ws.geom_xpos(w);
  double* gmat = ws.geom_xmat(w);
  for (int g = team.rank(); g < m.ngeom; g += team.size()) {
    const int b = m.geom_bodyid[g];
    const Mat3<S> Rb = Mat3<S>::load(xmat + 9 * b);
    (Vec3<S>::load(xpos + 3 * b) + Rb * Vec3<S>::load(m.geom_pos + 3 * g)).store(gpos + 3 * g);
    (Rb * to_matrix(Quat<S>::load(m.geom_quat + 4 * g))).store(gmat + 9 * g);
  }
  team.sync();

  // Contacts are appended in pair order. Past the capacity, a new contact replaces the
  // shallowest kept one when it is strictly deeper (ties: the later one is dropped), so the
  // kept set is the `capacity` smallest (phi, rank); every contact not kept counts in dropped.
  // count, dropped and rank are the same on every lane (sums of the chunks' totals).
  const int cap = c.capacity;
  int* seq = ws.seq(w);
  const int width = scan_width(team);  // pairs per chunk: one warp's lanes
  const int lane = team.rank();
  int count = 0, dropped = 0, rank = 0;
  int npair = pairs.npair;
  if constexpr (one_lane_team<Team>() && sizeof(S) == sizeof(double)) {
    if (pairs.nbody_pair > 0) {  // the body-pair broad phase instead of the loop below
      PairContactTotals t;
      collide_body_pairs<S, kConvexSolvers, kAngular>(m, ws, pairs, c, w,
                                                      reinterpret_cast<unsigned long long*>(team.shared_mem()), t);
      count = t.count, dropped = t.dropped, rank = t.rank, npair = 0;
    }
  }
  for (int base = 0; base < npair; base += width) {
    const int p = base + lane;
    if constexpr (one_lane_team<Team>()) {  // a pruned pair adds nothing: straight to the next one
      if (!bounds_overlap(m, pairs, p, pairs.geom0[p], pairs.geom1[p], gpos, gmat, S(pairs.margin[p]))) continue;
    }
    ContactGeom<S> found[kMaxPairContacts];
    int n = 0;
    if (lane < width && p < pairs.npair) {
      const int g0 = pairs.geom0[p], g1 = pairs.geom1[p];
      const S margin = S(pairs.margin[p]);
      // One lane reaches here only past the prune above: not tested twice.
      if (one_lane_team<Team>() || bounds_overlap(m, pairs, p, g0, g1, gpos, gmat, margin)) {
        const GeomFrame<S> f0 = load_geom_frame<S>(m, gpos, gmat, g0);
        const GeomFrame<S> f1 = load_geom_frame<S>(m, gpos, gmat, g1);
        n = collide_ordered<S, kConvexSolvers>(m.geom_type[g0], f0, m.geom_type[g1], f1, margin, found);
      }
    }
    int total = 0;
    const int before = lanes_prefix_sum(team, width, n, total);
    // This lane's contacts have ranks rank + before + i; those that land within the capacity go
    // straight to their slots (the earlier ranks all precede any replacement).
    for (int i = 0; i < n && count + before + i < cap; ++i) {
      write_contact_slot<kAngular>(c, m, pairs, w, count + before + i, p, found[i]);
      seq[count + before + i] = rank + before + i;
    }
    if (count + total > cap) {  // overflow (same on every lane): the rest in rank order, a lane at a time
      for (int l = 0; l < width; ++l) {
        team.sync();  // the slots written so far are visible to lane l
        if (lane == l)
          for (int i = cap - count - before > 0 ? cap - count - before : 0; i < n; ++i)
            replace_shallowest<kAngular>(c, m, pairs, ws.seq, w, p, rank + before + i, found[i]);
      }
      dropped += count + total - cap;
      count = cap;
    } else {
      count += total;
    }
    rank += total;
  }
  team.sync();
  if (team.rank() == 0) {  // one-lane: the counts; the order restored after replacements (overflow only)
    // Replacements broke the pair order: restore it (insertion sort by rank).
    if (dropped > 0)
      for (int i = 1; i < count; ++i)
        for (int j = i; j > 0 && seq[j - 1] > seq[j]; --j) swap_contact_slots<kAngular>(c, ws.seq, w, j - 1, j);
    c.count[w] = count;
    c.dropped[w] = dropped;
  }
}

// Launch functor: a team per world. kConvexSolvers = false: the analytic pairs only (see
// collide_ordered), for models whose pairs are all analytic. kAngular: the contacts carry
// condim and the extra friction coefficients (models with a pair of condim 4 or 6); a separate
// instantiation, since on CUDA their stores and swaps cost the kernel registers and stack even
// untaken (4 registers, 16 B of stack).
template <class S, bool kConvexSolvers, bool kAngular = false>
struct CollisionKernel {
  // in
  ModelView m;
  Slab<const double> qpos;
  CollisionPairsView pairs;  // candidate geom pairs (filtered once per model)
  // scratch
  CollisionWorkspaceView ws;  // per-world geom frames and candidate contacts
  // out
  ContactsView contacts;  // contacts kept (deepest first within capacity), counts, dropped
  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    collide_world<S, kConvexSolvers, kAngular>(team, m, qpos(w), ws, pairs, contacts, w);
  }
};

}  // namespace sap

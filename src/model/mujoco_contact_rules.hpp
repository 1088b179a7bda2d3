// MuJoCo's contact rules for MJCF models (docs/model-import.md, "Contact parameters"), as the
// MuJoCo release in tests/data/mujoco/contact_params.json applies them (MuJoCo 4.0.0):
//
//  * which geom pairs may collide: an explicit <pair> always; otherwise the bit test
//    (contype0 & conaffinity1) | (contype1 & conaffinity0), not in the same weld group (bodies
//    joined without joints move as one body), not an <exclude>d body pair, and, with the
//    filterparent flag (default on), not a weld group and its parent's weld group unless one of
//    them is the world's;
//  * the parameters of a geom pair: the geom with the higher `priority` gives its condim,
//    friction, solref and solimp as they are; at equal priority condim and each friction
//    coefficient take the maximum, solimp mixes with weight solmix0 / (solmix0 + solmix1), solref
//    mixes the same way when both are in standard form (timeconst > 0) and takes the element-wise
//    minimum in direct form; the 3 geom coefficients (slide, spin, roll) expand to 5
//    (slide, slide, spin, roll, roll); a <pair> gives all of these itself. Every coefficient is
//    raised to MuJoCo's minimum 1e-5 (mjMINMU).
//  * distances: margin = margin0 + margin1 (a pair's own margin), gap = gap0 + gap1; contacts
//    are detected while dist < margin + gap and are active while dist < margin; the contact
//    surface is shifted out by the margin (a body rests at dist = margin).
// Host only: evaluated once per candidate pair (model/contact_pairs.cpp).
#pragma once

#include <algorithm>
#include <array>

namespace sap {

constexpr double kMujocoMinMu = 1e-5;     // mjMINMU
constexpr double kMujocoMinVal = 1e-15;   // mjMINVAL

// A geom's contact attributes as MJCF gives them (defaults applied: MuJoCo's defaults below).
struct MujocoGeomContact {
  int contype = 1, conaffinity = 1, condim = 3, priority = 0;
  std::array<double, 3> friction{1, 0.005, 0.0001};  // slide, spin, roll
  double solmix = 1;
  std::array<double, 2> solref{0.02, 1};
  std::array<double, 5> solimp{0.9, 0.95, 0.001, 0.5, 2};
  double margin = 0, gap = 0;
};

// The parameters every contact of one geom pair gets.
struct MujocoPairContact {
  int condim = 3;
  std::array<double, 5> friction{1, 1, 0.005, 0.0001, 0.0001};  // t1, t2, spin, roll1, roll2
  std::array<double, 2> solref{0.02, 1};
  std::array<double, 2> solreffriction{0, 0};  // (0, 0): as solref
  std::array<double, 5> solimp{0.9, 0.95, 0.001, 0.5, 2};
  double margin = 0;  // active while dist < margin; the surface is shifted out by it
  double gap = 0;     // detected (inactive) while margin <= dist < margin + gap
};

inline bool mujoco_bitmask_collides(const MujocoGeomContact& a, const MujocoGeomContact& b) {
  return (a.contype & b.conaffinity) != 0 || (b.contype & a.conaffinity) != 0;
}

// Weld groups (MuJoCo's body_weldid: the body itself if it has joints, else its parent's group;
// the world is group 0) and their parents' groups. True when the pair is filtered.
inline bool mujoco_weld_filtered(int weld0, int parent_weld0, int weld1, int parent_weld1, bool filterparent) {
  if (weld0 == weld1) return true;
  return filterparent && weld0 != 0 && weld1 != 0 && (weld0 == parent_weld1 || weld1 == parent_weld0);
}

inline void mujoco_clamp_friction(std::array<double, 5>& f) {
  for (double& x : f) x = std::max(x, kMujocoMinMu);
}

inline MujocoPairContact mujoco_pair_contact(const MujocoGeomContact& a, const MujocoGeomContact& b) {
  MujocoPairContact p;
  std::array<double, 3> fri;
  if (a.priority != b.priority) {
    const MujocoGeomContact& w = a.priority > b.priority ? a : b;
    p.condim = w.condim;
    p.solref = w.solref;
    p.solimp = w.solimp;
    fri = w.friction;
  } else {
    p.condim = std::max(a.condim, b.condim);
    double mix;
    if (a.solmix >= kMujocoMinVal && b.solmix >= kMujocoMinVal) mix = a.solmix / (a.solmix + b.solmix);
    else if (a.solmix < kMujocoMinVal && b.solmix < kMujocoMinVal) mix = 0.5;
    else mix = a.solmix < kMujocoMinVal ? 0.0 : 1.0;
    const bool standard = a.solref[0] > 0 && b.solref[0] > 0;
    for (int i = 0; i < 2; ++i)
      p.solref[i] = standard ? mix * a.solref[i] + (1 - mix) * b.solref[i] : std::min(a.solref[i], b.solref[i]);
    for (int i = 0; i < 5; ++i) p.solimp[i] = mix * a.solimp[i] + (1 - mix) * b.solimp[i];
    for (int i = 0; i < 3; ++i) fri[i] = std::max(a.friction[i], b.friction[i]);
  }
  p.friction = {fri[0], fri[0], fri[1], fri[2], fri[2]};
  mujoco_clamp_friction(p.friction);
  p.margin = a.margin + b.margin;
  p.gap = a.gap + b.gap;
  return p;
}

}  // namespace sap

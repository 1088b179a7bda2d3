#include "sap/model.hpp"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace sap {

const char* joint_type_name(int t) {
  switch (t) {
    case kJointFree: return "free";
    case kJointBall: return "ball";
    case kJointSlide: return "slide";
    case kJointHinge: return "hinge";
  }
  return "unknown";
}
const char* geom_type_name(int t) {
  switch (t) {
    case kGeomPlane: return "plane";
    case kGeomSphere: return "sphere";
    case kGeomCapsule: return "capsule";
    case kGeomBox: return "box";
    case kGeomCylinder: return "cylinder";
    case kGeomEllipsoid: return "ellipsoid";
    case kGeomMesh: return "mesh";
    case kGeomHfield: return "hfield";
  }
  return "unknown";
}
const char* contact_rule_name(int rule) {
  switch (rule) {
    case kContactRuleDrake: return "drake";
    case kContactRuleMujoco: return "mujoco";
  }
  return "unknown";
}
const char* actuator_type_name(int t) {
  switch (t) {
    case kActMotor: return "motor";
    case kActPosition: return "position";
    case kActVelocity: return "velocity";
    case kActPD: return "pd";
    case kActMuscle: return "muscle";
  }
  return "unknown";
}

namespace {
int find_name(const std::vector<std::string>& names, const std::string& n) {
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == n) return static_cast<int>(i);
  return -1;
}
[[noreturn]] void fail(const std::string& what) { throw std::runtime_error("invalid model: " + what); }
std::string quoted(const std::vector<std::string>& names, int i, const char* kind) {
  std::ostringstream os;
  os << kind << " " << i;
  if (i >= 0 && i < static_cast<int>(names.size()) && !names[static_cast<std::size_t>(i)].empty())
    os << " '" << names[static_cast<std::size_t>(i)] << "'";
  return os.str();
}
}  // namespace

int Model::body_id(const std::string& n) const { return find_name(body_names, n); }
int Model::joint_id(const std::string& n) const { return find_name(jnt_names, n); }
int Model::geom_id(const std::string& n) const { return find_name(geom_names, n); }
int Model::actuator_id(const std::string& n) const { return find_name(actuator_names, n); }
int Model::tendon_id(const std::string& n) const { return find_name(tendon_names, n); }

int Model::ntree() const {
  int n = 0;
  for (int b = 1; b < nbody; ++b)
    if (body_parentid[static_cast<std::size_t>(b)] == 0) {
      // A top-level body counts as a tree when it or a descendant has a dof.
      bool moving = false;
      for (int c = b; c < nbody && !moving; ++c)
        if (body_rootid[static_cast<std::size_t>(c)] == b && body_dofnum[static_cast<std::size_t>(c)] > 0)
          moving = true;
      n += moving;
    }
  return n;
}

void Model::compute_levels() {
  const std::size_t n = static_cast<std::size_t>(nbody);
  std::vector<int> depth(n, 0);
  nlevel = 0;
  for (std::size_t b = 1; b < n; ++b) {
    depth[b] = depth[static_cast<std::size_t>(body_parentid[b])] + 1;
    nlevel = std::max(nlevel, depth[b]);
  }
  // Level by level; within a level, children grouped by their parent in the parent level's
  // order (so each body's children are contiguous), ascending ids within a group.
  level_bodyadr.assign(static_cast<std::size_t>(nlevel) + 1, 0);
  level_body.clear();
  body_childadr.assign(n, 0);
  body_childnum.assign(n, 0);
  std::vector<int> prev{0};  // level 0: the world
  for (int L = 1; L <= nlevel; ++L) {
    std::vector<int> cur;
    for (int p : prev) {
      body_childadr[static_cast<std::size_t>(p)] = static_cast<int>(level_body.size() + cur.size());
      for (std::size_t b = 1; b < n; ++b)
        if (depth[b] == L && body_parentid[b] == p) cur.push_back(static_cast<int>(b));
      body_childnum[static_cast<std::size_t>(p)] =
          static_cast<int>(level_body.size() + cur.size()) - body_childadr[static_cast<std::size_t>(p)];
    }
    level_body.insert(level_body.end(), cur.begin(), cur.end());
    level_bodyadr[static_cast<std::size_t>(L)] = static_cast<int>(level_body.size());
    prev = cur;
  }
  for (int p : prev) body_childadr[static_cast<std::size_t>(p)] = static_cast<int>(level_body.size());
}

// A = M + h D couples dof i only with its ancestors and descendants (CRBA: M_ij = cdof_j . crb
// cdof_i on one branch of a tree, 0 across branches and trees), unless a tendon adds its
// J_t^T J_t term: fixed tendons with armature or damping (free motion), spatial ones (nten_A).
// Then A is left dense (nA_colind = 0). Row i's columns: its ancestors ascending, i, then its
// descendants ascending (a subtree follows its root in dof order).
void Model::compute_A_sparsity() {
  A_rowadr.clear();
  A_colind.clear();
  nA_colind = 0;
  bool coupled = nten_A > 0;
  for (int t = 0; t < ntendon; ++t) {
    const std::size_t ut = static_cast<std::size_t>(t);
    coupled |= tendon_armature[ut] != 0 || tendon_damping[ut] != 0;
  }
  if (coupled || nv == 0) return;
  auto is_ancestor = [&](int a, int j) {  // a on the path from j to the root (j itself excluded)
    for (int k = dof_parentid[static_cast<std::size_t>(j)]; k >= 0; k = dof_parentid[static_cast<std::size_t>(k)])
      if (k == a) return true;
    return false;
  };
  A_rowadr.assign(static_cast<std::size_t>(nv) + 1, 0);
  for (int i = 0; i < nv; ++i) {
    A_rowadr[static_cast<std::size_t>(i)] = static_cast<int>(A_colind.size());
    for (int j = 0; j < nv; ++j)
      if (j == i || is_ancestor(j, i) || is_ancestor(i, j)) A_colind.push_back(j);
  }
  A_rowadr[static_cast<std::size_t>(nv)] = static_cast<int>(A_colind.size());
  nA_colind = static_cast<int>(A_colind.size());
}

ModelView Model::view() const {
  ModelView v;
  v.nlevel = nlevel;
  v.nbody = nbody;
  v.njnt = njnt;
  v.nq = nq;
  v.nv = nv;
  v.nv_pad = nv_pad;
  v.ngeom = ngeom;
  v.npair = npair;
  v.nu = nu;
  v.ntendon = ntendon;
  v.nwrap = nwrap;
  v.neq = neq;
  v.nmesh = nmesh;
  v.nmeshvert = nmeshvert;
  v.nmeshface = nmeshface;
  v.nmeshedge = nmeshedge;
  v.nhfield = nhfield;
  v.nhfielddata = nhfielddata;
  v.nfluidbody = nfluidbody;
  v.nsite = nsite;
  v.ntendata = ntendata;
  v.na = na;
  v.nqfrc_extra = nqfrc_extra;
  v.nten_A = nten_A;
  v.nA_colind = nA_colind;
  v.ngravcomp = ngravcomp;
  v.nuact = nuact;
  v.nfluidgeom = nfluidgeom;
  for (int k = 0; k < 3; ++k) v.gravity[k] = gravity[static_cast<std::size_t>(k)];
  v.fluid_density = fluid_density;
  v.fluid_viscosity = fluid_viscosity;
  for (int k = 0; k < 3; ++k) v.fluid_wind[k] = fluid_wind[static_cast<std::size_t>(k)];
#define SAP_X(name, type, count) v.name = name.empty() ? nullptr : name.data();
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X
  return v;
}

void Model::validate() const {
#define SAP_X(name, type, count)                                                                     \
  if (name.size() != static_cast<std::size_t>(count))                                                \
    fail(std::string("array " #name " has ") + std::to_string(name.size()) + " entries, expected " + \
         std::to_string(count));
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X
  if (nbody < 1) fail("no world body");
  if (nA_colind > 0) {  // A's sparsity: rows spanning A_colind in order, each ascending in [0, nv) with its diagonal
    if (A_rowadr[0] != 0 || A_rowadr[static_cast<std::size_t>(nv)] != nA_colind) fail("A_rowadr does not span A_colind");
    for (int i = 0; i < nv; ++i) {
      const int a0 = A_rowadr[static_cast<std::size_t>(i)], a1 = A_rowadr[static_cast<std::size_t>(i) + 1];
      if (a0 > a1) fail("A_rowadr decreases at row " + std::to_string(i));
      bool diagonal = false;
      for (int k = a0; k < a1; ++k) {
        const int j = A_colind[static_cast<std::size_t>(k)];
        if (j < 0 || j >= nv || (k > a0 && j <= A_colind[static_cast<std::size_t>(k) - 1]))
          fail("A_colind of row " + std::to_string(i) + " is not ascending within [0, nv)");
        diagonal |= j == i;
      }
      if (!diagonal) fail("A_colind: row " + std::to_string(i) + " lacks its diagonal");
    }
  }
  {  // depth levels: every body once, its parent on the level before, children ranges consistent
    std::vector<int> level(static_cast<std::size_t>(nbody), -1);
    level[0] = 0;
    if (level_bodyadr[0] != 0 || level_bodyadr[static_cast<std::size_t>(nlevel)] != nbody - 1)
      fail("level_bodyadr does not cover bodies 1..nbody-1");
    for (int L = 1; L <= nlevel; ++L)
      for (int k = level_bodyadr[static_cast<std::size_t>(L) - 1]; k < level_bodyadr[static_cast<std::size_t>(L)]; ++k) {
        const int b = level_body[static_cast<std::size_t>(k)];
        if (b <= 0 || b >= nbody || level[static_cast<std::size_t>(b)] != -1) fail("level_body is not a permutation of the bodies");
        const int parent = body_parentid[static_cast<std::size_t>(b)];
        if (parent < 0 || parent >= b || level[static_cast<std::size_t>(parent)] != L - 1)
          fail(quoted(body_names, b, "body") + ": level inconsistent with its parent's");
        level[static_cast<std::size_t>(b)] = L;
      }
    int nchild = 0;
    for (int p = 0; p < nbody; ++p) {
      const int adr = body_childadr[static_cast<std::size_t>(p)], num = body_childnum[static_cast<std::size_t>(p)];
      if (adr < 0 || num < 0 || adr + num > nbody - 1) fail(quoted(body_names, p, "body") + ": child range out of bounds");
      nchild += num;
      for (int k = 0; k < num; ++k) {
        const int c = level_body[static_cast<std::size_t>(body_childadr[static_cast<std::size_t>(p)] + k)];
        if (body_parentid[static_cast<std::size_t>(c)] != p) fail(quoted(body_names, p, "body") + ": child list inconsistent");
      }
    }
    if (nchild != nbody - 1) fail("body_childnum does not count every body once");
  }
  if (nv_pad != pad_nv(nv)) fail("nv_pad inconsistent with nv");
  auto at = [](const std::vector<double>& a, int i) { return a[static_cast<std::size_t>(i)]; };
  auto ati = [](const std::vector<int>& a, int i) { return a[static_cast<std::size_t>(i)]; };
  for (int b = 1; b < nbody; ++b) {
    const int p = ati(body_parentid, b);
    if (p < 0 || p >= b) fail(quoted(body_names, b, "body") + ": parent must precede the body");
    const double m = at(body_mass, b);
    if (!(m >= 0) || !std::isfinite(m))
      fail(quoted(body_names, b, "body") + ": mass must be non-negative and finite, got " + std::to_string(m));
    const double* I = &body_inertia[6 * static_cast<std::size_t>(b)];
    for (int k = 0; k < 6; ++k)
      if (!std::isfinite(I[k])) fail(quoted(body_names, b, "body") + ": inertia is not finite");
    // Positive semi-definiteness from the principal moments (a test on the leading minors
    // rejects about half of the exactly singular tensors rotated in floating point: a point
    // mass, a thin rod, or a URDF tensor whose rounding noise was projected away).
    Eigen::Matrix3d T;
    T << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
    const double tol = 1e-12 * (std::fabs(I[0]) + std::fabs(I[1]) + std::fabs(I[2]) + 1e-300);
    if (Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(T, Eigen::EigenvaluesOnly).eigenvalues()[0] < -tol)
      fail(quoted(body_names, b, "body") + ": inertia tensor is not positive semi-definite");
  }
  for (int j = 0; j < njnt; ++j) {
    const int t = ati(jnt_type, j);
    if (t < kJointFree || t > kJointHinge) fail(quoted(jnt_names, j, "joint") + ": unknown type");
    const int b = ati(jnt_bodyid, j);
    if (b <= 0 || b >= nbody) fail(quoted(jnt_names, j, "joint") + ": body index out of range");
    if (t == kJointFree) {
      if (ati(body_parentid, b) != 0)
        fail(quoted(jnt_names, j, "joint") + ": a free joint must attach a top-level body to the world");
      if (ati(body_jntnum, b) != 1)
        fail(quoted(jnt_names, j, "joint") + ": a free joint must be the only joint of its body");
    }
    if (t == kJointHinge || t == kJointSlide) {
      const double* a = &jnt_axis[3 * static_cast<std::size_t>(j)];
      const double n = std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
      if (std::fabs(n - 1) > 1e-6)
        fail(quoted(jnt_names, j, "joint") + ": axis must be a unit vector, has norm " + std::to_string(n));
      if (ati(jnt_limited, j) &&
          !(jnt_range[2 * static_cast<std::size_t>(j)] <= jnt_range[2 * static_cast<std::size_t>(j) + 1]))
        fail(quoted(jnt_names, j, "joint") + ": range lower bound exceeds upper bound");
    } else if (ati(jnt_limited, j)) {
      fail(quoted(jnt_names, j, "joint") + ": limits are only supported on hinge and slide joints");
    }
  }
  for (int i = 0; i < nv; ++i) {
    if (ati(dof_parentid, i) >= i) fail("dof_parentid must point to an earlier dof");
    if (at(dof_armature, i) < 0 || at(dof_damping, i) < 0)
      fail("dof " + std::to_string(i) + ": armature and damping must be non-negative");
    if (!(at(dof_frictionloss, i) >= 0) || !std::isfinite(at(dof_frictionloss, i)))
      fail("dof " + std::to_string(i) + ": frictionloss must be finite and non-negative");
  }
  for (int g = 0; g < ngeom; ++g) {
    const int t = ati(geom_type, g);
    if (t < 0 || t >= kNumGeomTypes) fail(quoted(geom_names, g, "geom") + ": unknown type");
    const double* s = &geom_size[3 * static_cast<std::size_t>(g)];
    const int needed = (t == kGeomPlane || t == kGeomMesh || t == kGeomHfield) ? 0
                       : t == kGeomSphere                                   ? 1
                       : (t == kGeomBox || t == kGeomEllipsoid)             ? 3
                                                                            : 2;
    const int data = ati(geom_dataid, g);
    const int ndata = t == kGeomMesh ? nmesh : t == kGeomHfield ? nhfield : 0;
    if ((ndata > 0 || t == kGeomMesh || t == kGeomHfield) && (data < 0 || data >= ndata))
      fail(quoted(geom_names, g, "geom") + ": " + geom_type_name(t) + " id " + std::to_string(data) + " out of range");
    if (t != kGeomMesh && t != kGeomHfield && data != -1)
      fail(quoted(geom_names, g, "geom") + ": only mesh and hfield geoms refer to data");
    for (int k = 0; k < needed; ++k)
      if (!(s[k] > 0)) fail(quoted(geom_names, g, "geom") + ": size entries must be positive");
    if (!(at(geom_stiffness, g) > 0)) fail(quoted(geom_names, g, "geom") + ": stiffness must be positive");
    if (at(geom_dissipation, g) < 0) fail(quoted(geom_names, g, "geom") + ": dissipation must be non-negative");
    if (!(at(geom_hc_dissipation, g) >= 0) || !std::isfinite(at(geom_hc_dissipation, g)))
      fail(quoted(geom_names, g, "geom") + ": Hunt-Crossley dissipation must be finite and non-negative");
    if (at(geom_friction, g) < 0) fail(quoted(geom_names, g, "geom") + ": friction must be non-negative");
    if (at(geom_margin, g) < 0) fail(quoted(geom_names, g, "geom") + ": margin must be non-negative");
    const int condim = ati(geom_condim, g);
    if (condim != 1 && condim != 3 && condim != 4 && condim != 6)
      fail(quoted(geom_names, g, "geom") + ": condim must be 1, 3, 4 or 6, got " + std::to_string(condim));
    if (!(at(geom_friction_spin, g) >= 0) || !(at(geom_friction_roll, g) >= 0) || !(at(geom_gap, g) >= 0) ||
        !(at(geom_solmix, g) >= 0))
      fail(quoted(geom_names, g, "geom") + ": torsional/rolling friction, gap and solmix must be non-negative");
  }
  if (contact_rule != kContactRuleDrake && contact_rule != kContactRuleMujoco)
    fail("unknown contact_rule " + std::to_string(contact_rule));
  for (int p = 0; p < npair; ++p) {
    const int condim = ati(pair_condim, p);
    if (condim != -1 && condim != 1 && condim != 3 && condim != 4 && condim != 6)
      fail("contact pair " + std::to_string(p) + ": condim must be 1, 3, 4 or 6 (or -1: combined), got " +
           std::to_string(condim));
  }
  for (int u = 0; u < nu; ++u) {
    const int d = ati(actuator_dofadr, u);
    if (d < 0 || d >= nv) fail(quoted(actuator_names, u, "actuator") + ": dof out of range");
    if (at(actuator_kp, u) < 0 || at(actuator_kd, u) < 0)
      fail(quoted(actuator_names, u, "actuator") + ": gains must be non-negative");
    if (ati(actuator_forcelimited, u)) {
      const double lo = actuator_forcerange[2 * static_cast<std::size_t>(u)];
      const double hi = actuator_forcerange[2 * static_cast<std::size_t>(u) + 1];
      if (!(lo <= 0 && 0 <= hi)) fail(quoted(actuator_names, u, "actuator") + ": forcerange must contain 0");
    }
    const int t = ati(actuator_tendonid, u);
    if (t < -1 || t >= ntendon) fail(quoted(actuator_names, u, "actuator") + ": tendon out of range");
  }
  auto one_dof = [&](int j) {
    return j >= 0 && j < njnt && (ati(jnt_type, j) == kJointHinge || ati(jnt_type, j) == kJointSlide);
  };
  for (int t = 0; t < ntendon; ++t) {
    const int adr = ati(tendon_adr, t), num = ati(tendon_num, t);
    if (adr < 0 || num < 1 || adr + num > nwrap) fail(quoted(tendon_names, t, "tendon") + ": wrap range out of bounds");
    if (ati(wrap_type, adr) != kWrapJoint) {  // spatial: site ... site, geoms between sites, pulleys
      const std::string who = quoted(tendon_names, t, "spatial tendon");
      if (ntendata != ntendon) fail(who + ": ntendata must equal ntendon when a tendon is spatial");
      auto site = [&](int k) { return ati(wrap_type, k) == kWrapSite && ati(wrap_objid, k) >= 0 && ati(wrap_objid, k) < nsite; };
      if (!site(adr) || !site(adr + num - 1)) fail(who + ": the path must start and end at a site");
      for (int k = adr; k < adr + num; ++k) {
        const int type = ati(wrap_type, k), obj = ati(wrap_objid, k);
        if (type == kWrapSphere || type == kWrapCylinder) {
          if (obj < 0 || obj >= ngeom || !site(k - 1) || !site(k + 1))
            fail(who + ": a wrapping geom must be a geom between two sites");
          const int side = static_cast<int>(std::lround(at(wrap_prm, k)));
          if (side < -1 || side >= nsite) fail(who + ": sidesite out of range");
          if (!(geom_size[3 * static_cast<std::size_t>(obj)] > 0)) fail(who + ": wrapping radius must be positive");
        } else if (type == kWrapPulley) {
          if (!(at(wrap_prm, k) > 0)) fail(who + ": pulley divisor must be positive");
        } else if (type != kWrapSite) {
          fail(who + ": unknown path element");
        } else if (!site(k)) {
          fail(who + ": site out of range");
        }
      }
      continue;
    }
    for (int k = adr; k < adr + num; ++k) {
      if (ati(wrap_type, k) != kWrapJoint) fail(quoted(tendon_names, t, "tendon") + ": a fixed tendon has only joints");
      if (!one_dof(ati(wrap_objid, k))) fail(quoted(tendon_names, t, "tendon") + ": joints must be hinge or slide");
      if (!std::isfinite(at(wrap_prm, k))) fail(quoted(tendon_names, t, "tendon") + ": coefficient is not finite");
      for (int l = adr; l < k; ++l)
        if (ati(wrap_objid, l) == ati(wrap_objid, k))
          fail(quoted(tendon_names, t, "tendon") + ": a joint appears twice");
    }
    if (ati(tendon_limited, t) &&
        !(tendon_range[2 * static_cast<std::size_t>(t)] <= tendon_range[2 * static_cast<std::size_t>(t) + 1]))
      fail(quoted(tendon_names, t, "tendon") + ": range lower bound exceeds upper bound");
    if (at(tendon_stiffness, t) < 0 || at(tendon_damping, t) < 0)
      fail(quoted(tendon_names, t, "tendon") + ": stiffness and damping must be non-negative");
  }
  for (int t = 0; t < ntendon; ++t) {  // every tendon, fixed or spatial
    const std::string who = quoted(tendon_names, t, "tendon");
    if (!(at(tendon_armature, t) >= 0) || !(at(tendon_frictionloss, t) >= 0))
      fail(who + ": armature and frictionloss must be non-negative");
    if (!(tendon_lengthspring[2 * static_cast<std::size_t>(t)] <= tendon_lengthspring[2 * static_cast<std::size_t>(t) + 1]))
      fail(who + ": spring dead band lower bound exceeds upper bound");
  }
  for (int b = 0; b < ngravcomp; ++b)
    if (!std::isfinite(at(body_gravcomp, b))) fail(quoted(body_names, b, "body") + ": gravcomp is not finite");
  for (int e = 0; e < neq; ++e) {
    const int t = ati(eq_type, e), o1 = ati(eq_obj1id, e), o2 = ati(eq_obj2id, e);
    const std::string who = quoted(eq_names, e, "equality");
    if (t == kEqJoint) {
      if (!one_dof(o1)) fail(who + ": joint 1 must be a hinge or slide joint");
      if (o2 != -1 && !one_dof(o2)) fail(who + ": joint 2 must be a hinge or slide joint");
      if (o1 == o2) fail(who + ": joint 1 and joint 2 must differ");
    } else if (t == kEqTendon) {
      if (o1 < 0 || o1 >= ntendon || o2 < -1 || o2 >= ntendon) fail(who + ": tendon index out of range");
      if (o1 == o2) fail(who + ": tendon 1 and tendon 2 must differ");
    } else if (t == kEqConnect || t == kEqWeld) {
      if (o1 < 0 || o1 >= nbody || o2 < 0 || o2 >= nbody) fail(who + ": body index out of range");
      if (o1 == o2) fail(who + ": body 1 and body 2 must differ");
    } else {
      fail(who + ": unknown type");
    }
    const double s0 = eq_solref[2 * static_cast<std::size_t>(e)], s1 = eq_solref[2 * static_cast<std::size_t>(e) + 1];
    if (!std::isfinite(s0) || !std::isfinite(s1) || (s0 > 0 && !(s1 > 0)) || (s0 < 0 && !(s1 <= 0)))
      fail(who + ": solref must be (timeconst > 0, dampratio > 0), (-stiffness, -damping) or (0, 0)");
    for (int k = 0; k < kEqDataSize; ++k)
      if (!std::isfinite(eq_data[kEqDataSize * static_cast<std::size_t>(e) + static_cast<std::size_t>(k)]))
        fail(who + ": data is not finite");
  }
}

ModelStorage::ModelStorage(const Model& m, Backend b) {
  view_ = m.view();
#define SAP_X(name, type, count)                \
  name##_.allocate(b, m.name.size());           \
  name##_.upload(m.name.data(), m.name.size()); \
  view_.name = m.name.empty() ? nullptr : name##_.data();
  SAP_MODEL_ARRAYS(SAP_X)
#undef SAP_X
}

}  // namespace sap

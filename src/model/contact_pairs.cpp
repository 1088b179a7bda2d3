#include "model/contact_pairs.hpp"

#include <cmath>
#include <stdexcept>

#include "kernels/collision_primitives.hpp"
#include "model/mujoco_contact_rules.hpp"

namespace sap {

namespace {

MujocoGeomContact mujoco_geom(const Model& m, int g) {
  const std::size_t i = static_cast<std::size_t>(g);
  MujocoGeomContact c;
  c.contype = m.geom_contype[i];
  c.conaffinity = m.geom_conaffinity[i];
  c.condim = m.geom_condim[i];
  c.priority = m.geom_priority[i];
  c.friction = {m.geom_friction[i], m.geom_friction_spin[i], m.geom_friction_roll[i]};
  c.solmix = m.geom_solmix[i];
  c.solref = {m.geom_solref[2 * i], m.geom_solref[2 * i + 1]};
  c.margin = m.geom_margin[i];
  c.gap = m.geom_gap[i];
  return c;
}

bool has_solref(const std::array<double, 2>& s) { return s[0] != 0 || s[1] != 0; }

}  // namespace

std::array<double, 2> solref_oscillator(const double solref[2]) {
  if (solref[0] > 0) {
    if (!(solref[1] > 0)) throw std::invalid_argument("solref dampratio must be positive");
    const double w = 1.0 / (solref[0] * solref[1]);
    return {w * w, 2.0 / solref[0]};
  }
  if (!(solref[0] < 0) || solref[1] > 0)
    throw std::invalid_argument("solref must be (timeconst > 0, dampratio > 0) or (-stiffness < 0, -damping <= 0)");
  return {-solref[0], -solref[1]};
}

PairContactParams pair_contact_params(const Model& m, int p) {
  const std::size_t ip = static_cast<std::size_t>(p);
  const int g0 = m.pair_geom0[ip], g1 = m.pair_geom1[ip];
  const std::size_t i0 = static_cast<std::size_t>(g0), i1 = static_cast<std::size_t>(g1);
  PairContactParams out;
  const double k0 = m.geom_stiffness[i0], k1 = m.geom_stiffness[i1];
  out.stiffness = {combine_stiffness(k0, k1), k0, k1};
  out.dissipation = combine_dissipation(m.geom_dissipation[i0], m.geom_dissipation[i1]);
  out.hc_dissipation = combine_hc_dissipation(k0, k1, m.geom_hc_dissipation[i0], m.geom_hc_dissipation[i1]);
  const double pair_friction = m.pair_friction[ip], pair_margin = m.pair_margin[ip];
  if (m.contact_rule != kContactRuleMujoco) {
    double mu = pair_friction >= 0 ? pair_friction : combine_friction(m.geom_friction[i0], m.geom_friction[i1]);
    if (m.pair_condim[ip] == 1) mu = 0;  // an explicit frictionless pair
    out.friction = {mu, mu, 0, 0, 0};
    out.detect = pair_margin >= 0 ? pair_margin : m.geom_margin[i0] + m.geom_margin[i1];
    return out;
  }
  const MujocoGeomContact a = mujoco_geom(m, g0), b = mujoco_geom(m, g1);
  MujocoPairContact pc = mujoco_pair_contact(a, b);
  // An explicit pair's own values (the importer gives every one: MuJoCo's pair defaults).
  if (m.pair_condim[ip] >= 0) pc.condim = m.pair_condim[ip];
  if (pair_friction >= 0) {
    pc.friction[0] = pair_friction;
    for (int k = 0; k < 4; ++k) {
      const double f = m.pair_friction_ext[4 * ip + static_cast<std::size_t>(k)];
      pc.friction[static_cast<std::size_t>(k) + 1] = f >= 0 ? f : pc.friction[static_cast<std::size_t>(k) + 1];
    }
    mujoco_clamp_friction(pc.friction);
  }
  if (pair_margin >= 0) pc.margin = pair_margin;
  if (m.pair_gap[ip] >= 0) pc.gap = m.pair_gap[ip];
  const std::array<double, 2> pair_solref{m.pair_solref[2 * ip], m.pair_solref[2 * ip + 1]};
  const bool explicit_solref = has_solref(pair_solref);
  if (explicit_solref) pc.solref = pair_solref;
  out.condim = pc.condim;
  out.friction = pc.friction;
  if (pc.condim == 1) out.friction = {0, 0, 0, 0, 0};
  out.detect = pc.margin + pc.gap;
  out.shift = pc.margin;
  // The pair's solref on the pair's reduced mass (the masses the geoms' stiffnesses stand for).
  if (explicit_solref || (has_solref(a.solref) && has_solref(b.solref))) {
    const std::array<double, 2> w = solref_oscillator(pc.solref.data());
    auto mass = [&](double k, const std::array<double, 2>& solref) {
      return has_solref(solref) ? k / solref_oscillator(solref.data())[0] : k / w[0];
    };
    const double m0 = mass(k0, a.solref), m1 = mass(k1, b.solref);
    const double m_red = !std::isfinite(m0) ? m1 : !std::isfinite(m1) ? m0 : m0 * m1 / (m0 + m1);
    out.stiffness[0] = m_red * w[0];
    out.dissipation = w[1] / w[0];
  }
  return out;
}

int max_pair_condim(const Model& m) {
  int c = 0;
  for (int p = 0; p < m.npair; ++p) c = std::max(c, pair_contact_params(m, p).condim);
  return c;
}

}  // namespace sap

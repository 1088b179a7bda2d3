// The contact parameters of a candidate geom pair, under the model's contact rule (ContactRule,
// sap/model.hpp; docs/model-import.md "Contact parameters"). Evaluated on the host once per
// model by the collision pipeline; every contact of the pair gets them.
#pragma once

#include <array>

#include "sap/model.hpp"

namespace sap {

struct PairContactParams {
  int condim = 3;  // 1: frictionless; 3: Coulomb; 4: + torsional; 6: + rolling
  // t1, t2 (sliding), spin (m), roll1, roll2 (m); friction[0] is the contact's Coulomb mu
  // (0 for condim 1).
  std::array<double, 5> friction{0, 0, 0, 0, 0};
  double detect = 0;  // contacts are generated while dist < detect
  double shift = 0;   // their signed distance is dist - shift (the contact surface moves out by it)
  std::array<double, 3> stiffness{0, 0, 0};  // combined k, then k0 and k1 (the geoms')
  double dissipation = 0;                    // tau_d (s)
  double hc_dissipation = 0;                 // Hunt-Crossley d (s/m)
};

// Pair p of m (p < m.npair).
//   kContactRuleDrake:  mu = 2 mu0 mu1 / (mu0 + mu1) (or the explicit pair's), condim 3,
//                       detect = margin0 + margin1 (or the pair's margin), shift 0,
//                       k = k0 k1 / (k0 + k1), tau_d = tau0 + tau1.
//   kContactRuleMujoco: model/mujoco_contact_rules.hpp (priority, max, solmix; <pair> values),
//                       detect = margin + gap, shift = margin; the stiffness of the pair's solref
//                       on the pair's reduced mass: with m_g = k_g / w_g^2 (w_g^2 of the geom's own
//                       solref, import::contact_material), k = m0 m1 / (m0 + m1) w^2 and
//                       tau_d = 2 zeta w / w^2 of the pair's solref (equal to the Drake rule's when
//                       both geoms have the pair's solref). A geom without a solref (geom_solref
//                       (0, 0): a stiffness given directly) keeps the Drake combination of k and tau_d.
// Both rules: Hunt-Crossley d = combine_hc_dissipation.
PairContactParams pair_contact_params(const Model& m, int p);

// MuJoCo's solref as an oscillator: w^2 and 2 zeta w (1/s^2, 1/s) of (timeconst tc > 0,
// dampratio zeta > 0): w = 1 / (tc zeta), 2 zeta w = 2 / tc; of (-stiffness, -damping): w^2 =
// stiffness, 2 zeta w = damping. Throws std::invalid_argument for any other solref.
std::array<double, 2> solref_oscillator(const double solref[2]);

// The largest condim of the model's candidate pairs (3 under kContactRuleDrake; 0 without pairs).
// Pairs of condim 4 or 6 add torsional/rolling rows to the solve (docs/sap-math.md §3.9).
int max_pair_condim(const Model& m);

}  // namespace sap

// Tendon equality (MuJoCo's <equality><tendon>, issue 30): the polynomial coupling of two tendon
// lengths, a holonomic constraint like the joint coupler (docs/sap-math.md §12), written once
// for host and device, templated on the scalar S.
//
//   g(q) = (L1 - L1_0) - p(L2 - L2_0),   p(x) = c0 + c1 x + c2 x^2 + c3 x^3 + c4 x^4,
//   dg/dq = J1 - p'(L2 - L2_0) J2,
// L_0 the tendons' lengths at qpos0 (MuJoCo's tendon_length0), J the tendons' moment arms.
// Without a second tendon, g = (L1 - L1_0) - c0 and dg/dq = J1.
#pragma once

#include "sap/backend/hd.hpp"

namespace sap {

template <class S>
struct TendonCouplingRow {
  S g;      // residual
  S slope;  // p'(x): the row is J1 - slope J2
};

template <class S>
SAP_HDI TendonCouplingRow<S> tendon_coupling(S L1, S L1_0, bool has_second, S L2, S L2_0, const double* coef) {
  if (!has_second) return {L1 - L1_0 - S(coef[0]), S(0)};
  const S x = L2 - L2_0;
  const S p = S(coef[0]) + x * (S(coef[1]) + x * (S(coef[2]) + x * (S(coef[3]) + x * S(coef[4]))));
  const S dp = S(coef[1]) + x * (S(2) * S(coef[2]) + x * (S(3) * S(coef[3]) + x * S(4) * S(coef[4])));
  return {L1 - L1_0 - p, dp};
}

}  // namespace sap

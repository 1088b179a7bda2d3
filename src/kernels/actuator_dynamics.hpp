// MuJoCo's actuator dynamics, gains and biases (issue 30), written once for host and device,
// templated on the scalar S: the activation rate act_dot of each dyntype, the activation after
// a step, and the scalar actuator force gain * input + bias with MuJoCo's muscle model.
//
//   act_dot = ctrl                                   integrator
//           = (ctrl - act) / tau                     filter, filterexact (tau = dynprm[0])
//           = (clamp(ctrl, 0, 1) - act) / tau(act)   muscle (below)
//   act(t+h) = act + h act_dot                       (Euler: integrator, filter, muscle)
//            = act + act_dot tau (1 - exp(-h/tau))   (filterexact: exact for constant ctrl)
//   then clamped to actrange when actlimited.
//   force = gain * input + bias, input = ctrl (no dynamics), act, or the next act (actearly),
//   gain: fixed gainprm[0], affine gainprm[0] + gainprm[1] l + gainprm[2] l', or muscle;
//   bias: affine biasprm[0] + biasprm[1] l + biasprm[2] l', or muscle (passive force).
//
// Muscle (MuJoCo's model; prm = range[2], force, scale, lmin, lmax, vmax, fpmax, fvmax): with the
// optimal length L0 = (lengthrange[1] - lengthrange[0]) / (range[1] - range[0]), the normalised
// length L = range[0] + (len - lengthrange[0]) / L0 and velocity V = vel / (L0 vmax), the peak
// force F = force, or scale / acc0 when force < 0 (acc0: |M^-1 moment| at qpos0),
//   gain = -F FL(L) FV(V),  bias = -F FP(L),
// FL a piecewise quadratic bump on [lmin, lmax] peaking at 1 for L = 1, FV 0 below V = -1,
// (V+1)^2 up to 0, rising to fvmax at V = fvmax - 1, FP 0 up to L = 1, a half-quadratic up to
// b = (1 + lmax)/2 then linear with slope fpmax/(b - 1). Activation time constants (Millard et
// al. 2013): tau_act = dynprm[0] (0.5 + 1.5 a), tau_deact = dynprm[1] / (0.5 + 1.5 a),
// a = clamp(act, 0, 1), chosen by the sign of ctrl - act, or blended by the quintic smoothstep
// over the width dynprm[2] when it is positive.
#pragma once

#include "kernels/scalar_math.hpp"

namespace sap {

// Numbered as MuJoCo's mjtDyn, mjtGain, mjtBias.
enum ActuatorDynType : int { kDynNone = 0, kDynIntegrator = 1, kDynFilter = 2, kDynFilterExact = 3, kDynMuscle = 4 };
enum ActuatorGainType : int { kGainFixed = 0, kGainAffine = 1, kGainMuscle = 2 };
enum ActuatorBiasType : int { kBiasNone = 0, kBiasAffine = 1, kBiasMuscle = 2 };

// MuJoCo's smooth step on [0, 1]: 6x^5 - 15x^4 + 10x^3 (zero first and second derivatives at both ends).
template <class S>
SAP_HDI S smooth_step(S x) {
  if (x <= S(0)) return S(0);
  if (x >= S(1)) return S(1);
  return x * x * x * (S(3) * x * (S(2) * x - S(5)) + S(10));
}

// Normalised active force-length curve FL(L): zero outside [lmin, lmax], 1 at L = 1, two
// quadratic pieces on each side meeting at the midpoints a = (lmin + 1)/2, b = (1 + lmax)/2.
template <class S>
SAP_HDI S muscle_force_length(S L, S lmin, S lmax) {
  if (!(lmin <= L && L <= lmax)) return S(0);
  const S a = S(0.5) * (lmin + S(1)), b = S(0.5) * (S(1) + lmax);
  const S tiny = S(kMjMinVal);
  if (L <= a) {
    const S x = (L - lmin) / max_(tiny, a - lmin);
    return S(0.5) * x * x;
  }
  if (L <= S(1)) {
    const S x = (S(1) - L) / max_(tiny, S(1) - a);
    return S(1) - S(0.5) * x * x;
  }
  if (L <= b) {
    const S x = (L - S(1)) / max_(tiny, b - S(1));
    return S(1) - S(0.5) * x * x;
  }
  const S x = (lmax - L) / max_(tiny, lmax - b);
  return S(0.5) * x * x;
}

// Peak force, optimal length and normalised length of a muscle (the common part of gain and bias).
template <class S>
struct MuscleState {
  S F, L0, L;
  SAP_HDI static MuscleState of(S len, const double* lengthrange, S acc0, const double* prm) {
    const S tiny = S(kMjMinVal);
    MuscleState s;
    s.F = prm[2] < 0 ? S(prm[3]) / max_(tiny, acc0) : S(prm[2]);
    s.L0 = S(lengthrange[1] - lengthrange[0]) / max_(tiny, S(prm[1] - prm[0]));
    s.L = S(prm[0]) + (len - S(lengthrange[0])) / max_(tiny, s.L0);
    return s;
  }
};

// Active muscle gain -F FL(L) FV(V) (negative: a muscle pulls, shortening its tendon).
template <class S>
SAP_HDI S muscle_gain(S len, S vel, const double* lengthrange, S acc0, const double* prm) {
  const MuscleState<S> s = MuscleState<S>::of(len, lengthrange, acc0, prm);
  const S V = vel / max_(S(kMjMinVal), s.L0 * S(prm[6]));
  const S FL = muscle_force_length(s.L, S(prm[4]), S(prm[5]));
  const S fvmax = S(prm[8]), y = fvmax - S(1);
  S FV;
  if (V <= S(-1)) FV = S(0);
  else if (V <= S(0)) FV = (V + S(1)) * (V + S(1));
  else if (V <= y) FV = fvmax - (y - V) * (y - V) / max_(S(kMjMinVal), y);
  else FV = fvmax;
  return -s.F * FL * FV;
}

// Passive muscle force -F FP(L) (the bias).
template <class S>
SAP_HDI S muscle_bias(S len, const double* lengthrange, S acc0, const double* prm) {
  const MuscleState<S> s = MuscleState<S>::of(len, lengthrange, acc0, prm);
  const S b = S(0.5) * (S(1) + S(prm[5])), fpmax = S(prm[7]);
  if (s.L <= S(1)) return S(0);
  if (s.L <= b) {
    const S x = (s.L - S(1)) / max_(S(kMjMinVal), b - S(1));
    return -s.F * fpmax * S(0.5) * x * x;
  }
  const S x = (s.L - b) / max_(S(kMjMinVal), b - S(1));
  return -s.F * fpmax * (S(0.5) + x);
}

// Muscle activation rate (ctrl clamped to [0, 1]; act as given, its clamp only in the time constants).
template <class S>
SAP_HDI S muscle_activation_rate(S ctrl, S act, const double* dynprm) {
  const S a = clamp_(act, S(0), S(1));
  const S tau_act = S(dynprm[0]) * (S(0.5) + S(1.5) * a);
  const S tau_deact = S(dynprm[1]) / (S(0.5) + S(1.5) * a);
  const S width = S(dynprm[2]);
  const S dctrl = clamp_(ctrl, S(0), S(1)) - act;
  const S tau = width < S(kMjMinVal) ? (dctrl > S(0) ? tau_act : tau_deact)
                                     : tau_deact + (tau_act - tau_deact) * smooth_step(dctrl / width + S(0.5));
  return dctrl / max_(S(kMjMinVal), tau);
}

// act_dot of one actuator with one activation (ctrl already clamped to its ctrlrange).
template <class S>
SAP_HDI S activation_rate(int dyntype, const double* dynprm, S ctrl, S act) {
  switch (dyntype) {
    case kDynIntegrator:
      return ctrl;
    case kDynFilter:
    case kDynFilterExact:
      return (ctrl - act) / max_(S(kMjMinVal), S(dynprm[0]));
    case kDynMuscle:
      return muscle_activation_rate(ctrl, act, dynprm);
    default:
      return S(0);
  }
}

// The activation after a step of h (MuJoCo's integration of act; actrange: 2 values or null).
template <class S>
SAP_HDI S next_activation(int dyntype, const double* dynprm, const double* actrange, S act, S act_dot, S h) {
  S next;
  if (dyntype == kDynFilterExact) {
    const S tau = max_(S(kMjMinVal), S(dynprm[0]));
    next = act + act_dot * tau * (S(1) - exp_(-h / tau));
  } else {
    next = act + act_dot * h;
  }
  if (actrange) next = clamp_(next, S(actrange[0]), S(actrange[1]));
  return next;
}

// Scalar actuator force gain(l, l') * input + bias(l, l') before any force clamp.
template <class S>
SAP_HDI S actuator_gain_bias_force(int gaintype, const double* gainprm, int biastype, const double* biasprm, S length,
                                   S velocity, const double* lengthrange, S acc0, S input) {
  S gain;
  switch (gaintype) {
    case kGainAffine:
      gain = S(gainprm[0]) + S(gainprm[1]) * length + S(gainprm[2]) * velocity;
      break;
    case kGainMuscle:
      gain = muscle_gain(length, velocity, lengthrange, acc0, gainprm);
      break;
    default:
      gain = S(gainprm[0]);
  }
  S bias = S(0);
  if (biastype == kBiasAffine) bias = S(biasprm[0]) + S(biasprm[1]) * length + S(biasprm[2]) * velocity;
  else if (biastype == kBiasMuscle) bias = muscle_bias(length, lengthrange, acc0, biasprm);
  return gain * input + bias;
}

}  // namespace sap

// Stage 2's joint-limit and PD rows (ConstraintSetupKernel, kernels/constraint_setup.hpp):
// Drake's limit rows (docs/sap-math.md §4) and implicit PD drives with effort limits (§5), one
// joint or one actuator per lane.
#pragma once

#include "kernels/constraint_setup.hpp"

namespace sap {

// Drake's limit rows: lower/upper rows of limited hinge/slide joints within the window
// |q - limit| <= 2 h max(|v_n|, |v*|); k = 1e12, tau_d = h, beta = 0.1, w = 1/A_jj.
template <class Sw, bool kAngular>
template <class Team>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::setup_limits(int w, Team& team) const {
  // The joints a chunk of lanes at a time, one joint per lane; each lane's rows (0, 1 or 2)
  // land after those of the lanes before it (lanes_prefix_sum), so the rows are in joint
  // order as in a serial loop, and those past the capacity nlim are not written.
  const int width = scan_width(team), lane = team.rank(), cap = s.size.nlim;
  int n = 0;  // rows of the earlier chunks
  for (int base = 0; base < m.njnt; base += width) {
    const int j = base + lane;
    const JointLimitRows rows = lane < width && j < m.njnt ? limit_rows(w, j) : JointLimitRows{};
    int total = 0;
    const int first = n + lanes_prefix_sum(team, width, rows.count, total);
    if (rows.count > 0 && first < cap) put_limit_row(w, first, m.jnt_dofadr[j], rows.sign0, rows.R, rows.vhat0);
    if (rows.count > 1 && first + 1 < cap) put_limit_row(w, first + 1, m.jnt_dofadr[j], -1.0, rows.R, rows.vhat1);
    n += total;
  }
  if (team.rank() == 0) s.lim_count(w)[0] = min_(n, cap);  // one-lane: count store
}

template <class Sw, bool kAngular>
inline SAP_HD auto ConstraintSetupKernel<Sw, kAngular>::limit_rows(int w, int j) const -> JointLimitRows {
  JointLimitRows out;
  if (!m.jnt_limited[j]) return out;
  const int t = m.jnt_type[j];
  if (t != kJointHinge && t != kJointSlide) return out;
  const double h = p.h;
  const int dof = m.jnt_dofadr[j];
  const double q0 = state_in.qpos(w)[m.jnt_qposadr[j]];
  const double window = 2.0 * h * max_(abs_(state_in.qvel(w)[dof]), abs_(d.v_star(w)[dof]));
  const double ql = m.jnt_range[2 * j], qu = m.jnt_range[2 * j + 1];
  const double A_jj = d.A_values(w)[dof * m.nv_pad + dof];
  const double tau = h;
  const double beta = p.config.limit_near_rigid_threshold;
  out.R = max_(beta * beta / (4 * kPi * kPi) / A_jj, 1.0 / (h * p.config.limit_stiffness * (h + tau)));
  const bool lower = q0 - ql <= window, upper = qu - q0 <= window;
  const double vhat_lower = -(q0 - ql) / (h + tau), vhat_upper = -(qu - q0) / (h + tau);
  out.count = (lower ? 1 : 0) + (upper ? 1 : 0);
  out.sign0 = lower ? 1.0 : -1.0;
  out.vhat0 = lower ? vhat_lower : vhat_upper;
  out.vhat1 = vhat_upper;
  return out;
}

template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::put_limit_row(int w, int row, int dof, double sign, double R, double vhat) const {
  s.lim_dof(w)[row] = dof;
  double* lp = s.lim_param(w) + kNumLimitParams * row;
  lp[kLimSign] = sign;
  lp[kLimR] = R;
  lp[kLimVhat] = vhat;
}

// PD rows of position/velocity/pd actuators. With gear g the actuator force F acts as g F
// on the dof: Kp = g^2 kp, Kd = g^2 kd, targets ctrl / g, feed-forward g ctrl_ff, effort
// limits g * forcerange (on the total, PD plus feed-forward).
// One actuator per lane; its row is the number of PD actuators before it (the rows are in
// actuator order, as in a serial loop).
template <class Sw, bool kAngular>
template <class Team>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::setup_pd(int w, Team& team) const {
  for (int u = team.rank(); u < m.nu; u += team.size()) {
    if (!is_pd_actuator(u)) continue;
    int r = 0;
    for (int v = 0; v < u; ++v) r += is_pd_actuator(v) ? 1 : 0;
    const int dof = m.actuator_dofadr[u];
    pd_row_params(w, u, d.A_values(w)[dof * m.nv_pad + dof], state_in.qpos(w)[m.jnt_qposadr[m.dof_jntid[dof]]],
                  s.pd_param(w) + kNumPdParams * r);
    s.pd_dof(w)[r] = dof;
  }
}

// Position, velocity and pd actuators on a dof (servos on tendons are holonomic rows).
template <class Sw, bool kAngular>
SAP_HDI bool ConstraintSetupKernel<Sw, kAngular>::is_pd_actuator(int u) const {
  return actuator_is_servo(m.actuator_type[u]) && m.actuator_tendonid[u] < 0;
}

// The PD parameters (PdParam) of actuator u acting on a coordinate x (a dof or a tendon length)
// of effective mass m_eff (A_jj, or 1/w for a tendon) at x0 = x at the step start.
template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::pd_row_params(int w, int u, double m_eff, double x0, double* pp) const {
  const int type = m.actuator_type[u];
  const double g = world_model.actuator_gear_of(m, w)[u];
  // ctrl clamped to ctrlrange, or the activation (stage 1b's act_input; kernels/dynamics.hpp).
  const double ctrl = actuator_law_input<double>(m, u, control.ctrl(w), d.act_input(w));
  double Kp = type == kActVelocity ? 0.0 : g * g * world_model.actuator_kp_of(m, w)[u];
  double Kd = g * g * world_model.actuator_kd_of(m, w)[u];
  pd_near_rigid_clamp<double>(p.h, p.config.pd_near_rigid_threshold, m_eff, &Kp, &Kd);
  double e_lo = -1e300, e_hi = 1e300;
  if (m.actuator_forcelimited[u]) {
    const double a = g * m.actuator_forcerange[2 * u], b = g * m.actuator_forcerange[2 * u + 1];
    e_lo = min_(a, b);
    e_hi = max_(a, b);
  }
  pp[kPdKp] = Kp;
  pp[kPdKd] = Kd;
  pp[kPdQ0] = x0;
  pp[kPdQTarget] = type == kActVelocity ? 0.0 : ctrl / g;
  pp[kPdVTarget] = type == kActVelocity ? ctrl / g : (type == kActPD ? control.ctrl_vel(w)[u] / g : 0.0);
  pp[kPdFeedForward] = g * control.ctrl_ff(w)[u];
  pp[kPdEffortLo] = e_lo;
  pp[kPdEffortHi] = e_hi;
}

}  // namespace sap

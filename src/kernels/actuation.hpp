// Stage 1b (issue 30): the MuJoCo-model terms of one world's step that only some models have, in
// a kernel of their own so that the kinematics, free-motion and integration kernels of models
// without them keep their registers (docs/gpu.md, kernel report):
//   * the spatial tendons' lengths and moment arms (ten_length, ten_moment);
//   * each actuator's law input (act_input: the clamped ctrl, or the activation, the one after
//     the step with actearly) and the activations after the step (act_next, MuJoCo's Euler
//     step of act_dot at the step's start; stage 4 takes them);
//   * explicit forces qfrc_extra, added to the free motion's forces at v_n: fluids, muscles,
//     gravity compensation (-gc m g at each com), ball/free joint springs, and the springs,
//     motors and dampers (-b J^T J v) of spatial tendons;
//   * ten_A = sum over spatial tendons of (armature + h damping) J_t^T J_t, added to A by the
//     free motion (tendon inertia, and the damping implicit as for dofs and fixed tendons).
// Launched only for models with one of these (Model::ntendata, na, nqfrc_extra, nten_A).
#pragma once

#include "kernels/dynamics.hpp"
#include "kernels/fluid_forces.hpp"
#include "kernels/passive_forces.hpp"
#include "kernels/spatial_tendon.hpp"
#include "sap/status.hpp"

namespace sap {

template <class S>
struct ActuationKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // q_n, v_n, act_n
  ControlView control;
  double h;
  const int* status;  // skipped worlds are not computed
  // out
  DataView d;  // in: kinematics (xpos, xmat, xipos, cdof); out: ten_length, ten_moment, act_input,
               // act_next, qfrc_extra, ten_A

  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    if (status && (status[w] & kStatusSkipped)) return;
    tendon_kinematics<S>(team, m, d.xpos(w), d.xmat(w), d.cdof(w), d.ten_length(w), d.ten_moment(w));
    if (m.na > 0) activations(w, team);
    if (m.nqfrc_extra == 0 && m.nten_A == 0) return;
    team.sync();
    if (m.nten_A > 0) tendon_A(w, team);
    if (m.nqfrc_extra == 0 || team.rank() != 0) return;  // one-lane: explicit forces (scatters onto dof paths)
    double* f = d.qfrc_extra(w);
    for (int i = 0; i < m.nv; ++i) f[i] = 0;
    const double* qpos = state_in.qpos(w);
    const double* qvel = state_in.qvel(w);
    const double* tl = d.ten_length(w);
    const double* tm = d.ten_moment(w);
    if (m.nfluidbody > 0) fluid_forces_to_dofs_v<S>(m, m.body_mass, d.xpos(w), d.xmat(w), d.xipos(w), d.cdof(w), qvel, f);
    if (m.ngravcomp > 0) {
      const Vec3<S> g{{S(m.gravity[0]), S(m.gravity[1]), S(m.gravity[2])}};
      for (int b = 1; b < m.nbody; ++b)
        if (m.body_gravcomp[b] != 0)
          gravcomp_to_dofs<S>(m, d.xpos(w), d.xipos(w), d.cdof(w), b, S(m.body_mass[b]), S(m.body_gravcomp[b]), g, f);
    }
    extra_spring_forces<S>(m, qpos, tl, tm, f);
    for (int t = 0; t < m.ntendon; ++t) {  // spatial tendon damping, explicit part -b J^T J v
      if (m.tendon_damping[t] == 0 || !tendon_is_spatial(m, t)) continue;
      S Ld = S(0);
      for_each_tendon_dof(m, t, tm, [&](int dof, double c) { Ld += S(c) * S(qvel[dof]); });
      const S fd = -S(m.tendon_damping[t]) * Ld;
      for_each_tendon_dof(m, t, tm, [&](int dof, double c) { f[dof] = double(S(f[dof]) + S(c) * fd); });
    }
    const double* in = d.act_input(w);
    for (int u = 0; u < m.nu; ++u) {
      const int t = m.actuator_tendonid[u];
      const S input = actuator_law_input<S>(m, u, control.ctrl(w), in);
      if (m.actuator_type[u] == kActMuscle) {
        add_muscle_force<S>(m, u, qpos, qvel, input, tl, tm, f);
      } else if (m.actuator_type[u] == kActMotor && t >= 0 && tendon_is_spatial(m, t)) {  // J_t^T (gear input)
        const S fm = motor_force<S>(m, u, input);
        for_each_tendon_dof(m, t, tm, [&](int dof, double c) { f[dof] = double(S(f[dof]) + S(c) * fm); });
      }
    }
  }

  // act_input and act_next of every actuator, strided over the team; in fp64 whatever S: the
  // activations are state, integrated as MuJoCo does (a few scalars per actuator).
  template <class Team>
  SAP_HD void activations(int w, Team& team) const {
    const double* act = state_in.act(w);
    for (int u = team.rank(); u < m.nu; u += team.size()) {
      double c = control.ctrl(w)[u];
      if (m.actuator_ctrllimited[u]) c = clamp_(c, m.actuator_ctrlrange[2 * u], m.actuator_ctrlrange[2 * u + 1]);
      const int a = m.actuator_actadr[u];
      if (a < 0) {
        d.act_input(w)[u] = c;
        continue;
      }
      const double next = next_activation_of<double>(m, u, c, act[a], h);
      d.act_next(w)[a] = next;
      d.act_input(w)[u] = m.actuator_actearly[u] ? next : act[a];
    }
  }

  // ten_A = sum over spatial tendons of (armature + h damping) J_t^T J_t, entries strided over
  // the team (every entry of the padded matrix: 0 outside nv x nv).
  template <class Team>
  SAP_HD void tendon_A(int w, Team& team) const {
    const int nv = m.nv, ld = m.nv_pad;
    const double* tm = d.ten_moment(w);
    for (int idx = team.rank(); idx < ld * ld; idx += team.size()) {
      const int i = idx / ld, j = idx % ld;
      S a = S(0);
      if (i < nv && j < nv)
        for (int t = 0; t < m.ntendon; ++t) {
          const S k = S(m.tendon_armature[t]) + S(h) * S(m.tendon_damping[t]);
          if (k == S(0) || !tendon_is_spatial(m, t)) continue;
          a += k * S(tm[t * nv + i]) * S(tm[t * nv + j]);
        }
      d.ten_A(w)[idx] = double(a);
    }
  }
};

}  // namespace sap

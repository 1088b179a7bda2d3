// Stage 1b (issue 30): the MuJoCo-model terms of one world's free motion that only some models
// have, in a kernel of their own so that the kinematics and free-motion kernels of models
// without them keep their registers: the spatial tendons' lengths and moment arms (ten_length,
// ten_moment) and the explicit forces of fluids and muscles (qfrc_extra, added to the free
// motion's forces). Launched only for models with a spatial tendon, a fluid or a muscle
// (Model::ntendata, Model::nqfrc_extra).
#pragma once

#include "kernels/dynamics.hpp"
#include "kernels/fluid_forces.hpp"
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
  DataView d;  // in: kinematics (xpos, xmat, xipos, cdof); out: ten_length, ten_moment, qfrc_extra

  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    if (status && (status[w] & kStatusSkipped)) return;
    tendon_kinematics<S>(team, m, d.xpos(w), d.xmat(w), d.cdof(w), d.ten_length(w), d.ten_moment(w));
    if (m.nqfrc_extra == 0) return;
    team.sync();
    if (team.rank() != 0) return;  // one-lane: fluid and muscle forces (scatter onto dof paths)
    double* f = d.qfrc_extra(w);
    for (int i = 0; i < m.nv; ++i) f[i] = 0;
    const double* qvel = state_in.qvel(w);
    if (m.nfluidbody > 0) fluid_forces_to_dofs_v<S>(m, m.body_mass, d.xpos(w), d.xmat(w), d.xipos(w), d.cdof(w), qvel, f);
    for (int u = 0; u < m.nu; ++u)
      if (m.actuator_type[u] == kActMuscle)
        add_muscle_force<S>(m, u, state_in.qpos(w), qvel, control.ctrl(w), state_in.act(w), d.ten_length(w),
                            d.ten_moment(w), h, f);
  }
};

}  // namespace sap

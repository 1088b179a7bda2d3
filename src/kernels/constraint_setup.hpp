// Stage 2, constraint setup: the constraint rows of one world at the step start, for stage 3
// (kernels/newton.hpp) to solve. One team per world; operator() below is the stage's table of
// contents, and each row kind's setup is in a file of its own:
//   contact rows     kernels/contact_rows.hpp     contact frames, tree-sparse Jacobians, weights
//                    w_i, regularisation R_i and bias v_hat_i (docs/sap-math.md §3.1-§3.3;
//                    spec "contact_weight_mode", "contact_point_mode"), Hunt-Crossley parameters
//   limit, PD rows   kernels/limit_pd_rows.hpp    joint limits and PD drives (§4, §5)
//   holonomic rows   kernels/holonomic_rows.hpp   tendon limits, equalities, dry friction,
//                    servos on tendons (§12, §13)
#pragma once

#include "kernels/dynamics.hpp"
#include "kernels/sap_constraints.hpp"
#include "kernels/spatial_tendon.hpp"
#include "kernels/tendon_coupling.hpp"
#include "kernels/step_params.hpp"
#include "kernels/team_scan.hpp"
#include "sap/contacts.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/status.hpp"
#include "model/solve_data.hpp"

namespace sap {

// Last dof on the path from body b to the root (-1 for bodies welded to the world). The path
// continues through dof_parentid, with strictly decreasing indices.
SAP_HDI int body_last_dof(const ModelView& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b > 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
}

// The weld-group caches of setup_contact (kernels/contact_rows.hpp).
template <class S>
struct WeldGroupCache;
template <class S>
struct NoWeldGroupCache;

// kAngular: the model has contact pairs of condim 4 or 6 (SolveSizes::nacon > 0); only then does
// the kernel set up their angular rows (setup_contact_angular). A separate instantiation, so
// that the kernel of every other model carries none of that code (on CUDA even an untaken path
// costs registers; docs/gpu.md, kernel report).
template <class Sw, bool kAngular = false>
struct ConstraintSetupKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // qpos, qvel at the step start
  ControlView control;      // targets and feed-forward of the PD rows
  ConstContactsView contacts;  // the collision pipeline's contacts
  StepParams p;
  ConstDataView d;  // poses, cdof, A and v_star of stage 1
  // out
  SolveRowsView s;    // the constraint rows: con_*, lim_*, pd_*, hol_*
  Slab<int> stats;    // stats[kStatTruncatedContacts]
  int* status;  // |= kStatusNonFinite for non-finite contact data
  // Per-world masses, inertias and actuator gains (PerWorldModelKernel sets it; ReadsWorldModel):
  // read through world_model.*_of(m, w) where used, never as m.body_mass etc.
  WorldModelView world_model{};

  template <class Team>
  SAP_HD void operator()(int w, Team& team) const {
    // A skipped world is not computed (the whole team returns: uniform); every lane reads the
    // status before the reduction below, after which rank 0 may OR a bit in.
    if (status[w] & kStatusSkipped) return;
    const int ncon = contacts.capacity > 0 ? min_(contacts.count[w], s.size.ncmax) : 0;
    if (team.rank() == 0) {  // one-lane: counters (two stores)
      s.con_count(w)[0] = ncon;
      stats(w)[kStatTruncatedContacts] = contacts.capacity > 0 ? contacts.dropped[w] : 0;
    }
    int bad = 0;
    if constexpr (one_lane_team<Team>()) {
      WeldGroupCache<Sw> groups;
      for (int c = 0; c < ncon; ++c) bad += setup_contact(w, c, groups) ? 0 : 1;
    } else {
      NoWeldGroupCache<Sw> groups;
      for (int c = team.rank(); c < ncon; c += team.size()) bad += setup_contact(w, c, groups) ? 0 : 1;
    }
    setup_limits(w, team);
    setup_pd(w, team);
    if (team.rank() == 0) setup_holonomic(w);  // one-lane: holonomic rows (serial over tendons, equalities)
    bad = team.reduce_sum(bad);
    if (team.rank() == 0 && bad) status[w] |= kStatusNonFinite;  // one-lane: status bit
    team.sync();
  }

  // Joint j's limit rows at the step start: count 0, 1 or 2. A row exists while the joint is
  // within the window 2 h max(|v|, |v*|) of its bound (Drake's SapLimitConstraint, tau_d = h);
  // the first row is the lower one when it exists (sign +1), the second always the upper one.
  struct JointLimitRows {
    int count = 0;
    double sign0 = 0, vhat0 = 0, vhat1 = 0, R = 0;
  };

  // Contact rows (kernels/contact_rows.hpp): frame, Jacobian, weight, regularisation.
  // Groups: WeldGroupCache (one lane) or NoWeldGroupCache (kernels/contact_rows.hpp).
  template <class Groups>
  SAP_HD bool setup_contact(int w, int c, Groups& groups) const;
  SAP_HD bool setup_hunt_crossley(int w, int c, double k, double phi, double weight) const;
  SAP_HD void setup_contact_angular(int w, int c) const;
  template <class S>
  SAP_HD void diag_delassus(int w, const JacDof* jdof, const JacValues jval, int nj, S* W) const;

  // Joint-limit and PD rows (kernels/limit_pd_rows.hpp).
  template <class Team>
  SAP_HD void setup_limits(int w, Team& team) const;
  SAP_HD JointLimitRows limit_rows(int w, int j) const;
  SAP_HD void put_limit_row(int w, int row, int dof, double sign, double R, double vhat) const;
  template <class Team>
  SAP_HD void setup_pd(int w, Team& team) const;
  SAP_HD bool is_pd_actuator(int u) const;
  SAP_HD void pd_row_params(int w, int u, double m_eff, double x0, double* pp) const;

  // Holonomic rows (kernels/holonomic_rows.hpp): tendon limits, equalities, dry friction,
  // servos on tendons.
  SAP_HD int put_holonomic_params(int w, int n, double R, double v_hat, double lo, double hi) const;
  SAP_HD double holonomic_delassus_entry(int w, int n0, int a, int b) const;
  SAP_HD double holonomic_weight(int w, int n0, int nk) const;
  SAP_HD double holonomic_block_weight(int w, int n0, int first, int count) const;
  SAP_HD int body_pair_jacobian(int w, int n, int nrows, int b1, int b2, const Vec3<double>& x1,
                                const Vec3<double>& x2) const;
  SAP_HD void setup_holonomic(int w) const;
  SAP_HD void insert_holonomic_entry(int w, int n, int dof, double val) const;
  SAP_HD void add_holonomic_entry(int w, int n, int dof, double val) const;
  SAP_HD void add_tendon_entries(int w, int n, int t, double scale) const;
};

}  // namespace sap

// The row kinds' setup (member definitions of ConstraintSetupKernel).
#include "kernels/contact_rows.hpp"
#include "kernels/limit_pd_rows.hpp"
#include "kernels/holonomic_rows.hpp"

// Stage 2: contact frames, tree-sparse contact Jacobians, contact weights w_i, regularisation
// R_i and bias v_hat_i (docs/sap-math.md §3.1-§3.3; spec "contact_weight_mode", "contact_point_mode"),
// plus the limit and PD rows (docs/sap-math.md §4 limits, §5 PD). One team per world.
#pragma once

#include "kernels/dynamics.hpp"
#include "kernels/sap_constraints.hpp"
#include "kernels/step_params.hpp"
#include "kernels/team_scan.hpp"
#include "kernels/spatial_tendon.hpp"
#include "kernels/tendon_coupling.hpp"
#include "sap/contacts.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/status.hpp"
#include "solve_data.hpp"

namespace sap {

// Last dof on the path from body b to the root (-1 for bodies welded to the world). The path
// continues through dof_parentid, with strictly decreasing indices.
SAP_HDI int body_last_dof(const ModelView& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b > 0 ? m.body_dofadr[b] + m.body_dofnum[b] - 1 : -1;
}

// World velocity at point x of body b per unit velocity of dof d on b's path:
// cdof_d.lin + cdof_d.ang x (x - P), P the tree's reference point.
template <class S>
SAP_HDI Vec3<S> dof_point_velocity(const double* cdof, int d, const Vec3<S>& x_minus_p) {
  const Vec6<S> s = Vec6<S>::load(cdof + 6 * d);
  return point_velocity(s, x_minus_p);
}

// First body of b's rigid group: b itself when a joint moves it, else its nearest ancestor that
// has dofs (0 when b is welded to the world). Bodies joined by fixed joints (welds) move as one
// rigid body, whose mass properties are those of the whole group.
SAP_HDI int body_weld_root(const ModelView& m, int b) {
  while (b > 0 && m.body_dofnum[b] == 0) b = m.body_parentid[b];
  return b;
}

// Directional mobility of the rigid body that carries body b, along unit direction c at point x
// (spec "body_inertia", docs/sap-math.md §3.2):
//   1/M + r^T I^-1 r,  r = (x - o) x c,
// M, o and I (about o, world axes) the mass, com and rotational inertia of b's weld group G
// (body_weld_root): M = sum_j m_j, o = sum_j m_j p_j / M,
//   I = sum_j R_j I_j R_j^T + m_j (|d_j|^2 1 - d_j d_j^T),  d_j = p_j - o  (parallel axis),
// p_j, R_j, I_j body j's com, rotation and inertia about its com (body axes). A fixed joint adds
// no dof, so the contact moves the group, not the link: a URDF link of 1 mg (a frame, a sensor,
// the "base" of ANYmal with inertia 1e-6 (1 1 1; 1 1 1; 1 1 1), rank 1) welded to a heavy one
// has the heavy one's mobility, and splitting a rigid body into welded links changes nothing.
// Returns 0 for a massless group, and -1 when the group has mass but no usable inverse inertia:
// det I_G <= 1000 eps (tr I_G)^3 (eps the machine epsilon of S; a 3x3 determinant by cofactors
// carries an absolute error of a few eps (tr I)^3, so below that I_G^-1 has no correct digit),
// e.g. a point mass or a rod of zero inertia about its axis alone on its joint. The free-body
// mobility of such a group is unbounded (its rotation is held only by the joints), and the
// caller weighs the contact by diag_delassus instead, which uses the joints.
// Returns the sum over the three columns c (t1, t2, n) of frame, the contact frame (row-major 3x3),
// read from memory where used, as is x (x_point), to keep them out of registers meanwhile.
// body_mass, body_inertia: world w's rows (WorldModelView::body_mass_of, body_inertia_of).
template <class S>
SAP_HD S body_mobility(const ModelView& m, const double* body_mass, const double* body_inertia, const DataView& d,
                       int w, int b, const double* x_point, const double* frame) {
  const int root = body_weld_root(m, b);
  S mass = S(0);
  Vec3<S> first_moment = Vec3<S>::zero();
  // Parents precede children (Model::validate), so the group's bodies are root..nbody-1.
  for (int j = root; j < m.nbody; ++j) {
    if (body_weld_root(m, j) != root) continue;
    const S mj = S(body_mass[j]);
    mass += mj;
    first_moment += mj * Vec3<S>::load(d.xipos(w) + 3 * j);
  }
  if (!(mass > S(0))) return S(0);
  const Vec3<S> com = (S(1) / mass) * first_moment;
  Mat3<S> inertia = Mat3<S>::zero();
  for (int j = root; j < m.nbody; ++j) {
    if (body_weld_root(m, j) != root) continue;
    const S mj = S(body_mass[j]);
    const Mat3<S> R = Mat3<S>::load(d.xmat(w) + 9 * j);
    const double* I6 = body_inertia + 6 * j;
    const Mat3<S> Ij = Mat3<S>::symmetric(S(I6[0]), S(I6[1]), S(I6[2]), S(I6[3]), S(I6[4]), S(I6[5]));
    const Vec3<S> dj = Vec3<S>::load(d.xipos(w) + 3 * j) - com;
    const S dd = dot(dj, dj);
    const Mat3<S> shift = Mat3<S>::symmetric(dd - dj[0] * dj[0], dd - dj[1] * dj[1], dd - dj[2] * dj[2], -dj[0] * dj[1],
                                             -dj[0] * dj[2], -dj[1] * dj[2]);
    inertia = inertia + R * Ij * transpose(R) + mj * shift;
  }
  const S eps = sizeof(S) == sizeof(float) ? S(1.1920928955078125e-07) : S(2.220446049250313e-16);
  const S trace = inertia(0, 0) + inertia(1, 1) + inertia(2, 2);
  if (!(determinant(inertia) > S(1000) * eps * trace * trace * trace)) return S(-1);
  const Mat3<S> Iinv = inverse(inertia);
  const Vec3<S> arm = Vec3<S>::load(x_point) - com;
  S sum = S(0);
  for (int k = 0; k < 3; ++k) {
    const Vec3<S> r = cross(arm, Vec3<S>{{S(frame[k]), S(frame[3 + k]), S(frame[6 + k])}});
    sum += S(1) / mass + dot(r, Iinv * r);
  }
  return sum;
}

template <class Sw>
struct ConstraintSetupKernel {
  // in
  ModelView m;
  ConstStateView state_in;  // qpos, qvel at the step start
  ControlView control;      // targets and feed-forward of the PD rows
  ContactsView contacts;    // the collision pipeline's contacts
  StepParams p;
  DataView d;  // in only: poses, cdof, A and v_star of stage 1
  // out
  SolveView s;  // the constraint rows: con_*, lim_*, pd_*, stats[kStatTruncatedContacts]
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
      s.stats(w)[kStatTruncatedContacts] = contacts.capacity > 0 ? contacts.dropped[w] : 0;
    }
    int bad = 0;
    for (int c = team.rank(); c < ncon; c += team.size()) bad += setup_contact(w, c) ? 0 : 1;
    setup_limits(w, team);
    setup_pd(w, team);
    if (team.rank() == 0) setup_holonomic(w);  // one-lane: holonomic rows (serial over tendons, equalities)
    bad = team.reduce_sum(bad);
    if (team.rank() == 0 && bad) status[w] |= kStatusNonFinite;  // one-lane: status bit
    team.sync();
  }

  // Returns false when the contact data is not finite.
  SAP_HD bool setup_contact(int w, int c) const {
    using S = double;  // Jacobian and regularisation in the fp64 objective buffers
    const double* nrm = contacts.normal(w) + 3 * c;
    const Vec3<S> n = normalized(Vec3<S>::load(nrm));
    const Vec3<S> x0 = Vec3<S>::load(contacts.x0(w) + 3 * c), x1 = Vec3<S>::load(contacts.x1(w) + 3 * c);
    const S phi = contacts.phi(w)[c];
    const double* kk = contacts.stiffness(w) + 3 * c;
    const S k = kk[0], tau_d = contacts.dissipation(w)[c], mu = contacts.friction(w)[c];
    if (!isfinite_(phi) || !isfinite_(norm(n)) || !isfinite_(dot(x0, x1)) || !(k > S(0)) || !isfinite_(tau_d) ||
        !isfinite_(mu))
      return false;
    Vec3<S> t1, t2;
    orthonormal_basis(n, t1, t2);
    Mat3<S>::from_columns(t1, t2, n).store(s.con_frame(w) + 9 * c);

    // Points where each body's velocity is measured.
    Vec3<S> p0 = x0, p1 = x1;
    if (p.config.contact_point_mode == ContactPointMode::ContactMidpoint) {
      const S k0 = kk[1], k1 = kk[2];
      S a0 = S(0.5);
      if (isfinite_(k0) && isfinite_(k1) && k0 + k1 > S(0)) a0 = k0 / (k0 + k1);
      else if (!isfinite_(k0) && isfinite_(k1)) a0 = S(1);  // rigid geom 0: the point is on its surface
      else if (isfinite_(k0) && !isfinite_(k1)) a0 = S(0);
      const Vec3<S> pc = a0 * x0 + (S(1) - a0) * x1;
      p0 = pc;
      p1 = pc;
    }
    // Merge the two dof paths (decreasing indices); vc = R^T (V1(p1) - V0(p0)).
    const int b0 = contacts.body(w)[2 * c], b1 = contacts.body(w)[2 * c + 1];
    const Vec3<S> r0 = p0 - Vec3<S>::load(d.xpos(w) + 3 * m.body_rootid[b0]);
    const Vec3<S> r1 = p1 - Vec3<S>::load(d.xpos(w) + 3 * m.body_rootid[b1]);
    const double* cdof = d.cdof(w);
    int d0 = body_last_dof(m, b0), d1 = body_last_dof(m, b1);
    JacDof* jdof = s.contact_dofs(w, c);
    const JacValuesOut jval = s.contact_jac(w, c);  // fp32 storage when Sw is (cast64(fl32(J)))
    int nj = 0;
    while (d0 >= 0 || d1 >= 0) {
      const int dof = d0 > d1 ? d0 : d1;
      Vec3<S> vel = Vec3<S>::zero();
      if (dof == d1) {
        vel += dof_point_velocity<S>(cdof, dof, r1);
        d1 = m.dof_parentid[d1];
      }
      if (dof == d0) {
        vel -= dof_point_velocity<S>(cdof, dof, r0);
        d0 = m.dof_parentid[d0];
      }
      const Vec3<S> jc{{dot(t1, vel), dot(t2, vel), dot(n, vel)}};
      jdof[nj] = static_cast<JacDof>(dof);
      for (int r = 0; r < 3; ++r) jval.set(3 * nj + r, jc[r]);
      ++nj;
    }
    s.con_jac_n(w)[c] = nj;

    // Contact weight w_i, in the weight precision Sw, stored as cast64(fl_Sw(w)).
    S weight = S(0);
    bool delassus = p.config.contact_weight_mode == ContactWeightMode::DiagDelassus;
    if (!delassus) {
      const double* frame = s.con_frame(w) + 9 * c;
      const double *mass = world_model.body_mass_of(m, w), *inertia = world_model.body_inertia_of(m, w);
      const double *x0p = contacts.x0(w) + 3 * c, *x1p = contacts.x1(w) + 3 * c;
      const Sw w0 = body_last_dof(m, b0) >= 0 ? body_mobility<Sw>(m, mass, inertia, d, w, b0, x0p, frame) : Sw(0);
      const Sw w1 = body_last_dof(m, b1) >= 0 ? body_mobility<Sw>(m, mass, inertia, d, w, b1, x1p, frame) : Sw(0);
      if (w0 >= Sw(0) && w1 >= Sw(0)) weight = S(max_((w0 + w1) / Sw(3), Sw(1e-12)));
      else delassus = true;  // a group with a singular inertia: body_mobility's comment
    }
    if (delassus) {
      S W[6];
      diag_delassus<S>(w, jdof, jval, nj, W);
      const Sw fro2 = Sw(W[0] * W[0] + W[3] * W[3] + W[5] * W[5]) + Sw(2) * Sw(W[1] * W[1] + W[2] * W[2] + W[4] * W[4]);
      weight = S(max_(sqrt_(fro2) / Sw(3), Sw(1e-12)));
    }
    s.con_weight(w)[c] = weight;

    // R_n = max(beta^2/(4 pi^2) w, 1/(h k (h + tau_d))), R_t = sigma w, v_hat_n = -phi/(h + tau_d).
    const S h = p.h;
    const S R_nr = p.config.near_rigid_threshold * p.config.near_rigid_threshold / S(4 * kPi * kPi) * weight;
    const S R_compliant = S(1) / (h * k * (h + tau_d));  // 0 for a rigid (infinite) k
    S R_n = max_(R_nr, R_compliant);
    if (!(R_n > S(0))) R_n = S(1e-12) * weight;  // rigid contact without a near-rigid floor
    double* prm = s.con_param(w) + s.size.ncp * c;
    prm[kConRt] = p.config.sigma * weight;
    prm[kConRn] = R_n;
    prm[kConVhatN] = -phi / (h + tau_d);
    prm[kConMu] = mu;
    if (p.config.contact_approximation != ContactApproximation::Sap && !setup_hunt_crossley(w, c, k, phi, weight))
      return false;
    return true;
  }

  // Parameters of the Hunt-Crossley approximations (docs/sap-math.md §3.8, HuntCrossleyParams):
  //   k     the combined stiffness, clamped to the near-rigid stiffness 4 pi^2 / (beta^2 w h^2)
  //   fe0   = -k phi0, the elastic force at the step start (negative across a gap: the contact
  //         pushes only once the predicted penetration -phi0 - h v_n is positive)
  //   n0    = h (fe0)_+ (1 - d v_n0)_+, the impulse at the step-start velocity v_n0 = J_n v_0
  //   eps_s = max(v_s, mu R_t n0), R_t = sigma w: the stiction tolerance, widened during impacts.
  SAP_HD bool setup_hunt_crossley(int w, int c, double k, double phi, double weight) const {
    using S = double;
    const S h = p.h, beta = p.config.near_rigid_threshold;
    S k_hc = k;
    if (beta > S(0)) k_hc = min_(k_hc, hunt_crossley_near_rigid_stiffness(h, beta, weight));
    if (!isfinite_(k_hc)) k_hc = S(1) / (S(1e-12) * weight * h * h);  // rigid, no near-rigid floor
    const S d_hc = contacts.hc_dissipation(w)[c];
    if (!isfinite_(d_hc) || d_hc < S(0)) return false;
    const int nj = s.con_jac_n(w)[c];
    const JacDof* jdof = s.contact_dofs(w, c);
    const JacValues jval = s.contact_jac(w, c);
    const double* v0 = state_in.qvel(w);
    S vn0 = S(0);
    for (int e = 0; e < nj; ++e) vn0 += jval[3 * e + 2] * v0[jdof[e]];
    const S fe0 = -k_hc * phi;
    const S n0 = max_(S(0), h * fe0) * max_(S(0), S(1) - d_hc * vn0);
    double* prm = s.con_param(w) + s.size.ncp * c;
    prm[kConHcStiffness] = k_hc;
    prm[kConHcDissipation] = d_hc;
    prm[kConHcFe0] = fe0;
    prm[kConHcN0] = n0;
    prm[kConHcEpsSoft] = max_(p.config.stiction_tolerance, prm[kConMu] * prm[kConRt] * n0);
    return isfinite_(n0) && isfinite_(vn0);
  }

  // W = J diag(A)^-1 J^T (symmetric, 6 entries) with the angular velocity of free and ball
  // joints measured in the joint's parent frame (world for free bodies), as Drake and Warp
  // do: diag(A)^-1 is not invariant under our body-frame angular velocity. For such a block
  // with rotation Q (body frame -> parent frame) the columns become J Q^T and the diagonal
  // that of Q A_block Q^T. All other dofs use diag(A) directly.
  template <class S>
  SAP_HD void diag_delassus(int w, const JacDof* jdof, const JacValues jval, int nj, S* W) const {
    for (int k = 0; k < 6; ++k) W[k] = S(0);
    const RealValues A = d.A_values(w);
    const int ld = m.nv_pad;
    auto accumulate = [&](const Vec3<S>& jc, S a) {
      const S inv = S(1) / a;
      W[0] += jc[0] * jc[0] * inv;
      W[1] += jc[0] * jc[1] * inv;
      W[2] += jc[0] * jc[2] * inv;
      W[3] += jc[1] * jc[1] * inv;
      W[4] += jc[1] * jc[2] * inv;
      W[5] += jc[2] * jc[2] * inv;
    };
    for (int e = 0; e < nj;) {
      const int dof = jdof[e];
      const int j = m.dof_jntid[dof];
      const int t = m.jnt_type[j];
      const int r0 = m.jnt_dofadr[j] + (t == kJointFree ? 3 : 0);  // first rotational dof
      // Entries are in decreasing dof order: a full rotational block reads r0+2, r0+1, r0.
      if ((t == kJointFree || t == kJointBall) && dof == r0 + 2 && e + 2 < nj && jdof[e + 2] == r0) {
        Mat3<S> Q;  // body frame -> frame of measurement
        if (t == kJointFree) {
          Q = Mat3<S>::load(d.xmat(w) + 9 * m.jnt_bodyid[j]);
        } else {
          Q = to_matrix(normalized(Quat<S>::load(state_in.qpos(w) + m.jnt_qposadr[j])));
        }
        Mat3<S> Ab, Jb;  // block of A; Jb columns = d vc / d w_body_k
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) {
            Ab(r, c) = S(A[(r0 + r) * ld + (r0 + c)]);
            Jb(r, c) = S(jval[3 * (e + 2 - c) + r]);
          }
        const Mat3<S> Aq = Q * Ab * transpose(Q);
        const Mat3<S> Jq = Jb * transpose(Q);
        for (int k = 0; k < 3; ++k) accumulate(Jq.col(k), Aq(k, k));
        e += 3;
        continue;
      }
      accumulate(Vec3<S>{{S(jval[3 * e]), S(jval[3 * e + 1]), S(jval[3 * e + 2])}}, S(A[dof * ld + dof]));
      ++e;
    }
  }

  // Drake's limit rows: lower/upper rows of limited hinge/slide joints within the window
  // |q - limit| <= 2 h max(|v_n|, |v*|); k = 1e12, tau_d = h, beta = 0.1, w = 1/A_jj.
  template <class Team>
  SAP_HD void setup_limits(int w, Team& team) const {
    // The joints a chunk of lanes at a time, one joint per lane; each lane's rows (0, 1 or 2)
    // land after those of the lanes before it (lanes_prefix_sum), so the rows are in joint
    // order as in a serial loop, and those past the capacity nlim are not written.
    const int width = scan_width(team), lane = team.rank(), cap = s.size.nlim;
    int n = 0;  // rows of the earlier chunks
    for (int base = 0; base < m.njnt; base += width) {
      const int j = base + lane;
      const LimitRows rows = lane < width && j < m.njnt ? limit_rows(w, j) : LimitRows{};
      int total = 0;
      const int first = n + lanes_prefix_sum(team, width, rows.count, total);
      if (rows.count > 0 && first < cap) put_limit_row(w, first, m.jnt_dofadr[j], rows.sign0, rows.R, rows.vhat0);
      if (rows.count > 1 && first + 1 < cap) put_limit_row(w, first + 1, m.jnt_dofadr[j], -1.0, rows.R, rows.vhat1);
      n += total;
    }
    if (team.rank() == 0) s.lim_count(w)[0] = min_(n, cap);  // one-lane: count store
  }

  // Joint j's limit rows at the step start: count 0, 1 or 2. A row exists while the joint is
  // within the window 2 h max(|v|, |v*|) of its bound (Drake's SapLimitConstraint, tau_d = h);
  // the first row is the lower one when it exists (sign +1), the second always the upper one.
  struct LimitRows {
    int count = 0;
    double sign0 = 0, vhat0 = 0, vhat1 = 0, R = 0;
  };
  SAP_HD LimitRows limit_rows(int w, int j) const {
    LimitRows out;
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
  SAP_HD void put_limit_row(int w, int row, int dof, double sign, double R, double vhat) const {
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
  template <class Team>
  SAP_HD void setup_pd(int w, Team& team) const {
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
  SAP_HDI bool is_pd_actuator(int u) const {
    return actuator_is_servo(m.actuator_type[u]) && m.actuator_tendonid[u] < 0;
  }

  // The PD parameters (PdParam) of actuator u acting on a coordinate x (a dof or a tendon length)
  // of effective mass m_eff (A_jj, or 1/w for a tendon) at x0 = x at the step start.
  SAP_HD void pd_row_params(int w, int u, double m_eff, double x0, double* pp) const {
    const int type = m.actuator_type[u];
    const double g = world_model.actuator_gear_of(m, w)[u];
    // ctrl clamped to ctrlrange, or the activation (kernels/dynamics.hpp, actuator_input).
    const double ctrl = actuator_input<double>(m, u, control.ctrl(w), state_in.act(w), p.h);
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

  // ---------------------------------------------------------------------------------------------
  // Holonomic rows (docs/sap-math.md §12): tendon limits and equality constraints, each row a
  // sparse Jacobian (dofs decreasing), R, v_hat and impulse bounds [lo, hi].

  // Stores row n's parameters. Returns n + 1.
  SAP_HD int put_holonomic_params(int w, int n, double R, double v_hat, double lo, double hi) const {
    double* hp = s.hol_param(w) + kNumHolonomicParams * n;
    hp[kHolKind] = kHolKindBox;
    hp[kHolR] = R;
    hp[kHolVhat] = v_hat;
    hp[kHolLo] = lo;
    hp[kHolHi] = hi;
    return n + 1;
  }

  // Entry (a, b) of W = J diag(A)^-1 J^T for rows n0 + a, n0 + b sharing one dof list, with the
  // angular velocity of free and ball joints measured in the joint's parent frame as for the
  // contacts' diag_delassus weights (Drake's estimate). Entry by entry (no local arrays: the
  // setup kernel's registers and stack stay small).
  SAP_HD double holonomic_delassus_entry(int w, int n0, int a, int b) const {
    const int nj = s.hol_jac_n(w)[n0];
    const int* jdof = s.hol_jac_dof(w) + s.size.nhjac * n0;
    const double* J = s.hol_jac_val(w) + s.size.nhjac * n0;  // row r at J + nhjac * r
    const int stride = s.size.nhjac;
    const RealValues A = d.A_values(w);
    const int ld = m.nv_pad;
    double Wab = 0;
    for (int e = 0; e < nj;) {
      const int dof = jdof[e];
      const int j = m.dof_jntid[dof];
      const int t = m.jnt_type[j];
      const int r0 = m.jnt_dofadr[j] + (t == kJointFree ? 3 : 0);
      if ((t == kJointFree || t == kJointBall) && dof == r0 + 2 && e + 2 < nj && jdof[e + 2] == r0) {
        const Mat3<double> Q = t == kJointFree
                                   ? Mat3<double>::load(d.xmat(w) + 9 * m.jnt_bodyid[j])
                                   : to_matrix(normalized(Quat<double>::load(state_in.qpos(w) + m.jnt_qposadr[j])));
        for (int k = 0; k < 3; ++k) {  // column k of J Q^T and the diagonal of Q A_block Q^T
          double ca = 0, cb = 0, aq = 0;
          for (int c = 0; c < 3; ++c) {
            ca += J[stride * a + e + 2 - c] * Q(k, c);
            cb += J[stride * b + e + 2 - c] * Q(k, c);
            for (int c2 = 0; c2 < 3; ++c2) aq += Q(k, c) * A[(r0 + c) * ld + (r0 + c2)] * Q(k, c2);
          }
          Wab += ca * cb / aq;
        }
        e += 3;
        continue;
      }
      Wab += J[stride * a + e] * J[stride * b + e] / A[dof * ld + dof];
      ++e;
    }
    return Wab;
  }

  // Delassus weight of rows n0 .. n0 + nk - 1 (nk <= 6) sharing one dof list:
  // w = |J diag(A)^-1 J^T|_F / nk (Drake's, for the rigid equalities and the tendon rows).
  SAP_HD double holonomic_weight(int w, int n0, int nk) const {
    double fro2 = 0;
    for (int a = 0; a < nk; ++a)
      for (int b = a; b < nk; ++b) {
        const double Wab = holonomic_delassus_entry(w, n0, a, b);
        fro2 += (a == b ? 1.0 : 2.0) * Wab * Wab;
      }
    return max_(sqrt_(fro2) / nk, 1e-12);
  }

  // Mean diagonal of W over rows n0 + first .. n0 + first + count - 1: the inverse effective mass
  // of one block of rows (a weld's rotation rows or its translation rows), MuJoCo's mass
  // normalisation of a soft row (its efc_diagApprox, the mean of a body's 3x3 inverse inertia).
  SAP_HD double holonomic_block_weight(int w, int n0, int first, int count) const {
    double tr = 0;
    for (int a = first; a < first + count; ++a) tr += holonomic_delassus_entry(w, n0, a, a);
    return max_(tr / count, 1e-12);
  }

  // Jacobian rows of body b2's motion relative to body b1 at points x1 (on b1) and x2 (on b2),
  // world frame, over the merged dof paths: rows 0-2 angular w_2 - w_1, rows 3-5 linear
  // v_2(x2) - v_1(x1). Written to rows n .. n+5 (n+5 only when nrows == 6; nrows == 3 keeps the
  // linear rows, at n .. n+2). Returns the number of entries.
  SAP_HD int body_pair_jacobian(int w, int n, int nrows, int b1, int b2, const Vec3<double>& x1,
                                const Vec3<double>& x2) const {
    const Vec3<double> r1 = x1 - Vec3<double>::load(d.xpos(w) + 3 * m.body_rootid[b1]);
    const Vec3<double> r2 = x2 - Vec3<double>::load(d.xpos(w) + 3 * m.body_rootid[b2]);
    const double* cdof = d.cdof(w);
    int d1 = body_last_dof(m, b1), d2 = body_last_dof(m, b2);
    int nj = 0;
    while (d1 >= 0 || d2 >= 0) {
      const int dof = d1 > d2 ? d1 : d2;
      Vec3<double> ang = Vec3<double>::zero(), lin = Vec3<double>::zero();
      if (dof == d2) {
        const Vec6<double> sd = Vec6<double>::load(cdof + 6 * dof);
        ang += sd.ang;
        lin += point_velocity(sd, r2);
        d2 = m.dof_parentid[d2];
      }
      if (dof == d1) {
        const Vec6<double> sd = Vec6<double>::load(cdof + 6 * dof);
        ang -= sd.ang;
        lin -= point_velocity(sd, r1);
        d1 = m.dof_parentid[d1];
      }
      for (int row = 0; row < nrows; ++row) {
        const double val = nrows == 6 ? (row < 3 ? ang[row] : lin[row - 3]) : lin[row];
        s.hol_jac_dof(w)[s.size.nhjac * (n + row) + nj] = dof;
        s.hol_jac_val(w)[s.size.nhjac * (n + row) + nj] = val;
      }
      ++nj;
    }
    for (int row = 0; row < nrows; ++row) s.hol_jac_n(w)[n + row] = nj;
    return nj;
  }

  SAP_HD void setup_holonomic(int w) const {
    const double h = p.h;
    const double inf = 1e300;  // impulse bound (+inf in fp32)
    const double* qpos = state_in.qpos(w);
    const double* qvel = state_in.qvel(w);
    const RealValues A = d.A_values(w);
    const int ld = m.nv_pad, cap = s.size.nhol;
    int n = 0;
    // Tendon limits: Drake's joint-limit rows on the tendon length (k = limit_stiffness,
    // tau_d = h, beta = limit_near_rigid_threshold, window 2 h max(|dL/dt|, |J v*|)).
    for (int t = 0; t < m.ntendon; ++t) {
      if (!m.tendon_limited[t]) continue;
      const double L = tendon_length<double>(m, t, qpos, d.ten_length(w));
      double Ld = 0, Ls = 0, wgt = 0;
      for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) {
        Ld += c * qvel[dof];
        Ls += c * d.v_star(w)[dof];
        wgt += c * c / A[dof * ld + dof];
      });
      const double window = 2.0 * h * max_(abs_(Ld), abs_(Ls));
      const double beta = p.config.limit_near_rigid_threshold;
      const double R = max_(beta * beta / (4 * kPi * kPi) * wgt, 1.0 / (h * p.config.limit_stiffness * (2 * h)));
      const double lo = m.tendon_range[2 * t], hi = m.tendon_range[2 * t + 1];
      for (int side = 0; side < 2; ++side) {
        const double gap = side == 0 ? L - lo : hi - L;
        if (!(gap <= window) || n >= cap) continue;
        s.hol_jac_n(w)[n] = 0;
        add_tendon_entries(w, n, t, side == 0 ? 1.0 : -1.0);
        n = put_holonomic_params(w, n, R, -gap / (2 * h), 0.0, inf);
      }
    }
    // Equality constraints.
    const double beta = p.config.equality_near_rigid_threshold;
    for (int e = 0; e < m.neq; ++e) {
      if (!m.eq_active[e]) continue;
      const int type = m.eq_type[e], nk = equality_rows(type);
      if (n + nk > cap) break;
      const double* ed = m.eq_data + kEqDataSize * e;
      double g[6];
      if (type == kEqJoint) {
        const int j1 = m.eq_obj1id[e], j2 = m.eq_obj2id[e];
        const double x1 = qpos[m.jnt_qposadr[j1]] - m.jnt_qpos0[j1];
        const double x2 = j2 >= 0 ? qpos[m.jnt_qposadr[j2]] - m.jnt_qpos0[j2] : 0.0;
        const double poly = ed[0] + x2 * (ed[1] + x2 * (ed[2] + x2 * (ed[3] + x2 * ed[4])));
        const double dpoly = ed[1] + x2 * (2 * ed[2] + x2 * (3 * ed[3] + x2 * 4 * ed[4]));
        g[0] = x1 - poly;
        s.hol_jac_n(w)[n] = 0;
        insert_holonomic_entry(w, n, m.jnt_dofadr[j1], 1.0);
        if (j2 >= 0 && dpoly != 0) insert_holonomic_entry(w, n, m.jnt_dofadr[j2], -dpoly);
      } else if (type == kEqTendon) {  // kernels/tendon_coupling.hpp: row J1 - p'(x) J2
        const int t1 = m.eq_obj1id[e], t2 = m.eq_obj2id[e];
        const double* tl = d.ten_length(w);
        const TendonCouplingRow<double> r = tendon_coupling<double>(
            tendon_length<double>(m, t1, qpos, tl), ed[5], t2 >= 0, t2 >= 0 ? tendon_length<double>(m, t2, qpos, tl) : 0.0,
            ed[6], ed);
        g[0] = r.g;
        s.hol_jac_n(w)[n] = 0;
        add_tendon_entries(w, n, t1, 1.0);
        if (t2 >= 0 && r.slope != 0) add_tendon_entries(w, n, t2, -r.slope);
      } else {
        const int b1 = m.eq_obj1id[e], b2 = m.eq_obj2id[e];
        const Vec3<double> p1 = Vec3<double>::load(d.xpos(w) + 3 * b1), p2 = Vec3<double>::load(d.xpos(w) + 3 * b2);
        const Quat<double> q1 = Quat<double>::load(d.xquat(w) + 4 * b1), q2 = Quat<double>::load(d.xquat(w) + 4 * b2);
        const Vec3<double> xP = p1 + rotate(q1, Vec3<double>::load(ed + 0));
        if (type == kEqConnect) {
          const Vec3<double> xQ = p2 + rotate(q2, Vec3<double>::load(ed + 3));
          for (int k = 0; k < 3; ++k) g[k] = xQ[k] - xP[k];
          body_pair_jacobian(w, n, 3, b1, b2, xP, xQ);
        } else {
          const Vec3<double> xQ = p2 + rotate(q2, Vec3<double>::load(ed + 7));
          const Quat<double> qP = q1 * Quat<double>::load(ed + 3), qQ = q2 * Quat<double>::load(ed + 10);
          const Vec3<double> a = rotate(qP, quat_log(normalized(conjugate(qP) * qQ)));  // a_PQ in world
          const Vec3<double> xm = 0.5 * (xP + xQ);
          for (int k = 0; k < 3; ++k) {
            g[k] = a[k];
            g[3 + k] = xQ[k] - xP[k];
          }
          body_pair_jacobian(w, n, 6, b1, b2, xm, xm);
        }
      }
      if (s.hol_jac_n(w)[n] == 0) continue;  // both sides welded to the world: nothing to solve
      // MuJoCo solref -> mass-normalised stiffness K and damping B (accelerations per unit
      // violation and velocity; docs/sap-math.md §12.2): (timeconst, dampratio) gives
      // K = 1/(tc dr)^2, B = 2/tc with tc >= 2h (MuJoCo's refsafe); (-K, -B) gives them directly;
      // (0, 0) is rigid. Physical k = K/w, c = B/w: R_c = w / (h (h K + B)), tau_d = B/K.
      const double s0 = m.eq_solref[2 * e], s1 = m.eq_solref[2 * e + 1];
      double K = 0, B = 0, tau_d = 0;
      const bool compliant = s0 > 0 || s0 < 0 || s1 < 0;
      if (s0 > 0) {
        const double tc = max_(s0, 2 * h);
        K = 1.0 / (tc * tc * s1 * s1);
        B = 2.0 / tc;
        tau_d = B / K;
      } else if (compliant) {
        K = -s0;
        B = -s1;
        tau_d = K > 0 ? B / K : inf;
      }
      // Rigid rows: Drake's one weight |W|_F / n for all rows. Compliant rows: w of each block
      // of rows (a weld's 3 rotation rows and its 3 translation rows, a connect's 3 rows) is
      // the block's mean diagonal of W, its inverse effective mass as MuJoCo normalises solref
      // (one |W|_F / 6 for a weld mixes the rotation rows' 1/I into the translation rows and
      // multiplied a hanging body's sag by |W|_F / (6/m), 22x on a 2 kg box).
      const int nblock = compliant && type == kEqWeld ? 2 : 1, rows_per_block = nk / nblock;
      const double wgt_rigid = compliant ? 0.0 : holonomic_weight(w, n, nk);
      for (int blk = 0; blk < nblock; ++blk) {
        const int first = blk * rows_per_block;
        const double wgt = compliant ? holonomic_block_weight(w, n, first, rows_per_block) : wgt_rigid;
        const double R_c = compliant ? wgt / (h * (h * K + B)) : 0.0;
        double tau;
        const double R = holonomic_compliance<double>(R_c, tau_d, h, beta, wgt, &tau);
        for (int k = first; k < first + rows_per_block; ++k)
          put_holonomic_params(w, n + k, R, -g[k] / (h + tau), -inf, inf);
      }
      n += nk;
    }
    // Dry joint friction (dof_frictionloss f > 0): a box row on vc = v_dof with |gamma| <= h f,
    // R = sigma / A_jj (friction_loss_params; docs/sap-math.md §13).
    for (int dof = 0; dof < m.nv && n < cap; ++dof) {
      const double f = m.dof_frictionloss[dof];
      if (!(f > 0)) continue;
      s.hol_jac_n(w)[n] = 0;
      insert_holonomic_entry(w, n, dof, 1.0);
      double R, lo, hi;
      friction_loss_params<double>(h, f, p.config.sigma, 1.0 / A[dof * ld + dof], &R, &lo, &hi);
      n = put_holonomic_params(w, n, R, 0.0, lo, hi);
    }
    // Servos on fixed tendons: the PD row of setup_pd on the tendon length L = J_t q, vc = J_t v;
    // the gain clamp uses the tendon's effective mass 1/w, w = sum c^2 / A_jj.
    for (int u = 0; u < m.nu && n < cap; ++u) {
      const int t = m.actuator_tendonid[u], type = m.actuator_type[u];
      if (t < 0 || !actuator_is_servo(type)) continue;
      const double L = tendon_length<double>(m, t, qpos, d.ten_length(w));
      double wgt = 0;
      s.hol_jac_n(w)[n] = 0;
      for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) {
        wgt += c * c / A[dof * ld + dof];
        insert_holonomic_entry(w, n, dof, c);
      });
      double* hp = s.hol_param(w) + kNumHolonomicParams * n;
      hp[kHolKind] = kHolKindPd;
      pd_row_params(w, u, 1.0 / wgt, L, hp + kHolPd);
      ++n;
    }
    s.hol_count(w)[0] = n;
  }

  // Adds scale J_t (tendon t, kernels/spatial_tendon.hpp) to row n, summing entries of a dof
  // already in the row.
  SAP_HD void add_tendon_entries(int w, int n, int t, double scale) const {
    for_each_tendon_dof(m, t, d.ten_moment(w), [&](int dof, double c) { add_holonomic_entry(w, n, dof, scale * c); });
  }
  // Adds val to row n's entry of dof (inserted when absent, keeping the dofs decreasing).
  SAP_HD void add_holonomic_entry(int w, int n, int dof, double val) const {
    int* jd = s.hol_jac_dof(w) + s.size.nhjac * n;
    double* jv = s.hol_jac_val(w) + s.size.nhjac * n;
    for (int i = 0; i < s.hol_jac_n(w)[n]; ++i)
      if (jd[i] == dof) {
        jv[i] += val;
        return;
      }
    insert_holonomic_entry(w, n, dof, val);
  }

  // Adds (dof, val) to row n keeping the dofs decreasing.
  SAP_HD void insert_holonomic_entry(int w, int n, int dof, double val) const {
    int* jd = s.hol_jac_dof(w) + s.size.nhjac * n;
    double* jv = s.hol_jac_val(w) + s.size.nhjac * n;
    int i = s.hol_jac_n(w)[n];
    while (i > 0 && jd[i - 1] < dof) {
      jd[i] = jd[i - 1];
      jv[i] = jv[i - 1];
      --i;
    }
    jd[i] = dof;
    jv[i] = val;
    s.hol_jac_n(w)[n] += 1;
  }
};

}  // namespace sap

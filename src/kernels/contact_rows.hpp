// Stage 2's contact rows (ConstraintSetupKernel, kernels/constraint_setup.hpp): contact frames,
// tree-sparse contact Jacobians, contact weights w_i, regularisation R_i and bias v_hat_i
// (docs/sap-math.md §3.1-§3.3; spec "contact_weight_mode", "contact_point_mode") and the
// parameters of the Hunt-Crossley approximations (§3.8).
#pragma once

#include "kernels/constraint_setup.hpp"

namespace sap {

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
// 0 for a massless group, and -1 when the group has mass but no usable inverse inertia:
// det I_G <= 1000 eps (tr I_G)^3 (eps the machine epsilon of S; a 3x3 determinant by cofactors
// carries an absolute error of a few eps (tr I)^3, so below that I_G^-1 has no correct digit),
// e.g. a point mass or a rod of zero inertia about its axis alone on its joint. The free-body
// mobility of such a group is unbounded (its rotation is held only by the joints), and the
// caller weighs the contact by diag_delassus instead, which uses the joints.
// In two parts: the group's M, o and I^-1 (weld_group_inertia, per group and world-step), then
// the sum over the three columns c (t1, t2, n) of the contact frame (weld_group_mobility).

// A weld group's mass, com and inverse rotational inertia.
template <class S>
struct WeldGroupInertia {
  S mass;
  Vec3<S> com;
  Mat3<S> inertia_inv;
};

// Forms the group of root (body_weld_root) and returns use(group) when it has a usable inertia,
// else 0 (massless) or -1 (no usable inverse inertia) without calling use. body_mass,
// body_inertia: world w's rows (WorldModelView::body_mass_of, body_inertia_of).
template <class S, class Use>
SAP_HD S weld_group_inertia(const ModelView& m, const double* body_mass, const double* body_inertia,
                            const ConstDataView& d, int w, int root, const Use& use) {
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
  return use(WeldGroupInertia<S>{mass, com, inverse(inertia)});
}

// The group's mobility summed over the columns of frame, the contact frame (row-major 3x3),
// at x (x_point); both read from memory where used, to keep them out of registers meanwhile.
template <class S>
SAP_HD S weld_group_mobility(const WeldGroupInertia<S>& g, const double* x_point, const double* frame) {
  const Vec3<S> arm = Vec3<S>::load(x_point) - g.com;
  S sum = S(0);
  for (int k = 0; k < 3; ++k) {
    const Vec3<S> r = cross(arm, Vec3<S>{{S(frame[k]), S(frame[3 + k]), S(frame[6 + k])}});
    sum += S(1) / g.mass + dot(r, g.inertia_inv * r);
  }
  return sum;
}

// The weld groups of the last contact's two bodies (one lane: a world's contacts come in pair
// order, so a pair's contacts, and those of a body's geoms, follow one another): a group's
// inertia is formed once per run of contacts on it, not once per contact. The same values.
// form(use) is weld_group_inertia's call for the group.
template <class S>
struct WeldGroupCache {
  struct Side {
    int root = -1;     // the group held; -1: none yet
    S formed = S(0);   // weld_group_inertia's value: 1 (usable, in g), 0 or -1
    WeldGroupInertia<S> g{};
  } side[2];
  template <class Form>
  SAP_HDI S mobility(int k, int root, const Form& form, const double* x_point, const double* frame) {
    Side& e = side[k];
    if (e.root != root) {
      e.root = root;
      e.formed = form([&](const WeldGroupInertia<S>& g) {
        e.g = g;
        return S(1);
      });
    }
    return e.formed == S(1) ? weld_group_mobility(e.g, x_point, frame) : e.formed;
  }
};
// A GPU lane's contacts are a team's width apart: each forms its groups (nothing to hold).
template <class S>
struct NoWeldGroupCache {
  template <class Form>
  SAP_HDI S mobility(int, int, const Form& form, const double* x_point, const double* frame) const {
    return form([&](const WeldGroupInertia<S>& g) { return weld_group_mobility(g, x_point, frame); });
  }
};

// Returns false when the contact data is not finite.
template <class Sw, bool kAngular>
template <class Groups>
inline SAP_HD bool ConstraintSetupKernel<Sw, kAngular>::setup_contact(int w, int c, Groups& groups) const {
  using S = double;  // Jacobian and regularisation in the fp64 objective buffers
  const double* nrm = contacts.normal(w) + 3 * c;
  const Vec3<S> n = normalized(Vec3<S>::load(nrm));
  const Vec3<S> x0 = Vec3<S>::load(contacts.x0(w) + 3 * c), x1 = Vec3<S>::load(contacts.x1(w) + 3 * c);
  S phi = contacts.phi(w)[c];
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
    auto mobility = [&](int k, int b, const double* x) {
      if (body_last_dof(m, b) < 0) return Sw(0);
      const int root = body_weld_root(m, b);
      auto form = [&](const auto& use) { return weld_group_inertia<Sw>(m, mass, inertia, d, w, root, use); };
      return groups.mobility(k, root, form, x, frame);
    };
    const Sw w0 = mobility(0, b0, x0p);
    const Sw w1 = mobility(1, b1, x1p);
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
  // The contact laws (the cone's v_hat_n here, Hunt-Crossley's fe0 and n0) predict the gap after
  // the step as phi + h v_n, the sap_euler map's. The midpoint map moves it by
  // (h/2)(v_n0 + v_n), v_n0 = J_n v_n at the step start; with the gap taken half a step ahead,
  // phi + (h/2) v_n0, the prediction is exact again (phi_hat_{n+1} = phi_hat_n + h v_{n+1}) and
  // the contact's normal mode is damped as under sap_euler instead of ringing at the step's
  // resolution, which made lagged friction lock sliding boxes (docs/sap-math.md §8.5).
  if (p.config.position_integration == PositionIntegrationMode::Midpoint) {
    S vn0 = S(0);
    const double* v0 = state_in.qvel(w);
    const JacValues jv = jval;
    for (int e = 0; e < nj; ++e) vn0 += jv[3 * e + 2] * v0[jdof[e]];
    phi += S(0.5) * h * vn0;
  }
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
  if constexpr (kAngular) {
    if (s.size.nacon > 0) setup_contact_angular(w, c);
  }
  return true;
}

// A model with torsional or rolling friction (SolveSizes::nacon > 0): contact c's condim and
// coefficients, and for condim 4 and 6 its angular Jacobian rows, the relative angular velocity
// of the two bodies along [n, t1, t2] (spin, roll1, roll2; docs/sap-math.md §3.9), over the
// same merged dof entries as its translational rows:
//   d w_rel / d v_dof = cdof_dof.ang (body 1's path) - cdof_dof.ang (body 0's path).
template <class Sw, bool kAngular>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::setup_contact_angular(int w, int c) const {
  using S = double;
  const int dim = contacts.angular() ? contacts.condim(w)[c] : 3;
  s.con_dim(w)[c] = dim;
  double* ap = s.con_ang_param(w) + kNumAngularParams * c;
  for (int k = 0; k < kNumAngularParams; ++k) ap[k] = contacts.angular() ? contacts.friction_ext(w)[4 * c + k] : 0.0;
  if (dim < 4) return;
  const Mat3<S> frame = Mat3<S>::load(s.con_frame(w) + 9 * c);  // columns t1, t2, n
  const Vec3<S> t1 = frame.col(0), t2 = frame.col(1), n = frame.col(2);
  const int b0 = contacts.body(w)[2 * c], b1 = contacts.body(w)[2 * c + 1];
  const double* cdof = d.cdof(w);
  double* jac = s.contact_jac_ang(w, c);
  int d0 = body_last_dof(m, b0), d1 = body_last_dof(m, b1), e = 0;
  while (d0 >= 0 || d1 >= 0) {
    const int dof = d0 > d1 ? d0 : d1;
    Vec3<S> ang = Vec3<S>::zero();
    if (dof == d1) {
      ang += Vec3<S>::load(cdof + 6 * dof);
      d1 = m.dof_parentid[d1];
    }
    if (dof == d0) {
      ang -= Vec3<S>::load(cdof + 6 * dof);
      d0 = m.dof_parentid[d0];
    }
    jac[3 * e] = dot(n, ang);
    jac[3 * e + 1] = dot(t1, ang);
    jac[3 * e + 2] = dot(t2, ang);
    ++e;
  }
}

// Parameters of the Hunt-Crossley approximations (docs/sap-math.md §3.8, HuntCrossleyParams):
//   k     the combined stiffness, clamped to the near-rigid stiffness 4 pi^2 / (beta^2 w h^2)
//   fe0   = -k phi0, the elastic force at the step start (negative across a gap: the contact
//         pushes only once the predicted penetration -phi0 - h v_n is positive)
//   n0    = h (fe0)_+ (1 - d v_n0)_+, the impulse at the step-start velocity v_n0 = J_n v_0
//   eps_s = max(v_s, mu R_t n0), R_t = sigma w: the stiction tolerance, widened during impacts.
template <class Sw, bool kAngular>
inline SAP_HD bool ConstraintSetupKernel<Sw, kAngular>::setup_hunt_crossley(int w, int c, double k, double phi, double weight) const {
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
template <class Sw, bool kAngular>
template <class S>
inline SAP_HD void ConstraintSetupKernel<Sw, kAngular>::diag_delassus(int w, const JacDof* jdof, const JacValues jval, int nj, S* W) const {
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

}  // namespace sap

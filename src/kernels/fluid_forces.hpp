// MuJoCo's fluid forces (issue 30): the inertia-box model and the ellipsoid model, written once
// for host and device, templated on the scalar S. Explicit forces of the free motion (evaluated
// at v_n, like MuJoCo's Euler integrator; its implicit integrators differentiate them).
//
// Both act on a frame F of a body (origin o, rotation R, world): the body's inertial frame for
// the inertia-box model (one per body with mass), each geom's frame for the ellipsoid model (the
// body's geoms with fluidshape="ellipsoid"; a body with any such geom uses this model only).
// With the body's world angular velocity w and the velocity v(o) of the point o, and the wind
// u (world), the local velocity is lvel = [R^T w; R^T (v(o) - u)] (angular, linear), the model
// gives a local wrench lfrc = [torque; force] at o, and the generalized force is
//   qfrc += J_o^T [R lfrc_force] + J_w^T [R lfrc_torque]
// (body_wrench_to_dofs, kernels/passive_forces.hpp). Density rho, dynamic viscosity beta.
//
// Inertia-box (a box of the body's mass and principal inertia, m_fluid per axis i):
//   box_i = sqrt(6 (I_j + I_k - I_i) / m)            (floored at sqrt(6 1e-15 / m))
//   viscous (Stokes, sphere of diameter D = mean box_i):  torque -pi D^3 beta w, force -3 pi D beta v
//   drag: force_i -= rho/2 box_j box_k |v_i| v_i,  torque_i -= rho box_i (box_j^4 + box_k^4) |w_i| w_i / 64.
// Ellipsoid (semi-axes s of the geom; coefficients C: blunt drag, slender drag, angular drag,
// Kutta lift, Magnus lift; virtual mass and inertia of the compiler, ellipsoid_virtual_mass):
//   added mass: force += (rho m_v .* v) x w, torque += (rho m_v .* v) x v + (rho I_v .* w) x w
//   Magnus lift: force += C_M rho V (w x v), V = 4/3 pi s0 s1 s2
//   Kutta lift: force += C_K rho cos(a) A_p (n x v) x v, n = (s1 s2)^2 v0, (s2 s0)^2 v1, (s0 s1)^2 v2,
//   drag: force -= (beta 3 pi d_eq + rho |v| (A_p C_blunt + C_slender (A_max - A_p))) v,
//         torque -= (beta pi d_eq^3 + rho |m_drag|) w, m_drag_i = w_i (C_ang I_i + C_slender (I_max - I_i)),
// with A_p the projected area along v, A_max = pi d_max d_mid, d_eq = 2/3 (s0 + s1 + s2),
// I_i = 8/15 pi s_i max(s_j, s_k)^4, I_max = 8/15 pi d_mid d_max^4 (MuJoCo's engine_passive.c).
#pragma once

#include <cmath>

#include "kernels/passive_forces.hpp"
#include "kernels/scalar_math.hpp"
#include "sap/math/quat.hpp"
#include "sap/math/spatial.hpp"
#include "sap/model.hpp"

namespace sap {

// Local velocity [angular; linear] of the frame (o, R) moving with a body of com-based spatial
// velocity cvel (linear part at the tree's reference point p_ref), relative to the wind.
template <class S>
SAP_HDI void frame_local_velocity(const Vec6<S>& cvel, const Vec3<S>& p_ref, const Vec3<S>& o, const Mat3<S>& R,
                                  const Vec3<S>& wind, S lvel[6]) {
  const Vec3<S> w = mul_transpose(R, cvel.ang);
  const Vec3<S> v = mul_transpose(R, point_velocity(cvel, o - p_ref) - wind);
  for (int i = 0; i < 3; ++i) {
    lvel[i] = w[i];
    lvel[3 + i] = v[i];
  }
}

// Inertia-box model: local wrench lfrc (torque, force) of a body of mass m and principal
// moments I (about its com, in the frame whose velocity lvel is).
template <class S>
SAP_HDI void inertia_box_fluid(S mass, const Vec3<S>& I, const S lvel[6], S density, S viscosity, S lfrc[6]) {
  S box[3];
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    box[i] = sqrt_(max_(S(kMjMinVal), I[j] + I[k] - I[i]) / mass * S(6));
  }
  for (int i = 0; i < 6; ++i) lfrc[i] = S(0);
  if (viscosity > S(0)) {
    const S D = (box[0] + box[1] + box[2]) / S(3);
    for (int i = 0; i < 3; ++i) {
      lfrc[i] = -S(kPi) * D * D * D * viscosity * lvel[i];
      lfrc[3 + i] = -S(3) * S(kPi) * D * viscosity * lvel[3 + i];
    }
  }
  if (density > S(0)) {
    for (int i = 0; i < 3; ++i) {
      const int j = (i + 1) % 3, k = (i + 2) % 3;
      const S v = lvel[3 + i], w = lvel[i];
      lfrc[3 + i] -= S(0.5) * density * box[j] * box[k] * abs_(v) * v;
      const S bj2 = box[j] * box[j], bk2 = box[k] * box[k];
      lfrc[i] -= density * box[i] * (bj2 * bj2 + bk2 * bk2) * abs_(w) * w / S(64);
    }
  }
}

// Semi-axes of the ellipsoid that stands for a geom in the ellipsoid model (our geom types).
template <class S>
SAP_HDI Vec3<S> fluid_semi_axes(int geom_type, const double* size) {
  switch (geom_type) {
    case kGeomSphere:
      return {{S(size[0]), S(size[0]), S(size[0])}};
    case kGeomCapsule:
      return {{S(size[0]), S(size[0]), S(size[1] + size[0])}};
    case kGeomCylinder:
      return {{S(size[0]), S(size[0]), S(size[1])}};
    default:
      return {{S(size[0]), S(size[1]), S(size[2])}};
  }
}

// Ellipsoid model: local wrench lfrc (torque, force) of one geom with semi-axes s and
// coefficients coef (kFluidCoefs, MuJoCo's layout), times the interaction flag coef[0].
template <class S>
SAP_HD void ellipsoid_fluid(const Vec3<S>& s, const double* coef, const S lvel[6], S density, S viscosity, S lfrc[6]) {
  const Vec3<S> w{{lvel[0], lvel[1], lvel[2]}}, v{{lvel[3], lvel[4], lvel[5]}};
  const S blunt = S(coef[1]), slender = S(coef[2]), ang_drag = S(coef[3]), kutta = S(coef[4]), magnus = S(coef[5]);
  const Vec3<S> vmass{{S(coef[6]), S(coef[7]), S(coef[8])}}, vinertia{{S(coef[9]), S(coef[10]), S(coef[11])}};
  // Added mass (acceleration terms left out, as MuJoCo does: they would need qacc).
  const Vec3<S> lin_mom = density * cwise_mul(vmass, v), ang_mom = density * cwise_mul(vinertia, w);
  Vec3<S> force = cross(lin_mom, w);
  Vec3<S> torque = cross(lin_mom, v) + cross(ang_mom, w);
  // Lift and drag.
  const S volume = S(4.0 / 3.0 * kPi) * s[0] * s[1] * s[2];
  const S d_max = max_(max_(s[0], s[1]), s[2]), d_min = min_(min_(s[0], s[1]), s[2]);
  const S d_mid = s[0] + s[1] + s[2] - d_max - d_min;
  const S A_max = S(kPi) * d_max * d_mid;
  const Vec3<S> magnus_force = (magnus * density * volume) * cross(w, v);
  const S a12 = s[1] * s[2], a20 = s[2] * s[0], a01 = s[0] * s[1];
  const S proj_denom = sqr_(sqr_(a12)) * v[0] * v[0] + sqr_(sqr_(a20)) * v[1] * v[1] + sqr_(sqr_(a01)) * v[2] * v[2];
  const S proj_num = sqr_(a12 * v[0]) + sqr_(a20 * v[1]) + sqr_(a01 * v[2]);
  const S A_proj = S(kPi) * sqrt_(proj_denom / max_(S(kMjMinVal), proj_num));
  const Vec3<S> normal{{sqr_(a12) * v[0], sqr_(a20) * v[1], sqr_(a01) * v[2]}};
  const S speed = norm(v);
  const S cos_alpha = proj_num / max_(S(kMjMinVal), speed * proj_denom);
  const Vec3<S> circulation = (kutta * density * cos_alpha * A_proj) * cross(normal, v);
  const Vec3<S> kutta_force = cross(circulation, v);
  const S d_eq = S(2.0 / 3.0) * (s[0] + s[1] + s[2]);
  const S I_max = S(8.0 / 15.0 * kPi) * d_mid * sqr_(sqr_(d_max));
  Vec3<S> mom_drag;
  for (int i = 0; i < 3; ++i) {
    const S Ii = S(8.0 / 15.0 * kPi) * s[i] * sqr_(sqr_(max_(s[(i + 1) % 3], s[(i + 2) % 3])));
    mom_drag[i] = w[i] * (ang_drag * Ii + slender * (I_max - Ii));
  }
  const S drag_lin = viscosity * S(3 * kPi) * d_eq + density * speed * (A_proj * blunt + slender * (A_max - A_proj));
  const S drag_ang = viscosity * S(kPi) * d_eq * d_eq * d_eq + density * norm(mom_drag);
  force += magnus_force + kutta_force - drag_lin * v;
  torque -= drag_ang * w;
  const S flag = S(coef[0]);
  for (int i = 0; i < 3; ++i) {
    lfrc[i] = flag * torque[i];
    lfrc[3 + i] = flag * force[i];
  }
}

// The fluid force of body b with spatial velocity cvel_b (com-based, 6 values), added to qfrc.
template <class S>
SAP_HD void fluid_body_force(const ModelView& m, const double* body_mass, const double* xpos, const double* xmat,
                             const double* xipos, const double* cdof, int b, const double* cvel_b, double* qfrc) {
  const S density = S(m.fluid_density), viscosity = S(m.fluid_viscosity);
  const Vec3<S> wind = Vec3<S>::load(m.fluid_wind);
  {
    const int mode = m.body_fluid_mode[b];
    const Vec6<S> v = Vec6<S>::load(cvel_b);
    const Vec3<S> p_ref = Vec3<S>::load(xpos + 3 * m.body_rootid[b]);
    const Mat3<S> Rb = Mat3<S>::load(xmat + 9 * b);
    S lvel[6] = {}, lfrc[6] = {};  // set before use; initialised so nvcc sees it (its "used before set" on the lambda)
    auto apply = [&](const Vec3<S>& o, const Mat3<S>& R) {
      const Vec3<S> t = R * Vec3<S>{{lfrc[0], lfrc[1], lfrc[2]}}, f = R * Vec3<S>{{lfrc[3], lfrc[4], lfrc[5]}};
      body_wrench_to_dofs<S>(m, xpos, cdof, b, o, f, t, qfrc);
    };
    if (mode == kFluidInertiaBox) {
      const Vec3<S> o = Vec3<S>::load(xipos + 3 * b);
      const Mat3<S> R = Rb * to_matrix(Quat<S>::load(m.body_fluid_iquat + 4 * b));
      frame_local_velocity(v, p_ref, o, R, wind, lvel);
      inertia_box_fluid(S(body_mass[b]), Vec3<S>::load(m.body_fluid_inertia + 3 * b), lvel, density, viscosity, lfrc);
      apply(o, R);
      return;
    }
    const Vec3<S> xb = Vec3<S>::load(xpos + 3 * b);
    for (int g = 0; g < m.nfluidgeom; ++g) {
      if (m.geom_bodyid[g] != b || m.geom_fluid[kFluidCoefs * g] == 0) continue;
      const Vec3<S> o = Rb * Vec3<S>::load(m.geom_pos + 3 * g) + xb;
      const Mat3<S> R = Rb * to_matrix(Quat<S>::load(m.geom_quat + 4 * g));
      frame_local_velocity(v, p_ref, o, R, wind, lvel);
      ellipsoid_fluid(fluid_semi_axes<S>(m.geom_type[g], m.geom_size + 3 * g), m.geom_fluid + kFluidCoefs * g, lvel,
                      density, viscosity, lfrc);
      apply(o, R);
    }
  }
}

// MuJoCo's mj_fluid for one world: the fluid force of every body (model arrays body_fluid_*,
// geom_fluid; fluid_density, fluid_viscosity, fluid_wind) at the poses xpos, xmat, xipos, dof
// subspaces cdof and body velocities cvel, added to qfrc. One lane (the scatter onto the dof paths).
template <class S>
SAP_HD void fluid_forces_to_dofs(const ModelView& m, const double* body_mass, const double* xpos, const double* xmat,
                                 const double* xipos, const double* cdof, const double* cvel, double* qfrc) {
  for (int b = 1; b < m.nfluidbody; ++b)
    if (m.body_fluid_mode[b] != kFluidNone) fluid_body_force<S>(m, body_mass, xpos, xmat, xipos, cdof, b, cvel + 6 * b, qfrc);
}

// The same from the world's qvel instead of cvel: each fluid body's spatial velocity is summed
// over its dof path, sum cdof_d qvel_d (the body_velocities tree pass, one body at a time).
template <class S>
SAP_HD void fluid_forces_to_dofs_v(const ModelView& m, const double* body_mass, const double* xpos, const double* xmat,
                                   const double* xipos, const double* cdof, const double* qvel, double* qfrc) {
  for (int b = 1; b < m.nfluidbody; ++b) {
    if (m.body_fluid_mode[b] == kFluidNone) continue;
    Vec6<S> v = Vec6<S>::zero();
    int db = b;
    while (db > 0 && m.body_dofnum[db] == 0) db = m.body_parentid[db];
    if (db > 0)
      for (int dof = m.body_dofadr[db] + m.body_dofnum[db] - 1; dof >= 0; dof = m.dof_parentid[dof])
        v += S(qvel[dof]) * Vec6<S>::load(cdof + 6 * dof);
    double cv[6];
    v.store(cv);
    fluid_body_force<S>(m, body_mass, xpos, xmat, xipos, cdof, b, cv, qfrc);
  }
}

// The compiler's virtual mass and inertia of an ellipsoid of semi-axes (dx, dy, dz) in a fluid
// (per unit density), MuJoCo's mjCGeom::SetFluidCoefs: with the shape integrals
//   kappa_x = dx dy dz int_0^inf dl / ((dx^2 + l)^(3/2) sqrt((dy^2 + l)(dz^2 + l)))
// by 15-point Gauss-Kronrod quadrature after l = x^3/(1 - x)^2 (its nodes and weights), V the
// volume: virtual mass_x = V kappa_x / (2 - kappa_x), virtual inertia_x = V/5 (dy^2 - dz^2)^2
// |kappa_z - kappa_y| / |2 (dy^2 - dz^2) + (dy^2 + dz^2)(kappa_y - kappa_z)| (cyclic). Host only.
inline double ellipsoid_added_mass_kappa(double dx, double dy, double dz) {
  static constexpr double w[15] = {0.01146766, 0.03154605, 0.05239501, 0.07032663, 0.08450236,
                                   0.09517529, 0.10221647, 0.10474107, 0.10221647, 0.09517529,
                                   0.08450236, 0.07032663, 0.05239501, 0.03154605, 0.01146766};
  static constexpr double l[15] = {7.865151709349917e-08, 1.7347976913907274e-05, 0.0003548008144506193,
                                   0.002846636252924549,  0.014094260903596077,   0.053063261727396636,
                                   0.17041978741317773,   0.5,                    1.4036301548686991,
                                   3.9353484827022642,    11.644841677041734,     39.53187807410903,
                                   177.5711362220801,     1429.4772912937397,     54087.416549217705};
  static constexpr double dl[15] = {5.538677720489877e-05, 0.002080868285293228, 0.016514126520723166,
                                    0.07261900344370877,   0.23985243401862602,  0.6868318249020725,
                                    1.8551129519182894,    5.0,                  14.060031152313941,
                                    43.28941239611009,     156.58546376397112,   747.9826085305024,
                                    5827.4042950027115,    116754.0197944512,    25482945.327264845};
  const double ix = 1.0 / (dx * dx), iy = 1.0 / (dy * dy), iz = 1.0 / (dz * dz);
  const double scale = std::pow(dx * dx * dx * dy * dz, 0.4);  // l in units of the semi-axes squared
  double kappa = 0.0;
  for (int i = 0; i < 15; ++i) {
    const double lambda = scale * l[i];
    const double denom = (1 + lambda * ix) * std::sqrt((1 + lambda * ix) * (1 + lambda * iy) * (1 + lambda * iz));
    kappa += scale * dl[i] / denom * w[i];
  }
  return kappa * ix;
}

inline void ellipsoid_virtual_mass(const double s[3], double virtual_mass[3], double virtual_inertia[3]) {
  constexpr double eps = 1e-14;  // the compiler's guard against 0/0 (MuJoCo's mjEPS)
  const double volume = 4.0 / 3.0 * kPi * s[0] * s[1] * s[2];
  const double k[3] = {ellipsoid_added_mass_kappa(s[0], s[1], s[2]), ellipsoid_added_mass_kappa(s[1], s[2], s[0]),
                       ellipsoid_added_mass_kappa(s[2], s[0], s[1])};
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, l = (i + 2) % 3;
    const double dj2 = s[j] * s[j], dl2 = s[l] * s[l];
    virtual_mass[i] = volume * k[i] / std::max(eps, 2 - k[i]);
    const double fac = (dj2 - dl2) * (dj2 - dl2) * std::abs(k[l] - k[j]) /
                       std::max(eps, std::abs(2 * (dj2 - dl2) + (dj2 + dl2) * (k[j] - k[l])));
    virtual_inertia[i] = volume * fac / 5;
  }
}

}  // namespace sap

// MuJoCo as the oracle of the MJCF importer: the same file is loaded by MuJoCo (the system
// library, Debian's 2.2.2 here) and by sap::load_mjcf; the compiled model constants, the body
// poses, the joint-space mass matrix (mj_fullM of qM, armature included) and the bias forces
// (qfrc_bias = C(q, v) v + g(q)) must agree to 1e-10 relative at random (q, v).
// Models that Debian's MuJoCo cannot read (Unitree G1, Franka Panda) are covered by
// tests/test_mjcf_fixtures.cpp with reference values written by tools/reference/mujoco_reference.py.
#include <gtest/gtest.h>
#include <mujoco/mujoco.h>

#include <Eigen/Dense>
#include <filesystem>
#include <random>
#include <string>

#include "import_test_util.hpp"
#include "sap/dynamics.hpp"
#include "sap/mjcf.hpp"

namespace {

using sap_test::near_rel;
using sap_test::quat_distance;

int our_geom_type(int mj_type) {
  switch (mj_type) {
    case mjGEOM_PLANE: return sap::kGeomPlane;
    case mjGEOM_SPHERE: return sap::kGeomSphere;
    case mjGEOM_CAPSULE: return sap::kGeomCapsule;
    case mjGEOM_BOX: return sap::kGeomBox;
    case mjGEOM_CYLINDER: return sap::kGeomCylinder;
    default: return -1;
  }
}

std::string mj_name(const mjModel* m, int type, int id) {
  const char* n = mj_id2name(m, type, id);
  return n ? n : "";
}

struct MuJoCo {
  mjModel* m = nullptr;
  mjData* d = nullptr;
  explicit MuJoCo(const std::string& path) {
    char err[1000] = "";
    m = mj_loadXML(path.c_str(), nullptr, err, sizeof(err));
    if (m) d = mj_makeData(m);
    error = err;
  }
  ~MuJoCo() {
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
  }
  std::string error;
};

// MuJoCo compiles every body inertia into principal moments (body_inertia) and a principal
// frame (body_iquat) with its own iterative 3x3 eigensolver. When the tensor is not diagonal
// in the body frame (several rotated geoms, fullinertia) the frame is only accurate to ~1e-7
// (measured: 2e-7 relative on the reconstructed tensor with Debian's 2.2.2), so our exact
// tensors are compared to that tolerance, and the dynamics are compared at 1e-10 on a copy of
// our model that carries MuJoCo's compiled tensors.
constexpr double kMjInertiaTol = 1e-6;

Eigen::Matrix3d mujoco_inertia(const mjModel* mm, int b) {
  const double* iq = mm->body_iquat + 4 * b;
  const Eigen::Matrix3d R = Eigen::Quaterniond(iq[0], iq[1], iq[2], iq[3]).toRotationMatrix();
  return R *
         Eigen::Vector3d(mm->body_inertia[3 * b], mm->body_inertia[3 * b + 1], mm->body_inertia[3 * b + 2])
             .asDiagonal() *
         R.transpose();
}

// Compares everything that both models define; `samples` random states for the dynamics.
void compare_with_mujoco(const std::string& path, int samples, unsigned seed) {
  SCOPED_TRACE(path);
  MuJoCo mj(path);
  ASSERT_TRUE(mj.m) << "MuJoCo could not load " << path << ": " << mj.error;
  const mjModel* mm = mj.m;
  sap::ImportOptions opt;
  opt.drop_unsupported = false;  // nothing of dynamical effect is dropped (tendons, equalities imported)
  sap::ImportReport report;
  const sap::Model m = sap::load_mjcf(path, &report, opt).model;

  // Structure and numbering.
  ASSERT_EQ(m.nbody, mm->nbody);
  ASSERT_EQ(m.njnt, mm->njnt);
  ASSERT_EQ(m.nq, mm->nq);
  ASSERT_EQ(m.nv, mm->nv);
  ASSERT_EQ(m.ngeom, mm->ngeom);
  ASSERT_EQ(m.nu, mm->nu);
  EXPECT_DOUBLE_EQ(m.timestep, mm->opt.timestep);
  for (int k = 0; k < 3; ++k) EXPECT_DOUBLE_EQ(m.gravity[static_cast<std::size_t>(k)], mm->opt.gravity[k]);
  auto vec = [](const double* p, int n) { return Eigen::Map<const Eigen::VectorXd>(p, n); };
  for (int b = 1; b < m.nbody; ++b) {
    SCOPED_TRACE("body " + std::to_string(b) + " " + m.body_names[static_cast<std::size_t>(b)]);
    EXPECT_EQ(m.body_names[static_cast<std::size_t>(b)], mj_name(mm, mjOBJ_BODY, b));
    EXPECT_EQ(m.body_parentid[static_cast<std::size_t>(b)], mm->body_parentid[b]);
    EXPECT_TRUE(
        near_rel(vec(&m.body_pos[3 * static_cast<std::size_t>(b)], 3), vec(mm->body_pos + 3 * b, 3), 1e-12, 1.0));
    const Eigen::Quaterniond qa(m.body_quat[4 * static_cast<std::size_t>(b)],
                                m.body_quat[4 * static_cast<std::size_t>(b) + 1],
                                m.body_quat[4 * static_cast<std::size_t>(b) + 2],
                                m.body_quat[4 * static_cast<std::size_t>(b) + 3]);
    const double* q = mm->body_quat + 4 * b;
    EXPECT_LT(quat_distance(qa, Eigen::Quaterniond(q[0], q[1], q[2], q[3])), 1e-12);
    EXPECT_NEAR(m.body_mass[static_cast<std::size_t>(b)], mm->body_mass[b], 1e-12 * std::max(1.0, mm->body_mass[b]));
    EXPECT_TRUE(
        near_rel(vec(&m.body_ipos[3 * static_cast<std::size_t>(b)], 3), vec(mm->body_ipos + 3 * b, 3), 1e-10, 1e-3));
    const double* I = &m.body_inertia[6 * static_cast<std::size_t>(b)];
    Eigen::Matrix3d Iours;
    Iours << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
    EXPECT_TRUE(near_rel(Iours, mujoco_inertia(mm, b), kMjInertiaTol));
  }
  for (int j = 0; j < m.njnt; ++j) {
    SCOPED_TRACE("joint " + m.jnt_names[static_cast<std::size_t>(j)]);
    const std::size_t js = static_cast<std::size_t>(j);
    EXPECT_EQ(m.jnt_names[js], mj_name(mm, mjOBJ_JOINT, j));
    EXPECT_EQ(m.jnt_type[js], mm->jnt_type[j]);  // same numbering: free ball slide hinge
    EXPECT_EQ(m.jnt_bodyid[js], mm->jnt_bodyid[j]);
    EXPECT_EQ(m.jnt_qposadr[js], mm->jnt_qposadr[j]);
    EXPECT_EQ(m.jnt_dofadr[js], mm->jnt_dofadr[j]);
    EXPECT_TRUE(near_rel(vec(&m.jnt_pos[3 * js], 3), vec(mm->jnt_pos + 3 * j, 3), 1e-12, 1.0));
    if (m.jnt_type[js] == sap::kJointHinge || m.jnt_type[js] == sap::kJointSlide) {
      EXPECT_TRUE(near_rel(vec(&m.jnt_axis[3 * js], 3), vec(mm->jnt_axis + 3 * j, 3), 1e-12));
      EXPECT_EQ(m.jnt_limited[js], mm->jnt_limited[j]);
      if (m.jnt_limited[js]) {
        EXPECT_NEAR(m.jnt_range[2 * js], mm->jnt_range[2 * j], 1e-12);
        EXPECT_NEAR(m.jnt_range[2 * js + 1], mm->jnt_range[2 * j + 1], 1e-12);
      }
      EXPECT_DOUBLE_EQ(m.jnt_stiffness[js], mm->jnt_stiffness[j]);
      EXPECT_NEAR(m.jnt_springref[js], mm->qpos_spring[mm->jnt_qposadr[j]], 1e-12);
    }
  }
  EXPECT_TRUE(near_rel(Eigen::Map<const Eigen::VectorXd>(m.qpos0.data(), m.nq), vec(mm->qpos0, mm->nq), 1e-12, 1.0));
  for (int i = 0; i < m.nv; ++i) {
    EXPECT_DOUBLE_EQ(m.dof_armature[static_cast<std::size_t>(i)], mm->dof_armature[i]);
    EXPECT_DOUBLE_EQ(m.dof_damping[static_cast<std::size_t>(i)], mm->dof_damping[i]);
    EXPECT_EQ(m.dof_parentid[static_cast<std::size_t>(i)], mm->dof_parentid[i]);
    EXPECT_EQ(m.dof_bodyid[static_cast<std::size_t>(i)], mm->dof_bodyid[i]);
  }
  for (int g = 0; g < m.ngeom; ++g) {
    SCOPED_TRACE("geom " + std::to_string(g) + " " + m.geom_names[static_cast<std::size_t>(g)]);
    const std::size_t gs = static_cast<std::size_t>(g);
    EXPECT_EQ(m.geom_type[gs], our_geom_type(mm->geom_type[g]));
    EXPECT_EQ(m.geom_bodyid[gs], mm->geom_bodyid[g]);
    EXPECT_EQ(m.geom_contype[gs], mm->geom_contype[g]);
    EXPECT_EQ(m.geom_conaffinity[gs], mm->geom_conaffinity[g]);
    EXPECT_DOUBLE_EQ(m.geom_friction[gs], mm->geom_friction[3 * g]);
    const int nsize = m.geom_type[gs] == sap::kGeomSphere ? 1 : m.geom_type[gs] == sap::kGeomBox ? 3 : 2;
    if (m.geom_type[gs] != sap::kGeomPlane)
      EXPECT_TRUE(near_rel(vec(&m.geom_size[3 * gs], nsize), vec(mm->geom_size + 3 * g, nsize), 1e-12));
    EXPECT_TRUE(near_rel(vec(&m.geom_pos[3 * gs], 3), vec(mm->geom_pos + 3 * g, 3), 1e-12, 1.0));
    const double* q = mm->geom_quat + 4 * g;
    const Eigen::Quaterniond qa(m.geom_quat[4 * gs], m.geom_quat[4 * gs + 1], m.geom_quat[4 * gs + 2],
                                m.geom_quat[4 * gs + 3]);
    EXPECT_LT(quat_distance(qa, Eigen::Quaterniond(q[0], q[1], q[2], q[3])), 1e-12);
  }
  for (int u = 0; u < m.nu; ++u) {
    SCOPED_TRACE("actuator " + m.actuator_names[static_cast<std::size_t>(u)]);
    const std::size_t us = static_cast<std::size_t>(u);
    EXPECT_EQ(m.actuator_names[us], mj_name(mm, mjOBJ_ACTUATOR, u));
    if (mm->actuator_trntype[u] == mjTRN_TENDON) {
      EXPECT_EQ(m.actuator_tendonid[us], mm->actuator_trnid[2 * u]);
    } else {
      ASSERT_EQ(mm->actuator_trntype[u], mjTRN_JOINT);
      EXPECT_EQ(m.actuator_dofadr[us], mm->jnt_dofadr[mm->actuator_trnid[2 * u]]);
    }
    EXPECT_EQ(m.actuator_ctrllimited[us], mm->actuator_ctrllimited[u]);
    EXPECT_EQ(m.actuator_forcelimited[us], mm->actuator_forcelimited[u]);
    if (m.actuator_ctrllimited[us]) {
      EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * us], mm->actuator_ctrlrange[2 * u]);
      EXPECT_DOUBLE_EQ(m.actuator_ctrlrange[2 * us + 1], mm->actuator_ctrlrange[2 * u + 1]);
    }
    const double g0 = mm->actuator_gainprm[mjNGAIN * u];
    if (m.actuator_type[us] == sap::kActMotor) {
      EXPECT_EQ(mm->actuator_biastype[u], mjBIAS_NONE);
      EXPECT_DOUBLE_EQ(m.actuator_gear[us], mm->actuator_gear[6 * u] * g0);
    } else if (m.actuator_type[us] == sap::kActPosition) {
      EXPECT_DOUBLE_EQ(m.actuator_kp[us], g0);
      EXPECT_DOUBLE_EQ(-m.actuator_kp[us], mm->actuator_biasprm[mjNBIAS * u + 1]);
      EXPECT_DOUBLE_EQ(-m.actuator_kd[us], mm->actuator_biasprm[mjNBIAS * u + 2]);
    }
  }
  // Fixed tendons and equality constraints.
  ASSERT_EQ(m.ntendon, mm->ntendon);
  ASSERT_EQ(m.nwrap, mm->nwrap);
  for (int t = 0; t < m.ntendon; ++t) {
    const std::size_t ts = static_cast<std::size_t>(t);
    SCOPED_TRACE("tendon " + m.tendon_names[ts]);
    EXPECT_EQ(m.tendon_names[ts], mj_name(mm, mjOBJ_TENDON, t));
    EXPECT_EQ(m.tendon_adr[ts], mm->tendon_adr[t]);
    EXPECT_EQ(m.tendon_num[ts], mm->tendon_num[t]);
    EXPECT_EQ(m.tendon_limited[ts], mm->tendon_limited[t]);
    if (m.tendon_limited[ts]) {
      EXPECT_DOUBLE_EQ(m.tendon_range[2 * ts], mm->tendon_range[2 * t]);
      EXPECT_DOUBLE_EQ(m.tendon_range[2 * ts + 1], mm->tendon_range[2 * t + 1]);
    }
    EXPECT_DOUBLE_EQ(m.tendon_stiffness[ts], mm->tendon_stiffness[t]);
    EXPECT_DOUBLE_EQ(m.tendon_damping[ts], mm->tendon_damping[t]);
#if mjVERSION_HEADER >= 300  // rest lengths [lower, upper] (a dead band), as ours
    EXPECT_NEAR(m.tendon_lengthspring[2 * ts], mm->tendon_lengthspring[2 * t], 1e-14);
    EXPECT_NEAR(m.tendon_lengthspring[2 * ts + 1], mm->tendon_lengthspring[2 * t + 1], 1e-14);
#else  // one rest length per tendon before MuJoCo 3
    EXPECT_NEAR(m.tendon_lengthspring[2 * ts], mm->tendon_lengthspring[t], 1e-14);
    EXPECT_NEAR(m.tendon_lengthspring[2 * ts + 1], mm->tendon_lengthspring[t], 1e-14);
#endif
  }
  for (int k = 0; k < m.nwrap; ++k) {
    ASSERT_EQ(mm->wrap_type[k], mjWRAP_JOINT);
    EXPECT_EQ(m.wrap_objid[static_cast<std::size_t>(k)], mm->wrap_objid[k]);
    EXPECT_DOUBLE_EQ(m.wrap_prm[static_cast<std::size_t>(k)], mm->wrap_prm[k]);
  }
  ASSERT_EQ(m.neq, mm->neq);
  for (int e = 0; e < m.neq; ++e) {
    const std::size_t es = static_cast<std::size_t>(e);
    SCOPED_TRACE("equality " + std::to_string(e));
    const int t = m.eq_type[es];
    const double* md = mm->eq_data + mjNEQDATA * e;
    const double* od = &m.eq_data[sap::kEqDataSize * es];
    EXPECT_EQ(m.eq_active[es], mm->eq_active[e]);
    EXPECT_DOUBLE_EQ(m.eq_solref[2 * es], mm->eq_solref[mjNREF * e]);
    EXPECT_DOUBLE_EQ(m.eq_solref[2 * es + 1], mm->eq_solref[mjNREF * e + 1]);
    EXPECT_EQ(m.eq_obj1id[es], mm->eq_obj1id[e]);
    if (t == sap::kEqJoint) {
      EXPECT_EQ(mm->eq_type[e], mjEQ_JOINT);
      EXPECT_EQ(m.eq_obj2id[es], mm->eq_obj2id[e]);
      for (int k = 0; k < 5; ++k) EXPECT_DOUBLE_EQ(od[k], md[k]);
    } else if (t == sap::kEqConnect) {
      EXPECT_EQ(mm->eq_type[e], mjEQ_CONNECT);
      EXPECT_EQ(m.eq_obj2id[es], mm->eq_obj2id[e]);
      // Both anchors; MuJoCo computes the second from qpos0 as we do.
      EXPECT_TRUE(near_rel(vec(od, 6), vec(md, 6), 1e-12, 1.0));
    } else {
      EXPECT_EQ(mm->eq_type[e], mjEQ_WELD);
      EXPECT_EQ(m.eq_obj2id[es], mm->eq_obj2id[e]);
      // MuJoCo: anchor (point on body 2) and relpose (point and orientation on body 1; from
      // qpos0 when not given). Ours: frame Q = (anchor, identity) on body 2, P = relpose on body 1.
      const Eigen::Quaterniond rq(md[6], md[7], md[8], md[9]);
      const Eigen::Vector3d p1P = vec(md + 3, 3);
      EXPECT_TRUE(near_rel(vec(od + 7, 3), vec(md, 3), 1e-12, 1.0));
      EXPECT_TRUE(near_rel(vec(od, 3), p1P, 1e-12, 1.0));
      EXPECT_LT(quat_distance(Eigen::Quaterniond(od[3], od[4], od[5], od[6]), rq.normalized()), 1e-12);
    }
  }

  // Keyframes.
  ASSERT_EQ(static_cast<int>(report.keyframes.size()), mm->nkey);
  for (int k = 0; k < mm->nkey; ++k) {
    const auto& kf = report.keyframes[static_cast<std::size_t>(k)];
    EXPECT_EQ(kf.name, mj_name(mm, mjOBJ_KEY, k));
    EXPECT_TRUE(near_rel(Eigen::Map<const Eigen::VectorXd>(kf.qpos.data(), m.nq),
                         vec(mm->key_qpos + k * mm->nq, mm->nq), 1e-12, 1.0));
    if (m.nu > 0)
      EXPECT_TRUE(near_rel(Eigen::Map<const Eigen::VectorXd>(kf.ctrl.data(), m.nu),
                           vec(mm->key_ctrl + k * mm->nu, mm->nu), 1e-15, 1.0));
  }

  // Dynamics at random states: `ev` on our model with MuJoCo's compiled inertia tensors (exact
  // comparison), `own` on our model as imported (inertia tolerance above).
  sap::Model m_mj = m;
  for (int b = 1; b < m.nbody; ++b) {
    const Eigen::Matrix3d I = mujoco_inertia(mm, b);
    const double t[6] = {I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)};
    for (int k = 0; k < 6; ++k) m_mj.body_inertia[6 * static_cast<std::size_t>(b) + static_cast<std::size_t>(k)] = t[k];
  }
  sap::DynamicsEvaluator ev(m_mj), own(m);
  std::mt19937 rng(seed);
  Eigen::MatrixXd Mmj(m.nv, m.nv);
  for (int s = 0; s < samples; ++s) {
    SCOPED_TRACE("sample " + std::to_string(s));
    Eigen::VectorXd q, v;
    sap_test::random_state(m, rng, q, v);
    for (int i = 0; i < m.nq; ++i) mj.d->qpos[i] = q[i];
    for (int i = 0; i < m.nv; ++i) mj.d->qvel[i] = v[i];
    mj_forward(mm, mj.d);
    ev.compute(q, v);
    for (int b = 1; b < m.nbody; ++b) {
      EXPECT_TRUE(near_rel(ev.body_pos(b), vec(mj.d->xpos + 3 * b, 3), 1e-12, 1.0)) << "body " << b;
      const double* xq = mj.d->xquat + 4 * b;
      EXPECT_LT(quat_distance(ev.body_quat(b), Eigen::Quaterniond(xq[0], xq[1], xq[2], xq[3])), 1e-12) << "body " << b;
      EXPECT_TRUE(near_rel(ev.body_com(b), vec(mj.d->xipos + 3 * b, 3), 1e-12, 1.0)) << "body " << b;
    }
    mj_fullM(mm, Mmj.data(), mj.d->qM);  // symmetric: row/column major agree
    EXPECT_TRUE(near_rel(ev.mass_matrix(), Mmj, 1e-10));
    EXPECT_TRUE(near_rel(ev.bias(), vec(mj.d->qfrc_bias, m.nv), 1e-10));
    own.compute(q, v);
    EXPECT_TRUE(near_rel(own.mass_matrix(), Mmj, kMjInertiaTol));
    EXPECT_TRUE(near_rel(own.bias(), vec(mj.d->qfrc_bias, m.nv), kMjInertiaTol));
    // Tendon lengths L = sum coef q.
    for (int t = 0; t < m.ntendon; ++t) {
      double L = 0;
      for (int k = m.tendon_adr[static_cast<std::size_t>(t)];
           k < m.tendon_adr[static_cast<std::size_t>(t)] + m.tendon_num[static_cast<std::size_t>(t)]; ++k)
        L += m.wrap_prm[static_cast<std::size_t>(k)] *
             q[m.jnt_qposadr[static_cast<std::size_t>(m.wrap_objid[static_cast<std::size_t>(k)])]];
      EXPECT_NEAR(L, mj.d->ten_length[t], 1e-12) << "tendon " << t;
    }
    // Springs: MuJoCo's qfrc_passive with damping switched off by zero velocity.
    for (int i = 0; i < m.nv; ++i) mj.d->qvel[i] = 0;
    mj_forward(mm, mj.d);
    ev.compute(q.data(), nullptr);
    EXPECT_TRUE(near_rel(ev.spring(), vec(mj.d->qfrc_passive, m.nv), 1e-10, 1e-12));
  }
}

const std::string kModels = std::string(SAP_SOURCE_DIR) + "/models/";

TEST(MujocoOracle, Humanoid) {
  const std::string path = kModels + "mujoco_humanoid/humanoid.xml";
  compare_with_mujoco(path, 5, 1);
}

// Orientation forms (degrees, custom eulerseq), default classes and childclass, fromto on
// capsule/cylinder/box, inertia from rotated geoms with density and explicit mass, explicit
// inertials (diag + orientation, full), several joints per body, joint ref, welded bodies,
// multiple worldbody sections, include.
const char* kFeatureModel = R"(
<mujoco model="features">
  <compiler angle="degree" eulerseq="zyx" autolimits="true"/>
  <option timestep="0.004" gravity="0.3 -0.2 -9.5"/>
  <default>
    <joint damping="0.3" armature="0.02"/>
    <geom density="800" friction="0.8"/>
    <motor ctrlrange="-2 2"/>
    <default class="arm">
      <joint axis="0 1 0" range="-90 90"/>
      <geom type="capsule" size="0.04"/>
      <default class="stiff"><joint stiffness="3" springref="15"/></default>
    </default>
  </default>
  <include file="parts/extra_defaults.xml"/>
  <worldbody>
    <geom name="floor" type="plane" size="0 0 1"/>
    <body name="base" pos="0.1 0.2 1" euler="10 20 30">
      <freejoint name="root"/>
      <geom type="box" size="0.2 0.1 0.05" euler="5 -15 40"/>
      <geom type="cylinder" fromto="0 0 0 0.1 0.2 0.3" size="0.03"/>
      <geom type="box" fromto="0 0 0 0 0.2 0.1" size="0.02 0.05"/>
      <body name="a1" pos="0.2 0 0" axisangle="1 1 0 30" childclass="arm">
        <joint name="j1" ref="10"/>
        <joint name="j2" type="slide" axis="1 0 0.5" pos="0.01 0 0" range="-0.1 0.2"/>
        <geom fromto="0 0 0 0.3 0 0"/>
        <body name="a2" pos="0.3 0 0" xyaxes="0 1 0 -1 0 0.3">
          <joint name="j3" axis="1 2 3" class="stiff"/>
          <geom type="box" size="0.02 0.05 0.03" pos="0 0.1 0" quat="0.9 0.1 0.2 0.3"/>
          <body name="a3" pos="0 0.2 0" zaxis="1 1 0">
            <joint name="ball" type="ball" damping="0.1" range="0 60"/>
            <geom type="sphere" size="0.05" pos="0.05 0 0" mass="0.7"/>
            <geom type="cylinder" size="0.03 0.04" axisangle="0 1 1 60" class="heavy"/>
          </body>
        </body>
      </body>
      <body name="b1" pos="-0.2 0 0">
        <inertial pos="0.01 0.02 0.03" quat="0.8 0.2 0.1 -0.3" mass="1.3" diaginertia="0.01 0.02 0.025"/>
        <joint name="h1" axis="0 0 1"/>
        <joint name="h2" axis="1 0 0" pos="0 0.05 0"/>
        <geom type="sphere" size="0.05"/>
        <body name="b2" pos="0 0 -0.3">
          <inertial pos="0 0 -0.1" mass="0.5" fullinertia="0.01 0.012 0.008 0.001 -0.002 0.0005"/>
          <joint name="s1" type="slide" axis="0 0 1"/>
        </body>
      </body>
    </body>
  </worldbody>
  <worldbody>
    <body name="fixedarm" pos="1 0 0.5" quat="0.7 0 0.7 0">
      <joint name="fa" axis="0 1 0"/>
      <geom type="capsule" size="0.05 0.2"/>
      <body name="welded" pos="0 0 0.4">
        <geom type="sphere" size="0.1"/>
        <body name="tip" pos="0 0 0.2" euler="0 90 0">
          <joint name="ft" axis="1 0 0"/>
          <geom type="box" size="0.05 0.06 0.07"/>
        </body>
      </body>
    </body>
  </worldbody>
  <actuator>
    <motor name="m1" joint="j1" gear="3"/>
    <motor name="m2" joint="fa" ctrllimited="false"/>
  </actuator>
  <keyframe>
    <key name="k" qpos="0 0 1 1 0 0 0  0.1 0.05 0.2  1 0 0 0  0.3 -0.2 0.01  0.5 -0.4" ctrl="1 -1"/>
  </keyframe>
</mujoco>
)";

TEST(MujocoOracle, FeatureModel) {
  sap_test::TempDir dir("oracle");
  dir.write("parts/extra_defaults.xml",
            R"(<mujoco><default><default class="heavy"><geom density="3000"/></default></default></mujoco>)");
  compare_with_mujoco(dir.write("features.xml", kFeatureModel), 5, 2);
}

// Radians, default eulerseq, inertiafromgeom="true" overriding an inertial, a geom orientation
// given by xyaxes, a capsule along its own z (size[1] half-length).
const char* kRadianModel = R"(
<mujoco model="radian">
  <compiler angle="radian" inertiafromgeom="true"/>
  <worldbody>
    <body name="r" pos="0 0 1" euler="0.1 0.2 0.3">
      <inertial pos="0 0 0" mass="123" diaginertia="1 1 1"/>
      <joint name="rx" axis="1 0 0" ref="0.4" limited="true" range="-1 1"/>
      <geom type="capsule" size="0.05 0.15" xyaxes="0 0 1 0 1 0"/>
      <geom type="box" size="0.05 0.1 0.15" pos="0.1 0 0" euler="0.3 0.2 0.1"/>
      <body name="s" pos="0 0.3 0">
        <joint name="sl" type="slide" axis="0 1 0" ref="0.05"/>
        <joint name="hz" axis="0 0 1"/>
        <geom type="cylinder" fromto="-0.1 0 0 0.1 0.05 0.02" size="0.02" mass="0.3"/>
      </body>
    </body>
  </worldbody>
</mujoco>
)";

// Fixed tendons (limited, spring with a given and a computed rest length, damper), a motor
// and a position servo through a tendon, and joint / connect / weld equalities (weld with and
// without relpose).
const char* kTendonModel = R"(
<mujoco model="tendons">
  <default>
    <equality solref="0.01 0.9"/>
    <tendon stiffness="2"/>
  </default>
  <worldbody>
    <body name="a" pos="0 0 1">
      <joint name="ja" axis="1 0 0" springref="0.2"/>
      <geom type="capsule" fromto="0 0 0 0 0.3 0" size="0.03"/>
      <body name="b" pos="0 0.3 0" euler="0 20 0">
        <joint name="jb" axis="0 1 0" ref="0.1"/>
        <joint name="sb" type="slide" axis="1 0 0"/>
        <geom type="box" size="0.05 0.1 0.02" pos="0 0.1 0"/>
      </body>
    </body>
    <body name="c" pos="0.5 0 1" euler="10 0 30">
      <joint name="jc" axis="0 0 1"/>
      <geom type="sphere" size="0.05" pos="0 0.2 0"/>
      <body name="d" pos="0 0.2 0.1">
        <joint name="jd" axis="1 0 0"/>
        <geom type="sphere" size="0.04" pos="0.1 0 0"/>
      </body>
    </body>
  </worldbody>
  <tendon>
    <fixed name="t1" limited="true" range="-0.5 0.7" damping="0.3">
      <joint joint="ja" coef="0.5"/>
      <joint joint="jb" coef="-1.5"/>
    </fixed>
    <fixed name="t2" springlength="0.1">
      <joint joint="sb" coef="2"/>
      <joint joint="jc" coef="1"/>
      <joint joint="jd" coef="-0.3"/>
    </fixed>
  </tendon>
  <equality>
    <joint joint1="jc" joint2="jd" polycoef="0.1 -2 0.3 0 0" solref="0.005 1"/>
    <connect body1="b" body2="d" anchor="0.02 0.2 0.01"/>
    <weld body1="a" body2="c" anchor="0.1 0 0.05" active="false"/>
    <weld body1="d" relpose="0.1 0.2 0.3 0.9 0.1 0.2 0.1"/>
  </equality>
  <actuator>
    <motor name="mt" tendon="t2" gear="2"/>
    <motor name="mj" joint="ja"/>
    <general name="pt" tendon="t1" gainprm="30" biastype="affine" biasprm="0 -30 -2"/>
  </actuator>
</mujoco>
)";

TEST(MujocoOracle, TendonsAndEqualities) {
  sap_test::TempDir dir("oracle");
  compare_with_mujoco(dir.write("tendons.xml", kTendonModel), 5, 4);
}

TEST(MujocoOracle, RadianInertiaFromGeom) {
  sap_test::TempDir dir("oracle");
  compare_with_mujoco(dir.write("radian.xml", kRadianModel), 5, 3);
}

}  // namespace

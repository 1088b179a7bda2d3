#include "sap/dynamics.hpp"

#include "kernels/dynamics.hpp"
#include "kernels/kinematics.hpp"
#include "sap/data.hpp"

namespace sap {

struct DynamicsEvaluator::Impl {
  Model model;
  ModelView m;
  Data data;
  std::vector<double> qpos, qvel, M;
  Impl(const Model& mod) : model(mod), data(mod, 1, Backend::CPU) { m = model.view(); }
};

DynamicsEvaluator::DynamicsEvaluator(const Model& m) : impl_(new Impl(m)) {}
DynamicsEvaluator::~DynamicsEvaluator() { delete impl_; }
DynamicsEvaluator::DynamicsEvaluator(DynamicsEvaluator&& o) noexcept : impl_(o.impl_) { o.impl_ = nullptr; }

void DynamicsEvaluator::compute(const double* qpos, const double* qvel) {
  Impl& s = *impl_;
  const ModelView& m = s.m;
  s.qpos.assign(qpos, qpos + m.nq);
  if (qvel) s.qvel.assign(qvel, qvel + m.nv);
  else s.qvel.assign(static_cast<std::size_t>(m.nv), 0.0);
  DataView d = s.data.view();
  forward_kinematics<double>(m, s.qpos.data(), d.xpos(0), d.xquat(0), d.xmat(0), d.xipos(0), d.xanchor(0), d.xaxis(0));
  com_quantities<double>(m, d.xpos(0), d.xmat(0), d.xipos(0), d.xanchor(0), d.xaxis(0), d.cinert(0), d.cdof(0));
  composite_inertias<double>(m, d.cinert(0), d.crb(0));
  for (int i = 0; i < m.nv; ++i) mass_matrix_row<double>(m, d.cdof(0), d.crb(0), i, d.M(0));
  for (int i = 0; i < m.nv_pad; ++i) mass_matrix_symmetrize_row<double>(m, i, d.M(0));
  body_velocities<double>(m, s.qvel.data(), d.cdof(0), d.cvel(0), d.cdof_dot(0));
  bias_forces<double>(m, s.qvel.data(), d.cdof(0), d.cdof_dot(0), d.cinert(0), d.cvel(0), d.cacc(0), d.cfrc(0),
                      d.qfrc_bias(0));
  SerialTeam one_lane;
  tendon_kinematics<double>(one_lane, m, d.xpos(0), d.xmat(0), d.cdof(0), d.ten_length(0), d.ten_moment(0));
  spring_forces<double>(m, s.qpos.data(), d.qfrc_spring(0));
  extra_spring_forces<double>(m, s.qpos.data(), d.ten_length(0), d.ten_moment(0), d.qfrc_spring(0));
}

Eigen::Vector3d DynamicsEvaluator::body_pos(int b) const {
  return Eigen::Map<const Eigen::Vector3d>(impl_->data.view().xpos(0) + 3 * b);
}
Eigen::Quaterniond DynamicsEvaluator::body_quat(int b) const {
  const double* q = impl_->data.view().xquat(0) + 4 * b;
  return Eigen::Quaterniond(q[0], q[1], q[2], q[3]);
}
Eigen::Matrix3d DynamicsEvaluator::body_rot(int b) const {
  return Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(impl_->data.view().xmat(0) + 9 * b);
}
Eigen::Vector3d DynamicsEvaluator::body_com(int b) const {
  return Eigen::Map<const Eigen::Vector3d>(impl_->data.view().xipos(0) + 3 * b);
}
Eigen::MatrixXd DynamicsEvaluator::mass_matrix() const {
  const int nv = impl_->m.nv, ld = impl_->m.nv_pad;
  Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>> M(impl_->data.view().M(0),
                                                                                             ld, ld);
  return M.topLeftCorner(nv, nv);
}
Eigen::VectorXd DynamicsEvaluator::bias() const {
  return Eigen::Map<const Eigen::VectorXd>(impl_->data.view().qfrc_bias(0), impl_->m.nv);
}
Eigen::VectorXd DynamicsEvaluator::spring() const {
  return Eigen::Map<const Eigen::VectorXd>(impl_->data.view().qfrc_spring(0), impl_->m.nv);
}
Eigen::VectorXd DynamicsEvaluator::inverse_dynamics(const Eigen::VectorXd& qacc) const {
  Impl& s = *impl_;
  DataView d = s.data.view();
  std::vector<double> cacc(6 * static_cast<std::size_t>(s.m.nbody)), cfrc(6 * static_cast<std::size_t>(s.m.nbody));
  Eigen::VectorXd tau(s.m.nv);
  bias_forces<double>(s.m, s.qvel.data(), d.cdof(0), d.cdof_dot(0), d.cinert(0), d.cvel(0), cacc.data(), cfrc.data(),
                      tau.data(), qacc.data());
  return tau;
}

double DynamicsEvaluator::kinetic_energy() const {
  Eigen::MatrixXd M = mass_matrix();
  for (int i = 0; i < impl_->m.nv; ++i) M(i, i) -= impl_->model.dof_armature[static_cast<std::size_t>(i)];
  const Eigen::Map<const Eigen::VectorXd> v(impl_->qvel.data(), impl_->m.nv);
  return 0.5 * v.dot(M * v);
}
double DynamicsEvaluator::potential_energy() const {
  const Model& md = impl_->model;
  double e = 0;
  for (int b = 1; b < md.nbody; ++b)
    for (int k = 0; k < 3; ++k)
      e -= md.body_mass[static_cast<std::size_t>(b)] * md.gravity[static_cast<std::size_t>(k)] * body_com(b)[k];
  for (int j = 0; j < md.njnt; ++j) {
    const int t = md.jnt_type[static_cast<std::size_t>(j)];
    if (t != kJointHinge && t != kJointSlide) continue;
    const double dq = impl_->qpos[static_cast<std::size_t>(md.jnt_qposadr[static_cast<std::size_t>(j)])] -
                      md.jnt_springref[static_cast<std::size_t>(j)];
    e += 0.5 * md.jnt_stiffness[static_cast<std::size_t>(j)] * dq * dq;
  }
  return e;
}
Eigen::Matrix<double, 6, 1> DynamicsEvaluator::momentum() const {
  const ModelView& m = impl_->m;
  DataView d = impl_->data.view();
  Eigen::Matrix<double, 6, 1> h = Eigen::Matrix<double, 6, 1>::Zero();
  for (int b = 1; b < m.nbody; ++b) {
    const Vec6<double> p = SpatialInertia<double>::load(d.cinert(0) + 10 * b) * Vec6<double>::load(d.cvel(0) + 6 * b);
    const Vec3<double> P = tree_reference<double>(m, d.xpos(0), b);
    const Vec3<double> ang = p.ang + cross(P, p.lin);  // moment about the world origin
    for (int k = 0; k < 3; ++k) {
      h[k] += ang[k];
      h[3 + k] += p.lin[k];
    }
  }
  return h;
}
Eigen::Matrix<double, 6, 1> DynamicsEvaluator::body_velocity(int b) const {
  const ModelView& m = impl_->m;
  DataView d = impl_->data.view();
  const Vec6<double> v = Vec6<double>::load(d.cvel(0) + 6 * b);
  const Vec3<double> r = Vec3<double>::load(d.xpos(0) + 3 * b) - tree_reference<double>(m, d.xpos(0), b);
  const Vec3<double> lin = point_velocity(v, r);
  Eigen::Matrix<double, 6, 1> out;
  out << v.ang[0], v.ang[1], v.ang[2], lin[0], lin[1], lin[2];
  return out;
}

}  // namespace sap

// Host evaluation (fp64, CPU) of the kinematics and dynamics terms of one configuration,
// using the same physics bodies as the solver stages. For importers, tests and tools.
#pragma once

#include <Eigen/Dense>
#include <vector>

#include "sap/model.hpp"

namespace sap {

class DynamicsEvaluator {
 public:
  explicit DynamicsEvaluator(const Model& m);
  ~DynamicsEvaluator();
  DynamicsEvaluator(DynamicsEvaluator&&) noexcept;

  // Evaluates everything below at (qpos, qvel); qvel may be null (zero velocity).
  void compute(const double* qpos, const double* qvel = nullptr);
  void compute(const Eigen::VectorXd& qpos, const Eigen::VectorXd& qvel) { compute(qpos.data(), qvel.data()); }

  Eigen::Vector3d body_pos(int b) const;      // world position of the body frame
  Eigen::Quaterniond body_quat(int b) const;  // world orientation of the body frame
  Eigen::Matrix3d body_rot(int b) const;
  Eigen::Vector3d body_com(int b) const;  // world position of the center of mass
  Eigen::MatrixXd mass_matrix() const;    // nv x nv, armature included
  Eigen::VectorXd bias() const;           // C(q, v) v + g(q) (MuJoCo qfrc_bias)
  Eigen::VectorXd spring() const;         // -stiffness (q - springref)
  // RNEA with joint accelerations: M(q) qacc + bias (armature excluded), at the computed state.
  Eigen::VectorXd inverse_dynamics(const Eigen::VectorXd& qacc) const;
  double kinetic_energy() const;    // 1/2 v^T (M - armature) v
  double potential_energy() const;  // gravity + springs
  // Total momentum of all bodies: angular about the world origin, then linear (world frame).
  Eigen::Matrix<double, 6, 1> momentum() const;
  // World velocity [angular; linear at the body origin] of body b.
  Eigen::Matrix<double, 6, 1> body_velocity(int b) const;

 private:
  struct Impl;
  Impl* impl_;
};

}  // namespace sap

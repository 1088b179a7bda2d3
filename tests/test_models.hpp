// Random articulated models and configurations for property tests.
#pragma once

#include <Eigen/Dense>
#include <random>
#include <vector>

#include "sap/model_builder.hpp"

namespace sap::testing {

inline Quatd random_quat(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  Eigen::Vector4d q(n(rng), n(rng), n(rng), n(rng));
  q.normalize();
  return {q[0], q[1], q[2], q[3]};
}

inline Vec3d random_unit(std::mt19937& rng) {
  std::normal_distribution<double> n(0, 1);
  Eigen::Vector3d a(n(rng), n(rng), n(rng));
  a.normalize();
  return {a[0], a[1], a[2]};
}

// Random SPD inertia tensor (about the com) satisfying the triangle inequality: R diag(d) R^T.
inline std::array<double, 6> random_inertia(std::mt19937& rng, double scale) {
  std::uniform_real_distribution<double> u(0.3, 1.0);
  const double a = u(rng), b = u(rng);
  const Eigen::Vector3d d(scale * (a + b) * 0.5, scale * (b + 0.6) * 0.5, scale * (a + 0.6) * 0.5);
  const Quatd q = random_quat(rng);
  const Eigen::Matrix3d R = Eigen::Quaterniond(q[0], q[1], q[2], q[3]).toRotationMatrix();
  const Eigen::Matrix3d I = R * d.asDiagonal() * R.transpose();
  return {I(0, 0), I(1, 1), I(2, 2), I(0, 1), I(0, 2), I(1, 2)};
}

struct RandomTreeOptions {
  int nbody = 6;
  bool free_root = true;  // first body attached by a free joint
  bool allow_ball = true;
  bool allow_multi_joint = true;  // bodies with two hinge/slide joints
  bool springs = false;
  double armature = 0.05;
  double damping = 0.0;
};

// A random kinematic tree: every body has a random parent among earlier bodies, random offset
// and orientation, mass, off-center com and full inertia; joints hinge/slide/ball at random
// anchors and axes.
inline Model random_tree(std::mt19937& rng, const RandomTreeOptions& o = {}) {
  std::uniform_real_distribution<double> u(-1, 1), pos(0.5, 2.0);
  ModelBuilder b;
  b.set_gravity({0.3, -0.2, -9.81});
  for (int i = 1; i <= o.nbody; ++i) {
    BodySpec bs;
    bs.name = "b" + std::to_string(i);
    bs.parent = (i == 1) ? 0 : 1 + static_cast<int>(rng() % static_cast<unsigned>(i - 1));
    bs.pos = {0.4 * u(rng), 0.4 * u(rng), 0.4 * u(rng)};
    bs.quat = random_quat(rng);
    bs.mass = pos(rng);
    bs.com = {0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)};
    bs.inertia = random_inertia(rng, 0.1 * pos(rng));
    const int id = b.add_body(bs);
    if (i == 1 && o.free_root) {
      JointSpec j;
      j.name = "root";
      j.type = kJointFree;
      j.armature = 0;
      b.add_joint(id, j);
      continue;
    }
    const int choice = static_cast<int>(rng() % 6);
    auto add_1dof = [&](int type, const std::string& name) {
      JointSpec j;
      j.name = name;
      j.type = type;
      j.pos = {0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)};
      j.axis = random_unit(rng);
      j.qpos0 = 0.3 * u(rng);
      j.armature = o.armature * pos(rng);
      j.damping = o.damping;
      if (o.springs) {
        j.stiffness = 2.0 * pos(rng);
        j.springref = 0.5 * u(rng);
      }
      b.add_joint(id, j);
    };
    if (choice == 0 && o.allow_ball) {
      JointSpec j;
      j.name = "ball" + std::to_string(i);
      j.type = kJointBall;
      j.pos = {0.2 * u(rng), 0.2 * u(rng), 0.2 * u(rng)};
      j.armature = o.armature;
      j.damping = o.damping;
      b.add_joint(id, j);
    } else if (choice == 1) {
      add_1dof(kJointSlide, "slide" + std::to_string(i));
    } else if (choice == 2 && o.allow_multi_joint) {
      add_1dof(kJointHinge, "h" + std::to_string(i) + "a");
      add_1dof(kJointSlide, "s" + std::to_string(i) + "b");
    } else {
      add_1dof(kJointHinge, "hinge" + std::to_string(i));
    }
  }
  return b.finalize();
}

inline Eigen::VectorXd random_qpos(const Model& m, std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  Eigen::VectorXd q(m.nq);
  for (int j = 0; j < m.njnt; ++j) {
    const int a = m.jnt_qposadr[static_cast<std::size_t>(j)];
    switch (m.jnt_type[static_cast<std::size_t>(j)]) {
      case kJointFree: {
        q.segment<3>(a) = Eigen::Vector3d(u(rng), u(rng), u(rng));
        const Quatd r = random_quat(rng);
        for (int k = 0; k < 4; ++k) q[a + 3 + k] = r[static_cast<std::size_t>(k)];
        break;
      }
      case kJointBall: {
        const Quatd r = random_quat(rng);
        for (int k = 0; k < 4; ++k) q[a + k] = r[static_cast<std::size_t>(k)];
        break;
      }
      default: q[a] = u(rng);
    }
  }
  return q;
}

inline Eigen::VectorXd random_qvel(const Model& m, std::mt19937& rng, double scale = 1.0) {
  std::uniform_real_distribution<double> u(-scale, scale);
  Eigen::VectorXd v(m.nv);
  for (int i = 0; i < m.nv; ++i) v[i] = u(rng);
  return v;
}

}  // namespace sap::testing

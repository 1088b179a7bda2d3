// MuJoCo's compile-time check of moving bodies (docs/model-import.md, "Load-time validation"),
// as its compiler applies it (MuJoCo 4.0.0; tests/data/mujoco/validation_errors.json): every
// rigid group that moves (a body with a joint, with the bodies welded to it, i.e. its
// descendants reached without a joint) must have mass >= mjMINVAL and principal moments of
// inertia about its centre of mass >= mjMINVAL. A massless body with a joint is fine when a
// body welded to it carries the mass; a point mass on a hinge is not (zero inertia about its
// centre of mass), nor a free body with inertia diag(1, 1, 0). Host only.
#pragma once

#include <Eigen/Dense>
#include <array>
#include <string>
#include <vector>

namespace sap {

constexpr double kMujocoMinMassInertia = 1e-15;  // mjMINVAL

// One body at the reference configuration: world frame.
struct BodyMassInput {
  int parent = 0;         // 0 = world (the world itself is body 0 and is skipped)
  bool has_joint = false;  // a joint of its own (its group moves)
  double mass = 0;
  std::array<double, 3> com{0, 0, 0};                           // world
  std::array<double, 9> inertia{0, 0, 0, 0, 0, 0, 0, 0, 0};     // about com, world axes, row-major
};

struct MovingBodyIssue {
  int body = -1;  // root of the offending rigid group (-1: none)
  double mass = 0;
  std::array<double, 3> principal{0, 0, 0};  // ascending
};

// The first moving rigid group (by root body id) whose mass or smallest principal moment is
// below the minimum; body = -1 when every group passes. Bodies are ordered parents first.
inline MovingBodyIssue mujoco_check_moving_bodies(const std::vector<BodyMassInput>& b) {
  const int n = static_cast<int>(b.size());
  // Group root of each body: itself if it has a joint, else its parent's (the world's is 0).
  std::vector<int> root(n, 0);
  for (int i = 1; i < n; ++i) root[i] = b[i].has_joint ? i : root[b[i].parent];
  std::vector<double> mass(n, 0);
  std::vector<Eigen::Vector3d> first(n, Eigen::Vector3d::Zero());
  for (int i = 1; i < n; ++i) {
    mass[root[i]] += b[i].mass;
    first[root[i]] += b[i].mass * Eigen::Vector3d(b[i].com[0], b[i].com[1], b[i].com[2]);
  }
  for (int r = 1; r < n; ++r) {
    if (root[r] != r) continue;
    MovingBodyIssue issue;
    issue.body = r;
    issue.mass = mass[r];
    if (!(mass[r] >= kMujocoMinMassInertia)) return issue;
    const Eigen::Vector3d c = first[r] / mass[r];
    Eigen::Matrix3d I = Eigen::Matrix3d::Zero();
    for (int i = 1; i < n; ++i) {
      if (root[i] != r) continue;
      const Eigen::Matrix3d Ii = Eigen::Map<const Eigen::Matrix<double, 3, 3, Eigen::RowMajor>>(b[i].inertia.data());
      const Eigen::Vector3d d = Eigen::Vector3d(b[i].com[0], b[i].com[1], b[i].com[2]) - c;
      I += Ii + b[i].mass * (d.squaredNorm() * Eigen::Matrix3d::Identity() - d * d.transpose());
    }
    const Eigen::Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(0.5 * (I + I.transpose())).eigenvalues();
    issue.principal = {ev[0], ev[1], ev[2]};
    if (!(ev[0] >= kMujocoMinMassInertia)) return issue;
  }
  return {};
}

}  // namespace sap

// Helpers shared by the importer tests: temporary files, random states, tolerant comparisons.
#pragma once

#include <Eigen/Dense>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "sap/model.hpp"

namespace sap_test {

// A fresh directory under the system temp dir, removed when the object goes away.
class TempDir {
 public:
  explicit TempDir(const std::string& tag) {
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("sap_" + tag + "_" + std::to_string(rd()));
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  // Writes `text` to <dir>/<name> (subdirectories created) and returns the full path.
  std::string write(const std::string& name, const std::string& text) const {
    const std::filesystem::path p = path_ / name;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p) << text;
    return p.string();
  }
  std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

// A random configuration (unit quaternions for free and ball joints) and velocity of m.
inline void random_state(const sap::Model& m, std::mt19937& rng, Eigen::VectorXd& q, Eigen::VectorXd& v) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::normal_distribution<double> n(0.0, 1.0);
  q.resize(m.nq);
  v.resize(m.nv);
  for (int j = 0; j < m.njnt; ++j) {
    const int a = m.jnt_qposadr[static_cast<std::size_t>(j)];
    const int t = m.jnt_type[static_cast<std::size_t>(j)];
    int qa = a;
    if (t == sap::kJointFree) {
      for (int k = 0; k < 3; ++k) q[a + k] = u(rng);
      qa = a + 3;
    }
    if (t == sap::kJointFree || t == sap::kJointBall) {
      Eigen::Vector4d w(n(rng), n(rng), n(rng), n(rng));
      w.normalize();
      for (int k = 0; k < 4; ++k) q[qa + k] = w[k];
    } else {
      q[a] = u(rng);
    }
  }
  for (int i = 0; i < m.nv; ++i) v[i] = n(rng);
}

// max |a - b| <= tol * max(max |b|, floor)
template <class A, class B>
::testing::AssertionResult near_rel(const A& a, const B& b, double tol, double floor = 1e-300) {
  const double diff = (a - b).cwiseAbs().maxCoeff();
  const double scale = std::max(b.cwiseAbs().maxCoeff(), floor);
  if (diff <= tol * scale) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "max abs difference " << diff << " exceeds " << tol << " x " << scale;
}

// Rotation matrices of two quaternions agree (the sign of a quaternion is arbitrary).
inline double quat_distance(const Eigen::Quaterniond& a, const Eigen::Quaterniond& b) {
  return (a.normalized().toRotationMatrix() - b.normalized().toRotationMatrix()).cwiseAbs().maxCoeff();
}

}  // namespace sap_test

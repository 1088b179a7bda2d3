// Host-side rotation conventions of the model files (see rotation.hpp). The formulas and their
// order of operations are those the importers have always used, so that imported models are
// unchanged to the bit (MJCF models are compared with MuJoCo's compiled models).
#include "import/rotation.hpp"

#include <cmath>
#include <stdexcept>

namespace sap {

Quat<double> normalized_or_throw(const Quat<double>& q) {
  const double n = norm(q);
  if (!(n > 1e-15)) throw std::invalid_argument("zero quaternion");
  return q / n;
}

Quat<double> from_axis_angle_normalizing(const Vec3<double>& axis, double angle) {
  const double n = norm(axis);
  if (!(n > 1e-15)) throw std::invalid_argument("zero rotation axis");
  const double s = std::sin(0.5 * angle) / n;
  return {std::cos(0.5 * angle), axis[0] * s, axis[1] * s, axis[2] * s};
}

Quat<double> from_z_to(const Vec3<double>& vec) {
  // axis = z x vec = (-vec_y, vec_x, 0), |axis| = sin of the angle between z and vec.
  Vec3<double> axis{{-vec[1], vec[0], 0.0}};
  const double s = norm(axis);
  if (s < 1e-10) {
    axis = Vec3<double>::unit(0);  // vec along +-z: any axis in the xy plane; x as MuJoCo
  } else {
    axis = {{axis[0] / s, axis[1] / s, 0.0}};
  }
  const double ang = std::atan2(s, vec[2]);
  const double c = std::cos(0.5 * ang), sn = std::sin(0.5 * ang);
  return {c, axis[0] * sn, axis[1] * sn, axis[2] * sn};
}

Quat<double> from_xyaxes(const Vec3<double>& xin, const Vec3<double>& yin) {
  const double nx = norm(xin);
  if (!(nx > 1e-15)) throw std::invalid_argument("zero x axis");
  const Vec3<double> x = xin / nx;
  Vec3<double> y = yin - dot(x, yin) * x;  // Gram-Schmidt: remove the x component of y
  const double ny = norm(y);
  if (!(ny > 1e-15)) throw std::invalid_argument("y axis is zero or parallel to the x axis");
  y = y / ny;
  // R = [x y z] by columns; Shepperd's method, then q / |q| (divided, as always on the host).
  return normalized_or_throw(from_matrix_unnormalized(Mat3<double>::from_columns(x, y, cross(x, y))));
}

Quat<double> from_euler(const Vec3<double>& angles, const std::string& seq) {
  Quat<double> q = Quat<double>::identity();
  for (int i = 0; i < 3; ++i) {
    const char c = seq[static_cast<std::size_t>(i)];
    const double h = 0.5 * angles[i];
    // Elementary rotation about one axis: (cos(a/2), sin(a/2) e_k).
    Quat<double> r{std::cos(h), 0, 0, 0};
    const double s = std::sin(h);
    if (c == 'x' || c == 'X') r.x = s;
    else if (c == 'y' || c == 'Y') r.y = s;
    else r.z = s;
    // Moving axes compose on the right (q r), fixed axes on the left (r q).
    q = (c == 'x' || c == 'y' || c == 'z') ? q * r : r * q;
  }
  return q;
}

Quat<double> from_rpy(const Vec3<double>& rpy) { return from_euler(rpy, "XYZ"); }

Mat3<double> rotation_matrix(const Quat<double>& qin) {
  const Quat<double> q = normalized_or_throw(qin);
  const double w = q.w, x = q.x, y = q.y, z = q.z;
  return {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y), 2 * (x * y + w * z),
           1 - 2 * (x * x + z * z), 2 * (y * z - w * x), 2 * (x * z - w * y), 2 * (y * z + w * x),
           1 - 2 * (x * x + y * y)}};
}

double angular_distance(const Quat<double>& a, const Quat<double>& b) {
  const Quat<double> d = a * conjugate(b);
  return 2 * std::atan2(norm(d.vec()), std::abs(d.w));
}

}  // namespace sap

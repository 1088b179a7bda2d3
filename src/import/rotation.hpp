// Host-side rotation vocabulary: the conventions of the model files (MJCF orientations, URDF
// rpy, the JSON scene's rotations) written on the same sap::Quat<double> / sap::Vec3<double> as
// the kernels (include/sap/math), plus the rigid transform the loaders compose frames with.
//
// Conventions: quaternions are (w, x, y, z) and q rotates child-frame vectors into the parent
// frame, v_parent = q v_child q*. ModelBuilder stores poses as std::array (Vec3d, Quatd), so
// to_array / quat / vec3 convert at that boundary.
//
// Host normalisation divides each component by |q| (q / |q|), as the importers and the scene
// loader always did; normalized() in quat.hpp multiplies by 1/|q| (cheaper on the device). The
// two can differ in the last bit, and the loaders' results are kept to the bit.
#pragma once

#include <string>

#include "sap/math/quat.hpp"
#include "sap/model_builder.hpp"

namespace sap {

inline Vec3<double> vec3(const Vec3d& a) { return Vec3<double>::load(a.data()); }
inline Quat<double> quat(const Quatd& a) { return Quat<double>::load(a.data()); }
inline Vec3d to_array(const Vec3<double>& v) { return {v[0], v[1], v[2]}; }
inline Quatd to_array(const Quat<double>& q) { return {q.w, q.x, q.y, q.z}; }

// q / |q|; throws std::invalid_argument("zero quaternion") when |q| <= 1e-15.
Quat<double> normalized_or_throw(const Quat<double>& q);

// Rotation by `angle` about `axis` of any non-zero length (MJCF axisangle):
// (cos(angle/2), sin(angle/2) axis / |axis|). Throws std::invalid_argument for a zero axis.
Quat<double> from_axis_angle_normalizing(const Vec3<double>& axis, double angle);

// Minimal rotation taking +z onto `vec` (MuJoCo's convention for fromto and zaxis): about the
// axis z x vec by the angle atan2(|z x vec|, vec_z); a half turn about x when vec points along
// -z (and the identity along +z).
Quat<double> from_z_to(const Vec3<double>& vec);

// The frame whose x axis is `x` and whose y axis is `y` made orthogonal to x by Gram-Schmidt,
// z = x cross y (MJCF xyaxes). Throws std::invalid_argument for a zero x or a y parallel to x.
Quat<double> from_xyaxes(const Vec3<double>& x, const Vec3<double>& y);

// Euler angles (radians) in a 3-letter sequence from {x, y, z, X, Y, Z} (MJCF eulerseq): lower
// case rotates about the moving (body) axes, composed on the right (q r); upper case about the
// fixed (parent) axes, composed on the left (r q).
Quat<double> from_euler(const Vec3<double>& angles, const std::string& seq);

// Fixed-axis roll about x, then pitch about y, then yaw about z: R = Rz(yaw) Ry(pitch) Rx(roll)
// (URDF rpy; from_euler with "XYZ").
Quat<double> from_rpy(const Vec3<double>& rpy);

// R(q / |q|) in the form 1 - 2 (y^2 + z^2), 2 (x y - w z), ... (the importers' form, kept so
// that imported inertias are unchanged to the bit; to_matrix() writes w^2 + x^2 - y^2 - z^2).
Mat3<double> rotation_matrix(const Quat<double>& q);

// Angle of the rotation a b* (radians, in [0, pi]): 2 atan2(|vec(a b*)|, |w(a b*)|).
double angular_distance(const Quat<double>& a, const Quat<double>& b);

// A rigid transform X = (pos, quat) taking child-frame points to the parent frame:
// x_parent = pos + quat x_child quat*. Composition X_ac = X_ab X_bc.
struct Transform {
  Vec3<double> pos = Vec3<double>::zero();
  Quat<double> quat = Quat<double>::identity();
};
inline Transform operator*(const Transform& a, const Transform& b) {
  return {a.pos + rotate(a.quat, b.pos), a.quat * b.quat};
}
// X^-1 = (-q* pos, q*).
inline Transform inverse(const Transform& a) {
  const Quat<double> qi = conjugate(a.quat);
  return {-rotate(qi, a.pos), qi};
}

}  // namespace sap

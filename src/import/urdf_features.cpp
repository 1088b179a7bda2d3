// The URDF importer's feature table (import_features.hpp): every element and attribute the
// importer knows, with what the import does and the URDF specification's meaning (MuJoCo's and
// pybullet's reading where they differ from it). urdf.cpp takes its known attributes from here;
// tests/test_import_features.cpp loads each `example`.
#include "import/import_features.hpp"

namespace sap::import {
namespace {

constexpr Support S = Support::kSupported, I = Support::kIgnored, W = Support::kWarned, R = Support::kRejected;

std::vector<AttributeFeature> origin_attributes(const char* what) {
  return {{"xyz", S, "", what, "0 0 0.1"},
          {"rpy", S, "fixed-axis roll, pitch, yaw: R = Rz Ry Rx", "orientation as roll, pitch, yaw", "0 0 1.57"}};
}

std::vector<ElementFeature> make_urdf_features() {
  std::vector<ElementFeature> t;
  t.push_back({"robot",
               "`<robot>`",
               S,
               "the root element",
               "the robot",
               {{"name", I, "", "name of the robot", "r"}},
               /*checked=*/false});
  t.push_back({"link",
               "`<link>`",
               S,
               "a body; links are created depth first from the single root link",
               "a rigid body",
               {{"name", S, "", "name", "l"}}});
  t.push_back({"link/inertial",
               "`<link><inertial>`",
               S,
               "\"URDF inertia repairs\": rounding noise projected onto the nearest PSD tensor, massless moving "
               "subtrees bounded; other non-PSD tensors and singular tensors of moving links are errors "
               "(ImportOptions::bound_inertia)",
               "mass properties",
               {}});
  t.push_back({"link/inertial/origin", "`<inertial><origin>`", S, "", "the inertial frame in the link frame",
               origin_attributes("centre of mass")});
  t.push_back({"link/inertial/mass",
               "`<inertial><mass>`",
               S,
               "required in an `<inertial>`",
               "mass",
               {{"value", S, "non-negative", "mass (kg)", "2"}}});
  t.push_back({"link/inertial/inertia",
               "`<inertial><inertia>`",
               S,
               "all six required; rotated into the link frame",
               "inertia about the com in the inertial frame",
               {{"ixx", S, "", "moment about x", "0.3"},
                {"ixy", S, "", "product of inertia", "0.01"},
                {"ixz", S, "", "product of inertia", "0.01"},
                {"iyy", S, "", "moment about y", "0.3"},
                {"iyz", S, "", "product of inertia", "0.01"},
                {"izz", S, "", "moment about z", "0.3"}}});
  t.push_back({"link/collision",
               "`<link><collision>`",
               S,
               "one geom; friction 1 and MuJoCo's default solref (0.02, 1) on the tree's mass (\"Contact parameters\")",
               "a collision shape",
               {{"name", S, "the geom's name", "name", "c"}}});
  t.push_back({"link/collision/origin", "`<collision><origin>`", S, "", "the shape's frame in the link frame",
               origin_attributes("position")});
  t.push_back({"geometry/box",
               "`<geometry><box>`",
               S,
               "full extents, halved",
               "a box",
               {{"size", S, "", "full extents", "0.2 0.2 0.2"}}});
  t.push_back({"geometry/sphere", "`<geometry><sphere>`", S, "", "a sphere", {{"radius", S, "", "radius", "0.2"}}});
  t.push_back({"geometry/cylinder",
               "`<geometry><cylinder>`",
               S,
               "along z; full length, halved",
               "a cylinder",
               {{"radius", S, "", "radius", "0.2"}, {"length", S, "", "full length", "0.4"}}});
  t.push_back({"geometry/capsule",
               "`<geometry><capsule>`",
               S,
               "length of the cylindrical part",
               "a capsule (not in the URDF specification; pybullet, MuJoCo)",
               {{"radius", S, "", "radius", "0.2"}, {"length", S, "", "length of the cylindrical part", "0.4"}}});
  t.push_back(
      {"geometry/mesh",
       "`<geometry><mesh>`",
       S,
       "its convex hull; a file that cannot be found or read is rejected (dropped under drop_unsupported)",
       "a mesh file",
       {{"filename", S, "file://, absolute, relative to the URDF, package:// (\"Mesh files\")", "mesh file", "m.obj"},
        {"scale", S, "", "scale per axis", "2 2 2"}}});
  t.push_back({"link/visual", "`<link><visual>`", W, "no effect on the dynamics", "a visual shape", {}});
  t.push_back({"joint",
               "`<joint>`",
               S,
               "a joint between a parent and a child link",
               "a joint",
               {{"name", S, "", "name", "j"},
                {"type", S,
                 "revolute, continuous (hinge), prismatic (slide), fixed, floating (free, only to the world), "
                 "spherical (ball); planar rejected (dropped under drop_unsupported: fixed)",
                 "joint type", "continuous"},
                {"dont_collapse", I, "fixed joints are kept as welds anyway",
                 "SDFormat/Gazebo: keep a fixed joint from being merged", "true"}}});
  t.push_back({"joint/origin", "`<joint><origin>`", S, "", "the child link frame in the parent link frame",
               origin_attributes("position")});
  t.push_back({"joint/parent", "`<joint><parent>`", S, "", "parent link", {{"link", S, "", "the link", "base"}}});
  t.push_back({"joint/child", "`<joint><child>`", S, "", "child link", {{"link", S, "", "the link", "l"}}});
  t.push_back({"joint/axis",
               "`<joint><axis>`",
               S,
               "read for one-dof joints (fixed joints write `0 0 0`)",
               "joint axis in the joint frame",
               {{"xyz", S, "normalised; default 1 0 0; zero is an error", "axis", "0 1 0"}}});
  t.push_back(
      {"joint/limit",
       "`<joint><limit>`",
       S,
       "required on revolute and prismatic joints; dropped on "
       "spherical joints with a warning",
       "joint limits",
       {{"lower", S, "lower > upper: unlimited with a warning (pybullet's and MuJoCo's reading)", "lower limit", "-1"},
        {"upper", S, "", "upper limit", "1"},
        {"effort", W, "URDF declares no actuators: none are created", "actuator effort limit", "10"},
        {"velocity", W, "", "velocity limit", "2"}}});
  t.push_back({"joint/dynamics",
               "`<joint><dynamics>`",
               S,
               "",
               "joint dynamics",
               {{"damping", S, "", "viscous damping", "0.5"},
                {"friction", S, "dry friction (dof frictionloss, docs/sap-math.md §13)", "static friction", "0.5"}}});
  t.push_back({"joint/mimic",
               "`<joint><mimic>`",
               S,
               "a joint equality (coupler) named `<joint>_mimic`; on a fixed joint warned",
               "this joint follows another",
               {{"joint", S, "a joint with one dof", "the followed joint", "j0"},
                {"multiplier", S, "", "q = multiplier q_joint + offset", "2"},
                {"offset", S, "", "offset", "0.1"}}});
  t.push_back({"joint/calibration", "`<joint><calibration>`", I, "", "reference positions of the encoders", {}});
  t.push_back({"joint/safety_controller", "`<joint><safety_controller>`", I, "", "soft limits of a controller", {}});
  t.push_back({"material", "`<material>`", I, "", "a visual material", {}});
  t.push_back({"gazebo", "`<gazebo>`", W, "", "Gazebo simulator extensions", {}});
  t.push_back({"transmission", "`<transmission>`", W, "", "actuators and their transmissions (ros_control)", {}});
  return t;
}

}  // namespace

const std::vector<ElementFeature>& urdf_features() {
  static const std::vector<ElementFeature> table = make_urdf_features();
  return table;
}

}  // namespace sap::import

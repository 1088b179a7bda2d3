// Incremental construction of a Model; the single entry point used by every importer
// (JSON scenes, MJCF, URDF) and by tests. finalize() computes all derived arrays, mass
// properties from geoms, candidate collision pairs, and validates the result.
#pragma once

#include <array>
#include <string>
#include <utility>
#include <vector>

#include "sap/model.hpp"

namespace sap {

using Vec3d = std::array<double, 3>;
using Quatd = std::array<double, 4>;  // (w, x, y, z)

struct BodySpec {
  std::string name;
  int parent = 0;      // index of an already added body (0 = world)
  Vec3d pos{0, 0, 0};  // body frame in the parent frame at the reference configuration
  Quatd quat{1, 0, 0, 0};
  // Inertial properties. When inertia_from_geoms is true they are computed at finalize from
  // the body's geoms (density or explicit geom mass), as MuJoCo's inertiafromgeom does.
  bool inertia_from_geoms = false;
  double mass = 0;
  Vec3d com{0, 0, 0};                               // in the body frame
  std::array<double, 6> inertia{0, 0, 0, 0, 0, 0};  // about the com, body axes: xx yy zz xy xz yz
  double gravcomp = 0;  // gravity compensation: the force -gravcomp mass g at the com (MuJoCo)
};

struct JointSpec {
  std::string name;
  int type = kJointHinge;
  Vec3d pos{0, 0, 0};   // anchor in the body frame
  Vec3d axis{0, 0, 1};  // unit axis in the body frame (hinge, slide)
  double qpos0 = 0;     // reference angle/offset (MuJoCo `ref`), also the default qpos
  bool limited = false;
  std::array<double, 2> range{0, 0};
  double armature = 0, damping = 0, stiffness = 0, springref = 0;
  double frictionloss = 0;  // dry friction (N m or N) on each dof of the joint: a SAP box row
  // MuJoCo's springdamper (timeconst, dampratio), both > 0: stiffness and damping replaced at
  // finalize by m/(tc dr)^2 and 2 m/tc, m = 1/(M(qpos0)^-1)_jj (kernels/passive_forces.hpp);
  // the flags keep MuJoCo's <flag spring/damper="disable"> (the term stays 0).
  std::array<double, 2> springdamper{0, 0};
  bool springdamper_spring = true, springdamper_damper = true;
};

struct GeomSpec {
  std::string name;
  int type = kGeomSphere;
  Vec3d pos{0, 0, 0};  // in the body frame
  Quatd quat{1, 0, 0, 0};
  Vec3d size{0, 0, 0};  // sphere r; capsule/cylinder r, half-length; box half-extents
  int contype = 1, conaffinity = 1;
  double margin = 0;
  double friction = 1.0;
  double stiffness = 1e5;     // N/m
  double dissipation = 0.01;  // s: relaxation time tau_d of the SAP contact model
  // s/m: Hunt-Crossley dissipation d of contact_approximation = similar/lagged (docs/solver.md).
  double hc_dissipation = kDefaultHuntCrossleyDissipation;
  double density = 1000;      // kg/m^3, used when the body takes inertia from its geoms
  double mass = -1;           // >= 0 overrides density
  int dataid = -1;            // kGeomMesh: id from add_mesh; kGeomHfield: id from add_hfield
  // MuJoCo's contact attributes, used by models with contact_rule kContactRuleMujoco (model.hpp).
  int condim = 3, priority = 0;
  double friction_spin = 0.005, friction_roll = 0.0001;  // m
  double solmix = 1;
  std::array<double, 2> solref{0, 0};  // the solref stiffness/dissipation came from; (0, 0): none
  double gap = 0;
  // Fluid forces (ModelBuilder::set_fluid): MuJoCo's fluidshape="ellipsoid" with fluidcoef
  // (blunt drag, slender drag, angular drag, Kutta lift, Magnus lift); the body of such a geom
  // uses the ellipsoid model instead of the inertia-box model.
  bool fluid_ellipsoid = false;
  std::array<double, 5> fluid_coef{0.5, 0.25, 1.5, 1.0, 1.0};
};

// A convex mesh as the collision code uses it: the hull's vertices (in the geom frame, scale
// applied) and its outward (counter-clockwise) triangles. The builder derives the vertex
// adjacency (mesh_edge) from the triangles; importers compute the hull from the asset first.
struct MeshSpec {
  std::string name;
  std::vector<std::array<double, 3>> vert;
  std::vector<std::array<int, 3>> face;
  // Mass of the mesh's solid per unit density, for bodies that take their inertia from their
  // geoms: volume (area for shells) and principal moments about the mesh origin in mesh axes
  // (compile_mesh in mesh_asset.hpp puts the origin at the centre of mass, axes principal).
  // 0: the mesh adds no mass.
  double volume = 0;
  std::array<double, 3> inertia{0, 0, 0};
};

// MJCF <hfield>: elevation data in [0, 1], row-major (nrow rows along y, ncol columns along x);
// size = x, y half-extents, top elevation, base depth (see the hfield_* arrays in model.hpp).
struct HfieldSpec {
  std::string name;
  int nrow = 0, ncol = 0;
  std::array<double, 4> size{0, 0, 0, 0};
  std::vector<double> data;
};

// A point fixed to a body (MJCF <site>): the path points of spatial tendons.
struct SiteSpec {
  std::string name;
  int body = 0;
  Vec3d pos{0, 0, 0};  // in the body frame
};

// One element of a spatial tendon's path (MJCF <spatial> children; kernels/spatial_tendon.hpp):
// a site, a wrapping sphere or cylinder geom (with its sidesite, -1 none) between two sites,
// or a pulley (divisor).
struct WrapSpec {
  int type = kWrapSite;  // kWrapSite, kWrapSphere, kWrapCylinder, kWrapPulley
  int obj = -1;          // site index (add_site) or geom index (add_geom)
  int sidesite = -1;
  double divisor = 1;
};

// Tendon: fixed, length L = sum coef_k q_k over 1-dof joints (MJCF <tendon><fixed>), or
// spatial, a path through sites (MJCF <tendon><spatial>; `path` not empty).
struct TendonSpec {
  std::string name;
  std::vector<std::pair<int, double>> joints;  // (joint index, coefficient)
  std::vector<WrapSpec> path;                  // spatial tendon
  bool lengthspring_at_springref = false;      // lengthspring: the length at qpos_spring (MuJoCo's -1)
  bool limited = false;
  std::array<double, 2> range{0, 0};
  double stiffness = 0, lengthspring = 0, damping = 0;
  // MuJoCo's springlength pair: a dead band [lengthspring, lengthspring_upper] where the spring
  // exerts no force (has_deadband; else the upper rest length is lengthspring).
  bool has_deadband = false;
  double lengthspring_upper = 0;
  double armature = 0;      // inertia a J_t^T J_t
  double frictionloss = 0;  // dry friction on the tendon's velocity: |impulse| <= h f
};

// Equality constraint (MJCF <equality>; JSON "equalities"). Indices are builder indices.
struct EqualitySpec {
  std::string name;
  int type = kEqJoint;
  int obj1 = -1, obj2 = -1;  // kEqJoint/kEqTendon: joints/tendons (obj2 -1: none); connect/weld: bodies (obj2 0: world)
  bool active = true;
  std::array<double, 2> solref{0, 0};             // (0, 0): rigid; else MuJoCo's solref
  std::array<double, 5> polycoef{0, 1, 0, 0, 0};  // kEqJoint, kEqTendon
  // connect: point P on body 1 (pos1); Q on body 2 (pos2) when has_pos2, else the point of body 2
  // that coincides with P in the reference configuration (qpos0).
  // weld: frame Q on body 2 (pos2, quat2); P on body 1 (pos1, quat1) when has_frame1, else the
  // frame of body 1 that coincides with Q in the reference configuration.
  Vec3d pos1{0, 0, 0}, pos2{0, 0, 0};
  Quatd quat1{1, 0, 0, 0}, quat2{1, 0, 0, 0};
  bool has_pos2 = false, has_frame1 = false;
};

struct ActuatorSpec {
  std::string name;
  int type = kActMotor;
  int joint = -1;   // 1-dof joint (hinge/slide) it acts on
  int tendon = -1;  // or the fixed tendon it acts on: force F along L, J_t^T F on the dofs
  double gear = 1, kp = 0, kd = 0;
  bool ctrllimited = false;
  std::array<double, 2> ctrlrange{0, 0};
  bool forcelimited = false;
  std::array<double, 2> forcerange{0, 0};
  // Activation dynamics (MuJoCo's dyntype; kernels/actuator_dynamics.hpp): the input of the
  // actuator's law (motor force, servo target) is the activation instead of ctrl.
  int dyntype = 0;  // kDynNone, kDynIntegrator, kDynFilter, kDynFilterExact
  std::array<double, 3> dynprm{1, 0, 0};
  bool actlimited = false, actearly = false;
  std::array<double, 2> actrange{0, 0};
  // kActMuscle: MuJoCo's muscle parameters (range, force, scale, lmin, lmax, vmax, fpmax, fvmax)
  // and the actuator length's range; acc0 (force < 0: force = scale / acc0) at finalize.
  std::array<double, 9> muscleprm{0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};
  std::array<double, 2> lengthrange{0, 0};
};

struct CollisionFilter {
  bool filter_parent = true;  // no contacts between a body and its parent (unless the parent is world)
  // Also filter when the parent is a static body welded to the world (Warp/Newton and Drake:
  // true). MuJoCo keeps those pairs (its weld groups): the MJCF importer sets false.
  bool filter_static_parent = true;
  std::vector<std::pair<int, int>> exclude_body_pairs;
  // Explicit geom pairs (MJCF <contact><pair>): always candidates, whatever contype/conaffinity,
  // exclusions and the parent filter say, and the automatic pair of the same two geoms is not
  // added again. friction/margin/gap < 0, condim -1, solref (0, 0): combined from the geoms as
  // for automatic pairs. friction_ext (t2, spin, roll1, roll2) is read with friction >= 0.
  struct ExplicitPair {
    int geom0 = -1, geom1 = -1;
    double friction = -1, margin = -1;
    int condim = -1;
    std::array<double, 4> friction_ext{-1, -1, -1, -1};
    double gap = -1;
    std::array<double, 2> solref{0, 0};
  };
  std::vector<ExplicitPair> explicit_pairs;
};

// Mass properties of a solid primitive of uniform density (principal axes = geom axes).
struct GeomMass {
  double mass = 0;
  Vec3d inertia_diag{0, 0, 0};  // about the geom center, geom axes
};
GeomMass geom_mass_properties(int type, const Vec3d& size, double density);
// Bounding-sphere radius of a geom about its center (0 for planes: unbounded).
double geom_bounding_radius(int type, const Vec3d& size);

class ModelBuilder {
 public:
  ModelBuilder();

  int add_body(const BodySpec& b);
  // Joints of a body are applied in the order they are added.
  int add_joint(int body, const JointSpec& j);
  int add_geom(int body, const GeomSpec& g);
  int add_actuator(const ActuatorSpec& a);
  int add_tendon(const TendonSpec& t);
  int add_site(const SiteSpec& s);
  int find_site(const std::string& name) const;  // -1 when absent
  int add_equality(const EqualitySpec& e);
  int add_mesh(const MeshSpec& m);      // returns the mesh id for GeomSpec::dataid
  int add_hfield(const HfieldSpec& h);  // returns the hfield id for GeomSpec::dataid
  const MeshSpec& mesh(int i) const { return meshes_.at(static_cast<std::size_t>(i)); }
  int nmesh() const { return static_cast<int>(meshes_.size()); }
  int find_tendon(const std::string& name) const;

  void set_gravity(const Vec3d& g) { gravity_ = g; }
  // The fluid the bodies move in (MuJoCo's <option density viscosity wind>): fluid forces when
  // density or viscosity is positive (kernels/fluid_forces.hpp).
  void set_fluid(double density, double viscosity, const Vec3d& wind) {
    fluid_density_ = density;
    fluid_viscosity_ = viscosity;
    fluid_wind_ = wind;
  }
  void set_timestep(double dt) { timestep_ = dt; }
  // How pairs combine their geoms' contact parameters (ContactRule, model.hpp); Drake's by default.
  void set_contact_rule(int rule) { contact_rule_ = rule; }
  int contact_rule() const { return contact_rule_; }
  CollisionFilter& collision_filter() { return filter_; }

  int nbody() const { return static_cast<int>(bodies_.size()); }
  int njoint() const { return static_cast<int>(joints_.size()); }
  int ngeom() const { return static_cast<int>(geoms_.size()); }
  const BodySpec& body(int i) const { return bodies_.at(static_cast<std::size_t>(i)); }
  BodySpec& body(int i) { return bodies_.at(static_cast<std::size_t>(i)); }
  const JointSpec& joint(int i) const { return joints_.at(static_cast<std::size_t>(i)).spec; }
  int joint_body(int i) const { return joints_.at(static_cast<std::size_t>(i)).body; }
  int find_body(const std::string& name) const;
  int find_joint(const std::string& name) const;
  int find_geom(const std::string& name) const;  // -1 when absent
  const GeomSpec& geom(int i) const { return geoms_.at(static_cast<std::size_t>(i)).spec; }
  int nactuator() const { return static_cast<int>(actuators_.size()); }
  ActuatorSpec& actuator(int i) { return actuators_.at(static_cast<std::size_t>(i)); }
  const TendonSpec& tendon(int i) const { return tendons_.at(static_cast<std::size_t>(i)); }

  // Builds and validates the model; throws std::runtime_error on inconsistent input.
  Model finalize() const;

 private:
  struct JointEntry {
    int body;
    JointSpec spec;
  };
  struct GeomEntry {
    int body;
    GeomSpec spec;
  };
  std::vector<BodySpec> bodies_;
  std::vector<JointEntry> joints_;
  std::vector<GeomEntry> geoms_;
  std::vector<ActuatorSpec> actuators_;
  std::vector<TendonSpec> tendons_;
  std::vector<SiteSpec> sites_;
  std::vector<EqualitySpec> equalities_;
  std::vector<MeshSpec> meshes_;
  std::vector<HfieldSpec> hfields_;
  Vec3d gravity_{0, 0, -9.81};
  double fluid_density_ = 0, fluid_viscosity_ = 0;
  void finalize_fluid(Model& m) const;
  void finalize_springdampers(Model& m, const std::vector<int>& joint_final) const;
  void finalize_tendon_lengths(Model& m) const;
  void finalize_acc0(Model& m) const;
  void finalize_stage1b_sizes(Model& m) const;
  Vec3d fluid_wind_{0, 0, 0};
  double timestep_ = 0.001;
  int contact_rule_ = kContactRuleDrake;
  CollisionFilter filter_;
  void finalize_meshes(Model& m) const;
};

}  // namespace sap

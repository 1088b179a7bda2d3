// Contact fidelity cases (issue 31; docs/solver.md, "Contact fidelity"): one rigid body on an
// incline, released at rest, against the analytic answer of rigid-body mechanics with Coulomb
// friction. Shared by tests/test_contact_fidelity.cpp (the cross-section CI runs) and
// bench/sap_fidelity.cpp (the full sweep and the acceptance matrix of docs/solver.md).
//
// The incline is the ground plane z = 0 with gravity tilted by the angle theta about y, so the
// slope descends toward +x (equivalent to tilting the plane; the body starts aligned with it).
// One Simulator runs a Group: a shape, a time step and a horizon for one solver configuration;
// its worlds differ by motion, mass, contact stiffness, angle and friction, which are
// per-world parameters (MassScale, ContactScale, Gravity), so a sweep costs one simulator per
// (shape, dt, preset, approximation) and not one per point.
//
// Motions and what they are checked against (a = acceleration along the slope, g = 9.81):
//   slide  mu < tan(theta): a = g (sin - mu cos). Figure: distance slid over the window [t0, T]
//          against v(t0) (T - t0) + a (T - t0)^2 / 2 (v(t0) measured, as the mean velocity over
//          t0 +- 0.05 s, so the release transient is not counted), and the largest rotation of
//          the body from its start orientation beyond the lean of its compliant contacts.
//   stick  mu > tan(theta): the body holds (its contacts carry the load within mu n in all but
//          1 % of the steps) and creeps, over the second half of the run, at no more than 1.25
//          times the creep its regularised stiction predicts (stiction_creep_prediction, from
//          the solve's own parameters), with its rotation within 1 degree of the compliant lean.
//   roll   a round body across the slope with mu above the rolling threshold:
//          a = g sin / (1 + I / (m r^2)) (sphere 5/7 g sin, cylinder 2/3 g sin); figure as slide,
//          on a rolling radius between r - delta and r, plus the slip |v - w r| / v <= 2 % and
//          the deviation of the rolling axis.
//   tip    a tall box (half-extents b along the slope, c up) with mu > tan(theta): it tips over
//          its downhill edge when theta + psi > atan(b / c), psi = m g cos / (4 k_pair b) the lean
//          of the compliant contact when the uphill corners unload (first order in psi). The
//          plane tilts from 6 degrees below that angle to 1.5 degrees above it, where the box
//          must tip (rotation > 45 degrees), or to 1.5 degrees below (hold: as for stick).
// Worlds outside the rigid-body domain (rigid_domain) are run and reported, not judged.
// A world fails the case when its step fails (failed_worlds) or its state goes non-finite.
#pragma once

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "sap/model_builder.hpp"
#include "sap/scene.hpp"
#include "sap/simulator.hpp"
#include "sap/solver_options.hpp"
#include "model/solve_data.hpp"

namespace sap::fidelity {

constexpr double kGravity = 9.81;
constexpr double kDeg = kPi / 180;
constexpr double kBaseStiffness = 1e5;  // per geom in the model; worlds scale it (ContactScale)
constexpr double kDensity = 1000;       // base density; worlds scale the mass (MassScale)
// Bounds of the acceptance matrix (docs/solver.md, "Contact fidelity").
constexpr double kDistanceTolerance = 0.02;  // slide and roll: relative distance error
constexpr double kRotationBoundDeg = 1.0;    // a body that cannot tip, and the rolling axis
constexpr double kCreepTolerance = 0.25;     // stick: measured creep <= (1 + tol) predicted + floor
constexpr double kCreepFloor = 1e-7;         // m/s, below which creep is not resolved by the figure
constexpr double kUnheldFraction = 0.01;     // stick: steps without a holding contact set allowed
constexpr double kTipMarginDeg = 1.5;        // tip: worlds this far above / below the analytic angle
constexpr double kTippedDeg = 45;            // tip: a tipped box has turned this far
constexpr double kTipRampDeg = 6;            // tip, hold: the plane tilts from this far below the angle
constexpr double kTipRampTime = 0.6;         // s, at about 10-12 degrees per second (quasi-static)

enum class Shape : int { Cube, FlatBox, TallBox, CapsuleAlong, CapsuleAcross, CylinderUpright, CylinderAcross, Sphere, MeshCube };
enum class Motion : int { Slide, Stick, Roll, Tip, Hold };

inline const char* shape_name(Shape s) {
  switch (s) {
    case Shape::Cube: return "cube";
    case Shape::FlatBox: return "flat_box";
    case Shape::TallBox: return "tall_box";
    case Shape::CapsuleAlong: return "capsule_along";
    case Shape::CapsuleAcross: return "capsule_across";
    case Shape::CylinderUpright: return "cylinder_upright";
    case Shape::CylinderAcross: return "cylinder_across";
    case Shape::Sphere: return "sphere";
    case Shape::MeshCube: return "mesh_cube";
  }
  return "?";
}
inline const char* motion_name(Motion m) {
  switch (m) {
    case Motion::Slide: return "slide";
    case Motion::Stick: return "stick";
    case Motion::Roll: return "roll";
    case Motion::Tip: return "tip";
    case Motion::Hold: return "hold";
  }
  return "?";
}

// Geometry of a shape: the geom (type, size, orientation in the body), the height of its centre
// above the plane when resting undeformed, the number of contacts it rests on (to start at the
// resting penetration), the body axis that should stay fixed (rollers: the rolling axis; others:
// none, the whole rotation is bounded) and, for rollers, the rolling radius.
struct ShapeGeometry {
  int type = kGeomBox;
  Vec3d size{0, 0, 0};
  Quatd quat{1, 0, 0, 0};
  double rest_height = 0;
  int contacts = 4;
  bool roller = false;
  double radius = 0;
};

inline ShapeGeometry shape_geometry(Shape s) {
  ShapeGeometry g;
  const double s45 = std::sqrt(0.5);
  switch (s) {
    case Shape::Cube:
    case Shape::MeshCube:
      g.type = s == Shape::Cube ? kGeomBox : kGeomMesh;
      g.size = {0.05, 0.05, 0.05};
      g.rest_height = 0.05;
      break;
    case Shape::FlatBox:  // 20 x 15 x 5 cm
      g.size = {0.1, 0.075, 0.025};
      g.rest_height = 0.025;
      break;
    case Shape::TallBox:  // 10 x 10 x 30 cm: tips at atan(1/3) = 18.43 degrees
      g.size = {0.05, 0.05, 0.15};
      g.rest_height = 0.15;
      break;
    case Shape::CapsuleAlong:  // axis (local z) along the slope (+x): it slides on its two end caps
    case Shape::CapsuleAcross:  // axis along y: it rolls
      g.type = kGeomCapsule;
      g.size = {0.04, 0.08, 0};
      g.quat = s == Shape::CapsuleAlong ? Quatd{s45, 0, s45, 0} : Quatd{s45, s45, 0, 0};
      g.rest_height = 0.04;
      g.contacts = 2;
      g.roller = s == Shape::CapsuleAcross;
      g.radius = 0.04;
      break;
    case Shape::CylinderUpright:  // on its flat end (a tripod of rim contacts)
      g.type = kGeomCylinder;
      g.size = {0.05, 0.05, 0};
      g.rest_height = 0.05;
      g.contacts = 3;
      break;
    case Shape::CylinderAcross:  // on its side, axis along y: it rolls
      g.type = kGeomCylinder;
      g.size = {0.05, 0.08, 0};
      g.quat = {s45, s45, 0, 0};
      g.rest_height = 0.05;
      g.contacts = 2;
      g.roller = true;
      g.radius = 0.05;
      break;
    case Shape::Sphere:
      g.type = kGeomSphere;
      g.size = {0.05, 0, 0};
      g.rest_height = 0.05;
      g.contacts = 1;
      g.roller = true;
      g.radius = 0.05;
      break;
  }
  return g;
}

// A closed cube hull of half-extent h with its mass data per unit density (ModelBuilder::add_mesh).
inline MeshSpec cube_mesh(double h) {
  MeshSpec m;
  m.name = "cube";
  for (int i = 0; i < 8; ++i) m.vert.push_back({(i & 1 ? 1 : -1) * h, (i & 2 ? 1 : -1) * h, (i & 4 ? 1 : -1) * h});
  const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
  for (const auto& q : quads) {
    m.face.push_back({q[0], q[1], q[2]});
    m.face.push_back({q[0], q[2], q[3]});
  }
  const double side = 2 * h, volume = side * side * side;
  m.volume = volume;
  m.inertia = {volume * side * side / 6, volume * side * side / 6, volume * side * side / 6};
  return m;
}

// Per-world parameters of a group.
struct WorldSpec {
  Motion motion = Motion::Slide;
  double mass = 1;         // kg
  double stiffness = 1e5;  // N/m per geom (both geoms; the pair's is half, in series)
  double angle_deg = 30;   // incline
  double mu = 0.5;         // friction of both geoms (the pair's combined value is the same)
  double ramp_from_deg = -1;  // >= 0: the plane tilts from this angle to angle_deg over Group::ramp
};

struct Group {
  Shape shape = Shape::Cube;
  double dt = 1e-3;
  double duration = 1.0;  // s
  double settle = 0.2;    // s: start of the measured window
  double ramp = 0;        // s: tilting time of the worlds with ramp_from_deg >= 0
  std::vector<WorldSpec> worlds;
};

// The solver configuration: a preset and, optionally, a contact approximation (none: the
// preset's default), plus any further option overrides (key=value, e.g. for ablations).
struct Config {
  std::string preset = "approx32";
  std::optional<ContactApproximation> approximation;
  std::vector<std::pair<std::string, std::string>> overrides;
  std::string label() const {
    std::string s = preset + "/";
    if (!approximation) return s + "default";
    return s + (*approximation == ContactApproximation::Sap       ? "sap"
                : *approximation == ContactApproximation::Similar ? "similar"
                                                                  : "lagged");
  }
};

struct WorldResult {
  WorldSpec spec;
  bool failed = false;        // a failed step or a non-finite state
  bool pass = false;
  bool judged = true;         // false: outside the rigid-body domain (rigid_domain), reported only
  double figure = 0;          // slide/roll: relative distance error; stick/hold: creep / prediction; tip: rotation (deg)
  double distance = 0;        // m over the window
  double predicted = 0;       // m over the window (slide, roll) or m/s (stick, hold)
  double creep = 0;           // m/s (stick, hold)
  double release_error = 0;   // slide/roll: relative error of the distance from the release (t = 0)
  double rotation_deg = 0;    // max rotation from the start (rollers: of the rolling axis)
  double rotation_bound_deg = 0;  // kRotationBoundDeg + the compliant lean (slide, stick, hold)
  double slip = 0;            // roll: |v - w r| / |v| at the end
  double max_normal_speed = 0;  // max |v_z| after the settle (m/s): hops
  int airborne_steps = 0;     // steps after the settle with no contact impulse
  int unheld_steps = 0;       // stick, hold: steps whose contacts could not hold the load (none, or beyond mu n)
  int steps = 0;              // steps after the settle
  std::string note;           // why it failed
};

// Analytic acceleration along the slope (slide, roll; 0 for stick, hold, tip).
inline double analytic_acceleration(const WorldSpec& w, double inertia_ratio) {
  const double th = w.angle_deg * kDeg;
  const Motion motion = w.motion;
  if (motion == Motion::Slide) return kGravity * (std::sin(th) - w.mu * std::cos(th));
  if (motion == Motion::Roll) return kGravity * std::sin(th) / (1 + inertia_ratio);
  return 0;
}

// Static lean (degrees) of a body resting on compliant contacts under a tangential load F_t
// (slide: mu m g cos; stick, hold: m g sin). The load acts on the contacts, c below the centre
// of mass; its moment F_t c is carried by the normal loads of the downhill and uphill contacts
// at +-b along the slope (n_e contacts each, pair stiffness k_pair = k / 2): leaning by psi moves
// them by +-b psi, a restoring moment 2 n_e k_pair b^2 psi, less the toppling moment of the
// weight's normal component, m g cos(theta) c psi:
//   psi = F_t c / (2 n_e k_pair b^2 - m g cos(theta) c).
// Rollers: 0 (their rolling axis does not lean). The near-rigid clamp softens contacts stiffer
// than the step resolves to 4 pi^2 / (w h^2) ~ m / h^2, and the lean at that stiffness is below
// 0.02 degree for every case here, so k_pair is used.
inline double compliant_lean_deg(Shape shape, const WorldSpec& w) {
  const ShapeGeometry g = shape_geometry(shape);
  if (g.roller || w.motion == Motion::Roll || w.motion == Motion::Tip) return 0;
  const double th = w.angle_deg * kDeg;
  const double ft = w.motion == Motion::Slide ? w.mu * w.mass * kGravity * std::cos(th) : w.mass * kGravity * std::sin(th);
  double b = g.size[0], n_e = 2;
  if (shape == Shape::CapsuleAlong) {
    b = g.size[1];  // the two end caps, one contact each
    n_e = 1;
  } else if (shape == Shape::CylinderUpright) {
    b = 0.5 * g.size[0];  // a tripod on the rim: the nearest two legs are r/2 from the centre along any line
    n_e = 1;
  }
  const double c = g.rest_height;
  return ft * c / (2 * n_e * b * b * (w.stiffness / 2) - w.mass * kGravity * std::cos(th) * c) / kDeg;
}

// Static penetration of the resting body: its weight's normal component shared by its
// contacts, each of pair stiffness k / 2.
inline double static_penetration(Shape shape, const WorldSpec& w) {
  const ShapeGeometry g = shape_geometry(shape);
  return w.mass * kGravity * std::cos(w.angle_deg * kDeg) / (g.contacts * w.stiffness / 2);
}

// The rigid-body domain: the analytic answers above are those of a rigid body, and hold for a
// compliant contact only while it stays a small perturbation. A world is judged when its static
// penetration is at most 5 % of the body's half-height (rollers: radius), its compliant lean at
// most 3 degrees and its support statically stable (positive restoring moment). Softer, heavier
// worlds (e.g. 20 kg on 1e4 N/m, which sinks 2-4 cm into the plane) are still run and must not
// fail or go non-finite; their figures are reported, not judged. Returns "" inside the domain,
// else the reason.
inline std::string rigid_domain(Shape shape, const WorldSpec& w) {
  const ShapeGeometry g = shape_geometry(shape);
  if (static_penetration(shape, w) > 0.05 * g.rest_height) return "penetration > 5 % of the size";
  const double lean = compliant_lean_deg(shape, w);
  if (lean < 0 || lean > 3) return "compliant lean > 3 deg or unstable support";
  return "";
}

// Tipping angle of the tall box (degrees) with the first-order compliant lean psi (header comment).
inline double tipping_angle_deg(const WorldSpec& w) {
  const ShapeGeometry g = shape_geometry(Shape::TallBox);
  const double b = g.size[0], c = g.size[2], k_pair = w.stiffness / 2;
  double th = std::atan(b / c);
  for (int i = 0; i < 20; ++i) th = std::atan(b / c) - w.mass * kGravity * std::cos(th) / (4 * k_pair * b);
  return th / kDeg;
}

inline Scene group_scene(const Group& grp) {
  const ShapeGeometry sg = shape_geometry(grp.shape);
  ModelBuilder b;
  b.set_gravity({0, 0, -kGravity});  // per world (WorldParam::Gravity)
  GeomSpec ground;
  ground.name = "ground";
  ground.type = kGeomPlane;
  ground.friction = 1;  // per world (ContactScale)
  ground.stiffness = kBaseStiffness;
  b.add_geom(0, ground);
  BodySpec body;
  body.name = "body";
  body.inertia_from_geoms = true;
  const int id = b.add_body(body);
  JointSpec free;
  free.name = "free";
  free.type = kJointFree;
  b.add_joint(id, free);
  GeomSpec g;
  g.name = "shape";
  g.type = sg.type;
  g.size = sg.size;
  g.quat = sg.quat;
  g.friction = 1;
  g.stiffness = kBaseStiffness;
  g.density = kDensity;
  if (sg.type == kGeomMesh) g.dataid = b.add_mesh(cube_mesh(sg.size[0]));
  b.add_geom(id, g);
  Scene s;
  s.name = std::string("fidelity_") + shape_name(grp.shape);
  s.model = b.finalize();
  s.dt = grp.dt;
  s.num_worlds = static_cast<int>(grp.worlds.size());
  s.max_rigid_contact = 8;
  s.qpos0 = {0, 0, sg.rest_height, 1, 0, 0, 0};
  s.qvel0.assign(6, 0.0);
  return s;
}

inline void apply_config(SolverOptions& o, const Config& c) {
  set_solver_option(o, "contact_preset_variant", c.preset);
  if (c.approximation) o.contact_approximation = *c.approximation;
  for (const auto& [k, v] : c.overrides) set_solver_option(o, k, v);
}

// Creep speed that the regularised stiction of world w's contacts predicts under a tangential
// impulse F = h m g sin(theta) (header comment), from the parameters of the last solve. Each
// contact's friction impulse as a function of the common slip speed v:
//   sap:              min(v / Rt_c, mu gamma_n,c)   (stiction: gamma_t = -v_t / Rt, Rt = sigma w
//                     (kConRt), up to the cone; a lightly loaded contact, e.g. the uphill edge of
//                     a tall box near tipping, slides at its bound)
//   similar, lagged:  mu n_c v / sqrt(v^2 + eps_c^2)   (gamma_t = -mu n t, |t| = v / sqrt(v^2 + eps^2);
//                     n_c = n0 (lagged, kConHcN0) or gamma_n (similar), eps_c = kConHcEpsSoft)
// and the prediction is the v at which their sum is F (bisection; all are non-decreasing in v).
// Returns 0 when the world has no loaded contact, infinity when F exceeds the friction bound.
inline double stiction_creep_prediction(Simulator& sim, int w, ContactApproximation approx, double F) {
  SolveData& s = sim.solver().solve_data();
  const int n = s.con_count.world_to_host(w)[0];
  const std::vector<double> prm = s.con_param.world_to_host(w);
  const auto impulses = sim.solver().contact_impulses(w);
  struct Row {
    double bound, compliance, eps;  // mu n; sap: Rt; HC: eps_s
  };
  std::vector<Row> rows;
  double limit = 0;
  for (int c = 0; c < n; ++c) {
    const double* p = prm.data() + static_cast<std::size_t>(s.size().ncp * c);
    const double gn = impulses[static_cast<std::size_t>(c)].gamma[2];
    const double nf = approx == ContactApproximation::Lagged ? p[kConHcN0] : gn;
    if (!(nf > 0)) continue;
    rows.push_back({p[kConMu] * nf, p[kConRt], approx == ContactApproximation::Sap ? 0.0 : p[kConHcEpsSoft]});
    limit += p[kConMu] * nf;
  }
  if (rows.empty()) return 0;
  if (F >= limit) return std::numeric_limits<double>::infinity();
  auto friction = [&](double v) {
    double f = 0;
    for (const Row& r : rows)
      f += approx == ContactApproximation::Sap ? std::min(v / r.compliance, r.bound) : r.bound * v / std::sqrt(v * v + r.eps * r.eps);
    return f;
  };
  double lo = 0, hi = 1e-6;
  while (friction(hi) < F) hi *= 2;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    (friction(mid) < F ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Rotation angle (degrees) of q relative to the identity.
inline double rotation_angle_deg(const Eigen::Quaterniond& q) {
  return 2 * std::acos(std::min(1.0, std::abs(q.normalized().w()))) / kDeg;
}

// Runs one group under one configuration; one result per world.
inline std::vector<WorldResult> run_group(const Group& grp, const Config& cfg, int threads = 1) {
  const Scene scene = group_scene(grp);
  const ShapeGeometry sg = shape_geometry(grp.shape);
  const int nw = static_cast<int>(grp.worlds.size());
  SimulatorOptions o;
  o.nworld = nw;
  o.backend = Backend::CPU;
  o.threads = threads;
  o.override_solver = true;
  o.solver = scene.solver;
  apply_config(o.solver, cfg);
  Simulator sim(scene, o);
  const ContactApproximation approx = o.solver.resolve().contact_approximation;
  const Model& m = sim.scene().model;
  const double base_mass = m.body_mass[1];
  // Rolling inertia ratio I / (m r^2) about the body's y axis (the rollers' axis), mass-independent.
  const double inertia_ratio = sg.roller ? m.body_inertia[6 * 1 + 1] / (base_mass * sg.radius * sg.radius) : 0;

  // The incline of world i at time t (degrees): a tilting plane ramps from ramp_from_deg.
  auto angle_at = [&](int i, double t) {
    const WorldSpec& w = grp.worlds[static_cast<std::size_t>(i)];
    if (w.ramp_from_deg < 0 || grp.ramp <= 0 || t >= grp.ramp) return w.angle_deg;
    return w.ramp_from_deg + (w.angle_deg - w.ramp_from_deg) * t / grp.ramp;
  };
  auto set_gravity = [&](double t) {
    std::vector<double> gravity;
    for (int i = 0; i < nw; ++i) {
      const double th = angle_at(i, t) * kDeg;
      gravity.insert(gravity.end(), {kGravity * std::sin(th), 0.0, -kGravity * std::cos(th)});
    }
    sim.set_world_params(WorldParam::Gravity, gravity.data());
  };
  std::vector<double> mass_scale, contact_scale;
  bool ramps = false;
  for (const WorldSpec& w : grp.worlds) {
    mass_scale.push_back(w.mass / base_mass);
    contact_scale.insert(contact_scale.end(), {w.mu, w.stiffness / kBaseStiffness, 1.0});
    ramps = ramps || (w.ramp_from_deg >= 0 && grp.ramp > 0);
  }
  sim.set_world_params(WorldParam::MassScale, mass_scale.data());
  sim.set_world_params(WorldParam::ContactScale, contact_scale.data());
  set_gravity(0);
  sim.reset();
  // Start at rest at the resting penetration (static_penetration at the starting angle).
  for (int i = 0; i < nw; ++i) {
    WorldSpec w = grp.worlds[static_cast<std::size_t>(i)];
    w.angle_deg = angle_at(i, 0);
    std::vector<double> q = scene.qpos0;
    q[2] -= static_penetration(grp.shape, w);
    sim.state().qpos.world_from_host(i, q.data());
  }

  std::vector<WorldResult> out(static_cast<std::size_t>(nw));
  std::vector<double> x0(nw, 0), v0(nw, 0), creep_pred(nw, 0), x_end(nw, 0);
  std::vector<int> creep_steps(nw, 0);
  const int steps = static_cast<int>(std::lround(grp.duration / grp.dt));
  const int settle = std::max(1, static_cast<int>(std::lround(grp.settle / grp.dt)));
  // Creep is measured over the second half: the slowest mode of a soft, heavy body on
  // overdamped contacts (20 kg on 1e4 N/m) decays at ~14 /s, and creep is ~1e-4 m/s.
  const int creep_start = std::max(settle, steps / 2);
  const int half_span = std::max(1, std::min(settle - 1, static_cast<int>(std::lround(0.05 / grp.dt))));
  for (int k = 1; k <= steps; ++k) {
    if (ramps && (k - 1) * grp.dt <= grp.ramp) set_gravity((k - 1) * grp.dt);
    sim.step();
    for (int wi : sim.failed_worlds()) out[static_cast<std::size_t>(wi)].failed = true;
    const std::vector<double> qall = sim.state().qpos.buffer().to_host();
    const std::vector<double> vall = sim.state().qvel.buffer().to_host();
    for (int i = 0; i < nw; ++i) {
      WorldResult& r = out[static_cast<std::size_t>(i)];
      const WorldSpec& w = grp.worlds[static_cast<std::size_t>(i)];
      const double* q = qall.data() + 7 * i;
      const double* v = vall.data() + 6 * i;
      bool finite = true;
      for (int j = 0; j < 7; ++j) finite = finite && std::isfinite(q[j]);
      for (int j = 0; j < 6; ++j) finite = finite && std::isfinite(v[j]);
      if (!finite) r.failed = true;
      if (r.failed) continue;
      const Eigen::Matrix3d R = Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized().toRotationMatrix();
      // Tracked point: the centre of mass, or (stick, hold) the body point at the centre of its
      // contact face, whose motion is the creep without the lean of the compliant contacts.
      const bool creeps = w.motion == Motion::Stick || w.motion == Motion::Hold;
      double x = q[0];
      if (creeps) x -= sg.rest_height * R(0, 2);
      if (k == (creeps ? creep_start : settle)) x0[i] = x;
      // v(t0) as the mean velocity over t0 +- 0.05 s: exact for a constant acceleration, and
      // blind to the contact's vibration (undamped at dt = 1e-4) that the instantaneous one sees.
      if (k == settle - half_span) v0[i] -= x;
      if (k == settle + half_span) v0[i] = (v0[i] + x) / (2 * half_span * grp.dt);
      x_end[i] = x;
      if (k <= settle) continue;  // the release transient is not measured
      double rot = 0;
      if (grp.shape == Shape::Sphere) rot = 0;
      else if (sg.roller) rot = std::acos(std::min(1.0, std::abs(R(1, 1)))) / kDeg;  // the rolling axis (body y)
      else rot = rotation_angle_deg(Eigen::Quaterniond(R));
      r.rotation_deg = std::max(r.rotation_deg, rot);
      r.max_normal_speed = std::max(r.max_normal_speed, std::abs(v[2]));
      ++r.steps;
      double gn = 0;
      for (const auto& ci : sim.solver().contact_impulses(i)) gn += ci.gamma[2];
      if (!(gn > 0)) ++r.airborne_steps;
      if (creeps && k > creep_start) {
        const double F = grp.dt * w.mass * kGravity * std::sin(w.angle_deg * kDeg);
        const double pred = stiction_creep_prediction(sim, i, approx, F);
        if (pred > 0 && std::isfinite(pred)) {
          creep_pred[i] += pred;
          ++creep_steps[i];
        } else {
          ++r.unheld_steps;  // no loaded contact, or the load beyond the friction bound
        }
      }
    }
  }

  const std::vector<double> qall = sim.state().qpos.buffer().to_host();
  const std::vector<double> vall = sim.state().qvel.buffer().to_host();
  const double T = steps * grp.dt;
  for (int i = 0; i < nw; ++i) {
    WorldResult& r = out[static_cast<std::size_t>(i)];
    const WorldSpec& w = grp.worlds[static_cast<std::size_t>(i)];
    r.spec = w;
    const double* q = qall.data() + 7 * i;
    const double* v = vall.data() + 6 * i;
    if (r.failed) {
      r.note = "failed world";
      continue;
    }
    r.distance = x_end[i] - x0[i];
    r.rotation_bound_deg = kRotationBoundDeg + compliant_lean_deg(grp.shape, w);
    std::vector<std::string> why;
    switch (w.motion) {
      case Motion::Slide:
      case Motion::Roll: {
        // A roller on a compliant contact rolls on a radius between r - delta (the contact point
        // at the plane's surface, delta the static penetration) and r (at the body's lowest
        // point, as the witness points put it): the prediction is the range of both, and the
        // figure the distance's relative excess beyond the range (0 inside it).
        const double window = (steps - settle) * grp.dt;
        const double r_hi = sg.radius, r_lo = sg.radius - static_penetration(grp.shape, w);
        auto distance_for = [&](double radius) {
          const double ratio = w.motion == Motion::Roll ? inertia_ratio * (r_hi * r_hi) / (radius * radius) : 0;
          return v0[i] * window + 0.5 * analytic_acceleration(w, ratio) * window * window;
        };
        const double d_hi = distance_for(r_hi), d_lo = w.motion == Motion::Roll ? distance_for(r_lo) : d_hi;
        r.predicted = d_hi;
        r.figure = r.distance > d_hi ? (r.distance - d_hi) / d_hi : r.distance < d_lo ? (r.distance - d_lo) / d_lo : 0;
        const double a = analytic_acceleration(w, inertia_ratio);
        r.release_error = (q[0] - 0.5 * a * T * T) / (0.5 * a * T * T);
        if (!(std::abs(r.figure) <= kDistanceTolerance)) why.push_back("distance");
        if (r.rotation_deg >= r.rotation_bound_deg) why.push_back("rotation");
        if (w.motion == Motion::Roll) {
          // Slip: v_x - r_e w_y (world) at the nearest rolling radius r_e in [r_lo, r_hi], over v_x.
          const Eigen::Vector3d w_world =
              Eigen::Quaterniond(q[3], q[4], q[5], q[6]).normalized().toRotationMatrix() * Eigen::Vector3d(v[3], v[4], v[5]);
          const double spin = std::abs(w_world[1]), speed = std::abs(v[0]);
          const double r_e = spin > 0 ? std::clamp(speed / spin, r_lo, r_hi) : r_hi;
          r.slip = std::abs(speed - r_e * spin) / std::max(speed, 1e-12);
          if (!(r.slip <= kDistanceTolerance)) why.push_back("slip");
        }
        break;
      }
      case Motion::Stick:
      case Motion::Hold: {
        r.creep = r.distance / ((steps - creep_start) * grp.dt);
        r.predicted = creep_steps[i] > 0 ? creep_pred[i] / creep_steps[i] : 0;
        r.figure = r.predicted > 0 ? r.creep / r.predicted : 0;
        if (!(r.creep <= (1 + kCreepTolerance) * r.predicted + kCreepFloor && r.creep > -kCreepFloor))
          why.push_back("creep");
        if (r.unheld_steps > kUnheldFraction * (steps - creep_start)) why.push_back("not held");
        if (r.rotation_deg >= r.rotation_bound_deg) why.push_back("rotation");
        break;
      }
      case Motion::Tip:
        r.figure = r.rotation_deg;
        if (!(r.rotation_deg >= kTippedDeg)) why.push_back("did not tip");
        break;
    }
    for (const std::string& x : why) r.note += (r.note.empty() ? "" : ", ") + x;
    r.pass = why.empty();
    const std::string domain = rigid_domain(grp.shape, w);
    if (!domain.empty()) {
      r.judged = false;
      r.note = "not judged (" + domain + ")" + (r.note.empty() ? "" : ": " + r.note);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// The sweep. Friction pairs keep a clear margin from the friction angle (tan(theta) - mu >= 0.1
// for sliding, mu - tan(theta) >= 0.13 for sticking) and rollers above the rolling threshold
// mu >= tan(theta) I / (I + m r^2).
struct SlidePair {
  double angle_deg, mu;
};
inline constexpr SlidePair kSlidePairs[] = {{20, 0.25}, {30, 0.45}, {40, 0.7}};
inline constexpr SlidePair kStickPairs[] = {{20, 0.5}, {30, 0.8}};
inline constexpr SlidePair kRollPairs[] = {{20, 0.5}, {30, 0.5}, {40, 0.8}};
inline constexpr Shape kAllShapes[] = {Shape::Cube,          Shape::FlatBox,        Shape::TallBox,
                                       Shape::CapsuleAlong,  Shape::CapsuleAcross,  Shape::CylinderUpright,
                                       Shape::CylinderAcross, Shape::Sphere,        Shape::MeshCube};

// The worlds of a shape over the given masses and stiffnesses: sliders slide and stick, rollers
// roll, the tall box tips (kTipMarginDeg above its angle) and holds (as far below).
inline std::vector<WorldSpec> shape_worlds(Shape shape, const std::vector<double>& masses,
                                           const std::vector<double>& stiffnesses) {
  std::vector<WorldSpec> out;
  const bool roller = shape_geometry(shape).roller;
  for (double m : masses)
    for (double k : stiffnesses) {
      if (shape == Shape::TallBox) {  // a tilting plane, from well below the tipping angle
        WorldSpec w{Motion::Tip, m, k, 0, 0.9};
        const double tip = tipping_angle_deg(w);
        w.ramp_from_deg = tip - kTipRampDeg;
        w.angle_deg = tip + kTipMarginDeg;
        out.push_back(w);
        w.motion = Motion::Hold;
        w.angle_deg = tip - kTipMarginDeg;
        out.push_back(w);
        continue;
      }
      if (roller) {
        for (const SlidePair& p : kRollPairs) out.push_back({Motion::Roll, m, k, p.angle_deg, p.mu});
        continue;
      }
      for (const SlidePair& p : kSlidePairs) out.push_back({Motion::Slide, m, k, p.angle_deg, p.mu});
      for (const SlidePair& p : kStickPairs) out.push_back({Motion::Stick, m, k, p.angle_deg, p.mu});
    }
  return out;
}

inline Group make_group(Shape shape, double dt, double duration, const std::vector<double>& masses,
                        const std::vector<double>& stiffnesses) {
  Group g;
  g.shape = shape;
  g.dt = dt;
  g.duration = duration;
  g.settle = std::min(0.2, 0.25 * duration);
  g.worlds = shape_worlds(shape, masses, stiffnesses);
  if (shape == Shape::TallBox) g.ramp = kTipRampTime;
  return g;
}

// The full sweep of the acceptance matrix (bench/sap_fidelity, tools/checks/fidelity_matrix.py):
// every shape at dt = 1e-4 (1 s; the tall box 2 s), 1e-3, 5e-3 and 1e-2 (2 s), masses 0.1-20 kg, stiffnesses
// 1e4-1e8 N/m per geom (the tall box from 1e5: softer contacts lean it by degrees before it tips).
inline std::vector<Group> full_sweep() {
  std::vector<Group> groups;
  for (Shape shape : kAllShapes)
    for (double dt : {1e-4, 1e-3, 5e-3, 1e-2}) {
      const double duration = dt < 5e-4 && shape != Shape::TallBox ? 1.0 : 2.0;  // tipping ends near 1.1 s
      if (shape == Shape::TallBox)
        groups.push_back(make_group(shape, dt, duration, {0.5, 5, 20}, {1e5, 1e6, 1e7, 1e8}));
      else
        groups.push_back(make_group(shape, dt, duration, {0.1, 1, 8, 20}, {1e4, 1e5, 1e6, 1e7, 1e8}));
    }
  return groups;
}

// The cross-section CI runs (tests/test_contact_fidelity.cpp), ~0.3 s per configuration on one
// core: every shape at dt = 5e-3 (1.5 s), 1e-3 (0.6 s) and 1e-2 (2 s; the tall box at 5e-3 and
// 1e-2, its tilting plane takes 2 s) with the extremes of the sweep (0.1-20 kg, 1e4-1e8 N/m,
// 20-40 degrees), including the cases of issue 31 (a 1 kg cube on 35 degrees with mu 0.6 and an
// 8 kg cube on 30 degrees with mu 0.4, which stuck under the approximate presets' midpoint map
// with lagged contacts).
inline std::vector<Group> ci_cross_section() {
  std::vector<Group> groups;
  const std::vector<WorldSpec> sliders = {
      {Motion::Slide, 1, 1e7, 35, 0.6},    {Motion::Slide, 8, 1e8, 30, 0.4},   {Motion::Slide, 0.1, 1e5, 40, 0.7},
      {Motion::Slide, 20, 1e6, 20, 0.25},  {Motion::Slide, 0.1, 1e4, 30, 0.45}, {Motion::Slide, 20, 1e5, 40, 0.7},
      {Motion::Stick, 1, 1e6, 20, 0.5},    {Motion::Stick, 20, 1e8, 30, 0.8},  {Motion::Stick, 1, 1e4, 20, 0.5}};
  const std::vector<WorldSpec> rollers = {{Motion::Roll, 1, 1e7, 30, 0.5},
                                          {Motion::Roll, 0.1, 1e5, 40, 0.8},
                                          {Motion::Roll, 20, 1e8, 20, 0.5},
                                          {Motion::Roll, 1, 1e4, 20, 0.5}};
  for (const auto& [dt, duration] : {std::pair<double, double>{5e-3, 1.5}, {1e-3, 0.6}, {1e-2, 2.0}})
    for (Shape shape : kAllShapes) {
      if (shape == Shape::TallBox) {
        if (dt < 5e-3) continue;
        Group g = make_group(shape, dt, 2.0, {}, {});
        for (const auto& [m, k] : {std::pair<double, double>{0.5, 1e6}, {20, 1e8}}) {
          const std::vector<WorldSpec> w = shape_worlds(shape, {m}, {k});
          g.worlds.insert(g.worlds.end(), w.begin(), w.end());
        }
        groups.push_back(g);
        continue;
      }
      Group g = make_group(shape, dt, duration, {}, {});
      g.worlds = shape_geometry(shape).roller ? rollers : sliders;
      groups.push_back(g);
    }
  return groups;
}

}  // namespace sap::fidelity

// The MJCF body tree (mjcf_importer.hpp): bodies, inertials, joints, geoms, mass properties
// (inertia from geoms, boundmass/boundinertia, settotalmass), the emission of bodies, joints
// and geoms into the builder, contact pairs and exclusions.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "import/mjcf_importer.hpp"
#include "model/contact_pairs.hpp"

namespace sap::import::mjcf {

// <contact><pair>: an explicit candidate pair (always tested, whatever contype/conaffinity and
// exclusions say) with MuJoCo's meaning: its own condim, friction (5), margin, gap and solref,
// from the pair, its default class chain (<default><pair>), else MuJoCo's pair defaults, never
// the geoms' combination (tests/data/mujoco/contact_params.json, pair_defaults). The pair's
// solref sets its stiffness and dissipation (model/contact_pairs.hpp); solimp and
// solreffriction have no counterpart and are warned.
void MjcfImporter::read_contact_pair(const Node& c) {
  check_attributes(c, "contact/pair");
  std::string n1, n2;
  if (!import::read_string(c.el, "geom1", n1) || !import::read_string(c.el, "geom2", n2))
    fail(where(c), "<pair> needs geom1 and geom2");
  CollisionFilter::ExplicitPair e;
  auto find = [&](const std::string& nm) {
    const int g = builder_.find_geom(prefixed(nm));
    if (g < 0) fail(where(c), "<pair>: unknown or non-colliding geom '" + nm + "'");
    return g;
  };
  e.geom0 = find(n1);
  e.geom1 = find(n2);
  if (e.geom0 == e.geom1) fail(where(c), "<pair>: geom1 and geom2 are the same geom '" + n1 + "'");
  // MuJoCo's pair defaults, then the class chain, then the element.
  e.condim = 3;
  e.friction = 1;
  e.friction_ext = {1, 0.005, 0.0001, 0.0001};
  e.margin = 0;
  e.gap = 0;
  e.solref = {0.02, 1};
  std::string cls;
  std::vector<const Node*> sources;
  if (import::read_string(c.el, "class", cls)) {
    const int id = find_class(c, cls);
    for (int k : class_chain(id))
      for (const Node* d : classes_[static_cast<std::size_t>(k)].pair) sources.push_back(d);
  } else {
    for (const Node* d : classes_[0].pair) sources.push_back(d);
  }
  sources.push_back(&c);
  for (const Node* src : sources) {
    const std::string f = file(*src);
    std::vector<double> fr;
    if (import::read_numbers(f, src->el, "friction", 1, 5, fr)) {
      for (double x : fr)
        if (!(x >= 0)) fail(where(*src), "<pair> friction: expected non-negative coefficients");
      e.friction = fr[0];
      for (std::size_t k = 1; k < fr.size(); ++k) e.friction_ext[k - 1] = fr[k];
    }
    import::read_double(f, src->el, "margin", e.margin);
    import::read_double(f, src->el, "gap", e.gap);
    if (!(e.margin >= 0) || !(e.gap >= 0)) fail(where(*src), "<pair> margin and gap: expected non-negative distances");
    import::read_int(f, src->el, "condim", e.condim);
    if (e.condim != 1 && e.condim != 3 && e.condim != 4 && e.condim != 6)
      fail(where(*src), "<pair> condim: expected 1, 3, 4 or 6, got " + std::to_string(e.condim));
    std::vector<double> sr;
    if (import::read_numbers(f, src->el, "solref", 1, 2, sr))
      for (std::size_t k = 0; k < sr.size(); ++k) e.solref[k] = sr[k];
    for (const char* a : {"solimp", "solreffriction"})
      if (src->el->Attribute(a))
        ignored(*src, std::string("<pair> ") + a, "the SAP contact has no impedance profile or separate friction solref");
  }
  try {
    solref_oscillator(e.solref.data());
  } catch (const std::invalid_argument& ex) {
    fail(where(c), std::string("<pair> solref: ") + ex.what());
  }
  builder_.collision_filter().explicit_pairs.push_back(e);
}

void MjcfImporter::read_bodies(const Node& root) {
  PBody world;
  world.name = "world";
  bodies_.push_back(world);
  for (const Node& s : root.children)
    if (!std::strcmp(s.tag(), "worldbody")) read_body_children(s, 0, 0, Transform{});
}

// Children of a body (or worldbody, or a frame inside them) expressed in `frame`.
double MjcfImporter::fromto_frame(const Node& n, const double fromto[6], Transform& local) const {
  // MuJoCo rejects a nonzero pos (from the element or its defaults) next to fromto.
  if (local.pos[0] != 0 || local.pos[1] != 0 || local.pos[2] != 0)
    fail(where(n), std::string("both pos and fromto given in ") + n.tag() + " (MuJoCo rejects a nonzero pos with fromto)");
  const Vec3<double> a{{fromto[0], fromto[1], fromto[2]}}, b{{fromto[3], fromto[4], fromto[5]}};
  const Vec3<double> d = a - b;  // MuJoCo's z axis points from `to` to `from`
  const double len = norm(d);
  if (!(len > 1e-12)) fail(where(n), "fromto endpoints coincide");
  local.pos = 0.5 * (a + b);
  local.quat = from_z_to(d);
  return len;
}

// A site: a point of spatial tendons (its body and position; size and looks do not matter).
// fromto places it as a geom's fromto does, for the shapes MuJoCo allows it on.
void MjcfImporter::read_site(const Node& n, int body, int cls, const Transform& frame) {
  std::string name, type = "sphere";
  import::read_string(n.el, "name", name);
  for (int k : class_chain(cls))
    for (const Node* d : classes_[static_cast<std::size_t>(k)].site) import::read_string(d->el, "type", type);
  import::read_string(n.el, "type", type);
  Transform local = read_pose(n);
  double fromto[6];
  if (import::read_fixed(file(n), n.el, "fromto", 6, fromto)) {
    if (type != "capsule" && type != "cylinder" && type != "box" && type != "ellipsoid")
      fail(where(n), "fromto is only valid for capsule, cylinder, box and ellipsoid sites, not " + type);
    fromto_frame(n, fromto, local);
  }
  bodies_[static_cast<std::size_t>(body)].sites.push_back({name, to_array(compose(frame, local).pos)});
}

void MjcfImporter::read_body_children(const Node& n, int body, int childclass, const Transform& frame) {
  for (const Node& c : n.children) {
    const std::string t = c.tag();
    if (t == "body") {
      read_body(c, body, childclass, frame);
    } else if (t == "frame") {
      check_attributes(c, "frame");
      std::string cc;
      const int cls = import::read_string(c.el, "childclass", cc) ? find_class(c, cc) : childclass;
      read_body_children(c, body, cls, compose(frame, read_pose(c)));
    } else if (t == "geom") {
      read_geom(c, body, element_class(c, childclass), frame);
    } else if (t == "joint" || t == "freejoint") {
      if (body == 0) fail(where(c), "the world body cannot have joints");
      read_joint(c, body, element_class(c, childclass), frame);
    } else if (t == "inertial") {
      if (body == 0) fail(where(c), "the world body cannot have an <inertial>");
      read_inertial(c, body);
    } else if (t == "site") {
      read_site(c, body, element_class(c, childclass), frame);
    } else if (t == "camera" || t == "light") {
      ignored(c, t, "no effect on the dynamics");
    } else if (t == "composite" || t == "flexcomp" || t == "replicate" || t == "attach" || t == "plugin") {
      unsupported(c, "<" + t + ">", "procedural and plugin elements are not supported");
    } else {
      ignored(c, "<" + t + "> in a body", "unknown element");
    }
  }
}

void MjcfImporter::read_body(const Node& n, int parent, int childclass, const Transform& frame) {
  check_attributes(n, "body");
  PBody b;
  b.node = &n;
  import::read_string(n.el, "name", b.name);
  b.parent = parent;
  b.pose = compose(frame, read_pose(n));
  std::string cc;
  const int cls = import::read_string(n.el, "childclass", cc) ? find_class(n, cc) : childclass;
  int mocap = 0;
  if (import::read_bool(file(n), n.el, "mocap", mocap) && mocap) {
    if (parent != 0) fail(where(n), "a mocap body must be a child of the world body");
    ignored(n, "mocap", "mocap bodies are imported as static bodies at their initial pose");
  }
  // Gravity compensation (kernels/actuation.hpp): the force -gravcomp m g at the body's com.
  import::read_double(file(n), n.el, "gravcomp", b.gravcomp);
  if (!b.name.empty()) {
    if (body_by_name_.count(b.name)) fail(where(n), "repeated body name '" + b.name + "'");
    body_by_name_[b.name] = static_cast<int>(bodies_.size());
  }
  bodies_.push_back(b);
  const int id = static_cast<int>(bodies_.size()) - 1;
  read_body_children(n, id, cls, Transform{});
  if (mocap && !bodies_[static_cast<std::size_t>(id)].joints.empty())
    fail(where(n), "a mocap body cannot have joints");
}

void MjcfImporter::read_inertial(const Node& n, int body) {
  check_attributes(n, "inertial");
  PBody& b = bodies_[static_cast<std::size_t>(body)];
  if (b.has_inertial) fail(where(n), "a body can have only one <inertial>");
  const std::string f = file(n);
  b.has_inertial = true;
  if (!import::read_double(f, n.el, "mass", b.mass)) fail(where(n), "<inertial> needs a 'mass'");
  if (!(b.mass >= 0)) fail(where(n), "<inertial> mass must be non-negative");
  Orientation o;
  read_orientation(n, o);
  import::read_fixed(f, n.el, "pos", 3, b.com.data());
  double d[6];
  const bool diag = import::read_fixed(f, n.el, "diaginertia", 3, d);
  if (import::read_fixed(f, n.el, "fullinertia", 6, d)) {
    if (diag) fail(where(n), "<inertial> takes either diaginertia or fullinertia, not both");
    if (o.kind != Orientation::kNone) fail(where(n), "fullinertia cannot be combined with an inertial orientation");
    // MJCF order: ixx iyy izz ixy ixz iyz (same as ours)
    b.inertia = {d[0], d[1], d[2], d[3], d[4], d[5]};
  } else if (diag) {
    b.inertia = import::rotate_diagonal_inertia(resolve(n, o), {d[0], d[1], d[2]});
  } else {
    fail(where(n), "<inertial> needs diaginertia or fullinertia");
  }
}

// A joint's pos and axis are written in `frame` (the body, or a <frame> inside it); the model
// wants them in the body frame: pos_body = frame.pos + R(frame) pos, axis_body = R(frame) axis.
void MjcfImporter::read_joint(const Node& n, int body, int cls, const Transform& frame) {
  JointAttrs a;
  std::string name;
  import::read_string(n.el, "name", name);
  if (!std::strcmp(n.tag(), "freejoint")) {
    check_attributes(n, "freejoint");
    a.type = kJointFree;
    int align = -1;  // auto: the compiler's alignfree (warned there)
    if (import::read_bool(file(n), n.el, "align", align, true) && align == 1)
      ignored(n, "freejoint align", "the free body keeps its frame as written (qpos differs from MuJoCo's)");
  } else {
    for (int c : class_chain(cls))
      for (const Node* d : classes_[static_cast<std::size_t>(c)].joint) apply_joint(*d, a);
    apply_joint(n, a);
  }
  PBody& b = bodies_[static_cast<std::size_t>(body)];
  JointSpec j;
  j.name = prefixed(name);
  j.type = a.type;
  j.pos = to_array(frame.pos + rotate(frame.quat, vec3(a.pos)));  // anchor in the body frame
  j.armature = a.armature;
  j.damping = no_damper_ ? 0.0 : a.damping;
  if (a.armature < 0 || a.damping < 0) fail(where(n), "joint armature and damping must be non-negative");
  const bool has_range = !(a.range[0] == 0 && a.range[1] == 0);
  bool limited = a.limited == 1;
  if (a.limited == -1) {
    if (has_range && !autolimits_)
      fail(where(n), "joint has a range but 'limited' is not set and compiler autolimits is false");
    limited = has_range;
  }
  if (!(a.frictionloss >= 0)) fail(where(n), "joint frictionloss must be non-negative");
  // SAP box row |gamma| <= h f (docs/sap-math.md §13); none under <flag frictionloss="disable">.
  j.frictionloss = no_frictionloss_ ? 0.0 : a.frictionloss;
  if (a.friction_softness)
    rep_.warn("friction-softness", where(n),
              "joint solreffriction/solimpfriction ignored: SAP's friction-loss box row has its own regularization");
  if (a.springdamper[0] != 0 || a.springdamper[1] != 0) {  // MuJoCo's compiler: gains from M(qpos0)
    if (!(a.springdamper[0] > 0 && a.springdamper[1] > 0))
      fail(where(n), "joint springdamper values must be positive (timeconst, dampratio)");
    j.springdamper = {a.springdamper[0], a.springdamper[1]};
    j.springdamper_spring = !no_spring_;
    j.springdamper_damper = !no_damper_;
  }
  // actuatorfrcrange (clamps the joint's total actuator force) and actuatorgravcomp (gravity
  // compensation counted as actuator force, inside that clamp): apply_actuator_force_ranges.
  const bool frclimited = a.actuatorfrclimited == 1 || (a.actuatorfrclimited == -1 && autolimits_ &&
                                                        !(a.actuatorfrcrange[0] == 0 && a.actuatorfrcrange[1] == 0));
  if (frclimited && !(a.actuatorfrcrange[0] <= a.actuatorfrcrange[1]))
    fail(where(n), "joint actuatorfrcrange: lower bound exceeds upper bound");
  if ((frclimited || a.actuatorgravcomp) && !name.empty())
    joint_frcrange_[prefixed(name)] = {a.actuatorfrcrange[0], a.actuatorfrcrange[1], &n, a.actuatorgravcomp != 0,
                                       frclimited};
  if (a.stiffness < 0) fail(where(n), "joint stiffness must be non-negative");
  if (a.type == kJointFree) {
    if (b.parent != 0) fail(where(n), "a free joint must belong to a child of the world body");
    if (limited) fail(where(n), "a free joint cannot be limited");
    j.stiffness = no_spring_ ? 0.0 : a.stiffness;  // toward qpos0 (kernels/passive_forces.hpp)
  } else if (a.type == kJointBall) {
    if (limited && !no_limit_)
      rep_.warn("ball-limit", where(n),
                "ball joint limit dropped: the model supports limits on hinge and slide joints only");
    j.stiffness = no_spring_ ? 0.0 : a.stiffness;  // toward qpos0 (kernels/passive_forces.hpp)
  } else {
    const Vec3<double> axis = vec3(a.axis);
    const double len = norm(axis);
    if (!(len > 1e-12)) fail(where(n), "joint axis must be non-zero");
    j.axis = to_array(rotate(frame.quat, axis / len));
    const double s = a.type == kJointHinge ? angle_scale() : 1.0;
    j.qpos0 = a.ref * s;
    j.springref = a.springref * s;
    j.stiffness = no_spring_ ? 0.0 : a.stiffness;
    if (a.stiffness < 0) fail(where(n), "joint stiffness must be non-negative");
    j.limited = limited && !no_limit_;
    if (j.limited) {
      j.range = {a.range[0] * s, a.range[1] * s};
      if (!(a.range[0] < a.range[1])) fail(where(n), "joint range: lower bound must be below the upper bound");
      if (a.limit_softness)
        rep_.warn("limit-softness", where(n),
                  "joint solreflimit/solimplimit/margin ignored: SAP limit constraints use their own stiffness");
    }
  }
  b.joints.push_back(j);
  b.joint_nodes.push_back(&n);
}

void MjcfImporter::read_geom(const Node& n, int body, int cls, const Transform& frame) {
  GeomAttrs g;
  for (int c : class_chain(cls))
    for (const Node* d : classes_[static_cast<std::size_t>(c)].geom) apply_geom(*d, g);
  apply_geom(n, g);
  PGeom pg;
  pg.node = &n;
  GeomSpec& s = pg.spec;
  std::string name;
  import::read_string(n.el, "name", name);
  s.name = prefixed(name);
  const std::string& t = g.type;
  const bool collides = !no_contact_ && (g.contype != 0 || g.conaffinity != 0);
  static const std::map<std::string, int> types = {{"plane", kGeomPlane},
                                                   {"sphere", kGeomSphere},
                                                   {"capsule", kGeomCapsule},
                                                   {"box", kGeomBox},
                                                   {"cylinder", kGeomCylinder},
                                                   {"ellipsoid", kGeomEllipsoid}};
  auto it = types.find(t);
  if (it == types.end() && t != "mesh" && t != "hfield" && t != "sdf")
    fail(where(n), "unknown geom type '" + t + "'");
  // Transform: fromto (capsule, cylinder, box, ellipsoid) overrides pos and orientation.
  Transform local{vec3(g.pos), resolve(n, g.orient)};
  double size[3] = {g.size[0], g.size[1], g.size[2]};
  if (g.has_fromto) {
    if (t != "capsule" && t != "cylinder" && t != "box" && t != "ellipsoid")
      fail(where(n), "fromto is only valid for capsule, cylinder, box and ellipsoid geoms, not " + t);
    const double len = fromto_frame(n, g.fromto, local);
    if (t == "capsule" || t == "cylinder") {
      size[1] = 0.5 * len;
    } else {  // box, ellipsoid: square section of half-width size[0] (as MuJoCo does)
      size[1] = size[0];
      size[2] = 0.5 * len;
    }
  }
  const Transform pose = compose(frame, local);
  s.pos = to_array(pose.pos);
  s.quat = to_array(pose.quat);
  // A primitive with a mesh is fitted to it (MuJoCo's fitaabb="false"): placed at the mesh's
  // centre of mass and principal axes, sized from the mesh's equivalent inertia box b.
  if (it != types.end() && t != "plane" && !g.mesh.empty()) {
    const MeshAsset& fit = assets_.mesh(g.mesh, where(n));
    mesh_geom_pose(fit.mass, s.pos, s.quat);
    const auto& b = fit.mass.box;
    double scale = 1;
    import::read_double(file(n), n.el, "fitscale", scale);
    if (t == "sphere") size[0] = (b[0] + b[1] + b[2]) / 3;
    if (t == "capsule") size[0] = (b[0] + b[1]) / 2, size[1] = std::max(0.0, b[2] - size[0] / 2);
    if (t == "cylinder") size[0] = (b[0] + b[1]) / 2, size[1] = b[2];
    if (t == "box" || t == "ellipsoid") size[0] = b[0], size[1] = b[1], size[2] = b[2];
    for (double& x : size) x *= scale;
  }
  // Sizes MuJoCo requires per type.
  const int need = t == "sphere"                         ? 1
                   : (t == "capsule" || t == "cylinder") ? 2
                   : (t == "box" || t == "ellipsoid")    ? 3
                                                         : 0;
  for (int k = 0; k < need; ++k)
    if (!(size[k] > 0))
      fail(where(n),
           t + " geom: size[" + std::to_string(k) + "] must be positive (got " + std::to_string(size[k]) + ")");
  s.size = {size[0], size[1], size[2]};
  s.contype = no_contact_ ? 0 : g.contype;
  s.conaffinity = no_contact_ ? 0 : g.conaffinity;
  s.friction = g.friction[0];
  s.friction_spin = g.friction[1];
  s.friction_roll = g.friction[2];
  s.condim = g.condim;
  s.priority = g.priority;
  s.solmix = g.solmix;
  s.margin = g.margin;
  s.gap = g.gap;
  s.density = g.density;
  s.mass = g.mass;
  if (g.friction[0] < 0 || g.friction[1] < 0 || g.friction[2] < 0)
    fail(where(n), "geom friction must be non-negative (sliding, torsional, rolling)");
  if (g.condim != 1 && g.condim != 3 && g.condim != 4 && g.condim != 6)
    fail(where(n), "geom condim: expected 1, 3, 4 or 6, got " + std::to_string(g.condim));
  if (!(g.margin >= 0) || !(g.gap >= 0)) fail(where(n), "geom margin and gap must be non-negative");
  if (!(g.solmix >= 0)) fail(where(n), "geom solmix must be non-negative");
  if (g.mass < 0 && g.mass != -1) fail(where(n), "geom mass must be non-negative");
  if (g.density < 0) fail(where(n), "geom density must be non-negative");
  if (g.fluidshape == "ellipsoid") {  // MuJoCo's ellipsoid fluid model (kernels/fluid_forces.hpp)
    if (t == "mesh" || t == "hfield" || t == "plane" || t == "sdf")
      unsupported(n, "geom fluidshape on a " + t, "the ellipsoid fluid model takes primitive geoms");
    else {
      s.fluid_ellipsoid = true;
      s.fluid_coef = g.fluidcoef;
    }
  } else if (!g.fluidshape.empty() && g.fluidshape != "none") {
    fail(where(n), "geom fluidshape must be 'none' or 'ellipsoid', got '" + g.fluidshape + "'");
  }
  pg.solref[0] = g.solref[0];
  pg.solref[1] = g.solref[1];
  pg.solref_set = g.solref_set;
  if (collides) {
    if (g.solimp_set)
      rep_.warn("solimp", where(n), "geom solimp ignored: the SAP contact model has no impedance profile");
  }
  if (!g.shellinertia.empty() && g.shellinertia != "false") {
    if (t == "mesh") fail(where(n), "for mesh geoms, shell inertia is set on the mesh asset (inertia=\"shell\"), as in MuJoCo");
    unsupported(n, "geom shellinertia", "shell inertia is not supported");
  }
  // Mesh geoms that collide or carry mass use the compiled asset: the geom frame moves to the
  // mesh's centre of mass and principal axes (MuJoCo's geom_pos / geom_quat), size = the
  // largest |coordinate| of its hull per principal axis. Colliding heightfields carry their data.
  const bool mesh_mass = t == "mesh" && body != 0 && g.group >= group_lo_ && g.group <= group_hi_ &&
                         (g.mass > 0 || (g.mass < 0 && g.density > 0));
  const MeshAsset* mesh_asset = nullptr;
  if (t == "mesh" && (collides || mesh_mass)) {
    if (g.mesh.empty()) fail(where(n), "mesh geom needs a 'mesh' attribute");
    mesh_asset = &assets_.mesh(g.mesh, where(n));
    mesh_geom_pose(mesh_asset->mass, s.pos, s.quat);
    s.size = mesh_asset->half_extent;
    s.type = kGeomMesh;
    pg.asset = g.mesh;
    pg.add = collides;
    if (!collides) ignored(n, "visual mesh geom", "contype=conaffinity=0 (its mass counts for inertia from geoms)");
  } else if (t == "hfield" && collides) {
    if (g.mesh.empty()) fail(where(n), "hfield geom needs an 'hfield' attribute");
    const HfieldSpec& h = assets_.hfield(g.mesh, where(n));
    s.size = {h.size[0], h.size[1], h.size[2]};
    s.type = kGeomHfield;
    pg.asset = g.mesh;
  } else if (it == types.end()) {
    pg.add = false;
    if (collides)
      unsupported(n, t + " geom that collides",
                  t + " collision shapes have no counterpart (set contype=conaffinity=0 for visual geoms)");
    else ignored(n, "visual " + t + " geom", "contype=conaffinity=0");
  } else {
    s.type = it->second;
  }
  // Mass contribution for inertia from geoms (filtered by compiler inertiagrouprange).
  if (t != "plane" && g.group >= group_lo_ && g.group <= group_hi_ && body != 0) {
    import::MassPart part;
    if (mesh_asset) {
      // MuJoCo: mass = density * volume (area for shells); explicit mass sets the density.
      const double density = g.mass >= 0 ? g.mass / mesh_asset->mass.measure : g.density;
      part.mass = density * mesh_asset->mass.measure;
      part.pos = s.pos;
      const Vec3d d = mesh_asset->mass.inertia;
      part.inertia = import::rotate_diagonal_inertia(quat(s.quat), {density * d[0], density * d[1], density * d[2]});
      bodies_[static_cast<std::size_t>(body)].geom_mass.push_back(part);
    } else if (t == "mesh" || t == "hfield" || t == "sdf") {
      if ((g.mass > 0 || (g.mass < 0 && g.density > 0)) && !bodies_[static_cast<std::size_t>(body)].massive_mesh)
        bodies_[static_cast<std::size_t>(body)].massive_mesh = &n;
    } else {
      GeomMass gm;
      if (t == "ellipsoid") {
        gm.mass = g.density * 4.0 / 3.0 * kPi * size[0] * size[1] * size[2];
        const double a2 = size[0] * size[0], b2 = size[1] * size[1], c2 = size[2] * size[2];
        gm.inertia_diag = {gm.mass / 5 * (b2 + c2), gm.mass / 5 * (a2 + c2), gm.mass / 5 * (a2 + b2)};
      } else {
        gm = geom_mass_properties(s.type, s.size, g.density);
      }
      if (g.mass >= 0) {  // explicit mass: density = mass / volume
        const double scale = gm.mass > 0 ? g.mass / gm.mass : 0.0;
        gm.mass = g.mass;
        for (double& x : gm.inertia_diag) x *= scale;
      }
      part.mass = gm.mass;
      part.pos = s.pos;  // the pose as written, or fitted to a mesh
      part.inertia = import::rotate_diagonal_inertia(quat(s.quat), gm.inertia_diag);
      bodies_[static_cast<std::size_t>(body)].geom_mass.push_back(part);
    }
  }
  bodies_[static_cast<std::size_t>(body)].geoms.push_back(pg);
}

bool MjcfImporter::body_is_static(int b) const {
  for (; b > 0; b = bodies_[static_cast<std::size_t>(b)].parent)
    if (!bodies_[static_cast<std::size_t>(b)].joints.empty()) return false;
  return true;
}

void MjcfImporter::compute_inertia() {
  double total = 0;
  for (std::size_t i = 1; i < bodies_.size(); ++i) {
    PBody& b = bodies_[i];
    const bool from_geoms = inertiafromgeom_ == 1 || (inertiafromgeom_ == -1 && !b.has_inertial);
    if (from_geoms) {
      if (b.massive_mesh)
        unsupported(*b.massive_mesh, "mass of a mesh/hfield geom",
                    "body '" + b.name +
                        "' takes its inertia from its geoms; give the body an <inertial> or the geom density=\"0\"");
      import::combine_mass_parts(b.geom_mass, b.mass, b.com, b.inertia);
    }
    if (boundmass_ > 0) b.mass = std::max(b.mass, boundmass_);
    // MuJoCo's boundinertia / balanceinertia act on the principal moments: I = V diag(d) V^T,
    // d_k >= boundinertia, and d set to its mean when it violates the triangle inequality.
    if (boundinertia_ > 0 || balanceinertia_) {
      Eigen::Matrix3d I;
      I << b.inertia[0], b.inertia[3], b.inertia[4], b.inertia[3], b.inertia[1], b.inertia[5], b.inertia[4],
          b.inertia[5], b.inertia[2];
      Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d> es(I);
      Eigen::Vector3d d = es.eigenvalues();
      for (int k = 0; k < 3; ++k) d[k] = std::max(d[k], boundinertia_);
      if (balanceinertia_ && (d[0] + d[1] < d[2] || d[0] + d[2] < d[1] || d[1] + d[2] < d[0]))
        d.setConstant((d[0] + d[1] + d[2]) / 3);
      const Eigen::Matrix3d J = es.eigenvectors() * d.asDiagonal() * es.eigenvectors().transpose();
      b.inertia = {J(0, 0), J(1, 1), J(2, 2), J(0, 1), J(0, 2), J(1, 2)};
    }
    total += b.mass;
  }
  if (settotalmass_ > 0 && total > 0) {
    const double s = settotalmass_ / total;
    for (std::size_t i = 1; i < bodies_.size(); ++i) {
      bodies_[i].mass *= s;
      for (double& x : bodies_[i].inertia) x *= s;
    }
  }
}

// Bodies, joints and geoms in MuJoCo's order. A geom's contact stiffness follows the mass of
// the kinematic tree it moves with (import::contact_material), so tree masses come first.
void MjcfImporter::emit_bodies() {
  // Mass of the kinematic tree (subtree of the top-level ancestor) of every body.
  const std::size_t nb = bodies_.size();
  std::vector<double> subtree(nb, 0.0);
  for (std::size_t i = 1; i < nb; ++i) subtree[i] = bodies_[i].mass;
  for (std::size_t i = nb - 1; i >= 1; --i)
    if (bodies_[i].parent > 0) subtree[static_cast<std::size_t>(bodies_[i].parent)] += subtree[i];
  for (std::size_t i = 1; i < nb; ++i)
    if (!bodies_[i].joints.empty() && !(subtree[i] > 0))
      fail(where(*bodies_[i].node),
           "body '" + bodies_[i].name +
               "' has joints but no mass in its subtree; give it an <inertial> or geoms with mass");
  std::vector<double> tree_mass(nb, 0.0);
  for (std::size_t i = 1; i < nb; ++i) {
    std::size_t r = i;
    while (bodies_[r].parent > 0) r = static_cast<std::size_t>(bodies_[r].parent);
    tree_mass[i] = subtree[r];
  }

  bodies_[0].builder_index = 0;
  for (std::size_t i = 1; i < nb; ++i) {
    PBody& b = bodies_[i];
    BodySpec s;
    s.name = prefixed(b.name);
    s.parent = bodies_[static_cast<std::size_t>(b.parent)].builder_index;
    s.pos = to_array(b.pose.pos);
    s.quat = to_array(b.pose.quat);
    s.mass = b.mass;
    s.com = b.com;
    s.inertia = b.inertia;
    s.gravcomp = b.gravcomp;
    b.builder_index = builder_.add_body(s);
    for (std::size_t k = 0; k < b.joints.size(); ++k) {
      const JointSpec& j = b.joints[k];
      const int ji = builder_.add_joint(b.builder_index, j);
      if (!j.name.empty()) {
        if (joint_by_name_.count(j.name)) fail(where(*b.joint_nodes[k]), "repeated joint name '" + j.name + "'");
        joint_by_name_[j.name] = {ji, j.type, j.limited, {j.range[0], j.range[1]}};
      }
      // This file's default configuration (keyframes without qpos).
      if (j.type == kJointFree || j.type == kJointBall)
        quat_adr_.push_back({nq_ + (j.type == kJointFree ? 3 : 0), j.type});
      if (j.type == kJointFree) {
        qpos0_.insert(qpos0_.end(), {b.pose.pos[0], b.pose.pos[1], b.pose.pos[2], b.pose.quat.w, b.pose.quat.x,
                                     b.pose.quat.y, b.pose.quat.z});
      } else if (j.type == kJointBall) {
        qpos0_.insert(qpos0_.end(), {1.0, 0.0, 0.0, 0.0});
      } else {
        qpos0_.push_back(j.qpos0);
      }
      nq_ += joint_nq(j.type);
    }
  }
  // Geoms grouped by body (MuJoCo's geom order), with the contact material rule.
  for (std::size_t i = 0; i < nb; ++i) {
    const bool is_static = body_is_static(static_cast<int>(i));
    for (PGeom& g : bodies_[i].geoms) {
      if (!g.add) continue;
      if (g.spec.type == kGeomPlane && !is_static)
        fail(where(*g.node), "plane geoms must belong to the world or a body welded to it");
      try {
        const import::ContactMaterial cm = import::contact_material(g.solref, tree_mass[i], is_static);
        g.spec.stiffness = cm.stiffness;
        g.spec.dissipation = cm.dissipation;
        g.spec.solref = {g.solref[0], g.solref[1]};  // MuJoCo's pair rule mixes solrefs (model/contact_pairs.hpp)
      } catch (const std::invalid_argument& e) {
        fail(where(*g.node), std::string("geom solref: ") + e.what());
      }
      if (!g.solref_set && (opt_.default_stiffness > 0 || opt_.default_dissipation >= 0)) {
        if (opt_.default_stiffness > 0) g.spec.stiffness = opt_.default_stiffness;
        if (opt_.default_dissipation >= 0) g.spec.dissipation = opt_.default_dissipation;
        g.spec.solref = {0, 0};  // given directly: no solref behind them
      }
      if (!is_static && !(g.spec.stiffness > 0)) g.spec.stiffness = import::kStaticStiffness;  // massless tree
      if (g.spec.type == kGeomMesh) g.spec.dataid = assets_.builder_mesh(builder_, g.asset, opt_.name_prefix, where(*g.node));
      if (g.spec.type == kGeomHfield) g.spec.dataid = assets_.builder_hfield(builder_, g.asset, opt_.name_prefix, where(*g.node));
      const int gid = builder_.add_geom(bodies_[i].builder_index, g.spec);
      geom_body_.resize(static_cast<std::size_t>(gid) + 1, 0);
      geom_body_[static_cast<std::size_t>(gid)] = bodies_[i].builder_index;
    }
  }
  // Sites, the path points of spatial tendons.
  for (std::size_t i = 0; i < nb; ++i)
    for (const auto& [name, pos] : bodies_[i].sites) {
      const int id = builder_.add_site({prefixed(name), bodies_[i].builder_index, pos});
      site_body_.resize(static_cast<std::size_t>(id) + 1, 0);
      site_body_[static_cast<std::size_t>(id)] = bodies_[i].builder_index;
      if (!name.empty()) site_by_name_[prefixed(name)] = id;
    }
  // MuJoCo filters contacts within one weld group (bodies rigidly attached to each other) and,
  // with filterparent, between a weld group and its parent's weld group when neither is the
  // world. ModelBuilder filters only direct parent-child pairs: add the rest as exclusions.
  std::vector<int> weld(nb, 0);
  for (std::size_t i = 1; i < nb; ++i)
    weld[i] = bodies_[i].joints.empty() ? weld[static_cast<std::size_t>(bodies_[i].parent)] : static_cast<int>(i);
  auto has_collider = [&](std::size_t i) {
    for (const PGeom& g : bodies_[i].geoms)
      if (g.add && (g.spec.contype || g.spec.conaffinity)) return true;
    return false;
  };
  const bool filter_parent = builder_.collision_filter().filter_parent;
  builder_.collision_filter().filter_static_parent = false;  // MuJoCo keeps pairs with a welded parent
  for (std::size_t a = 0; a < nb; ++a) {
    if (!has_collider(a)) continue;
    for (std::size_t b = a + 1; b < nb; ++b) {
      if (!has_collider(b)) continue;
      const int wa = weld[a], wb = weld[b];
      bool filtered = wa == wb;
      if (!filtered && filter_parent && wa != 0 && wb != 0) {
        const int pa = weld[static_cast<std::size_t>(bodies_[static_cast<std::size_t>(wa)].parent)];
        const int pb = weld[static_cast<std::size_t>(bodies_[static_cast<std::size_t>(wb)].parent)];
        filtered = wa == pb || wb == pa;
      }
      if (filtered && !(wa == 0 && wb == 0))
        builder_.collision_filter().exclude_body_pairs.push_back(
            {bodies_[a].builder_index, bodies_[b].builder_index});
    }
  }
}

void MjcfImporter::read_contact(const Node& root) {
  for (const Node& s : root.children) {
    if (std::strcmp(s.tag(), "contact")) continue;
    for (const Node& c : s.children) {
      const std::string t = c.tag();
      if (t == "exclude") {
        check_attributes(c, "contact/exclude");
        std::string b1, b2;
        if (!import::read_string(c.el, "body1", b1) || !import::read_string(c.el, "body2", b2))
          fail(where(c), "<exclude> needs body1 and body2");
        auto find = [&](const std::string& nm) {
          if (nm == "world") return 0;
          auto it = body_by_name_.find(nm);
          if (it == body_by_name_.end()) fail(where(c), "<exclude>: unknown body '" + nm + "'");
          return bodies_[static_cast<std::size_t>(it->second)].builder_index;
        };
        builder_.collision_filter().exclude_body_pairs.push_back({find(b1), find(b2)});
      } else if (t == "pair") {
        read_contact_pair(c);
      } else {
        ignored(c, "<" + t + "> in <contact>", "unknown element");
      }
    }
  }
}

}  // namespace sap::import::mjcf

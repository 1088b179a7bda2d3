// MJCF actuation and constraints (mjcf_importer.hpp): fixed and spatial tendons, equality constraints and
// actuators (MuJoCo's shortcut elements resolved into gains, bias and limits).
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "import/mjcf_importer.hpp"
#include "kernels/actuator_dynamics.hpp"

namespace sap::import::mjcf {

void MjcfImporter::apply_actuator(const Node& n, ActAttrs& a) {
  const std::string f = file(n), tag = n.tag();
  std::vector<double> v;
  if (import::read_numbers(f, n.el, "gear", 1, 6, v)) a.gear = v[0];
  import::read_double(f, n.el, "delay", a.delay);
  import::read_bool(f, n.el, "ctrllimited", a.ctrllimited, true);
  import::read_bool(f, n.el, "forcelimited", a.forcelimited, true);
  import::read_fixed(f, n.el, "ctrlrange", 2, a.ctrlrange);
  import::read_fixed(f, n.el, "forcerange", 2, a.forcerange);
  import::read_bool(f, n.el, "actlimited", a.actlimited, true);
  import::read_fixed(f, n.el, "actrange", 2, a.actrange);
  import::read_bool(f, n.el, "actearly", a.actearly);
  import::read_fixed(f, n.el, "lengthrange", 2, a.lengthrange);
  if (tag == "muscle") {  // MuJoCo's muscle shortcut: dynamics, gain and bias of its muscle model
    if (a.gaintype != "muscle") {  // first muscle in the chain: MuJoCo's defaults
      const double d[9] = {0.75, 1.05, -1, 200, 0.5, 1.6, 1.5, 1.3, 1.2};
      std::copy(d, d + 9, a.gainprm);
      a.dynprm[0] = 0.01;
      a.dynprm[1] = 0.04;
      a.dynprm[2] = 0;
    }
    a.dyntype = a.gaintype = a.biastype = "muscle";
    import::read_fixed(f, n.el, "timeconst", 2, a.dynprm);
    import::read_double(f, n.el, "tausmooth", a.dynprm[2]);
    import::read_fixed(f, n.el, "range", 2, a.gainprm);
    const char* names[] = {"force", "scale", "lmin", "lmax", "vmax", "fpmax", "fvmax"};
    for (int k = 0; k < 7; ++k) import::read_double(f, n.el, names[k], a.gainprm[2 + k]);
    std::copy(a.gainprm, a.gainprm + 10, a.biasprm);
    if (a.ctrlrange[0] == 0 && a.ctrlrange[1] == 0) {  // MuJoCo: a muscle's control is in [0, 1]
      a.ctrlrange[1] = 1;
      if (a.ctrllimited == -1) a.ctrllimited = 1;
    }
  } else if (tag == "general") {
    import::read_string(n.el, "dyntype", a.dyntype);
    if (import::read_numbers(f, n.el, "dynprm", 1, 10, v))
      for (std::size_t i = 0; i < std::min<std::size_t>(v.size(), 3); ++i) a.dynprm[i] = v[i];
    import::read_string(n.el, "gaintype", a.gaintype);
    import::read_string(n.el, "biastype", a.biastype);
    if (import::read_numbers(f, n.el, "gainprm", 1, 10, v))
      for (std::size_t i = 0; i < v.size(); ++i) a.gainprm[i] = v[i];
    if (import::read_numbers(f, n.el, "biasprm", 1, 10, v))
      for (std::size_t i = 0; i < v.size(); ++i) a.biasprm[i] = v[i];
  } else if (tag == "motor") {
    a.dyntype = "none";
    a.gaintype = "fixed";
    a.biastype = "none";
    std::fill(a.gainprm, a.gainprm + 10, 0.0);
    a.gainprm[0] = 1;
    std::fill(a.biasprm, a.biasprm + 10, 0.0);
  } else if (tag == "position") {
    // kp and kv default to what the class already holds (MuJoCo's shortcut inheritance).
    double kp = a.gainprm[0], kv = a.biastype == "affine" ? -a.biasprm[2] : 0.0;
    import::read_double(f, n.el, "kp", kp);
    import::read_double(f, n.el, "kv", kv);
    import::read_double(f, n.el, "dampratio", a.dampratio);
    import::read_double(f, n.el, "inheritrange", a.inheritrange);
    double tc = 0;
    import::read_double(f, n.el, "timeconst", tc);
    if (kp < 0 || kv < 0) fail(where(n), "position actuator: kp and kv must be non-negative");
    a.dyntype = tc > 0 ? "filterexact" : "none";  // MuJoCo: timeconst makes the target a filtered ctrl
    a.dynprm[0] = tc > 0 ? tc : 1;
    a.gaintype = "fixed";
    a.biastype = "affine";
    std::fill(a.gainprm, a.gainprm + 10, 0.0);
    std::fill(a.biasprm, a.biasprm + 10, 0.0);
    a.gainprm[0] = kp;
    a.biasprm[1] = -kp;
    a.biasprm[2] = -kv;
  } else if (tag == "velocity") {
    double kv = a.gainprm[0];
    import::read_double(f, n.el, "kv", kv);
    if (kv < 0) fail(where(n), "velocity actuator: kv must be non-negative");
    a.dyntype = "none";
    a.gaintype = "fixed";
    a.biastype = "affine";
    std::fill(a.gainprm, a.gainprm + 10, 0.0);
    std::fill(a.biasprm, a.biasprm + 10, 0.0);
    a.gainprm[0] = kv;
    a.biasprm[2] = -kv;
  }
  check_attributes(n, "actuator");
}

void MjcfImporter::apply_tendon(const Node& n, TendonAttrs& a) {
  const std::string f = file(n);
  import::read_bool(f, n.el, "limited", a.limited, true);
  std::vector<double> v;
  if (import::read_numbers(f, n.el, "range", 2, 2, v)) {
    a.range[0] = v[0];
    a.range[1] = v[1];
    a.has_range = true;
  }
  import::read_double(f, n.el, "stiffness", a.stiffness);
  import::read_double(f, n.el, "damping", a.damping);
  import::read_double(f, n.el, "frictionloss", a.frictionloss);
  import::read_double(f, n.el, "armature", a.armature);
  if (import::read_numbers(f, n.el, "springlength", 1, 2, v)) {
    a.springlength[0] = v[0];
    a.springlength[1] = v.size() > 1 ? v[1] : v[0];
  }
  import::read_bool(f, n.el, "actuatorfrclimited", a.actuatorfrclimited, true);
  import::read_fixed(f, n.el, "actuatorfrcrange", 2, a.actuatorfrcrange);
  if (n.el->Attribute("solreflimit") || n.el->Attribute("solimplimit") || n.el->Attribute("margin"))
    a.limit_softness = true;
  if (n.el->Attribute("solreffriction") || n.el->Attribute("solimpfriction")) a.friction_softness = true;
}

void MjcfImporter::set_tendon_properties(const Node& c, const std::string& label, const TendonAttrs& a,
                                         TendonSpec& ts) {
  if (!(a.frictionloss >= 0)) fail(where(c), label + ": frictionloss must be non-negative");
  if (!(a.armature >= 0)) fail(where(c), label + ": armature must be non-negative");
  if (a.stiffness < 0 || a.damping < 0) fail(where(c), label + ": stiffness and damping must be non-negative");
  const bool limited = a.limited == 1 || (a.limited == -1 && a.has_range);
  if (a.limited == -1 && a.has_range && !autolimits_)
    fail(where(c), label + ": range is given but limited is not set and compiler autolimits is false");
  if (limited && !(a.range[0] < a.range[1])) fail(where(c), label + ": range lower bound must be below the upper");
  ts.limited = limited && !no_limit_;
  ts.range = {a.range[0], a.range[1]};
  ts.stiffness = no_spring_ ? 0.0 : a.stiffness;
  ts.damping = no_damper_ ? 0.0 : a.damping;
  ts.armature = a.armature;            // (kernels/free_motion.hpp, actuation.hpp)
  if (!ts.path.empty() && a.armature > 0)
    rep_.warn("spatial-tendon-armature", where(c),
              label + " armature approximated: the inertia a J^T J is applied, MuJoCo's velocity-product "
                      "bias a J^T (dJ/dt v) of a moving path is not");
  ts.frictionloss = no_frictionloss_ ? 0.0 : a.frictionloss;  // a SAP box row on dL/dt (kernels/holonomic_rows.hpp)
  // MuJoCo's solref/solimp soften its limit and friction-loss rows; SAP's rows carry their own
  // near-rigid regularization (docs/sap-math.md), so these have no counterpart.
  if (a.limit_softness)
    rep_.warn("tendon-limit-softness", where(c),
              label + " solreflimit/solimplimit/margin ignored: SAP limit constraints use their own stiffness");
  if (a.friction_softness)
    rep_.warn("tendon-friction-softness", where(c),
              label + " solreffriction/solimpfriction ignored: SAP's friction-loss box row has its own "
                      "regularization");
  // MuJoCo's springlength: -1 is the length at qpos_spring; two values are a dead band.
  ts.lengthspring_at_springref = a.springlength[0] == -1;
  ts.lengthspring = a.springlength[0];
  if (!ts.lengthspring_at_springref && a.springlength[1] != a.springlength[0]) {
    if (!(a.springlength[0] <= a.springlength[1]))
      fail(where(c), label + ": springlength lower bound exceeds upper bound");
    ts.has_deadband = true;
    ts.lengthspring_upper = a.springlength[1];
  }
}

void MjcfImporter::record_tendon_force_range(const Node& c, const TendonAttrs& a, int id) {
  const bool limited = a.actuatorfrclimited == 1 || (a.actuatorfrclimited == -1 && autolimits_ &&
                                                     !(a.actuatorfrcrange[0] == 0 && a.actuatorfrcrange[1] == 0));
  if (!limited) return;
  if (!(a.actuatorfrcrange[0] <= a.actuatorfrcrange[1]))
    fail(where(c), "tendon actuatorfrcrange: lower bound exceeds upper bound");
  tendon_frcrange_[id] = {a.actuatorfrcrange[0], a.actuatorfrcrange[1], &c, false, true};
}

void MjcfImporter::read_tendons(const Node& root) {
  for (const Node& s : root.children) {
    if (std::strcmp(s.tag(), "tendon")) continue;
    for (const Node& c : s.children) {
      const std::string t = c.tag();
      if (t == "spatial") {
        read_spatial_tendon(c);
        continue;
      }
      if (t != "fixed") {
        ignored(c, "<" + t + "> in <tendon>", "unknown element");
        continue;
      }
      check_attributes(c, "tendon/fixed");
      TendonAttrs a;
      for (int k : class_chain(element_class(c, 0)))
        for (const Node* d : classes_[static_cast<std::size_t>(k)].tendon) apply_tendon(*d, a);
      apply_tendon(c, a);
      TendonSpec ts;
      import::read_string(c.el, "name", ts.name);
      const std::string label = "tendon" + (ts.name.empty() ? std::string() : " '" + ts.name + "'");
      ts.name = prefixed(ts.name);
      double L0 = 0;  // length at the springs' reference (MuJoCo's qpos_spring)
      for (const Node& e : c.children) {
        if (std::strcmp(e.tag(), "joint")) {
          ignored(e, "<" + std::string(e.tag()) + "> in a fixed tendon", "unknown element");
          continue;
        }
        std::string jn;
        double coef = 0;
        if (!import::read_string(e.el, "joint", jn)) fail(where(e), label + ": <joint> needs 'joint'");
        if (!import::read_double(file(e), e.el, "coef", coef)) fail(where(e), label + ": <joint> needs 'coef'");
        auto it = joint_by_name_.find(prefixed(jn));
        if (it == joint_by_name_.end()) fail(where(e), label + ": unknown joint '" + jn + "'");
        if (it->second.type != kJointHinge && it->second.type != kJointSlide)
          fail(where(e), label + ": joint '" + jn + "' must be a hinge or slide joint");
        ts.joints.push_back({it->second.builder_index, coef});
        L0 += coef * builder_.joint(it->second.builder_index).springref;
      }
      if (ts.joints.empty()) fail(where(c), label + " has no joints");
      set_tendon_properties(c, label, a, ts);
      if (ts.lengthspring_at_springref) {  // the length at qpos_spring (joint springref)
        ts.lengthspring = L0;
        ts.lengthspring_at_springref = false;
      }
      const int id = builder_.add_tendon(ts);
      if (!ts.name.empty()) tendon_by_name_[ts.name] = id;
      record_tendon_force_range(c, a, id);
    }
  }
}

// Spatial tendon (<tendon><spatial>, kernels/spatial_tendon.hpp): a path of sites, with
// sphere/cylinder geoms (and their sidesites) between two sites and pulleys; limits, spring
// and damper as for fixed tendons.
void MjcfImporter::read_spatial_tendon(const Node& c) {
  check_attributes(c, "tendon/spatial");
  TendonAttrs a;
  for (int k : class_chain(element_class(c, 0)))
    for (const Node* d : classes_[static_cast<std::size_t>(k)].tendon) apply_tendon(*d, a);
  apply_tendon(c, a);
  TendonSpec ts;
  import::read_string(c.el, "name", ts.name);
  const std::string label = "spatial tendon" + (ts.name.empty() ? std::string() : " '" + ts.name + "'");
  ts.name = prefixed(ts.name);
  auto site = [&](const Node& e, const char* attr) {
    std::string nm;
    if (!import::read_string(e.el, attr, nm)) fail(where(e), label + ": <" + e.tag() + "> needs '" + attr + "'");
    auto it = site_by_name_.find(prefixed(nm));
    if (it == site_by_name_.end()) fail(where(e), label + ": unknown site '" + nm + "'");
    return it->second;
  };
  for (const Node& e : c.children) {
    const std::string tag = e.tag();
    WrapSpec w;
    if (tag == "site") {
      w.type = kWrapSite;
      w.obj = site(e, "site");
    } else if (tag == "geom") {
      std::string gn;
      if (!import::read_string(e.el, "geom", gn)) fail(where(e), label + ": <geom> needs 'geom'");
      w.obj = builder_.find_geom(prefixed(gn));
      if (w.obj < 0) fail(where(e), label + ": unknown geom '" + gn + "'");
      const int gt = builder_.geom(w.obj).type;
      if (gt != kGeomSphere && gt != kGeomCylinder)
        fail(where(e), label + ": geom '" + gn + "' must be a sphere or a cylinder to wrap around");
      w.type = gt == kGeomSphere ? kWrapSphere : kWrapCylinder;
      w.sidesite = e.el->Attribute("sidesite") ? site(e, "sidesite") : -1;
    } else if (tag == "pulley") {
      w.type = kWrapPulley;
      if (!import::read_double(file(e), e.el, "divisor", w.divisor) || !(w.divisor > 0))
        fail(where(e), label + ": <pulley> needs a positive 'divisor'");
    } else {
      ignored(e, "<" + tag + "> in a spatial tendon", "unknown element");
      continue;
    }
    ts.path.push_back(w);
  }
  const int n = static_cast<int>(ts.path.size());
  if (n < 2 || ts.path.front().type != kWrapSite || ts.path.back().type != kWrapSite)
    fail(where(c), label + ": the path must start and end at a site");
  for (int k = 0; k < n; ++k) {
    const int type = ts.path[static_cast<std::size_t>(k)].type;
    if ((type == kWrapSphere || type == kWrapCylinder) &&
        (ts.path[static_cast<std::size_t>(k - 1)].type != kWrapSite || ts.path[static_cast<std::size_t>(k + 1)].type != kWrapSite))
      fail(where(c), label + ": a wrapping geom must be between two sites");
    if (type == kWrapPulley && (k == 0 || k == n - 1 || ts.path[static_cast<std::size_t>(k - 1)].type != kWrapSite))
      fail(where(c), label + ": a pulley must follow a site");
  }
  set_tendon_properties(c, label, a, ts);
  const int id = builder_.add_tendon(ts);
  if (!ts.name.empty()) tendon_by_name_[ts.name] = id;
  record_tendon_force_range(c, a, id);
}

void MjcfImporter::apply_equality(const Node& n, EqAttrs& a) {
  const std::string f = file(n);
  import::read_bool(f, n.el, "active", a.active);
  std::vector<double> v;
  if (import::read_numbers(f, n.el, "solref", 2, 2, v)) {
    a.solref[0] = v[0];
    a.solref[1] = v[1];
  }
  if (n.el->Attribute("solimp"))
    rep_.warn("equality-solimp", where(n),
              "equality solimp ignored: SAP's equality rows have no impedance profile (solref sets their softness)");
}

void MjcfImporter::read_equalities(const Node& root) {
  for (const Node& s : root.children) {
    if (std::strcmp(s.tag(), "equality")) continue;
    for (const Node& c : s.children) {
      const std::string t = c.tag();
      if (t != "joint" && t != "connect" && t != "weld" && t != "tendon") {
        if (t == "flex" || t == "distance")
          unsupported(c, "<" + t + "> equality", "only joint, tendon, connect and weld equalities map to the model");
        else ignored(c, "<" + t + "> in <equality>", "unknown element");
        continue;
      }
      check_attributes(c, "equality");
      EqAttrs a;
      for (int k : class_chain(element_class(c, 0)))
        for (const Node* d : classes_[static_cast<std::size_t>(k)].equality) apply_equality(*d, a);
      apply_equality(c, a);
      EqualitySpec e;
      import::read_string(c.el, "name", e.name);
      const std::string label = t + " equality" + (e.name.empty() ? std::string() : " '" + e.name + "'");
      e.name = prefixed(e.name);
      e.active = a.active != 0;
      e.solref = {a.solref[0], a.solref[1]};
      const std::string f = file(c);
      std::vector<double> v;
      if (t == "joint") {
        e.type = kEqJoint;
        std::string j1, j2;
        if (!import::read_string(c.el, "joint1", j1)) fail(where(c), label + " needs joint1");
        auto joint = [&](const std::string& nm) {
          auto it = joint_by_name_.find(prefixed(nm));
          if (it == joint_by_name_.end()) fail(where(c), label + ": unknown joint '" + nm + "'");
          if (it->second.type != kJointHinge && it->second.type != kJointSlide)
            fail(where(c), label + ": joint '" + nm + "' must be a hinge or slide joint");
          return it->second.builder_index;
        };
        e.obj1 = joint(j1);
        e.obj2 = import::read_string(c.el, "joint2", j2) ? joint(j2) : -1;
        if (import::read_numbers(f, c.el, "polycoef", 1, 5, v))
          for (std::size_t k = 0; k < 5; ++k) e.polycoef[k] = k < v.size() ? v[k] : 0.0;
      } else if (t == "tendon") {
        e.type = kEqTendon;
        std::string t1, t2;
        if (!import::read_string(c.el, "tendon1", t1)) fail(where(c), label + " needs tendon1");
        auto tendon = [&](const std::string& nm) {
          const int id = builder_.find_tendon(prefixed(nm));
          if (id < 0) fail(where(c), label + ": unknown tendon '" + nm + "'");
          return id;
        };
        e.obj1 = tendon(t1);
        e.obj2 = import::read_string(c.el, "tendon2", t2) ? tendon(t2) : -1;
        if (import::read_numbers(f, c.el, "polycoef", 1, 5, v))
          for (std::size_t k = 0; k < 5; ++k) e.polycoef[k] = k < v.size() ? v[k] : 0.0;
      } else {
        e.type = t == "connect" ? kEqConnect : kEqWeld;
        if (c.el->Attribute("site1") || c.el->Attribute("site2")) {
          unsupported(c, label + " between sites", "sites are not imported; give body1/body2 and anchor");
          continue;
        }
        std::string b1, b2;
        if (!import::read_string(c.el, "body1", b1)) fail(where(c), label + " needs body1");
        auto body = [&](const std::string& nm) {
          if (nm == "world") return 0;
          auto it = body_by_name_.find(nm);
          if (it == body_by_name_.end()) fail(where(c), label + ": unknown body '" + nm + "'");
          return bodies_[static_cast<std::size_t>(it->second)].builder_index;
        };
        e.obj1 = body(b1);
        e.obj2 = import::read_string(c.el, "body2", b2) ? body(b2) : 0;
        Vec3d anchor{0, 0, 0};
        if (import::read_numbers(f, c.el, "anchor", 3, 3, v)) anchor = {v[0], v[1], v[2]};
        else if (t == "connect") fail(where(c), label + " needs an anchor");
        if (t == "connect") {
          e.pos1 = anchor;  // on body 1; body 2's point from the reference configuration
        } else {
          // MuJoCo: the weld point is `anchor` in body 2's frame; body 1's point and orientation
          // are relpose's position and quaternion when its quaternion is not zero, else those
          // coinciding with body 2's anchor frame at qpos0 (MuJoCo stores them in relpose).
          e.pos2 = anchor;
          double tq = 1;
          if (import::read_double(f, c.el, "torquescale", tq) && tq != 1)
            unsupported(c, "weld torquescale", "the rotational rows are weighted as the translational ones");
          if (import::read_numbers(f, c.el, "relpose", 7, 7, v) &&
              (v[3] != 0 || v[4] != 0 || v[5] != 0 || v[6] != 0)) {
            const Quat<double> rq = normalized(Quat<double>{v[3], v[4], v[5], v[6]});
            e.pos1 = {v[0], v[1], v[2]};
            e.quat1 = {rq.w, rq.x, rq.y, rq.z};
            e.has_frame1 = true;
          }
        }
      }
      if (!no_equality_) builder_.add_equality(e);  // read and checked all the same
    }
  }
}

void MjcfImporter::read_actuators(const Node& root) {
  for (const Node& s : root.children) {
    if (std::strcmp(s.tag(), "actuator")) continue;
    for (const Node& c : s.children) {
      const std::string t = c.tag();
      if (!actuator_tags().count(t)) {
        ignored(c, "<" + t + "> in <actuator>", "unknown actuator element");
        continue;
      }
      read_actuator(c);
    }
  }
}

void MjcfImporter::read_actuator(const Node& n) {
  const std::string tag = n.tag();
  if (tag != "general" && tag != "motor" && tag != "position" && tag != "velocity" && tag != "muscle") {
    unsupported(n, "<" + tag + "> actuator",
                "only motor, position, velocity, muscle and general (fixed gain, affine bias; muscle) map to the model");
    return;
  }
  ActAttrs a;
  const int cls = element_class(n, 0);
  for (int c : class_chain(cls))
    for (const Node* d : classes_[static_cast<std::size_t>(c)].actuator) apply_actuator(*d, a);
  apply_actuator(n, a);
  std::string name;
  import::read_string(n.el, "name", name);
  const std::string label = "actuator" + (name.empty() ? std::string() : " '" + name + "'");
  // A delayed control (MuJoCo reads ctrl from a history buffer `delay` seconds back) changes the
  // trajectory; the model has no control history.
  if (a.delay > 0) unsupported(n, "actuator delay", label + ": controls are applied without delay here");
  for (const char* tr : {"jointinparent", "site", "body", "cranksite"})
    if (n.el->Attribute(tr)) {
      unsupported(n, std::string("actuator transmission '") + tr + "'",
                  "only joint and fixed-tendon transmissions map to the model");
      return;
    }
  std::string jname, tname;
  int tendon = -1;
  JointRef jr{-1, kJointHinge, false, {0, 0}};
  if (import::read_string(n.el, "tendon", tname)) {
    auto tt = tendon_by_name_.find(prefixed(tname));
    if (tt == tendon_by_name_.end()) fail(where(n), label + ": unknown (fixed) tendon '" + tname + "'");
    tendon = tt->second;
  } else {
    if (!import::read_string(n.el, "joint", jname)) fail(where(n), label + " needs a 'joint' or a 'tendon'");
    auto jt = joint_by_name_.find(prefixed(jname));
    if (jt == joint_by_name_.end()) fail(where(n), label + ": unknown joint '" + jname + "'");
    jr = jt->second;
    if (jr.type != kJointHinge && jr.type != kJointSlide)
      fail(where(n), label + ": joint '" + jname + "' must be a hinge or slide joint");
  }
  // Activation dynamics (kernels/actuator_dynamics.hpp): the law's input is the activation.
  static const std::map<std::string, int> dyntypes = {
      {"none", kDynNone},           {"integrator", kDynIntegrator}, {"filter", kDynFilter},
      {"filterexact", kDynFilterExact}, {"muscle", kDynMuscle}};
  const auto dyn = dyntypes.find(a.dyntype);
  if (dyn == dyntypes.end()) {
    if (a.dyntype == "user")
      unsupported(n, "actuator dynamics", label + " has dyntype '" + a.dyntype + "'");
    else
      fail(where(n), label + ": unknown dyntype '" + a.dyntype + "'");
    return;
  }
  const bool actlimited = a.actlimited == 1 || (a.actlimited == -1 && autolimits_ && !(a.actrange[0] == 0 && a.actrange[1] == 0));
  if (dyn->second != kDynNone && (dyn->second == kDynFilter || dyn->second == kDynFilterExact) && !(a.dynprm[0] > 0))
    fail(where(n), label + ": a filter needs a positive time constant dynprm[0]");
  if (a.gaintype == "muscle") {  // MuJoCo's muscle model (kernels/actuator_dynamics.hpp): an explicit force
    if (a.biastype != "muscle" || a.dyntype != "muscle") {
      unsupported(n, "actuator gaintype", label + ": a muscle gain needs muscle dynamics and bias");
      return;
    }
    if (!(a.lengthrange[0] < a.lengthrange[1])) {
      unsupported(n, "muscle lengthrange",
                  label + ": MuJoCo's compiler finds a muscle's length range by a simulation; give lengthrange");
      return;
    }
    if (a.dampratio != 0) fail(where(n), label + ": dampratio on a muscle");
    ActuatorSpec s;
    s.name = prefixed(name);
    s.joint = jr.builder_index;
    s.tendon = tendon;
    s.gear = a.gear;
    s.type = kActMuscle;
    s.dyntype = kDynMuscle;
    s.dynprm = {a.dynprm[0], a.dynprm[1], a.dynprm[2]};
    s.actlimited = actlimited;
    s.actrange = {a.actrange[0], a.actrange[1]};
    s.actearly = a.actearly != 0;
    for (std::size_t k = 0; k < 9; ++k) s.muscleprm[k] = a.gainprm[k];
    s.lengthrange = {a.lengthrange[0], a.lengthrange[1]};
    s.ctrllimited = a.ctrllimited == 1 || (a.ctrllimited == -1 && autolimits_ && !(a.ctrlrange[0] == 0 && a.ctrlrange[1] == 0));
    s.ctrlrange = {a.ctrlrange[0], a.ctrlrange[1]};
    s.forcelimited = a.forcelimited == 1 || (a.forcelimited == -1 && autolimits_ && !(a.forcerange[0] == 0 && a.forcerange[1] == 0));
    s.forcerange = {a.forcerange[0], a.forcerange[1]};
    if (no_clampctrl_) s.ctrllimited = false;  // <flag clampctrl="disable">: ctrl used as given
    builder_.add_actuator(s);
    ++nu_;
    return;
  }
  if (a.gaintype != "fixed") {
    unsupported(n, "actuator gaintype", label + " has gaintype '" + a.gaintype + "' (only 'fixed' and 'muscle')");
    return;
  }
  if (a.dampratio != 0) {
    unsupported(n, "actuator dampratio", label + ": dampratio needs MuJoCo's reflected inertia; give kv");
    return;
  }
  ActuatorSpec s;
  s.name = prefixed(name);
  s.joint = jr.builder_index;
  s.tendon = tendon;
  s.gear = a.gear;
  s.dyntype = dyn->second;
  s.dynprm = {a.dynprm[0], a.dynprm[1], a.dynprm[2]};
  s.actlimited = dyn->second != kDynNone && actlimited;
  s.actrange = {a.actrange[0], a.actrange[1]};
  s.actearly = dyn->second != kDynNone && a.actearly != 0;
  // MuJoCo's force on the joint (length G q, G = gear):
  //   qfrc = G clamp(g0 ctrl + b0 + b1 G q + b2 G qdot, forcerange)      (biastype affine)
  // Ours (kernels/limit_pd_rows.hpp, setup_pd) with gear g and gains kp, kd:
  //   qfrc = clamp(g^2 kp (ctrl/g - q) - g^2 kd qdot, g forcerange')
  // The two agree term by term when g^2 kp = -G^2 b1, g kp = G g0, g^2 kd = -G^2 b2 and
  // g forcerange' = G forcerange, i.e. g = -G b1/g0 (position form, b1 < 0) or g = -G b2/g0
  // (velocity form, b1 = 0 < -b2), kp = G g0/g, kd = -G^2 b2/g^2. A position servo
  // (b1 = -g0) keeps g = G and kp = g0, a velocity servo (b2 = -g0) g = G and kd = g0.
  // The implicit PD is evaluated at the end of the step (and clamped by the near-rigid rule),
  // so only the force law, not its time discretisation, is MuJoCo's.
  const double g0 = a.gainprm[0];
  const double* b = a.biasprm;
  const double G = a.gear;
  bool tail_zero = true;
  for (int k = 3; k < 10; ++k) tail_zero = tail_zero && b[k] == 0;
  auto prm = [&]() {
    char buf[160];
    std::snprintf(buf, sizeof buf, "gainprm %g, biasprm (%g, %g, %g)", g0, b[0], b[1], b[2]);
    return std::string(buf);
  };
  double fr_scale = 1.0;  // our forcerange = MuJoCo's forcerange * fr_scale
  if (!(G != 0)) fail(where(n), label + ": gear must be non-zero");
  if (a.biastype == "none" || (a.biastype == "affine" && tail_zero && b[0] == 0 && b[1] == 0 && b[2] == 0)) {
    // force = g0 * ctrl, clamped to forcerange, times gear.
    if (!(g0 > 0)) fail(where(n), label + ": gain gainprm[0] must be positive, got " + std::to_string(g0));
    s.type = kActMotor;
    s.gear = G * g0;
    fr_scale = 1.0 / g0;
  } else if (a.biastype != "affine") {
    unsupported(n, "actuator biastype", label + " has biastype '" + a.biastype + "' (only 'none' and 'affine')");
    return;
  } else if (!tail_zero) {
    fail(where(n), label + ": biasprm[3..9] must be zero for biastype 'affine'");
  } else if (b[0] != 0) {
    unsupported(n, "actuator bias offset",
                label + ": " + prm() + ": a constant force offset biasprm[0] has no counterpart");
    return;
  } else if (b[1] > 0 || b[2] > 0) {
    fail(where(n), label + ": " + prm() +
                       ": a positive biasprm[1] or biasprm[2] is positive feedback (an unstable servo), not supported");
  } else if (g0 == 0) {
    fail(where(n), label + ": " + prm() + ": a servo with gainprm[0] = 0 ignores its control; use a joint spring/damper");
  } else if (b[1] < 0) {
    s.type = kActPosition;  // force = kp (ctrl - q) - kv qdot in our gear's units
    s.gear = -G * b[1] / g0;
    s.kp = G * g0 / s.gear;
    s.kd = -G * G * b[2] / (s.gear * s.gear);
    fr_scale = G / s.gear;
  } else {
    s.type = kActVelocity;  // force = kd (ctrl - qdot) in our gear's units
    s.gear = -G * b[2] / g0;
    s.kd = G * g0 / s.gear;
    fr_scale = G / s.gear;
  }
  const bool has_ctrl = !(a.ctrlrange[0] == 0 && a.ctrlrange[1] == 0);
  const bool has_force = !(a.forcerange[0] == 0 && a.forcerange[1] == 0);
  auto limited = [&](int flag, bool has, const char* what) {
    if (flag != -1) return flag == 1;
    if (has && !autolimits_)
      fail(where(n), label + ": " + what + "range is given but " + what +
                         "limited is not set and compiler autolimits is false");
    return has;
  };
  s.ctrllimited = limited(a.ctrllimited, has_ctrl, "ctrl");
  s.ctrlrange = {a.ctrlrange[0], a.ctrlrange[1]};
  if (a.inheritrange > 0 && s.type == kActPosition) {
    if (!jr.limited) fail(where(n), label + ": inheritrange needs a limited joint");
    const double mid = 0.5 * (jr.range[0] + jr.range[1]), half = 0.5 * (jr.range[1] - jr.range[0]) * a.inheritrange;
    s.ctrllimited = true;
    s.ctrlrange = {mid - half, mid + half};
  }
  if (s.ctrllimited && !(s.ctrlrange[0] < s.ctrlrange[1]))
    fail(where(n), label + ": ctrlrange lower bound must be below the upper bound");
  s.forcelimited = limited(a.forcelimited, has_force, "force");
  if (s.forcelimited && !(a.forcerange[0] <= 0 && 0 <= a.forcerange[1]))
    fail(where(n), label + ": forcerange must contain 0");
  s.forcerange = {a.forcerange[0] * fr_scale, a.forcerange[1] * fr_scale};
  if (fr_scale < 0) std::swap(s.forcerange[0], s.forcerange[1]);  // a negative gain flips the interval
  if (no_clampctrl_) s.ctrllimited = false;  // <flag clampctrl="disable">: ctrl used as given
  builder_.add_actuator(s);
  ++nu_;
}

// MuJoCo clamps the sum of the actuator forces on a tendon (actuatorfrcrange: the forces scaled
// together) and then each actuator force to its forcerange, and a joint's total actuator force
// qfrc_actuator (gravity compensation of actuatorgravcomp joints included) to the joint's
// actuatorfrcrange. With one actuator on the joint or tendon, and no gravity compensation in
// the joint's clamp, that is one clamp of the actuator force, a composition of clamps:
// clamp(clamp(x, [c, d]), [a, b]) = clamp(x, [clamp(c, a, b), clamp(d, a, b)]) (order: the first
// range applied first). Several actuators, or actuatorgravcomp inside a joint's range, have no
// such form: reported as unsupported. actuatorgravcomp alone adds the same force as passive
// gravity compensation (both enter the dynamics alike).
void MjcfImporter::apply_actuator_force_ranges() {
  auto compose = [](ActuatorSpec& s, double lo, double hi, bool range_first) {
    if (!s.forcelimited) {
      s.forcelimited = true;
      s.forcerange = {lo, hi};
      return;
    }
    const double a = s.forcerange[0], b = s.forcerange[1];
    if (range_first) s.forcerange = {std::clamp(lo, a, b), std::clamp(hi, a, b)};  // tendon range, then forcerange
    else s.forcerange = {std::clamp(a, lo, hi), std::clamp(b, lo, hi)};             // forcerange, then joint range
  };
  const int nu = builder_.nactuator();
  for (const auto& [tendon, r] : tendon_frcrange_) {
    std::vector<int> on;
    for (int u = 0; u < nu; ++u)
      if (builder_.actuator(u).tendon == tendon) on.push_back(u);
    if (on.size() > 1) {
      unsupported(*r.node, "tendon actuatorfrcrange with several actuators",
                  "the scaling of several actuator forces has no counterpart; only one actuator per tendon");
    } else if (on.size() == 1) {
      compose(builder_.actuator(on[0]), r.lo, r.hi, true);
    }
  }
  for (const auto& [name, r] : joint_frcrange_) {
    if (!r.limited) continue;  // actuatorgravcomp alone: the passive gravity compensation
    const int j = builder_.find_joint(name);
    std::vector<int> on;
    bool other = false;  // an actuator on a tendon through the joint
    for (int u = 0; u < nu; ++u) {
      const ActuatorSpec& s = builder_.actuator(u);
      if (s.joint == j && s.tendon < 0) on.push_back(u);
      if (s.tendon >= 0) {
        const TendonSpec& ts = builder_.tendon(s.tendon);
        bool through = false;
        for (const auto& jc : ts.joints) through |= jc.first == j;
        // A spatial tendon moves the joint when a body of its path lies below the joint's body.
        const int jb = builder_.joint_body(j);
        auto below = [&](int b) {
          for (; b > 0; b = builder_.body(b).parent)
            if (b == jb) return true;
          return false;
        };
        for (const WrapSpec& e : ts.path) {
          if (e.type == kWrapSite) through |= below(site_body_.at(static_cast<std::size_t>(e.obj)));
          if (e.type == kWrapSphere || e.type == kWrapCylinder) through |= below(geom_body_.at(static_cast<std::size_t>(e.obj)));
        }
        other |= through;
      }
    }
    if (r.gravcomp && !on.empty()) {
      unsupported(*r.node, "joint actuatorfrcrange with actuatorgravcomp",
                  "gravity compensation inside the actuator force clamp has no counterpart");
    } else if (on.size() > 1 || (other && !on.empty())) {
      unsupported(*r.node, "joint actuatorfrcrange with several actuators",
                  "a clamp of the sum of several actuator forces has no counterpart");
    } else if (on.size() == 1) {
      ActuatorSpec& s = builder_.actuator(on[0]);
      const double lo = r.lo / s.gear, hi = r.hi / s.gear;  // in the actuator's force: qfrc = gear f
      compose(s, std::min(lo, hi), std::max(lo, hi), false);
    } else if (other) {
      unsupported(*r.node, "joint actuatorfrcrange on a tendon-actuated joint",
                  "a clamp of a tendon actuator's force on one joint has no counterpart");
    }
  }
}

}  // namespace sap::import::mjcf

// The model part of a JSON scene (docs/scene-format.md): builder defaults, imported assets,
// bodies with their shapes and inertia, joints, and the ground, added to a ModelBuilder.
//
// Warp joint -> our body frame (derivation in docs/scene-format.md). Warp places a child by
//   X_wc(q) = X_wp X_pj J(q) inv(X_cj),
// with X_pj = (p, R) the joint frame in the parent, X_cj = (c, Q) the joint frame in the
// child and J(q) the joint motion in the joint frame. Our bodies apply the joint motion in the
// body frame about the anchor, so with body pose (in the parent) B = X_pj inv(X_cj):
//   body_pos = p - R Q^T c,  body_quat = R Q^T,  anchor = c,  axis_body = Q axis_joint,
// and a ball rotation r_joint becomes r_body = Q r_joint Q^T (scene_state_reader.cpp).
#include <Eigen/Dense>
#include <filesystem>
#include <set>

#include "sap/mjcf.hpp"
#include "scene/scene_parser.hpp"

namespace sap::scene_json {
namespace {

constexpr double kPoseTolerance = 1e-6;  // body transform vs joint-implied pose (m, rad)

const char* jtype_name(JType t) {
  switch (t) {
    case JType::Fixed: return "fixed";
    case JType::Revolute: return "revolute";
    case JType::Prismatic: return "prismatic";
    case JType::Ball: return "ball";
    case JType::Free: return "free";
  }
  return "?";
}

// Same pose within kPoseTolerance in position (m) and in angle (rad).
bool poses_close(const Transform& a, const Transform& b) {
  return norm(a.pos - b.pos) <= kPoseTolerance && angular_distance(a.quat, b.quat) <= kPoseTolerance;
}
std::string pose_string(const Transform& x) {
  return "p = [" + fmt(x.pos[0]) + ", " + fmt(x.pos[1]) + ", " + fmt(x.pos[2]) + "], q (w, x, y, z) = [" +
         fmt(x.quat.w) + ", " + fmt(x.quat.x) + ", " + fmt(x.quat.y) + ", " + fmt(x.quat.z) + "]";
}

// Whether an asset body moves (has a joint on its path to the world).
bool asset_body_moving(const ModelBuilder& mb, int body) {
  while (body > 0) {
    for (int j = 0; j < mb.njoint(); ++j)
      if (mb.joint_body(j) == body) return true;
    body = mb.body(body).parent;
  }
  return false;
}

}  // namespace

void SceneParser::parse_builder(const json& b, const std::string& ptr) {
  r_.check_keys(b, ptr, {"gravity", "rigid_gap", "defaults", "contact_rule"}, "builder");
  // How pairs combine their geoms' contact parameters (ContactRule, sap/model.hpp): Drake's in a
  // JSON scene unless it says "mujoco" (then its MJCF assets' condim, priority, margin/gap and
  // <pair> values mean what they mean in MuJoCo). Applied after the assets (add_mjcf sets it).
  if (const json* c = JsonReader::get(b, "contact_rule")) {
    const std::string cp = at(ptr, "contact_rule");
    const std::string rule = r_.string(*c, cp);
    if (rule == "drake") contact_rule_ = kContactRuleDrake;
    else if (rule == "mujoco") contact_rule_ = kContactRuleMujoco;
    else r_.fail(cp, "expected \"drake\" or \"mujoco\", got \"" + rule + "\"");
  }
  if (const json* g = JsonReader::get(b, "gravity")) {
    const std::string gp = at(ptr, "gravity");
    if (g->is_array()) builder_.set_gravity(to_array(r_.vec3(*g, gp)));
    else builder_.set_gravity({0.0, 0.0, r_.number(*g, gp, "a number (z component) or a 3-vector")});
  }
  if (const json* v = JsonReader::get(b, "rigid_gap")) sdef_.margin = r_.nonnegative(*v, at(ptr, "rigid_gap"));
  const json* d = JsonReader::get(b, "defaults");
  if (!d) return;
  const std::string dp = at(ptr, "defaults");
  r_.check_keys(*d, dp, {"joint", "shape"}, "defaults");
  if (const json* j = JsonReader::get(*d, "joint")) {
    const std::string jp = at(dp, "joint");
    r_.check_keys(*j, jp, {"armature", "damping", "target_ke", "target_kd", "limit_ke", "limit_kd", "effort_limit"},
                  "joint defaults");
    if (const json* v = JsonReader::get(*j, "armature")) jdef_.armature = r_.nonnegative(*v, at(jp, "armature"));
    if (const json* v = JsonReader::get(*j, "damping")) jdef_.damping = r_.nonnegative(*v, at(jp, "damping"));
    if (const json* v = JsonReader::get(*j, "target_ke")) jdef_.target_ke = r_.nonnegative(*v, at(jp, "target_ke"));
    if (const json* v = JsonReader::get(*j, "target_kd")) jdef_.target_kd = r_.nonnegative(*v, at(jp, "target_kd"));
    if (const json* v = JsonReader::get(*j, "effort_limit")) {
      jdef_.has_effort = true;
      jdef_.effort = r_.positive(*v, at(jp, "effort_limit"));
    }
    for (const char* k : {"limit_ke", "limit_kd"})
      if (const json* v = JsonReader::get(*j, k)) {
        r_.nonnegative(*v, at(jp, k));
        r_.warn(at(jp, k), "accepted but ignored: joint limits are SAP limit constraints (solver limit_stiffness), "
                           "not penalty springs");
      }
  }
  if (const json* sh = JsonReader::get(*d, "shape")) {
    const std::string sp = at(dp, "shape");
    r_.check_keys(*sh, sp, {"density", "ke", "tau", "hc_dissipation", "mu"}, "shape defaults");
    if (const json* v = JsonReader::get(*sh, "density")) sdef_.density = r_.positive(*v, at(sp, "density"));
    if (const json* v = JsonReader::get(*sh, "ke")) sdef_.ke = r_.positive(*v, at(sp, "ke"));
    if (const json* v = JsonReader::get(*sh, "tau")) sdef_.tau = r_.nonnegative(*v, at(sp, "tau"));
    if (const json* v = JsonReader::get(*sh, "hc_dissipation"))
      sdef_.hc_dissipation = r_.nonnegative(*v, at(sp, "hc_dissipation"));
    if (const json* v = JsonReader::get(*sh, "mu")) sdef_.mu = r_.nonnegative(*v, at(sp, "mu"));
  }
}

void SceneParser::parse_assets(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of assets, got " + describe(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.check_keys(e, p,
                  {"id", "type", "path", "prefix", "xform", "floating", "keyframe", "ke", "tau", "drop_unsupported"},
                  "an asset");
    if (const json* v = JsonReader::get(e, "id")) r_.string(*v, at(p, "id"));
    const std::string type = r_.string(r_.required(e, p, "type", "\"mjcf\" or \"urdf\""), at(p, "type"));
    if (type != "mjcf" && type != "urdf") r_.fail(at(p, "type"), "expected \"mjcf\" or \"urdf\", got \"" + type + "\"");
    const std::string rel = r_.string(r_.required(e, p, "path", "a file path relative to the scene file"),
                                      at(p, "path"));
    const std::string path = (!rel.empty() && rel[0] == '/') ? rel : base_dir_ + "/" + rel;
    {
      std::error_code ec;
      const auto st = std::filesystem::status(path, ec);
      if (ec || !std::filesystem::exists(st)) r_.fail_file_not_found(at(p, "path"), path);
      // Directories and devices: tinyxml2 would take a directory's size for a huge length, and
      // a FIFO would block.
      if (!std::filesystem::is_regular_file(st)) r_.fail(at(p, "path"), "not a regular file: " + path);
    }
    ImportOptions opt;
    if (const json* v = JsonReader::get(e, "prefix")) opt.name_prefix = r_.string(*v, at(p, "prefix"), false);
    if (const json* v = JsonReader::get(e, "ke")) opt.default_stiffness = r_.positive(*v, at(p, "ke"));
    else if (type == "urdf") opt.default_stiffness = sdef_.ke;  // URDF has no contact parameters
    if (const json* v = JsonReader::get(e, "tau")) opt.default_dissipation = r_.nonnegative(*v, at(p, "tau"));
    else if (type == "urdf") opt.default_dissipation = sdef_.tau;
    if (const json* v = JsonReader::get(e, "drop_unsupported"))
      opt.drop_unsupported = r_.boolean(*v, at(p, "drop_unsupported"));
    bool floating = false;
    if (const json* v = JsonReader::get(e, "floating")) {
      if (type != "urdf")
        r_.fail(at(p, "floating"), "only URDF assets take \"floating\" (MJCF files declare their free joints)");
      floating = r_.boolean(*v, at(p, "floating"));
    }
    Transform xform;
    if (const json* v = JsonReader::get(e, "xform")) xform = r_.transform(*v, at(p, "xform"));

    AssetInfo info;
    info.ptr = p;
    info.urdf = type == "urdf";
    info.joint_begin = builder_.njoint();
    const int body_begin = builder_.nbody(), geom_begin = builder_.ngeom();
    ImportReport report;
    try {
      if (type == "mjcf") add_mjcf(path, builder_, &report, opt);
      else add_urdf(path, builder_, &report, opt, floating);
    } catch (const std::exception& ex) {
      r_.fail(p, std::string("importing ") + type + " asset failed: " + ex.what());
    }
    info.joint_end = builder_.njoint();
    for (const auto& w : report.warnings) r_.warn(p, "importer: " + w);
    try {  // actuator count after this asset (keyframe ctrl is per asset)
      info.act_end = builder_.finalize().nu;
    } catch (const std::exception&) {
      info.act_end = -1;  // the final finalize() reports the problem
    }
    info.act_begin = assets_.empty() ? 0 : assets_.back().act_end;
    // xform moves the top-level bodies of the asset (their pose in the world frame):
    // X_world = xform X_body.
    const bool moved = !poses_close(xform, Transform{});
    if (moved) {
      for (int b = body_begin; b < builder_.nbody(); ++b) {
        BodySpec& bs = builder_.body(b);
        if (bs.parent != 0) continue;
        const Quat<double> q = quat(bs.quat);
        const Transform wp = xform * Transform{vec3(bs.pos), q / norm(q)};
        bs.pos = to_array(wp.pos);
        bs.quat = to_array(wp.quat);
      }
      if (builder_.ngeom() > geom_begin) {
        // World geoms of the asset (e.g. a floor) are not moved; say so.
        try {
          const Model tmp = builder_.finalize();
          int n = 0;
          for (int g = geom_begin; g < tmp.ngeom; ++g) n += tmp.geom_bodyid[static_cast<std::size_t>(g)] == 0;
          if (n > 0)
            r_.warn(at(p, "xform"),
                    std::to_string(n) + " geom(s) attached to the world by the asset are not moved by xform");
        } catch (const std::exception&) {
        }
      }
    }
    if (const json* v = JsonReader::get(e, "keyframe")) {
      const std::string name = r_.string(*v, at(p, "keyframe"));
      bool found = false;
      std::vector<std::string> names;
      for (const auto& k : report.keyframes) {
        names.push_back("\"" + k.name + "\"");
        if (k.name != name || found) continue;
        found = true;
        info.has_keyframe = true;
        info.keyframe_qpos = k.qpos;
        info.keyframe_ctrl = k.ctrl;
      }
      if (!found)
        r_.fail(at(p, "keyframe"), "expected the name of a keyframe of the asset (" +
                                       (names.empty() ? std::string("it has none") : join(names)) + "), got \"" + name +
                                       "\"");
      // Free-joint coordinates of a keyframe are world poses: move them with the asset.
      if (moved) {
        std::size_t adr = 0;
        for (int j = info.joint_begin; j < info.joint_end && adr < info.keyframe_qpos.size(); ++j) {
          const int t = builder_.joint(j).type;
          if (t == kJointFree && builder_.body(builder_.joint_body(j)).parent == 0 &&
              adr + 7 <= info.keyframe_qpos.size()) {
            double* q = info.keyframe_qpos.data() + adr;  // [p (3), quat (4)]
            const Quat<double> r = Quat<double>::load(q + 3);
            const Transform wp = xform * Transform{Vec3<double>::load(q), r / norm(r)};
            wp.pos.store(q);
            wp.quat.store(q + 3);
          }
          adr += static_cast<std::size_t>(joint_nq(t));
        }
      }
    }
    assets_.push_back(info);
  }
}

// ---------------------------------------------------------------------------------------
// Bodies and joints.

void SceneParser::parse_bodies(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of bodies, got " + describe(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.check_keys(e, p, {"id", "label", "transform", "shapes", "inertia"}, "a body");
    BodyIn b;
    b.ptr = p;
    b.j = &e;
    b.id = r_.string(r_.required(e, p, "id", "a unique body id"), at(p, "id"));
    if (b.id == "world") r_.fail(at(p, "id"), "\"world\" is reserved for the world body, expected another id");
    if (auto it = body_by_id_.find(b.id); it != body_by_id_.end())
      r_.fail(at(p, "id"), "expected a unique body id, \"" + b.id + "\" is already used by " +
                               bodies_[static_cast<std::size_t>(it->second)].ptr);
    if (builder_.find_body(b.id) >= 0)
      r_.fail(at(p, "id"), "expected a unique body id, \"" + b.id + "\" is already a body of an asset");
    if (const json* v = JsonReader::get(e, "label")) r_.string(*v, at(p, "label"), false);
    if (const json* v = JsonReader::get(e, "transform")) {
      b.has_transform = true;
      b.transform = r_.transform(*v, at(p, "transform"));
    }
    if (const json* v = JsonReader::get(e, "shapes"); v && !v->is_array())
      r_.fail(at(p, "shapes"), "expected an array of shapes, got " + describe(*v));
    body_by_id_[b.id] = static_cast<int>(bodies_.size());
    bodies_.push_back(b);
  }
}

void SceneParser::parse_joints(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of joints, got " + describe(a));
  std::vector<std::string> body_ids;
  for (const BodyIn& b : bodies_) body_ids.push_back(b.id);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.require_object(e, p);
    JointIn j;
    j.ptr = p;
    const std::string type = r_.string(r_.required(e, p, "type", "fixed, revolute, prismatic, ball or free"),
                                       at(p, "type"));
    if (type == "fixed") j.type = JType::Fixed;
    else if (type == "revolute") j.type = JType::Revolute;
    else if (type == "prismatic") j.type = JType::Prismatic;
    else if (type == "ball") j.type = JType::Ball;
    else if (type == "free") j.type = JType::Free;
    else r_.fail(at(p, "type"), "expected fixed, revolute, prismatic, ball or free, got \"" + type + "\"");

    // Keys by type: a key that does not apply to the type is an error, not ignored.
    std::vector<std::string> keys = {"id", "label", "type", "parent", "child"};
    const bool one_dof = j.type == JType::Revolute || j.type == JType::Prismatic;
    if (j.type != JType::Free) keys.insert(keys.end(), {"parent_xform", "child_xform"});
    if (j.type != JType::Fixed) keys.insert(keys.end(), {"armature", "damping"});
    if (one_dof)
      keys.insert(keys.end(), {"axis", "limit_lower", "limit_upper", "limit_ke", "limit_kd", "stiffness", "springref",
                               "target_ke", "target_kd", "effort_limit"});
    r_.check_keys(e, p, keys, "a " + type + " joint");

    j.id = r_.string(r_.required(e, p, "id", "a unique joint id"), at(p, "id"));
    if (auto it = joint_by_id_.find(j.id); it != joint_by_id_.end())
      r_.fail(at(p, "id"), "expected a unique joint id, \"" + j.id + "\" is already used by " +
                               joints_[static_cast<std::size_t>(it->second)].ptr);
    if (builder_.find_joint(j.id) >= 0)
      r_.fail(at(p, "id"), "expected a unique joint id, \"" + j.id + "\" is already a joint of an asset");
    if (const json* v = JsonReader::get(e, "label")) r_.string(*v, at(p, "label"), false);

    j.child = r_.string(r_.required(e, p, "child", "the id of a body of this file"), at(p, "child"));
    if (j.child == "world")
      r_.fail(at(p, "child"), "expected the id of a body of this file, the world cannot be a child");
    auto cit = body_by_id_.find(j.child);
    if (cit == body_by_id_.end()) {
      if (builder_.find_body(j.child) >= 0)
        r_.fail(at(p, "child"), "expected the id of a body of this file, \"" + j.child +
                                    "\" is a body of an asset (assets keep their own joints)");
      r_.fail(at(p, "child"),
              "expected the id of a body of this file (" + list_names(body_ids) + "), got \"" + j.child + "\"");
    }
    j.child_body = cit->second;
    j.parent = r_.string(r_.required(e, p, "parent", "\"world\" or a body id"), at(p, "parent"));
    if (j.parent == "world") {
      j.parent_body = -1;
    } else if (auto pit = body_by_id_.find(j.parent); pit != body_by_id_.end()) {
      j.parent_body = pit->second;
    } else if (const int ab = builder_.find_body(j.parent); ab > 0) {
      j.parent_body = -2;
      j.parent_index = ab;
    } else {
      r_.fail(at(p, "parent"),
              "expected \"world\" or a body id (" + list_names(body_ids) + "), got \"" + j.parent + "\"");
    }
    if (j.parent == j.child) r_.fail(at(p, "parent"), "a joint cannot connect body \"" + j.child + "\" to itself");
    BodyIn& child = bodies_[static_cast<std::size_t>(j.child_body)];
    if (child.joint >= 0)
      r_.fail(at(p, "child"), "body \"" + j.child + "\" already has a parent joint (" +
                                  joints_[static_cast<std::size_t>(child.joint)].ptr + "); a body has at most one");
    if (j.type == JType::Free && j.parent != "world")
      r_.fail(at(p, "parent"),
              "a free joint must have parent \"world\" (the body's transform is its initial world pose), got \"" +
                  j.parent + "\"");

    if (const json* v = JsonReader::get(e, "parent_xform")) j.pj = r_.transform(*v, at(p, "parent_xform"));
    if (const json* v = JsonReader::get(e, "child_xform")) j.cj = r_.transform(*v, at(p, "child_xform"));
    if (one_dof) j.axis = r_.unit_axis(r_.required(e, p, "axis", "a unit 3-vector in the joint frame"), at(p, "axis"));

    const json* lo = JsonReader::get(e, "limit_lower");
    const json* hi = JsonReader::get(e, "limit_upper");
    if (lo || hi) {
      if (!lo) r_.fail(at(p, "limit_lower"), "missing required key (limit_lower and limit_upper are given together)");
      if (!hi) r_.fail(at(p, "limit_upper"), "missing required key (limit_lower and limit_upper are given together)");
      j.limited = true;
      j.lower = r_.number(*lo, at(p, "limit_lower"));
      j.upper = r_.number(*hi, at(p, "limit_upper"));
      if (!(j.upper > j.lower))
        r_.fail(at(p, "limit_upper"),
                "expected a number greater than limit_lower (" + fmt(j.lower) + "), got " + describe(*hi));
    }
    for (const char* k : {"limit_ke", "limit_kd"})
      if (const json* v = JsonReader::get(e, k)) {
        r_.nonnegative(*v, at(p, k));
        r_.warn(at(p, k), "accepted but ignored: joint limits are SAP limit constraints (solver limit_stiffness), "
                          "not penalty springs");
      }
    if (j.type != JType::Fixed) {
      j.armature = jdef_.armature;
      j.damping = jdef_.damping;
      if (const json* v = JsonReader::get(e, "armature")) j.armature = r_.nonnegative(*v, at(p, "armature"));
      if (const json* v = JsonReader::get(e, "damping")) j.damping = r_.nonnegative(*v, at(p, "damping"));
    }
    if (one_dof) {
      j.target_ke = jdef_.target_ke;
      j.target_kd = jdef_.target_kd;
      j.has_effort = jdef_.has_effort;
      j.effort = jdef_.effort;
      if (const json* v = JsonReader::get(e, "stiffness")) j.stiffness = r_.nonnegative(*v, at(p, "stiffness"));
      if (const json* v = JsonReader::get(e, "springref")) j.springref = r_.number(*v, at(p, "springref"));
      if (const json* v = JsonReader::get(e, "target_ke")) j.target_ke = r_.nonnegative(*v, at(p, "target_ke"));
      if (const json* v = JsonReader::get(e, "target_kd")) j.target_kd = r_.nonnegative(*v, at(p, "target_kd"));
      if (const json* v = JsonReader::get(e, "effort_limit")) {
        j.has_effort = true;
        j.effort = r_.positive(*v, at(p, "effort_limit"));
      }
    }
    child.joint = static_cast<int>(joints_.size());
    joint_by_id_[j.id] = static_cast<int>(joints_.size());
    joints_.push_back(j);
  }
}

// Depth-first from a body towards the world through its parent joint, so that `order` lists
// parents before children; a body met again while on the current path closes a cycle.
void SceneParser::visit(int b, std::vector<int>& order, std::vector<std::string>& path) {
  BodyIn& B = bodies_[static_cast<std::size_t>(b)];
  if (B.state == 2) return;
  if (B.state == 1) {
    std::string cycle;
    bool in = false;
    for (const auto& id : path) {
      in = in || id == B.id;
      if (in) cycle += id + " -> ";
    }
    r_.fail(joints_[static_cast<std::size_t>(B.joint)].ptr,
            "the joints form a cycle (child -> parent): " + cycle + B.id + "; expected a tree rooted at the world");
  }
  B.state = 1;
  path.push_back(B.id);
  if (B.joint >= 0) {
    const int parent = joints_[static_cast<std::size_t>(B.joint)].parent_body;
    if (parent >= 0) visit(parent, order, path);
  }
  path.pop_back();
  B.state = 2;
  order.push_back(b);
}

// Adds body b (its parent already added) with its joint. A free joint, or no joint, leaves the
// body at its "transform" in the world; any other joint places it at X_pj inv(X_cj) in its
// parent and the "transform" only serves to check that (a warning when they disagree).
void SceneParser::add_body(int b) {
  BodyIn& B = bodies_[static_cast<std::size_t>(b)];
  JointIn* J = B.joint >= 0 ? &joints_[static_cast<std::size_t>(B.joint)] : nullptr;
  BodySpec spec;
  spec.name = B.id;
  Transform local = B.transform, parent_world;
  bool parent_known = true, parent_moving = false;
  int parent = 0;
  if (J && J->type != JType::Free) {
    if (J->parent_body >= 0) {
      const BodyIn& P = bodies_[static_cast<std::size_t>(J->parent_body)];
      parent = P.index;
      parent_known = P.world_known;
      parent_world = P.world;
      parent_moving = P.moving;
    } else if (J->parent_body == -2) {
      parent = J->parent_index;
      parent_known = false;
      parent_moving = asset_body_moving(builder_, parent);
    }
    local = J->pj * inverse(J->cj);  // Warp: X_pc(0) = X_pj inv(X_cj)
  }
  spec.parent = parent;
  spec.pos = to_array(local.pos);
  spec.quat = to_array(local.quat);
  B.world_known = parent_known;
  B.world = parent_world * local;
  B.moving = J && (J->type != JType::Fixed || parent_moving);
  if (J && J->type != JType::Free && B.has_transform) {
    if (!B.world_known)
      r_.warn(B.ptr + "/transform", "ignored: the body is placed by its " + std::string(jtype_name(J->type)) +
                                        " joint " + J->ptr + " (its parent is an asset body)");
    else if (!poses_close(B.world, B.transform))
      r_.warn(B.ptr + "/transform", "ignored: the body is placed by its " + std::string(jtype_name(J->type)) +
                                        " joint " + J->ptr + ", at q = 0 it is at " + pose_string(B.world) +
                                        ", the transform says " + pose_string(B.transform));
  }
  if (const json* in = JsonReader::get(*B.j, "inertia")) set_inertia(*in, B.ptr + "/inertia", spec);
  else spec.inertia_from_geoms = true;
  B.index = builder_.add_body(spec);

  if (J && J->type != JType::Fixed) {
    JointSpec js;
    js.name = J->id;
    js.type = J->type == JType::Revolute    ? kJointHinge
              : J->type == JType::Prismatic ? kJointSlide
              : J->type == JType::Ball      ? kJointBall
                                            : kJointFree;
    if (J->type != JType::Free) js.pos = to_array(J->cj.pos);  // anchor = child joint frame origin
    js.axis = to_array(rotate(J->cj.quat, J->axis));           // axis_body = Q axis_joint
    js.limited = J->limited;
    js.range = {J->lower, J->upper};
    js.armature = J->armature;
    js.damping = J->damping;
    js.stiffness = J->stiffness;
    js.springref = J->springref;
    J->builder_joint = builder_.add_joint(B.index, js);
  }
  add_shapes(B, B.index);
}

void SceneParser::set_inertia(const json& v, const std::string& ptr, BodySpec& spec) {
  r_.check_keys(v, ptr, {"mass", "com", "inertia", "diag"}, "an inertia");
  spec.inertia_from_geoms = false;
  spec.mass = r_.positive(r_.required(v, ptr, "mass", "a positive mass in kg"), at(ptr, "mass"));
  if (const json* c = JsonReader::get(v, "com")) spec.com = to_array(r_.vec3(*c, at(ptr, "com")));
  const json* full = JsonReader::get(v, "inertia");
  const json* diag = JsonReader::get(v, "diag");
  if (full && diag)
    r_.fail(at(ptr, "diag"), "give either inertia [xx, yy, zz, xy, xz, yz] or diag [xx, yy, zz], not both");
  if (!full && !diag)
    r_.fail(at(ptr, "inertia"),
            "missing required key (expected inertia [xx, yy, zz, xy, xz, yz] or diag [xx, yy, zz], kg m^2)");
  std::string ip = at(ptr, full ? "inertia" : "diag");
  if (full) {
    const auto x = r_.numbers(*full, ip, 6);
    spec.inertia = {x[0], x[1], x[2], x[3], x[4], x[5]};
  } else {
    const auto x = r_.numbers(*diag, ip, 3);
    spec.inertia = {x[0], x[1], x[2], 0, 0, 0};
  }
  // A rigid body's inertia about its com is positive definite and its principal moments obey
  // the triangle inequality I1 <= I2 + I3.
  const auto& I = spec.inertia;
  Eigen::Matrix3d M;
  M << I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2];
  const Eigen::Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(M).eigenvalues();
  const double tol = 1e-12 * ev.cwiseAbs().maxCoeff();
  if (!(ev.minCoeff() > 0) || ev[2] > ev[0] + ev[1] + tol)
    r_.fail(ip, "expected a positive-definite inertia whose principal moments satisfy the triangle inequality, "
                "got principal moments [" +
                    fmt(ev[0]) + ", " + fmt(ev[1]) + ", " + fmt(ev[2]) + "]");
}

void SceneParser::add_shapes(const BodyIn& B, int builder_body) {
  const json* shapes = JsonReader::get(*B.j, "shapes");
  if (!shapes) return;
  std::set<std::string> names;
  for (std::size_t k = 0; k < shapes->size(); ++k) {
    const std::string p = at(B.ptr + "/shapes", k);
    const json& e = (*shapes)[k];
    r_.require_object(e, p);
    const std::string type = r_.string(
        r_.required(e, p, "type", "sphere, capsule, box, plane, cylinder, ellipsoid or mesh"), at(p, "type"));
    std::vector<std::string> sizes;
    GeomSpec g;
    if (type == "sphere") g.type = kGeomSphere, sizes = {"radius"};
    else if (type == "capsule") g.type = kGeomCapsule, sizes = {"radius", "half_height"};
    else if (type == "cylinder") g.type = kGeomCylinder, sizes = {"radius", "half_height"};
    else if (type == "box") g.type = kGeomBox, sizes = {"hx", "hy", "hz"};
    else if (type == "plane") g.type = kGeomPlane;
    else if (type == "ellipsoid") g.type = kGeomEllipsoid, sizes = {"rx", "ry", "rz"};
    else if (type == "mesh") g.type = kGeomMesh;
    else r_.fail(at(p, "type"), "expected sphere, capsule, box, plane, cylinder, ellipsoid or mesh, got \"" + type + "\"");
    std::vector<std::string> keys = {"type", "id", "transform", "cfg", "color"};
    if (g.type == kGeomMesh) keys.insert(keys.end(), {"file", "scale"});
    keys.insert(keys.end(), sizes.begin(), sizes.end());
    r_.check_keys(e, p, keys, "a " + type + " shape");
    for (std::size_t s = 0; s < sizes.size(); ++s)
      g.size[s] = r_.positive(r_.required(e, p, sizes[s], "a positive number (m)"), at(p, sizes[s]));
    if (g.type == kGeomPlane && B.moving)
      r_.fail(at(p, "type"),
              "a plane must be on a static body (no joint, or welded to the world by fixed joints); body \"" + B.id +
                  "\" moves");
    g.name = B.id + "_shape" + std::to_string(k);
    if (const json* v = JsonReader::get(e, "id")) g.name = r_.string(*v, at(p, "id"));
    if (!names.insert(g.name).second)
      r_.fail(at(p, "id"), "expected a shape id unique within the body, got \"" + g.name + "\"");
    if (const json* v = JsonReader::get(e, "transform")) {
      const Transform x = r_.transform(*v, at(p, "transform"));
      g.pos = to_array(x.pos);
      g.quat = to_array(x.quat);
    }
    if (g.type == kGeomMesh) {
      // A mesh file (relative to the scene file), its convex hull, mass from its solid.
      const std::string file = r_.string(r_.required(e, p, "file", "a mesh file (STL, OBJ, DAE, ...)"), at(p, "file"));
      std::array<double, 3> scale{1, 1, 1};
      if (const json* v = JsonReader::get(e, "scale")) {
        const auto x = r_.numbers(*v, at(p, "scale"), 3);
        scale = {x[0], x[1], x[2]};
      }
      const std::string path = (std::filesystem::path(file).is_absolute() ? std::filesystem::path(file)
                                                                           : std::filesystem::path(base_dir_) / file)
                                   .lexically_normal()
                                   .string();
      const std::string key = path + "|" + fmt(scale[0]) + " " + fmt(scale[1]) + " " + fmt(scale[2]);
      auto it = mesh_shapes_.find(key);
      if (it == mesh_shapes_.end()) {
        try {
          const MeshAsset a = compile_mesh(std::filesystem::path(path).stem().string(), read_mesh_file(path), scale,
                                           MeshInertia::kConvex, path);
          it = mesh_shapes_.emplace(key, std::make_pair(builder_.add_mesh(a.hull), a.mass)).first;
        } catch (const std::runtime_error& err) {
          r_.fail(at(p, "file"), err.what());
        }
      }
      g.dataid = it->second.first;
      mesh_geom_pose(it->second.second, g.pos, g.quat);
      // size: the largest |coordinate| of the hull per axis (as for MJCF mesh geoms).
      for (const auto& v : builder_.mesh(g.dataid).vert)
        for (std::size_t k = 0; k < 3; ++k) g.size[k] = std::max(g.size[k], std::abs(v[k]));
    }
    if (const json* v = JsonReader::get(e, "color")) {
      if (!v->is_array() || (v->size() != 3 && v->size() != 4))
        r_.fail(at(p, "color"), "expected [r, g, b] or [r, g, b, a], got " + describe(*v));
      for (std::size_t c = 0; c < v->size(); ++c) r_.number((*v)[c], at(at(p, "color"), c));
    }
    g.density = sdef_.density;
    g.stiffness = sdef_.ke;
    g.dissipation = sdef_.tau;
    g.hc_dissipation = sdef_.hc_dissipation;
    g.friction = sdef_.mu;
    g.margin = sdef_.margin;
    if (const json* cfg = JsonReader::get(e, "cfg")) {
      const std::string cp = at(p, "cfg");
      r_.check_keys(*cfg, cp,
                    {"density", "mass", "ke", "tau", "hc_dissipation", "mu", "contype", "conaffinity", "margin"},
                    "a shape cfg");
      const json* dens = JsonReader::get(*cfg, "density");
      const json* mass = JsonReader::get(*cfg, "mass");
      if (dens && mass) r_.fail(at(cp, "mass"), "give either density or mass, not both");
      if (dens) g.density = r_.positive(*dens, at(cp, "density"));
      if (mass) {
        if (g.type == kGeomPlane) r_.fail(at(cp, "mass"), "a plane has no volume and takes no mass");
        g.mass = r_.positive(*mass, at(cp, "mass"));
      }
      if (const json* v = JsonReader::get(*cfg, "ke")) g.stiffness = r_.positive(*v, at(cp, "ke"));
      if (const json* v = JsonReader::get(*cfg, "tau")) g.dissipation = r_.nonnegative(*v, at(cp, "tau"));
      if (const json* v = JsonReader::get(*cfg, "hc_dissipation"))
        g.hc_dissipation = r_.nonnegative(*v, at(cp, "hc_dissipation"));
      if (const json* v = JsonReader::get(*cfg, "mu")) g.friction = r_.nonnegative(*v, at(cp, "mu"));
      if (const json* v = JsonReader::get(*cfg, "margin")) g.margin = r_.nonnegative(*v, at(cp, "margin"));
      if (const json* v = JsonReader::get(*cfg, "contype"))
        g.contype = static_cast<int>(r_.integer(*v, at(cp, "contype"), 0, 0x7fffffff));
      if (const json* v = JsonReader::get(*cfg, "conaffinity"))
        g.conaffinity = static_cast<int>(r_.integer(*v, at(cp, "conaffinity"), 0, 0x7fffffff));
    }
    builder_.add_geom(builder_body, g);
  }
}

void SceneParser::add_ground(const json& gr, const std::string& ptr) {
  r_.check_keys(gr, ptr, {"enabled", "label", "ke", "tau", "hc_dissipation", "mu", "margin"}, "ground");
  bool enabled = true;
  if (const json* v = JsonReader::get(gr, "enabled")) enabled = r_.boolean(*v, at(ptr, "enabled"));
  if (const json* v = JsonReader::get(gr, "label")) r_.string(*v, at(ptr, "label"), false);
  GeomSpec g;
  g.name = "ground";
  g.type = kGeomPlane;  // z = 0, normal +z
  g.stiffness = sdef_.ke;
  g.dissipation = sdef_.tau;
  g.hc_dissipation = sdef_.hc_dissipation;
  g.friction = sdef_.mu;
  g.margin = sdef_.margin;
  if (const json* v = JsonReader::get(gr, "ke")) g.stiffness = r_.positive(*v, at(ptr, "ke"));
  if (const json* v = JsonReader::get(gr, "tau")) g.dissipation = r_.nonnegative(*v, at(ptr, "tau"));
  if (const json* v = JsonReader::get(gr, "hc_dissipation"))
    g.hc_dissipation = r_.nonnegative(*v, at(ptr, "hc_dissipation"));
  if (const json* v = JsonReader::get(gr, "mu")) g.friction = r_.nonnegative(*v, at(ptr, "mu"));
  if (const json* v = JsonReader::get(gr, "margin")) g.margin = r_.nonnegative(*v, at(ptr, "margin"));
  if (enabled) builder_.add_geom(0, g);
}

// ModelBuilder's errors name bodies ("body 'x' ..."): locate them at the body in the file.
Model SceneParser::finalize() {
  try {
    return builder_.finalize();
  } catch (const std::exception& e) {
    const std::string msg = e.what();
    std::string ptr;
    for (const BodyIn& b : bodies_)
      if (msg.find("body '" + b.id + "'") != std::string::npos) {
        ptr = b.ptr;
        break;
      }
    r_.fail(ptr, msg);
  }
}

// PD drives: one actuator per revolute/prismatic joint with target_ke or target_kd > 0, in
// the order of "joints" (after the actuators of the assets).
void SceneParser::add_joint_drives() {
  for (const JointIn& j : joints_) {
    if (!(j.type == JType::Revolute || j.type == JType::Prismatic)) continue;
    if (!(j.target_ke > 0 || j.target_kd > 0)) continue;
    ActuatorSpec a;
    a.name = j.id;
    a.type = kActPD;
    a.joint = j.builder_joint;
    a.kp = j.target_ke;
    a.kd = j.target_kd;
    if (j.has_effort) {
      a.forcelimited = true;
      a.forcerange = {-j.effort, j.effort};
    }
    builder_.add_actuator(a);
  }
}

// Fixed tendons: L = sum coef q over revolute/prismatic joints (of "joints" or of an asset),
// with optional limits, spring and damper (docs/scene-format.md, `tendons`).
void SceneParser::parse_tendons(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of tendons, got " + describe(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.require_object(e, p);
    r_.check_keys(e, p, {"id", "joints", "limit_lower", "limit_upper", "stiffness", "rest_length", "damping"},
                  "a tendon");
    TendonSpec t;
    t.name = r_.string(r_.required(e, p, "id", "a unique tendon id"), at(p, "id"));
    if (builder_.find_tendon(t.name) >= 0) r_.fail(at(p, "id"), "repeated tendon id '" + t.name + "'");
    const json& js = r_.required(e, p, "joints", "an array of {\"joint\": id, \"coef\": number}");
    const std::string jp = at(p, "joints");
    if (!js.is_array() || js.empty())
      r_.fail(jp, "expected a non-empty array of {\"joint\", \"coef\"}, got " + describe(js));
    for (std::size_t k = 0; k < js.size(); ++k) {
      const std::string ep = at(jp, k);
      r_.require_object(js[k], ep);
      r_.check_keys(js[k], ep, {"joint", "coef"}, "a tendon joint");
      const std::string jn = r_.string(r_.required(js[k], ep, "joint", "a revolute or prismatic joint id"),
                                       at(ep, "joint"));
      const int j = builder_.find_joint(jn);
      if (j < 0) r_.fail(at(ep, "joint"), "unknown joint '" + jn + "'");
      const int type = builder_.joint(j).type;
      if (type != kJointHinge && type != kJointSlide)
        r_.fail(at(ep, "joint"), "joint '" + jn + "' must be revolute or prismatic");
      for (const auto& [other, c] : t.joints)
        if (other == j) r_.fail(at(ep, "joint"), "joint '" + jn + "' appears twice in the tendon");
      t.joints.push_back({j, r_.number(r_.required(js[k], ep, "coef", "a number"), at(ep, "coef"))});
    }
    const json* lo = JsonReader::get(e, "limit_lower");
    const json* hi = JsonReader::get(e, "limit_upper");
    if (lo || hi) {
      if (!lo) r_.fail(at(p, "limit_lower"), "missing required key (limit_lower and limit_upper are given together)");
      if (!hi) r_.fail(at(p, "limit_upper"), "missing required key (limit_lower and limit_upper are given together)");
      t.limited = true;
      t.range = {r_.number(*lo, at(p, "limit_lower")), r_.number(*hi, at(p, "limit_upper"))};
      if (!(t.range[0] <= t.range[1])) r_.fail(at(p, "limit_lower"), "limit_lower exceeds limit_upper");
    }
    if (const json* v = JsonReader::get(e, "stiffness")) t.stiffness = r_.nonnegative(*v, at(p, "stiffness"));
    if (const json* v = JsonReader::get(e, "rest_length")) t.lengthspring = r_.number(*v, at(p, "rest_length"));
    if (const json* v = JsonReader::get(e, "damping")) t.damping = r_.nonnegative(*v, at(p, "damping"));
    builder_.add_tendon(t);
  }
}

// Equality constraints (docs/scene-format.md, `equalities`): coupler (Drake's: q0 - ratio q1 -
// offset = 0), connect (a point of body0 on a point of body1) and weld (a frame of body0 on a
// frame of body1). Rigid (Drake's near-rigid regime) unless "solref" gives MuJoCo's compliance.
void SceneParser::parse_equalities(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of equality constraints, got " + describe(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.require_object(e, p);
    const std::string type = r_.string(r_.required(e, p, "type", "coupler, connect or weld"), at(p, "type"));
    EqualitySpec q;
    if (type == "coupler") {
      r_.check_keys(e, p, {"type", "id", "active", "solref", "joint0", "joint1", "gear_ratio", "offset"}, "a coupler");
      q.type = kEqJoint;
    } else if (type == "connect") {
      r_.check_keys(e, p, {"type", "id", "active", "solref", "body0", "body1", "anchor0", "anchor1"}, "a connect");
      q.type = kEqConnect;
    } else if (type == "weld") {
      r_.check_keys(e, p, {"type", "id", "active", "solref", "body0", "body1", "frame0", "frame1"}, "a weld");
      q.type = kEqWeld;
    } else {
      r_.fail(at(p, "type"), "expected coupler, connect or weld, got '" + type + "'");
    }
    if (const json* v = JsonReader::get(e, "id")) q.name = r_.string(*v, at(p, "id"));
    if (const json* v = JsonReader::get(e, "active")) q.active = r_.boolean(*v, at(p, "active"));
    if (const json* v = JsonReader::get(e, "solref")) {
      const std::vector<double> sr = r_.numbers(*v, at(p, "solref"), 2);
      if (!((sr[0] > 0 && sr[1] > 0) || (sr[0] <= 0 && sr[1] <= 0 && (sr[0] < 0 || sr[1] < 0))))
        r_.fail(at(p, "solref"), "expected [timeconst > 0, dampratio > 0] or [-stiffness, -damping] (MuJoCo's solref)");
      q.solref = {sr[0], sr[1]};
    }
    if (q.type == kEqJoint) {
      auto joint = [&](const char* key) {
        const std::string jn = r_.string(r_.required(e, p, key, "a revolute or prismatic joint id"), at(p, key));
        const int j = builder_.find_joint(jn);
        if (j < 0) r_.fail(at(p, key), "unknown joint '" + jn + "'");
        if (builder_.joint(j).type != kJointHinge && builder_.joint(j).type != kJointSlide)
          r_.fail(at(p, key), "joint '" + jn + "' must be revolute or prismatic");
        return j;
      };
      q.obj1 = joint("joint0");
      q.obj2 = joint("joint1");
      if (q.obj1 == q.obj2) r_.fail(at(p, "joint1"), "joint0 and joint1 must differ");
      const double ratio = JsonReader::get(e, "gear_ratio")
                               ? r_.number(*JsonReader::get(e, "gear_ratio"), at(p, "gear_ratio"))
                               : 1.0;
      const double offset = JsonReader::get(e, "offset") ? r_.number(*JsonReader::get(e, "offset"), at(p, "offset"))
                                                         : 0.0;
      // Joint coordinates relative to their reference (0 for joints of "joints").
      q.polycoef = {offset, ratio, 0, 0, 0};
    } else {
      auto body = [&](const char* key) {
        const std::string bn = r_.string(r_.required(e, p, key, "\"world\" or a body id"), at(p, key));
        if (bn == "world") return 0;
        auto it = body_by_id_.find(bn);
        const int b = it != body_by_id_.end() ? bodies_[static_cast<std::size_t>(it->second)].index
                                              : builder_.find_body(bn);
        if (b < 0) r_.fail(at(p, key), "unknown body '" + bn + "'");
        return b;
      };
      q.obj1 = body("body0");
      q.obj2 = body("body1");
      if (q.obj1 == q.obj2) r_.fail(at(p, "body1"), "body0 and body1 must differ");
      if (q.type == kEqConnect) {
        q.pos1 = to_array(
            r_.vec3(r_.required(e, p, "anchor0", "a point [x, y, z] in body0's frame"), at(p, "anchor0")));
        if (const json* v = JsonReader::get(e, "anchor1")) {
          q.pos2 = to_array(r_.vec3(*v, at(p, "anchor1")));
          q.has_pos2 = true;
        }
      } else {
        if (const json* v = JsonReader::get(e, "frame1")) {
          const Transform x = r_.transform(*v, at(p, "frame1"));
          q.pos2 = to_array(x.pos);
          q.quat2 = {x.quat.w, x.quat.x, x.quat.y, x.quat.z};
        }
        if (const json* v = JsonReader::get(e, "frame0")) {
          const Transform x = r_.transform(*v, at(p, "frame0"));
          q.pos1 = to_array(x.pos);
          q.quat1 = {x.quat.w, x.quat.x, x.quat.y, x.quat.z};
          q.has_frame1 = true;
        }
      }
    }
    builder_.add_equality(q);
  }
}

}  // namespace sap::scene_json

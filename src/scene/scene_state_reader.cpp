// The run-time parts of a JSON scene (docs/scene-format.md), read once the model is built:
// the initial state (asset keyframes, "initial_joint_q", "initial_joint_qd"), the control
// schedules ("controls") and the per-world perturbation ("perturbation"). scene_runtime.cpp
// evaluates them (scene_initial_state, scene_control).
//
// Joint values are given as in Warp, in the joint frame; our coordinates are in the body frame
// (scene_to_model.cpp): with Q the rotation of the child joint frame, a ball rotation r becomes
// Q r Q^T and a ball angular velocity w becomes Q w. Free joints take the world pose and the
// world velocity, converted to MuJoCo's [v_world, omega_body].
#include <set>

#include "scene/scene_parser.hpp"

namespace sap::scene_json {

// A keyframe chosen for an asset sets the asset's coordinates. Assets come first in the model,
// so their coordinates start at the first qpos of their first joint.
void SceneParser::apply_asset_keyframes(Scene& s) const {
  for (const AssetInfo& a : assets_) {
    if (!a.has_keyframe) continue;
    if (a.joint_end > a.joint_begin) {
      const int adr = s.model.jnt_qposadr[static_cast<std::size_t>(a.joint_begin)];
      for (std::size_t i = 0; i < a.keyframe_qpos.size(); ++i)
        s.qpos0[static_cast<std::size_t>(adr) + i] = a.keyframe_qpos[i];
    }
  }
}

// One {"joint": id, "value": ...} entry of initial_joint_q / initial_joint_qd (`section`),
// checked: the joint exists in the model, moves, and is listed once in the section.
SceneParser::JointValue SceneParser::joint_value(const json& e, const std::string& p, const char* section,
                                                 const char* value_what, const char* quantity, const Model& m,
                                                 std::set<std::string>& seen) const {
  r_.check_keys(e, p, {"joint", "value"}, std::string("an ") + section + " entry");
  const std::string name = r_.string(r_.required(e, p, "joint", "a joint id"), at(p, "joint"));
  JointValue jv{&r_.required(e, p, "value", value_what), at(p, "value"), json_joint(name), -1, 0};
  if (jv.json_joint && jv.json_joint->type == JType::Fixed)
    r_.fail(at(p, "joint"), "joint \"" + name + "\" is fixed and has no " + quantity);
  jv.id = m.joint_id(name);
  if (jv.id < 0)
    r_.fail(at(p, "joint"),
            "expected the id of a movable joint (" + list_names(m.jnt_names) + "), got \"" + name + "\"");
  if (!seen.insert(name).second) r_.fail(at(p, "joint"), "joint \"" + name + "\" is listed twice");
  jv.type = m.jnt_type[static_cast<std::size_t>(jv.id)];
  return jv;
}

void SceneParser::initial_q(const json& a, const std::string& ptr, Scene& s) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of {\"joint\": id, \"value\": ...}, got " + describe(a));
  const Model& m = s.model;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const JointValue e = joint_value(a[i], at(ptr, i), "initial_joint_q", "the joint's coordinates", "coordinates", m,
                                     seen);
    const json& v = *e.value;
    const std::string& vp = e.ptr;
    const JointIn* J = e.json_joint;
    const int jid = e.id, type = e.type;
    double* q = s.qpos0.data() + m.jnt_qposadr[static_cast<std::size_t>(jid)];
    if (type == kJointHinge || type == kJointSlide) {
      q[0] = r_.number(v, vp, type == kJointHinge ? "an angle (rad)" : "a displacement (m)");
      if (m.jnt_limited[static_cast<std::size_t>(jid)]) {
        const double lo = m.jnt_range[2 * static_cast<std::size_t>(jid)],
                     hi = m.jnt_range[2 * static_cast<std::size_t>(jid) + 1];
        if (q[0] < lo || q[0] > hi)
          r_.warn(vp, "initial value " + fmt(q[0]) + " is outside the joint limits [" + fmt(lo) + ", " + fmt(hi) + "]");
      }
    } else if (type == kJointBall) {
      // A rotation in the joint frame; our ball coordinate is in the body frame: Q r Q^T.
      Quat<double> r = r_.rotation(v, vp);
      if (J) r = J->cj.quat * r * conjugate(J->cj.quat);
      (r / norm(r)).store(q);
    } else {
      // Free joint: the body's world pose [p (3), quat (4)].
      Transform x;
      if (v.is_array()) {
        const auto n = r_.numbers(v, vp, 7);
        x.pos = {{n[0], n[1], n[2]}};
        x.quat = r_.unit_quat({n[3], n[4], n[5], n[6]}, vp);
      } else {
        x = r_.transform(v, vp);
      }
      x.pos.store(q);
      x.quat.store(q + 3);
    }
  }
}

void SceneParser::initial_qd(const json& a, const std::string& ptr, Scene& s) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of {\"joint\": id, \"value\": ...}, got " + describe(a));
  const Model& m = s.model;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const JointValue e = joint_value(a[i], at(ptr, i), "initial_joint_qd", "the joint's velocity", "velocity", m, seen);
    const json& v = *e.value;
    const std::string& vp = e.ptr;
    const JointIn* J = e.json_joint;
    const int jid = e.id, type = e.type;
    double* qd = s.qvel0.data() + m.jnt_dofadr[static_cast<std::size_t>(jid)];
    if (type == kJointHinge || type == kJointSlide) {
      qd[0] = r_.number(v, vp, type == kJointHinge ? "an angular velocity (rad/s)" : "a velocity (m/s)");
    } else if (type == kJointBall) {
      Vec3<double> w = r_.vec3(v, vp);  // in the child joint frame -> body frame: Q w
      if (J) w = rotate(J->cj.quat, w);
      w.store(qd);
    } else if (v.is_array()) {
      const auto n = r_.numbers(v, vp, 6);  // raw: [v_world (3), omega_body (3)]
      for (int k = 0; k < 6; ++k) qd[k] = n[static_cast<std::size_t>(k)];
    } else {
      r_.check_keys(v, vp, {"linear", "angular"}, "a free-joint velocity");
      Vec3<double> lin = Vec3<double>::zero(), ang = Vec3<double>::zero();
      if (const json* x = JsonReader::get(v, "linear")) lin = r_.vec3(*x, at(vp, "linear"));
      if (const json* x = JsonReader::get(v, "angular")) ang = r_.vec3(*x, at(vp, "angular"));
      // World angular velocity -> body frame at the initial orientation q: q* w q.
      const double* q = s.qpos0.data() + m.jnt_qposadr[static_cast<std::size_t>(jid)];
      const Quat<double> r = Quat<double>::load(q + 3);
      lin.store(qd);
      rotate(conjugate(r / norm(r)), ang).store(qd + 3);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Controls and perturbations.

// One schedule per actuator, by precedence: the default ("zero", or "hold": position-type
// actuators hold their joint's initial coordinate), then the ctrl of an asset's keyframe, then
// an explicit schedule of "schedules".
void SceneParser::parse_controls(const json& c, const std::string& ptr, Scene& s) {
  const Model& m = s.model;
  s.controls.assign(static_cast<std::size_t>(m.nu), ControlSchedule{});
  r_.check_keys(c, ptr, {"default", "schedules"}, "controls");
  std::string def = "zero";
  if (const json* v = JsonReader::get(c, "default")) {
    def = r_.string(*v, at(ptr, "default"));
    if (def != "zero" && def != "hold")
      r_.fail(at(ptr, "default"), "expected \"zero\" or \"hold\", got \"" + def + "\"");
  }
  if (def == "hold") {
    // Position-type actuators hold the initial coordinate of their joint.
    for (int i = 0; i < m.nu; ++i) {
      const int t = m.actuator_type[static_cast<std::size_t>(i)];
      if (t != kActPD && t != kActPosition) continue;
      const int tendon = m.actuator_tendonid[static_cast<std::size_t>(i)];
      if (tendon >= 0) {  // a servo on a tendon holds the tendon length
        double L = 0;
        for (int k = m.tendon_adr[static_cast<std::size_t>(tendon)];
             k < m.tendon_adr[static_cast<std::size_t>(tendon)] + m.tendon_num[static_cast<std::size_t>(tendon)]; ++k)
          L += m.wrap_prm[static_cast<std::size_t>(k)] *
               s.qpos0[static_cast<std::size_t>(
                   m.jnt_qposadr[static_cast<std::size_t>(m.wrap_objid[static_cast<std::size_t>(k)])])];
        s.controls[static_cast<std::size_t>(i)].value = L * m.actuator_gear[static_cast<std::size_t>(i)];
        continue;
      }
      const int dof = m.actuator_dofadr[static_cast<std::size_t>(i)];
      const int jnt = m.dof_jntid[static_cast<std::size_t>(dof)];
      // The servo's target is ctrl / gear (an imported MJCF servo can have gear != 1).
      s.controls[static_cast<std::size_t>(i)].value =
          s.qpos0[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(jnt)])] *
          m.actuator_gear[static_cast<std::size_t>(i)];
    }
  }
  for (const AssetInfo& a : assets_) {
    if (!a.has_keyframe || a.act_begin < 0 || a.act_end < 0) continue;
    for (std::size_t k = 0; k < a.keyframe_ctrl.size() && a.act_begin + static_cast<int>(k) < a.act_end; ++k)
      s.controls[static_cast<std::size_t>(a.act_begin) + k].value = a.keyframe_ctrl[k];
  }
  const json* list = JsonReader::get(c, "schedules");
  if (!list) return;
  const std::string lp = at(ptr, "schedules");
  if (!list->is_array()) r_.fail(lp, "expected an array of control schedules, got " + describe(*list));
  std::set<std::string> seen;
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string p = at(lp, i);
    const json& e = (*list)[i];
    r_.check_keys(e, p, {"actuator", "constant", "sinusoid", "keyframes"}, "a control schedule");
    const std::string name = r_.string(r_.required(e, p, "actuator", "an actuator name"), at(p, "actuator"));
    const int id = m.actuator_id(name);
    if (id < 0)
      r_.fail(at(p, "actuator"),
              "expected an actuator name (" + list_names(m.actuator_names) + "), got \"" + name + "\"");
    if (!seen.insert(name).second) r_.fail(at(p, "actuator"), "actuator \"" + name + "\" already has a schedule");
    const int nlaw = (JsonReader::get(e, "constant") ? 1 : 0) + (JsonReader::get(e, "sinusoid") ? 1 : 0) +
                     (JsonReader::get(e, "keyframes") ? 1 : 0);
    if (nlaw != 1)
      r_.fail(p, "expected exactly one of \"constant\", \"sinusoid\" or \"keyframes\", got " + std::to_string(nlaw));
    ControlSchedule cs;
    if (const json* v = JsonReader::get(e, "constant")) {
      const std::string q = at(p, "constant");
      r_.check_keys(*v, q, {"value"}, "a constant schedule");
      cs.kind = ControlSchedule::Kind::Constant;
      cs.value = r_.number(r_.required(*v, q, "value", "a number"), at(q, "value"));
    } else if (const json* v = JsonReader::get(e, "sinusoid")) {
      const std::string q = at(p, "sinusoid");
      r_.check_keys(*v, q, {"amplitude", "frequency_hz", "phase", "offset", "phase_per_world"}, "a sinusoid schedule");
      cs.kind = ControlSchedule::Kind::Sinusoid;
      cs.amplitude = r_.number(r_.required(*v, q, "amplitude", "a number"), at(q, "amplitude"));
      cs.frequency_hz = r_.nonnegative(r_.required(*v, q, "frequency_hz", "a frequency >= 0 in Hz"),
                                       at(q, "frequency_hz"));
      if (const json* x = JsonReader::get(*v, "phase")) cs.phase = r_.number(*x, at(q, "phase"));
      if (const json* x = JsonReader::get(*v, "offset")) cs.offset = r_.number(*x, at(q, "offset"));
      if (const json* x = JsonReader::get(*v, "phase_per_world"))
        cs.phase_per_world = r_.number(*x, at(q, "phase_per_world"));
    } else {
      const json& k = *JsonReader::get(e, "keyframes");
      const std::string q = at(p, "keyframes");
      if (!k.is_array() || k.empty())
        r_.fail(q, "expected a non-empty array of {\"time\": t, \"value\": u}, got " + describe(k));
      cs.kind = ControlSchedule::Kind::Keyframes;
      for (std::size_t n = 0; n < k.size(); ++n) {
        const std::string kp = at(q, n);
        r_.check_keys(k[n], kp, {"time", "value"}, "a keyframe");
        const double t = r_.number(r_.required(k[n], kp, "time", "a time in s"), at(kp, "time"));
        if (n > 0 && !(t > cs.times.back()))
          r_.fail(at(kp, "time"),
                  "expected a time greater than the previous keyframe's (" + fmt(cs.times.back()) + "), got " + fmt(t));
        cs.times.push_back(t);
        cs.values.push_back(r_.number(r_.required(k[n], kp, "value", "a number"), at(kp, "value")));
      }
    }
    s.controls[static_cast<std::size_t>(id)] = cs;
  }
}

void SceneParser::parse_perturbation(const json& p, const std::string& ptr, Scene& s) {
  r_.check_keys(p, ptr, {"qpos_std", "qvel_std", "seed"}, "perturbation");
  if (const json* v = JsonReader::get(p, "qpos_std")) s.perturbation.qpos_std = r_.nonnegative(*v, at(ptr, "qpos_std"));
  if (const json* v = JsonReader::get(p, "qvel_std")) s.perturbation.qvel_std = r_.nonnegative(*v, at(ptr, "qvel_std"));
  if (const json* v = JsonReader::get(p, "seed")) {
    if (v->is_number_unsigned()) s.perturbation.seed = v->get<std::uint64_t>();
    else s.perturbation.seed = static_cast<std::uint64_t>(r_.integer(*v, at(ptr, "seed"), 0, 0x7fffffffffffffffLL));
  }
}

}  // namespace sap::scene_json

// JSON scene loader (format version 1, docs/scene-format.md).
//
// The format follows the Warp implementation's YAML scenes: bodies with shapes, joints with
// parent/child transforms in the Warp style, builder defaults, a ground plane, initial joint
// coordinates. It is strict: unknown keys, wrong types and bad values are errors of the form
// "<file>: <json pointer>: <what was expected>".
//
// Warp joint -> our body frame (derivation in docs/scene-format.md). Warp places a child by
//   X_wc(q) = X_wp X_pj J(q) inv(X_cj),
// with X_pj = (p, R) the joint frame in the parent, X_cj = (c, Q) the joint frame in the
// child and J(q) the joint motion in the joint frame. Our bodies apply the joint motion in the
// body frame about the anchor, so with body pose (in the parent) B = X_pj inv(X_cj):
//   body_pos = p - R Q^T c,  body_quat = R Q^T,  anchor = c,  axis_body = Q axis_joint,
// and a ball rotation r_joint becomes r_body = Q r_joint Q^T.
#include <Eigen/Dense>
#include <Eigen/Geometry>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sap/mjcf.hpp"
#include "sap/model_builder.hpp"
#include "sap/scene.hpp"

namespace sap {
namespace {

using json = nlohmann::json;
using Eigen::Quaterniond;
using Eigen::Vector3d;

constexpr double kUnitTolerance = 1e-6;  // |axis| and |q| must be 1 within this, then are normalised
constexpr std::size_t kMaxJsonDepth = 64;  // nesting levels of arrays/objects accepted
constexpr double kPoseTolerance = 1e-6;  // body transform vs joint-implied pose (m, rad)

// ---------------------------------------------------------------------------------------
// Errors, pointers, typed accessors.

std::string escape_key(const std::string& k) {
  std::string r;
  for (char c : k) {
    if (c == '~') r += "~0";
    else if (c == '/') r += "~1";
    else r += c;
  }
  return r;
}
std::string at(const std::string& ptr, const std::string& key) { return ptr + "/" + escape_key(key); }
std::string at(const std::string& ptr, std::size_t i) { return ptr + "/" + std::to_string(i); }

std::string describe(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  if (v.is_object()) return "an object " + s;
  if (v.is_array()) return "an array " + s;
  return s;
}
std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}
std::string join(const std::vector<std::string>& xs) {
  std::string r;
  for (const auto& x : xs) r += (r.empty() ? "" : ", ") + x;
  return r;
}

struct Reader {
  std::string file;
  std::vector<std::string>* warnings = nullptr;

  [[noreturn]] void fail(const std::string& ptr, const std::string& what) const {
    throw std::runtime_error(file + ": " + (ptr.empty() ? std::string("(root)") : ptr) + ": " + what);
  }
  void warn(const std::string& ptr, const std::string& what) const {
    if (warnings) warnings->push_back(file + ": " + (ptr.empty() ? std::string("(root)") : ptr) + ": " + what);
  }

  void require_object(const json& o, const std::string& ptr) const {
    if (!o.is_object()) fail(ptr, "expected an object, got " + describe(o));
  }
  // Strict objects: every key must be in `allowed`.
  void check_keys(const json& o, const std::string& ptr, const std::vector<std::string>& allowed,
                  const std::string& what = "") const {
    require_object(o, ptr);
    for (auto it = o.begin(); it != o.end(); ++it) {
      bool ok = false;
      for (const auto& a : allowed) ok = ok || a == it.key();
      if (!ok) fail(at(ptr, it.key()), "unknown key" + (what.empty() ? "" : " for " + what) + ", expected one of: " + join(allowed));
    }
  }
  static const json* get(const json& o, const std::string& key) {
    auto it = o.find(key);
    return it == o.end() ? nullptr : &*it;
  }
  const json& required(const json& o, const std::string& ptr, const std::string& key, const std::string& what) const {
    const json* v = get(o, key);
    if (!v) fail(at(ptr, key), "missing required key (expected " + what + ")");
    return *v;
  }

  // Numbers: JSON numbers or strings holding an expression of numbers and pi.
  double number(const json& v, const std::string& ptr, const std::string& what = "a number") const {
    if (v.is_number()) {
      const double x = v.get<double>();
      if (!std::isfinite(x)) fail(ptr, "expected " + what + ", got " + describe(v));
      return x;
    }
    if (v.is_string()) {
      try {
        return evaluate_scene_expression(v.get<std::string>());
      } catch (const std::invalid_argument& e) {
        fail(ptr, e.what());
      }
    }
    fail(ptr, "expected " + what + ", got " + describe(v));
  }
  double positive(const json& v, const std::string& ptr) const {
    const double x = number(v, ptr, "a positive number");
    if (!(x > 0)) fail(ptr, "expected a positive number, got " + describe(v));
    return x;
  }
  double nonnegative(const json& v, const std::string& ptr) const {
    const double x = number(v, ptr, "a number >= 0");
    if (!(x >= 0)) fail(ptr, "expected a number >= 0, got " + describe(v));
    return x;
  }
  long long integer(const json& v, const std::string& ptr, long long lo, long long hi) const {
    const std::string what = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    if (!v.is_number_integer()) fail(ptr, "expected " + what + ", got " + describe(v));
    if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi))
      fail(ptr, "expected " + what + ", got " + describe(v));
    const long long x = v.get<long long>();
    if (x < lo || x > hi) fail(ptr, "expected " + what + ", got " + describe(v));
    return x;
  }
  bool boolean(const json& v, const std::string& ptr) const {
    if (!v.is_boolean()) fail(ptr, "expected true or false, got " + describe(v));
    return v.get<bool>();
  }
  std::string string(const json& v, const std::string& ptr, bool nonempty = true) const {
    if (!v.is_string() || (nonempty && v.get<std::string>().empty()))
      fail(ptr, std::string("expected a ") + (nonempty ? "non-empty " : "") + "string, got " + describe(v));
    return v.get<std::string>();
  }
  std::vector<double> numbers(const json& v, const std::string& ptr, std::size_t n) const {
    if (!v.is_array() || v.size() != n)
      fail(ptr, "expected an array of " + std::to_string(n) + " numbers, got " + describe(v));
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[i] = number(v[i], at(ptr, i));
    return r;
  }
  Vector3d vec3(const json& v, const std::string& ptr) const {
    const auto x = numbers(v, ptr, 3);
    return {x[0], x[1], x[2]};
  }
  // A unit vector: zero and |a| - 1 beyond kUnitTolerance are rejected; the rest is normalised.
  Vector3d unit_axis(const json& v, const std::string& ptr) const {
    const Vector3d a = vec3(v, ptr);
    const double n = a.norm();
    if (!(n > 0)) fail(ptr, "expected a unit axis, got the zero vector");
    if (std::abs(n - 1) > kUnitTolerance)
      fail(ptr, "expected a unit axis (|a| = 1 within 1e-6), got |a| = " + fmt(n));
    return a / n;
  }
  Quaterniond unit_quat(const std::vector<double>& wxyz, const std::string& ptr) const {
    Quaterniond q(wxyz[0], wxyz[1], wxyz[2], wxyz[3]);
    const double n = q.norm();
    if (!(n > 0)) fail(ptr, "expected a unit quaternion, got the zero quaternion");
    if (std::abs(n - 1) > kUnitTolerance)
      fail(ptr, "expected a unit quaternion (|q| = 1 within 1e-6), got |q| = " + fmt(n) +
                    " (write rotations exactly with {\"axis_angle\": ...} or {\"rpy\": ...})");
    return q.normalized();
  }
  // Rotation: "identity" | [w, x, y, z] | {"wxyz": [...]} | {"xyzw": [...]} |
  // {"axis_angle": {"axis": [...], "angle": a}} | {"rpy": [roll, pitch, yaw]}.
  Quaterniond rotation(const json& v, const std::string& ptr) const {
    if (v.is_string() && v.get<std::string>() == "identity") return Quaterniond::Identity();
    if (v.is_array()) return unit_quat(numbers(v, ptr, 4), ptr);
    if (v.is_object() && v.size() == 1) {
      const std::string key = v.begin().key();
      const std::string p = at(ptr, key);
      const json& x = v.begin().value();
      if (key == "wxyz") return unit_quat(numbers(x, p, 4), p);
      if (key == "xyzw") {
        const auto q = numbers(x, p, 4);
        return unit_quat({q[3], q[0], q[1], q[2]}, p);
      }
      if (key == "axis_angle") {
        check_keys(x, p, {"axis", "angle"});
        const Vector3d axis = unit_axis(required(x, p, "axis", "a unit 3-vector"), at(p, "axis"));
        const double angle = number(required(x, p, "angle", "an angle in radians"), at(p, "angle"));
        return Quaterniond(Eigen::AngleAxisd(angle, axis));
      }
      if (key == "rpy") {
        // Fixed-axis roll (x), pitch (y), yaw (z): R = Rz(yaw) Ry(pitch) Rx(roll), as URDF.
        const auto r = numbers(x, p, 3);
        return Quaterniond(Eigen::AngleAxisd(r[2], Vector3d::UnitZ()) * Eigen::AngleAxisd(r[1], Vector3d::UnitY()) *
                           Eigen::AngleAxisd(r[0], Vector3d::UnitX()));
      }
    }
    fail(ptr, "expected a rotation: \"identity\", [w, x, y, z], {\"wxyz\": [...]}, {\"xyzw\": [...]}, "
              "{\"axis_angle\": {\"axis\": [...], \"angle\": a}} or {\"rpy\": [r, p, y]}, got " + describe(v));
  }
};

struct Pose {
  Vector3d p = Vector3d::Zero();
  Quaterniond q = Quaterniond::Identity();
};
Pose operator*(const Pose& a, const Pose& b) { return {a.p + a.q * b.p, a.q * b.q}; }
Pose inverse(const Pose& a) {
  const Quaterniond qi = a.q.conjugate();
  return {-(qi * a.p), qi};
}
bool poses_close(const Pose& a, const Pose& b) {
  return (a.p - b.p).norm() <= kPoseTolerance && a.q.angularDistance(b.q) <= kPoseTolerance;
}
std::string pose_string(const Pose& x) {
  return "p = [" + fmt(x.p.x()) + ", " + fmt(x.p.y()) + ", " + fmt(x.p.z()) + "], q (w, x, y, z) = [" + fmt(x.q.w()) +
         ", " + fmt(x.q.x()) + ", " + fmt(x.q.y()) + ", " + fmt(x.q.z()) + "]";
}

// Transform: "identity" | {"p": [x, y, z], "q": rotation} (both optional).
Pose read_pose(const Reader& r, const json& v, const std::string& ptr) {
  if (v.is_string() && v.get<std::string>() == "identity") return {};
  if (!v.is_object())
    r.fail(ptr, "expected a transform: \"identity\" or {\"p\": [x, y, z], \"q\": rotation}, got " + describe(v));
  r.check_keys(v, ptr, {"p", "q"}, "a transform");
  Pose x;
  if (const json* p = Reader::get(v, "p")) x.p = r.vec3(*p, at(ptr, "p"));
  if (const json* q = Reader::get(v, "q")) x.q = r.rotation(*q, at(ptr, "q"));
  return x;
}

Vec3d arr(const Vector3d& v) { return {v.x(), v.y(), v.z()}; }
Quatd arr(const Quaterniond& q) { return {q.w(), q.x(), q.y(), q.z()}; }

// ---------------------------------------------------------------------------------------
// Parsing: a SAX handler in front of nlohmann's DOM builder adds what the DOM parser lacks:
// duplicate-key detection (nlohmann keeps the last of duplicate keys silently), a bound on the
// nesting depth, and the position of every error, including number overflow ("1e400"), which
// nlohmann reports as out_of_range without a position.

class SceneSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;
  SceneSax(json& root, const std::string& text, const Reader& r) : dom_(root), text_(text), r_(r) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return value() && dom_.number_float(v, s); }
  bool string(json::string_t& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(true) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(false) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }
  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    f.key = k;
    if (!f.keys.insert(k).second && duplicate_.empty()) duplicate_ = pointer();
    return dom_.key(k);
  }
  // `position` is the number of bytes read when the error was seen.
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) {
    std::size_t line = 1, col = 1;
    const std::size_t end = std::min<std::size_t>(position > 0 ? position - 1 : 0, text_.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string msg = ex.what();
    if (ex.id == 406) {  // out_of_range: number overflow, seen at its last character
      if (!token.empty() && col > token.size()) col -= token.size() - 1;
      msg = "number out of range of a double: '" + (token.size() > 40 ? token.substr(0, 37) + "..." : token) + "'";
    } else {
      const std::size_t c = msg.find("column ");
      const std::size_t colon = c == std::string::npos ? std::string::npos : msg.find(": ", c);
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
    }
    throw std::runtime_error(r_.file + ": line " + std::to_string(line) + ", column " + std::to_string(col) +
                             ": JSON syntax error: " + msg);
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool object;
    std::string key;
    std::size_t index = 0;
    std::set<std::string> keys;
  };
  std::string pointer() const {
    std::string p;
    for (const Frame& f : stack_) p = f.object ? at(p, f.key) : at(p, f.index);
    return p;
  }
  bool value() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  // Bounded nesting: the DOM builder is iterative, but the scene reader (describe(), copies)
  // recurses over values, so 100,000 nested arrays overflowed the stack (issue 14). Scenes
  // nest a few levels; the error is raised while parsing, before any recursive walk.
  bool open(bool object) {
    if (stack_.size() >= kMaxJsonDepth) {
      std::string p = pointer();
      if (p.size() > 200) p = p.substr(0, 100) + "/.../" + p.substr(p.size() - 60);
      r_.fail(p, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels (a scene needs fewer than 10)");
    }
    stack_.push_back({object, "", 0, {}});
    return true;
  }
  bool close() {
    if (!stack_.empty()) stack_.pop_back();
    return value();  // the closed array/object is one element of its parent
  }

  Dom dom_;
  const std::string& text_;
  const Reader& r_;
  std::vector<Frame> stack_;
  std::string duplicate_;
};

json parse_text(const std::string& text, const Reader& r) {
  json root;
  SceneSax sax(root, text, r);
  json::sax_parse(text, &sax);
  if (!sax.duplicate().empty()) r.fail(sax.duplicate(), "duplicate key (each key may appear once per object)");
  return root;
}

// ---------------------------------------------------------------------------------------
// Scene model.

enum class JType { Fixed, Revolute, Prismatic, Ball, Free };
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

struct JointDefaults {
  double armature = 0, damping = 0, target_ke = 0, target_kd = 0;
  bool has_effort = false;
  double effort = 0;
};
struct ShapeDefaults {
  double density = 1000, ke = 1e5, tau = 0.01, mu = 1.0, margin = 0;
};

struct BodyIn {
  std::string id, ptr;
  const json* j = nullptr;
  bool has_transform = false;
  Pose transform;
  int joint = -1;   // index in joints
  int index = -1;   // builder body index
  int state = 0;    // DFS: 0 new, 1 visiting, 2 done
  bool world_known = false;
  Pose world;       // world pose at q = 0
  bool moving = false;  // has a movable joint on its path to the world
};

struct JointIn {
  std::string id, ptr;
  JType type = JType::Fixed;
  std::string parent, child;
  int parent_body = -1;   // index in bodies; -1 world; -2 asset body (parent_index)
  int parent_index = 0;   // builder index of an asset parent
  int child_body = -1;
  Pose pj, cj;
  Vector3d axis{0, 0, 1};
  bool limited = false;
  double lower = 0, upper = 0;
  double armature = 0, damping = 0, stiffness = 0, springref = 0, target_ke = 0, target_kd = 0;
  bool has_effort = false;
  double effort = 0;
  int builder_joint = -1;
};

struct AssetInfo {
  int joint_begin = 0, joint_end = 0;  // builder joint indices
  int act_begin = 0, act_end = 0;
  std::vector<double> keyframe_qpos, keyframe_ctrl;
  bool has_keyframe = false;
  std::string ptr;
};

class SceneParser {
 public:
  SceneParser(Reader& r, std::string base_dir) : r_(r), base_dir_(std::move(base_dir)) {}
  Scene parse(const json& root);

 private:
  void parse_simulation(const json& sim, const std::string& ptr, Scene& s);
  void parse_builder(const json& b, const std::string& ptr);
  void parse_assets(const json& a, const std::string& ptr);
  void parse_bodies(const json& a, const std::string& ptr);
  void parse_joints(const json& a, const std::string& ptr);
  void visit(int b, std::vector<int>& order, std::vector<std::string>& path);
  void add_body(int b);
  void add_shapes(const BodyIn& body, int builder_body);
  void set_inertia(const json& v, const std::string& ptr, BodySpec& spec);
  void add_ground(const json& g, const std::string& ptr);
  void initial_q(const json& a, const std::string& ptr, Scene& s);
  void initial_qd(const json& a, const std::string& ptr, Scene& s);
  void parse_controls(const json& c, const std::string& ptr, Scene& s);
  void parse_perturbation(const json& p, const std::string& ptr, Scene& s);
  Model finalize();
  const JointIn* json_joint(const std::string& name) const {
    auto it = joint_by_id_.find(name);
    return it == joint_by_id_.end() ? nullptr : &joints_[static_cast<std::size_t>(it->second)];
  }

  Reader& r_;
  std::string base_dir_;
  ModelBuilder builder_;
  JointDefaults jdef_;
  ShapeDefaults sdef_;
  std::vector<BodyIn> bodies_;
  std::vector<JointIn> joints_;
  std::map<std::string, int> body_by_id_, joint_by_id_;
  std::vector<AssetInfo> assets_;
};

const std::vector<std::string> kRootKeys = {"schema_version", "name", "description", "simulation", "builder", "ground",
                                            "bodies", "joints", "initial_joint_q", "initial_joint_qd", "assets",
                                            "controls", "perturbation"};

Scene SceneParser::parse(const json& root) {
  Scene s;
  r_.warnings = &s.warnings;
  r_.check_keys(root, "", kRootKeys, "a scene");
  const json& ver = r_.required(root, "", "schema_version", "the integer 1");
  if (!ver.is_number_integer() || ver.get<long long>() != 1)
    r_.fail("/schema_version", "expected schema version 1 (the only version this loader reads), got " + describe(ver));
  s.name = r_.string(r_.required(root, "", "name", "a non-empty string"), "/name");
  if (const json* d = Reader::get(root, "description")) s.description = r_.string(*d, "/description", false);

  if (const json* sim = Reader::get(root, "simulation")) parse_simulation(*sim, "/simulation", s);
  if (const json* b = Reader::get(root, "builder")) parse_builder(*b, "/builder");
  builder_.set_timestep(s.dt);
  if (const json* a = Reader::get(root, "assets")) parse_assets(*a, "/assets");
  if (const json* b = Reader::get(root, "bodies")) parse_bodies(*b, "/bodies");
  if (const json* j = Reader::get(root, "joints")) parse_joints(*j, "/joints");

  // Parents before children, otherwise in file order.
  std::vector<int> order;
  for (std::size_t b = 0; b < bodies_.size(); ++b) {
    std::vector<std::string> path;
    visit(static_cast<int>(b), order, path);
  }
  for (int b : order) add_body(b);
  if (const json* g = Reader::get(root, "ground")) add_ground(*g, "/ground");

  // PD drives: one actuator per revolute/prismatic joint with target_ke or target_kd > 0, in
  // the order of "joints" (after the actuators of the assets).
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

  s.model = finalize();
  s.qpos0 = s.model.qpos0;
  s.qvel0.assign(static_cast<std::size_t>(s.model.nv), 0.0);
  for (const AssetInfo& a : assets_) {
    if (!a.has_keyframe) continue;
    // Assets come first in the model, so their coordinates start at the first qpos of their
    // first joint.
    if (a.joint_end > a.joint_begin) {
      const int adr = s.model.jnt_qposadr[static_cast<std::size_t>(a.joint_begin)];
      for (std::size_t i = 0; i < a.keyframe_qpos.size(); ++i) s.qpos0[static_cast<std::size_t>(adr) + i] = a.keyframe_qpos[i];
    }
  }
  if (const json* q = Reader::get(root, "initial_joint_q")) initial_q(*q, "/initial_joint_q", s);
  if (const json* qd = Reader::get(root, "initial_joint_qd")) initial_qd(*qd, "/initial_joint_qd", s);
  parse_controls(Reader::get(root, "controls") ? *Reader::get(root, "controls") : json::object(), "/controls", s);
  if (const json* p = Reader::get(root, "perturbation")) parse_perturbation(*p, "/perturbation", s);
  r_.warnings = nullptr;
  return s;
}

void SceneParser::parse_simulation(const json& sim, const std::string& ptr, Scene& s) {
  r_.check_keys(sim, ptr, {"dt", "num_worlds", "max_rigid_contact", "solver"}, "simulation");
  if (const json* v = Reader::get(sim, "dt")) s.dt = r_.positive(*v, at(ptr, "dt"));
  if (const json* v = Reader::get(sim, "num_worlds"))
    s.num_worlds = static_cast<int>(r_.integer(*v, at(ptr, "num_worlds"), 1, 1 << 24));
  if (const json* v = Reader::get(sim, "max_rigid_contact"))
    s.max_rigid_contact = static_cast<int>(r_.integer(*v, at(ptr, "max_rigid_contact"), 0, 1 << 24));
  if (const json* so = Reader::get(sim, "solver")) {
    const std::string sp = at(ptr, "solver");
    r_.require_object(*so, sp);
    for (auto it = so->begin(); it != so->end(); ++it) {
      const std::string kp = at(sp, it.key());
      const json& v = it.value();
      std::string text;
      if (v.is_string()) text = v.get<std::string>();
      else if (v.is_boolean()) text = v.get<bool>() ? "true" : "false";
      else if (v.is_number()) text = v.dump();  // shortest round-trip form, full precision
      else r_.fail(kp, "expected a string, number or boolean solver option value, got " + describe(v));
      try {
        set_solver_option(s.solver, it.key(), text);
      } catch (const std::exception& e) {
        r_.fail(kp, e.what());
      }
    }
    try {
      (void)s.solver.resolve();
    } catch (const std::exception& e) {
      r_.fail(sp, e.what());
    }
  }
}

void SceneParser::parse_builder(const json& b, const std::string& ptr) {
  r_.check_keys(b, ptr, {"gravity", "rigid_gap", "defaults"}, "builder");
  if (const json* g = Reader::get(b, "gravity")) {
    const std::string gp = at(ptr, "gravity");
    if (g->is_array()) builder_.set_gravity(arr(r_.vec3(*g, gp)));
    else builder_.set_gravity({0.0, 0.0, r_.number(*g, gp, "a number (z component) or a 3-vector")});
  }
  if (const json* v = Reader::get(b, "rigid_gap")) sdef_.margin = r_.nonnegative(*v, at(ptr, "rigid_gap"));
  const json* d = Reader::get(b, "defaults");
  if (!d) return;
  const std::string dp = at(ptr, "defaults");
  r_.check_keys(*d, dp, {"joint", "shape"}, "defaults");
  if (const json* j = Reader::get(*d, "joint")) {
    const std::string jp = at(dp, "joint");
    r_.check_keys(*j, jp, {"armature", "damping", "target_ke", "target_kd", "limit_ke", "limit_kd", "effort_limit"},
                  "joint defaults");
    if (const json* v = Reader::get(*j, "armature")) jdef_.armature = r_.nonnegative(*v, at(jp, "armature"));
    if (const json* v = Reader::get(*j, "damping")) jdef_.damping = r_.nonnegative(*v, at(jp, "damping"));
    if (const json* v = Reader::get(*j, "target_ke")) jdef_.target_ke = r_.nonnegative(*v, at(jp, "target_ke"));
    if (const json* v = Reader::get(*j, "target_kd")) jdef_.target_kd = r_.nonnegative(*v, at(jp, "target_kd"));
    if (const json* v = Reader::get(*j, "effort_limit")) {
      jdef_.has_effort = true;
      jdef_.effort = r_.positive(*v, at(jp, "effort_limit"));
    }
    for (const char* k : {"limit_ke", "limit_kd"})
      if (const json* v = Reader::get(*j, k)) {
        r_.nonnegative(*v, at(jp, k));
        r_.warn(at(jp, k), "accepted but ignored: joint limits are SAP limit constraints (solver limit_stiffness), "
                           "not penalty springs");
      }
  }
  if (const json* sh = Reader::get(*d, "shape")) {
    const std::string sp = at(dp, "shape");
    r_.check_keys(*sh, sp, {"density", "ke", "tau", "mu"}, "shape defaults");
    if (const json* v = Reader::get(*sh, "density")) sdef_.density = r_.positive(*v, at(sp, "density"));
    if (const json* v = Reader::get(*sh, "ke")) sdef_.ke = r_.positive(*v, at(sp, "ke"));
    if (const json* v = Reader::get(*sh, "tau")) sdef_.tau = r_.nonnegative(*v, at(sp, "tau"));
    if (const json* v = Reader::get(*sh, "mu")) sdef_.mu = r_.nonnegative(*v, at(sp, "mu"));
  }
}

void SceneParser::parse_assets(const json& a, const std::string& ptr) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of assets, got " + describe(a));
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    const json& e = a[i];
    r_.check_keys(e, p, {"id", "type", "path", "prefix", "xform", "floating", "keyframe", "ke", "tau", "drop_unsupported"}, "an asset");
    if (const json* v = Reader::get(e, "id")) r_.string(*v, at(p, "id"));
    const std::string type = r_.string(r_.required(e, p, "type", "\"mjcf\" or \"urdf\""), at(p, "type"));
    if (type != "mjcf" && type != "urdf") r_.fail(at(p, "type"), "expected \"mjcf\" or \"urdf\", got \"" + type + "\"");
    const std::string rel = r_.string(r_.required(e, p, "path", "a file path relative to the scene file"), at(p, "path"));
    const std::string path = (!rel.empty() && rel[0] == '/') ? rel : base_dir_ + "/" + rel;
    {
      std::error_code ec;
      const auto st = std::filesystem::status(path, ec);
      if (ec || !std::filesystem::exists(st)) r_.fail(at(p, "path"), "file not found: " + path);
      // Directories and devices: tinyxml2 would take a directory's size for a huge length, and
      // a FIFO would block.
      if (!std::filesystem::is_regular_file(st)) r_.fail(at(p, "path"), "not a regular file: " + path);
    }
    ImportOptions opt;
    if (const json* v = Reader::get(e, "prefix")) opt.name_prefix = r_.string(*v, at(p, "prefix"), false);
    if (const json* v = Reader::get(e, "ke")) opt.default_stiffness = r_.positive(*v, at(p, "ke"));
    else if (type == "urdf") opt.default_stiffness = sdef_.ke;  // URDF has no contact parameters
    if (const json* v = Reader::get(e, "tau")) opt.default_dissipation = r_.nonnegative(*v, at(p, "tau"));
    else if (type == "urdf") opt.default_dissipation = sdef_.tau;
    if (const json* v = Reader::get(e, "drop_unsupported")) opt.drop_unsupported = r_.boolean(*v, at(p, "drop_unsupported"));
    bool floating = false;
    if (const json* v = Reader::get(e, "floating")) {
      if (type != "urdf") r_.fail(at(p, "floating"), "only URDF assets take \"floating\" (MJCF files declare their free joints)");
      floating = r_.boolean(*v, at(p, "floating"));
    }
    Pose xform;
    if (const json* v = Reader::get(e, "xform")) xform = read_pose(r_, *v, at(p, "xform"));

    AssetInfo info;
    info.ptr = p;
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
    // xform moves the top-level bodies of the asset (their pose in the world frame).
    const bool moved = !poses_close(xform, Pose{});
    if (moved) {
      for (int b = body_begin; b < builder_.nbody(); ++b) {
        BodySpec& bs = builder_.body(b);
        if (bs.parent != 0) continue;
        const Pose local{Vector3d(bs.pos[0], bs.pos[1], bs.pos[2]), Quaterniond(bs.quat[0], bs.quat[1], bs.quat[2], bs.quat[3]).normalized()};
        const Pose wp = xform * local;
        bs.pos = arr(wp.p);
        bs.quat = arr(wp.q);
      }
      if (builder_.ngeom() > geom_begin) {
        // World geoms of the asset (e.g. a floor) are not moved; say so.
        try {
          const Model tmp = builder_.finalize();
          int n = 0;
          for (int g = geom_begin; g < tmp.ngeom; ++g) n += tmp.geom_bodyid[static_cast<std::size_t>(g)] == 0;
          if (n > 0)
            r_.warn(at(p, "xform"), std::to_string(n) + " geom(s) attached to the world by the asset are not moved by xform");
        } catch (const std::exception&) {
        }
      }
    }
    if (const json* v = Reader::get(e, "keyframe")) {
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
                                       (names.empty() ? std::string("it has none") : join(names)) + "), got \"" + name + "\"");
      // Free-joint coordinates of a keyframe are world poses: move them with the asset.
      if (moved) {
        std::size_t adr = 0;
        for (int j = info.joint_begin; j < info.joint_end && adr < info.keyframe_qpos.size(); ++j) {
          const int t = builder_.joint(j).type;
          if (t == kJointFree && builder_.body(builder_.joint_body(j)).parent == 0 && adr + 7 <= info.keyframe_qpos.size()) {
            double* q = info.keyframe_qpos.data() + adr;
            const Pose wp = xform * Pose{Vector3d(q[0], q[1], q[2]), Quaterniond(q[3], q[4], q[5], q[6]).normalized()};
            q[0] = wp.p.x(), q[1] = wp.p.y(), q[2] = wp.p.z();
            q[3] = wp.q.w(), q[4] = wp.q.x(), q[5] = wp.q.y(), q[6] = wp.q.z();
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
    if (const json* v = Reader::get(e, "label")) r_.string(*v, at(p, "label"), false);
    if (const json* v = Reader::get(e, "transform")) {
      b.has_transform = true;
      b.transform = read_pose(r_, *v, at(p, "transform"));
    }
    if (const json* v = Reader::get(e, "shapes"); v && !v->is_array())
      r_.fail(at(p, "shapes"), "expected an array of shapes, got " + describe(*v));
    body_by_id_[b.id] = static_cast<int>(bodies_.size());
    bodies_.push_back(b);
  }
}

std::string list_names(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (std::size_t i = 0; i < names.size() && i < 12; ++i) q.push_back("\"" + names[i] + "\"");
  if (names.size() > 12) q.push_back("... (" + std::to_string(names.size()) + " in all)");
  return q.empty() ? std::string("none") : join(q);
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
    const std::string type = r_.string(r_.required(e, p, "type", "fixed, revolute, prismatic, ball or free"), at(p, "type"));
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
    if (const json* v = Reader::get(e, "label")) r_.string(*v, at(p, "label"), false);

    j.child = r_.string(r_.required(e, p, "child", "the id of a body of this file"), at(p, "child"));
    if (j.child == "world") r_.fail(at(p, "child"), "expected the id of a body of this file, the world cannot be a child");
    auto cit = body_by_id_.find(j.child);
    if (cit == body_by_id_.end()) {
      if (builder_.find_body(j.child) >= 0)
        r_.fail(at(p, "child"), "expected the id of a body of this file, \"" + j.child +
                                    "\" is a body of an asset (assets keep their own joints)");
      r_.fail(at(p, "child"), "expected the id of a body of this file (" + list_names(body_ids) + "), got \"" + j.child + "\"");
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
      r_.fail(at(p, "parent"), "expected \"world\" or a body id (" + list_names(body_ids) + "), got \"" + j.parent + "\"");
    }
    if (j.parent == j.child) r_.fail(at(p, "parent"), "a joint cannot connect body \"" + j.child + "\" to itself");
    BodyIn& child = bodies_[static_cast<std::size_t>(j.child_body)];
    if (child.joint >= 0)
      r_.fail(at(p, "child"), "body \"" + j.child + "\" already has a parent joint (" +
                                  joints_[static_cast<std::size_t>(child.joint)].ptr + "); a body has at most one");
    if (j.type == JType::Free && j.parent != "world")
      r_.fail(at(p, "parent"), "a free joint must have parent \"world\" (the body's transform is its initial world pose), got \"" +
                                   j.parent + "\"");

    if (const json* v = Reader::get(e, "parent_xform")) j.pj = read_pose(r_, *v, at(p, "parent_xform"));
    if (const json* v = Reader::get(e, "child_xform")) j.cj = read_pose(r_, *v, at(p, "child_xform"));
    if (one_dof) j.axis = r_.unit_axis(r_.required(e, p, "axis", "a unit 3-vector in the joint frame"), at(p, "axis"));

    const json* lo = Reader::get(e, "limit_lower");
    const json* hi = Reader::get(e, "limit_upper");
    if (lo || hi) {
      if (!lo) r_.fail(at(p, "limit_lower"), "missing required key (limit_lower and limit_upper are given together)");
      if (!hi) r_.fail(at(p, "limit_upper"), "missing required key (limit_lower and limit_upper are given together)");
      j.limited = true;
      j.lower = r_.number(*lo, at(p, "limit_lower"));
      j.upper = r_.number(*hi, at(p, "limit_upper"));
      if (!(j.upper > j.lower))
        r_.fail(at(p, "limit_upper"), "expected a number greater than limit_lower (" + fmt(j.lower) + "), got " + describe(*hi));
    }
    for (const char* k : {"limit_ke", "limit_kd"})
      if (const json* v = Reader::get(e, k)) {
        r_.nonnegative(*v, at(p, k));
        r_.warn(at(p, k), "accepted but ignored: joint limits are SAP limit constraints (solver limit_stiffness), "
                          "not penalty springs");
      }
    if (j.type != JType::Fixed) {
      j.armature = jdef_.armature;
      j.damping = jdef_.damping;
      if (const json* v = Reader::get(e, "armature")) j.armature = r_.nonnegative(*v, at(p, "armature"));
      if (const json* v = Reader::get(e, "damping")) j.damping = r_.nonnegative(*v, at(p, "damping"));
    }
    if (one_dof) {
      j.target_ke = jdef_.target_ke;
      j.target_kd = jdef_.target_kd;
      j.has_effort = jdef_.has_effort;
      j.effort = jdef_.effort;
      if (const json* v = Reader::get(e, "stiffness")) j.stiffness = r_.nonnegative(*v, at(p, "stiffness"));
      if (const json* v = Reader::get(e, "springref")) j.springref = r_.number(*v, at(p, "springref"));
      if (const json* v = Reader::get(e, "target_ke")) j.target_ke = r_.nonnegative(*v, at(p, "target_ke"));
      if (const json* v = Reader::get(e, "target_kd")) j.target_kd = r_.nonnegative(*v, at(p, "target_kd"));
      if (const json* v = Reader::get(e, "effort_limit")) {
        j.has_effort = true;
        j.effort = r_.positive(*v, at(p, "effort_limit"));
      }
    }
    child.joint = static_cast<int>(joints_.size());
    joint_by_id_[j.id] = static_cast<int>(joints_.size());
    joints_.push_back(j);
  }
}

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

// Whether an asset body moves (has a joint on its path to the world).
bool asset_body_moving(const ModelBuilder& mb, int body) {
  while (body > 0) {
    for (int j = 0; j < mb.njoint(); ++j)
      if (mb.joint_body(j) == body) return true;
    body = mb.body(body).parent;
  }
  return false;
}

void SceneParser::add_body(int b) {
  BodyIn& B = bodies_[static_cast<std::size_t>(b)];
  JointIn* J = B.joint >= 0 ? &joints_[static_cast<std::size_t>(B.joint)] : nullptr;
  BodySpec spec;
  spec.name = B.id;
  Pose local = B.transform, parent_world;
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
  spec.pos = arr(local.p);
  spec.quat = arr(local.q);
  B.world_known = parent_known;
  B.world = parent_world * local;
  B.moving = J && (J->type != JType::Fixed || parent_moving);
  if (J && J->type != JType::Free && B.has_transform) {
    if (!B.world_known)
      r_.warn(B.ptr + "/transform", "ignored: the body is placed by its " + std::string(jtype_name(J->type)) + " joint " +
                                        J->ptr + " (its parent is an asset body)");
    else if (!poses_close(B.world, B.transform))
      r_.warn(B.ptr + "/transform", "ignored: the body is placed by its " + std::string(jtype_name(J->type)) + " joint " +
                                        J->ptr + ", at q = 0 it is at " + pose_string(B.world) + ", the transform says " +
                                        pose_string(B.transform));
  }
  if (const json* in = Reader::get(*B.j, "inertia")) set_inertia(*in, B.ptr + "/inertia", spec);
  else spec.inertia_from_geoms = true;
  B.index = builder_.add_body(spec);

  if (J && J->type != JType::Fixed) {
    JointSpec js;
    js.name = J->id;
    js.type = J->type == JType::Revolute ? kJointHinge
              : J->type == JType::Prismatic ? kJointSlide
              : J->type == JType::Ball ? kJointBall
                                       : kJointFree;
    if (J->type != JType::Free) js.pos = arr(J->cj.p);  // anchor = child joint frame origin
    js.axis = arr(J->cj.q * J->axis);                   // axis_body = Q axis_joint
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
  if (const json* c = Reader::get(v, "com")) spec.com = arr(r_.vec3(*c, at(ptr, "com")));
  const json* full = Reader::get(v, "inertia");
  const json* diag = Reader::get(v, "diag");
  if (full && diag) r_.fail(at(ptr, "diag"), "give either inertia [xx, yy, zz, xy, xz, yz] or diag [xx, yy, zz], not both");
  if (!full && !diag) r_.fail(at(ptr, "inertia"), "missing required key (expected inertia [xx, yy, zz, xy, xz, yz] or diag [xx, yy, zz], kg m^2)");
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
  const Vector3d ev = Eigen::SelfAdjointEigenSolver<Eigen::Matrix3d>(M).eigenvalues();
  const double tol = 1e-12 * ev.cwiseAbs().maxCoeff();
  if (!(ev.minCoeff() > 0) || ev[2] > ev[0] + ev[1] + tol)
    r_.fail(ip, "expected a positive-definite inertia whose principal moments satisfy the triangle inequality, "
                "got principal moments [" + fmt(ev[0]) + ", " + fmt(ev[1]) + ", " + fmt(ev[2]) + "]");
}

void SceneParser::add_shapes(const BodyIn& B, int builder_body) {
  const json* shapes = Reader::get(*B.j, "shapes");
  if (!shapes) return;
  std::set<std::string> names;
  for (std::size_t k = 0; k < shapes->size(); ++k) {
    const std::string p = at(B.ptr + "/shapes", k);
    const json& e = (*shapes)[k];
    r_.require_object(e, p);
    const std::string type = r_.string(r_.required(e, p, "type", "sphere, capsule, box, plane or cylinder"), at(p, "type"));
    std::vector<std::string> sizes;
    GeomSpec g;
    if (type == "sphere") g.type = kGeomSphere, sizes = {"radius"};
    else if (type == "capsule") g.type = kGeomCapsule, sizes = {"radius", "half_height"};
    else if (type == "cylinder") g.type = kGeomCylinder, sizes = {"radius", "half_height"};
    else if (type == "box") g.type = kGeomBox, sizes = {"hx", "hy", "hz"};
    else if (type == "plane") g.type = kGeomPlane;
    else r_.fail(at(p, "type"), "expected sphere, capsule, box, plane or cylinder, got \"" + type + "\"");
    std::vector<std::string> keys = {"type", "id", "transform", "cfg", "color"};
    keys.insert(keys.end(), sizes.begin(), sizes.end());
    r_.check_keys(e, p, keys, "a " + type + " shape");
    for (std::size_t s = 0; s < sizes.size(); ++s)
      g.size[s] = r_.positive(r_.required(e, p, sizes[s], "a positive number (m)"), at(p, sizes[s]));
    if (g.type == kGeomPlane && B.moving)
      r_.fail(at(p, "type"), "a plane must be on a static body (no joint, or welded to the world by fixed joints); body \"" +
                                 B.id + "\" moves");
    g.name = B.id + "_shape" + std::to_string(k);
    if (const json* v = Reader::get(e, "id")) g.name = r_.string(*v, at(p, "id"));
    if (!names.insert(g.name).second) r_.fail(at(p, "id"), "expected a shape id unique within the body, got \"" + g.name + "\"");
    if (const json* v = Reader::get(e, "transform")) {
      const Pose x = read_pose(r_, *v, at(p, "transform"));
      g.pos = arr(x.p);
      g.quat = arr(x.q);
    }
    if (const json* v = Reader::get(e, "color")) {
      if (!v->is_array() || (v->size() != 3 && v->size() != 4))
        r_.fail(at(p, "color"), "expected [r, g, b] or [r, g, b, a], got " + describe(*v));
      for (std::size_t c = 0; c < v->size(); ++c) r_.number((*v)[c], at(at(p, "color"), c));
    }
    g.density = sdef_.density;
    g.stiffness = sdef_.ke;
    g.dissipation = sdef_.tau;
    g.friction = sdef_.mu;
    g.margin = sdef_.margin;
    if (const json* cfg = Reader::get(e, "cfg")) {
      const std::string cp = at(p, "cfg");
      r_.check_keys(*cfg, cp, {"density", "mass", "ke", "tau", "mu", "contype", "conaffinity", "margin"}, "a shape cfg");
      const json* dens = Reader::get(*cfg, "density");
      const json* mass = Reader::get(*cfg, "mass");
      if (dens && mass) r_.fail(at(cp, "mass"), "give either density or mass, not both");
      if (dens) g.density = r_.positive(*dens, at(cp, "density"));
      if (mass) {
        if (g.type == kGeomPlane) r_.fail(at(cp, "mass"), "a plane has no volume and takes no mass");
        g.mass = r_.positive(*mass, at(cp, "mass"));
      }
      if (const json* v = Reader::get(*cfg, "ke")) g.stiffness = r_.positive(*v, at(cp, "ke"));
      if (const json* v = Reader::get(*cfg, "tau")) g.dissipation = r_.nonnegative(*v, at(cp, "tau"));
      if (const json* v = Reader::get(*cfg, "mu")) g.friction = r_.nonnegative(*v, at(cp, "mu"));
      if (const json* v = Reader::get(*cfg, "margin")) g.margin = r_.nonnegative(*v, at(cp, "margin"));
      if (const json* v = Reader::get(*cfg, "contype")) g.contype = static_cast<int>(r_.integer(*v, at(cp, "contype"), 0, 0x7fffffff));
      if (const json* v = Reader::get(*cfg, "conaffinity"))
        g.conaffinity = static_cast<int>(r_.integer(*v, at(cp, "conaffinity"), 0, 0x7fffffff));
    }
    builder_.add_geom(builder_body, g);
  }
}

void SceneParser::add_ground(const json& gr, const std::string& ptr) {
  r_.check_keys(gr, ptr, {"enabled", "label", "ke", "tau", "mu", "margin"}, "ground");
  bool enabled = true;
  if (const json* v = Reader::get(gr, "enabled")) enabled = r_.boolean(*v, at(ptr, "enabled"));
  if (const json* v = Reader::get(gr, "label")) r_.string(*v, at(ptr, "label"), false);
  GeomSpec g;
  g.name = "ground";
  g.type = kGeomPlane;  // z = 0, normal +z
  g.stiffness = sdef_.ke;
  g.dissipation = sdef_.tau;
  g.friction = sdef_.mu;
  g.margin = sdef_.margin;
  if (const json* v = Reader::get(gr, "ke")) g.stiffness = r_.positive(*v, at(ptr, "ke"));
  if (const json* v = Reader::get(gr, "tau")) g.dissipation = r_.nonnegative(*v, at(ptr, "tau"));
  if (const json* v = Reader::get(gr, "mu")) g.friction = r_.nonnegative(*v, at(ptr, "mu"));
  if (const json* v = Reader::get(gr, "margin")) g.margin = r_.nonnegative(*v, at(ptr, "margin"));
  if (enabled) builder_.add_geom(0, g);
}

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

// ---------------------------------------------------------------------------------------
// Initial state.

void SceneParser::initial_q(const json& a, const std::string& ptr, Scene& s) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of {\"joint\": id, \"value\": ...}, got " + describe(a));
  const Model& m = s.model;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    r_.check_keys(a[i], p, {"joint", "value"}, "an initial_joint_q entry");
    const std::string name = r_.string(r_.required(a[i], p, "joint", "a joint id"), at(p, "joint"));
    const json& v = r_.required(a[i], p, "value", "the joint's coordinates");
    const std::string vp = at(p, "value");
    const JointIn* J = json_joint(name);
    if (J && J->type == JType::Fixed) r_.fail(at(p, "joint"), "joint \"" + name + "\" is fixed and has no coordinates");
    const int jid = m.joint_id(name);
    if (jid < 0) r_.fail(at(p, "joint"), "expected the id of a movable joint (" + list_names(m.jnt_names) + "), got \"" + name + "\"");
    if (!seen.insert(name).second) r_.fail(at(p, "joint"), "joint \"" + name + "\" is listed twice");
    const int type = m.jnt_type[static_cast<std::size_t>(jid)];
    double* q = s.qpos0.data() + m.jnt_qposadr[static_cast<std::size_t>(jid)];
    if (type == kJointHinge || type == kJointSlide) {
      q[0] = r_.number(v, vp, type == kJointHinge ? "an angle (rad)" : "a displacement (m)");
      if (m.jnt_limited[static_cast<std::size_t>(jid)]) {
        const double lo = m.jnt_range[2 * static_cast<std::size_t>(jid)], hi = m.jnt_range[2 * static_cast<std::size_t>(jid) + 1];
        if (q[0] < lo || q[0] > hi)
          r_.warn(vp, "initial value " + fmt(q[0]) + " is outside the joint limits [" + fmt(lo) + ", " + fmt(hi) + "]");
      }
    } else if (type == kJointBall) {
      // A rotation in the joint frame; our ball coordinate is in the body frame: Q r Q^T.
      Quaterniond r = r_.rotation(v, vp);
      if (J) r = J->cj.q * r * J->cj.q.conjugate();
      r.normalize();
      q[0] = r.w(), q[1] = r.x(), q[2] = r.y(), q[3] = r.z();
    } else {
      Pose x;
      if (v.is_array()) {
        const auto n = r_.numbers(v, vp, 7);
        x.p = Vector3d(n[0], n[1], n[2]);
        x.q = r_.unit_quat({n[3], n[4], n[5], n[6]}, vp);
      } else {
        x = read_pose(r_, v, vp);
      }
      q[0] = x.p.x(), q[1] = x.p.y(), q[2] = x.p.z();
      q[3] = x.q.w(), q[4] = x.q.x(), q[5] = x.q.y(), q[6] = x.q.z();
    }
  }
}

void SceneParser::initial_qd(const json& a, const std::string& ptr, Scene& s) {
  if (!a.is_array()) r_.fail(ptr, "expected an array of {\"joint\": id, \"value\": ...}, got " + describe(a));
  const Model& m = s.model;
  std::set<std::string> seen;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string p = at(ptr, i);
    r_.check_keys(a[i], p, {"joint", "value"}, "an initial_joint_qd entry");
    const std::string name = r_.string(r_.required(a[i], p, "joint", "a joint id"), at(p, "joint"));
    const json& v = r_.required(a[i], p, "value", "the joint's velocity");
    const std::string vp = at(p, "value");
    const JointIn* J = json_joint(name);
    if (J && J->type == JType::Fixed) r_.fail(at(p, "joint"), "joint \"" + name + "\" is fixed and has no velocity");
    const int jid = m.joint_id(name);
    if (jid < 0) r_.fail(at(p, "joint"), "expected the id of a movable joint (" + list_names(m.jnt_names) + "), got \"" + name + "\"");
    if (!seen.insert(name).second) r_.fail(at(p, "joint"), "joint \"" + name + "\" is listed twice");
    const int type = m.jnt_type[static_cast<std::size_t>(jid)];
    double* qd = s.qvel0.data() + m.jnt_dofadr[static_cast<std::size_t>(jid)];
    if (type == kJointHinge || type == kJointSlide) {
      qd[0] = r_.number(v, vp, type == kJointHinge ? "an angular velocity (rad/s)" : "a velocity (m/s)");
    } else if (type == kJointBall) {
      Vector3d w = r_.vec3(v, vp);  // in the child joint frame -> body frame
      if (J) w = J->cj.q * w;
      qd[0] = w.x(), qd[1] = w.y(), qd[2] = w.z();
    } else if (v.is_array()) {
      const auto n = r_.numbers(v, vp, 6);  // raw: [v_world (3), omega_body (3)]
      for (int k = 0; k < 6; ++k) qd[k] = n[static_cast<std::size_t>(k)];
    } else {
      r_.check_keys(v, vp, {"linear", "angular"}, "a free-joint velocity");
      Vector3d lin = Vector3d::Zero(), ang = Vector3d::Zero();
      if (const json* x = Reader::get(v, "linear")) lin = r_.vec3(*x, at(vp, "linear"));
      if (const json* x = Reader::get(v, "angular")) ang = r_.vec3(*x, at(vp, "angular"));
      // World angular velocity -> body frame at the initial orientation.
      const double* q = s.qpos0.data() + m.jnt_qposadr[static_cast<std::size_t>(jid)];
      const Vector3d wb = Quaterniond(q[3], q[4], q[5], q[6]).normalized().conjugate() * ang;
      qd[0] = lin.x(), qd[1] = lin.y(), qd[2] = lin.z(), qd[3] = wb.x(), qd[4] = wb.y(), qd[5] = wb.z();
    }
  }
}

// ---------------------------------------------------------------------------------------
// Controls and perturbations.

void SceneParser::parse_controls(const json& c, const std::string& ptr, Scene& s) {
  const Model& m = s.model;
  s.controls.assign(static_cast<std::size_t>(m.nu), ControlSchedule{});
  r_.check_keys(c, ptr, {"default", "schedules"}, "controls");
  std::string def = "zero";
  if (const json* v = Reader::get(c, "default")) {
    def = r_.string(*v, at(ptr, "default"));
    if (def != "zero" && def != "hold") r_.fail(at(ptr, "default"), "expected \"zero\" or \"hold\", got \"" + def + "\"");
  }
  if (def == "hold") {
    // Position-type actuators hold the initial coordinate of their joint.
    for (int i = 0; i < m.nu; ++i) {
      const int t = m.actuator_type[static_cast<std::size_t>(i)];
      if (t != kActPD && t != kActPosition) continue;
      const int dof = m.actuator_dofadr[static_cast<std::size_t>(i)];
      const int jnt = m.dof_jntid[static_cast<std::size_t>(dof)];
      s.controls[static_cast<std::size_t>(i)].value = s.qpos0[static_cast<std::size_t>(m.jnt_qposadr[static_cast<std::size_t>(jnt)])];
    }
  }
  for (const AssetInfo& a : assets_) {
    if (!a.has_keyframe || a.act_begin < 0 || a.act_end < 0) continue;
    for (std::size_t k = 0; k < a.keyframe_ctrl.size() && a.act_begin + static_cast<int>(k) < a.act_end; ++k)
      s.controls[static_cast<std::size_t>(a.act_begin) + k].value = a.keyframe_ctrl[k];
  }
  const json* list = Reader::get(c, "schedules");
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
    if (id < 0) r_.fail(at(p, "actuator"), "expected an actuator name (" + list_names(m.actuator_names) + "), got \"" + name + "\"");
    if (!seen.insert(name).second) r_.fail(at(p, "actuator"), "actuator \"" + name + "\" already has a schedule");
    const int nlaw = (Reader::get(e, "constant") ? 1 : 0) + (Reader::get(e, "sinusoid") ? 1 : 0) + (Reader::get(e, "keyframes") ? 1 : 0);
    if (nlaw != 1) r_.fail(p, "expected exactly one of \"constant\", \"sinusoid\" or \"keyframes\", got " + std::to_string(nlaw));
    ControlSchedule cs;
    if (const json* v = Reader::get(e, "constant")) {
      const std::string q = at(p, "constant");
      r_.check_keys(*v, q, {"value"}, "a constant schedule");
      cs.kind = ControlSchedule::Kind::Constant;
      cs.value = r_.number(r_.required(*v, q, "value", "a number"), at(q, "value"));
    } else if (const json* v = Reader::get(e, "sinusoid")) {
      const std::string q = at(p, "sinusoid");
      r_.check_keys(*v, q, {"amplitude", "frequency_hz", "phase", "offset", "phase_per_world"}, "a sinusoid schedule");
      cs.kind = ControlSchedule::Kind::Sinusoid;
      cs.amplitude = r_.number(r_.required(*v, q, "amplitude", "a number"), at(q, "amplitude"));
      cs.frequency_hz = r_.nonnegative(r_.required(*v, q, "frequency_hz", "a frequency >= 0 in Hz"), at(q, "frequency_hz"));
      if (const json* x = Reader::get(*v, "phase")) cs.phase = r_.number(*x, at(q, "phase"));
      if (const json* x = Reader::get(*v, "offset")) cs.offset = r_.number(*x, at(q, "offset"));
      if (const json* x = Reader::get(*v, "phase_per_world")) cs.phase_per_world = r_.number(*x, at(q, "phase_per_world"));
    } else {
      const json& k = *Reader::get(e, "keyframes");
      const std::string q = at(p, "keyframes");
      if (!k.is_array() || k.empty()) r_.fail(q, "expected a non-empty array of {\"time\": t, \"value\": u}, got " + describe(k));
      cs.kind = ControlSchedule::Kind::Keyframes;
      for (std::size_t n = 0; n < k.size(); ++n) {
        const std::string kp = at(q, n);
        r_.check_keys(k[n], kp, {"time", "value"}, "a keyframe");
        const double t = r_.number(r_.required(k[n], kp, "time", "a time in s"), at(kp, "time"));
        if (n > 0 && !(t > cs.times.back()))
          r_.fail(at(kp, "time"), "expected a time greater than the previous keyframe's (" + fmt(cs.times.back()) + "), got " + fmt(t));
        cs.times.push_back(t);
        cs.values.push_back(r_.number(r_.required(k[n], kp, "value", "a number"), at(kp, "value")));
      }
    }
    s.controls[static_cast<std::size_t>(id)] = cs;
  }
}

void SceneParser::parse_perturbation(const json& p, const std::string& ptr, Scene& s) {
  r_.check_keys(p, ptr, {"qpos_std", "qvel_std", "seed"}, "perturbation");
  if (const json* v = Reader::get(p, "qpos_std")) s.perturbation.qpos_std = r_.nonnegative(*v, at(ptr, "qpos_std"));
  if (const json* v = Reader::get(p, "qvel_std")) s.perturbation.qvel_std = r_.nonnegative(*v, at(ptr, "qvel_std"));
  if (const json* v = Reader::get(p, "seed")) {
    if (v->is_number_unsigned()) s.perturbation.seed = v->get<std::uint64_t>();
    else s.perturbation.seed = static_cast<std::uint64_t>(r_.integer(*v, at(ptr, "seed"), 0, 0x7fffffffffffffffLL));
  }
}

}  // namespace

Scene parse_scene(const std::string& json_text, const std::string& source, const std::string& base_dir) {
  Reader r;
  r.file = source.empty() ? std::string("<string>") : source;
  const json root = parse_text(json_text, r);
  SceneParser parser(r, base_dir.empty() ? std::string(".") : base_dir);
  Scene s = parser.parse(root);
  return s;
}

Scene load_scene(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec) && !std::filesystem::is_regular_file(path, ec))
    throw std::runtime_error(path + ": not a regular file (expected a JSON scene file)");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw std::runtime_error(path + ": cannot open the scene file");
  std::ostringstream text;
  text << f.rdbuf();
  const std::size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? std::string(".") : (slash == 0 ? std::string("/") : path.substr(0, slash));
  Scene s = parse_scene(text.str(), path, dir);
  s.source = path;
  return s;
}

}  // namespace sap

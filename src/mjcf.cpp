// MJCF importer: the subset of MuJoCo's XML format used by rigid robots, mapped onto
// ModelBuilder. See docs/model-import.md for the supported subset and the conventions.
//
// The reader mirrors MuJoCo's order of processing: includes are expanded first; then compiler,
// option and default sections are read wherever they appear; then the world body tree (every
// <worldbody> in document order), contact exclusions, actuators and keyframes. Bodies are
// created in depth-first document order, joints and geoms grouped by body, which reproduces
// MuJoCo's body, joint, dof and geom numbering.
#include "sap/mjcf.hpp"

#include "kernels/actuator_dynamics.hpp"

#include <tinyxml2.h>

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <set>

#include "import_common.hpp"
#include "mjcf_assets.hpp"
#include "sap/backend/hd.hpp"

namespace sap {
namespace {

namespace fs = std::filesystem;
using import::fail;
using tinyxml2::XMLElement;

// An element of the include-expanded document: <include> elements are replaced by the children
// of the included file's <mujoco> root, so `file` says where each element was written.
struct Node {
  const XMLElement* el = nullptr;
  int file = 0;
  std::vector<Node> children;
  const char* tag() const { return el->Name(); }
};

// Frame composition (MJCF <frame> and body-relative poses): a b, with the product quaternion
// renormalised at every level as MuJoCo's compiler does (deep trees do not drift off unit).
Transform compose(const Transform& a, const Transform& b) {
  return {a.pos + rotate(a.quat, b.pos), normalized_or_throw(a.quat * b.quat)};
}

// Orientation as written: quat, or one of MuJoCo's alternatives (resolved with the compiler
// settings, which are global in MJCF).
struct Orientation {
  enum Kind { kNone, kQuat, kAxisAngle, kXYAxes, kZAxis, kEuler } kind = kNone;
  double v[6] = {0, 0, 0, 0, 0, 0};
};

struct JointAttrs {
  int type = kJointHinge;
  Vec3d pos{0, 0, 0}, axis{0, 0, 1};
  int limited = -1;  // -1 auto
  double range[2] = {0, 0};
  double ref = 0, springref = 0, stiffness = 0, damping = 0, armature = 0, frictionloss = 0;
  double springdamper[2] = {0, 0};
  int actuatorfrclimited = -1;
  double actuatorfrcrange[2] = {0, 0};
  int actuatorgravcomp = 0;
  bool limit_softness = false;  // solreflimit/solimplimit/margin given
};

struct GeomAttrs {
  std::string type = "sphere";
  double size[3] = {0, 0, 0};
  int contype = 1, conaffinity = 1, condim = 3, priority = 0, group = 0;
  double friction[3] = {1, 0.005, 0.0001};
  double solmix = 1;
  double solref[2] = {0.02, 1};
  bool solref_set = false;
  double solimp[5] = {0.9, 0.95, 0.001, 0.5, 2};
  bool solimp_set = false;
  double margin = 0, gap = 0;
  double mass = -1, density = 1000;
  bool has_fromto = false;
  double fromto[6] = {0, 0, 0, 0, 0, 0};
  Vec3d pos{0, 0, 0};
  Orientation orient;
  std::string mesh, shellinertia, fluidshape;
  std::array<double, 5> fluidcoef{0.5, 0.25, 1.5, 1.0, 1.0};  // MuJoCo's defaults
};

// MuJoCo's actuator parameters after the shortcut elements (motor/position/velocity/general)
// have been applied in order, defaults first.
struct ActAttrs {
  double gear = 1;
  int ctrllimited = -1, forcelimited = -1;
  double ctrlrange[2] = {0, 0}, forcerange[2] = {0, 0};
  std::string dyntype = "none", gaintype = "fixed", biastype = "none";
  double gainprm[10] = {1, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double biasprm[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
  double inheritrange = 0, dampratio = 0;
  bool timeconst = false;
  double dynprm[3] = {1, 0, 0};
  int actlimited = -1, actearly = 0;
  double actrange[2] = {0, 0};
  double lengthrange[2] = {0, 0};
};

struct DefaultClass {
  std::string name;
  int parent = -1;
  std::vector<const Node*> joint, geom, actuator, tendon, equality;
  std::vector<const Node*> mesh = {};  // <default><mesh> (mjcf_assets.cpp)
};

struct PGeom {
  const Node* node = nullptr;
  GeomSpec spec;
  double solref[2] = {0.02, 1};
  bool solref_set = false;
  bool add = true;  // a supported primitive (added to the model)
  std::string asset;  // mesh or hfield name (kGeomMesh, kGeomHfield)
};
struct PBody {
  const Node* node = nullptr;
  std::string name;
  int parent = -1;  // local index
  Transform pose;
  bool has_inertial = false;
  double mass = 0;
  Vec3d com{0, 0, 0};
  import::Sym6 inertia{0, 0, 0, 0, 0, 0};
  std::vector<import::MassPart> geom_mass;  // geoms contributing to inertia-from-geoms
  const Node* massive_mesh = nullptr;       // a mesh/hfield geom with mass (cannot be integrated)
  std::vector<JointSpec> joints;
  std::vector<const Node*> joint_nodes;
  std::vector<PGeom> geoms;
  std::vector<std::pair<std::string, Vec3d>> sites;  // name, position in the body frame
  int builder_index = 0;
};

const std::set<std::string>& actuator_tags() {
  static const std::set<std::string> s = {"general", "motor",    "position",   "velocity", "intvelocity",
                                          "damper",  "cylinder", "muscle",     "adhesion", "plugin",
                                          "dcmotor", "pid",      "orientation"};
  return s;
}

class MjcfImporter {
 public:
  MjcfImporter(ModelBuilder& b, const ImportOptions& o) : builder_(b), opt_(o) {}

  // The file at `path`, or `text` when given (then `path` only names it in messages and
  // `base_dir` is where its includes are resolved).
  void run(const std::string& path, ImportReport* report, const std::string* text = nullptr,
           const std::string& base_dir = ".") {
    Node root = load_root(path, text, base_dir);
    read_globals(root);
    read_bodies(root);
    compute_inertia();
    emit_bodies();
    read_contact(root);
    read_tendons(root);
    read_equalities(root);
    read_actuators(root);
    read_keyframes(root, report);
    rep_.flush(report);
  }

 private:
  ModelBuilder& builder_;
  ImportOptions opt_;
  import::MjcfAssets assets_;  // <asset> meshes and heightfields (mjcf_assets.cpp)
  import::Reporter rep_;
  std::vector<std::unique_ptr<tinyxml2::XMLDocument>> docs_;
  std::vector<std::string> files_;
  std::vector<std::string> dirs_;  // where each document's includes are resolved

  // compiler
  bool degree_ = true;
  std::string eulerseq_ = "xyz";
  bool autolimits_ = true;
  int inertiafromgeom_ = -1;  // -1 auto, 0 false, 1 true
  int group_lo_ = 0, group_hi_ = 5;
  double boundmass_ = 0, boundinertia_ = 0, settotalmass_ = -1;
  bool balanceinertia_ = false;
  // option flags
  bool no_contact_ = false, no_limit_ = false, no_spring_ = false, no_damper_ = false;

  std::vector<DefaultClass> classes_;
  std::map<std::string, int> class_index_;

  std::vector<PBody> bodies_;  // local; [0] is the world
  std::map<std::string, int> body_by_name_;
  struct JointRef {
    int builder_index, type;
    bool limited;
    double range[2];
  };
  std::map<std::string, JointRef> joint_by_name_;
  std::map<std::string, int> tendon_by_name_;  // builder index
  std::map<std::string, int> site_by_name_;    // builder index
  int nq_ = 0, nu_ = 0;
  std::vector<double> qpos0_;
  std::vector<std::pair<int, int>> quat_adr_;  // (qpos address in this file, joint type)

  // ---------------------------------------------------------------- diagnostics
  std::string where(const Node& n) const { return import::location(files_[static_cast<std::size_t>(n.file)], n.el); }
  const std::string& file(const Node& n) const { return files_[static_cast<std::size_t>(n.file)]; }
  void ignored(const Node& n, const std::string& what, const std::string& why) {
    rep_.warn("ignored:" + what, where(n), what + " ignored: " + why);
  }
  // Something that changes the dynamics and has no counterpart: an error, or a warning when
  // the options say to drop such elements.
  void unsupported(const Node& n, const std::string& what, const std::string& why) {
    if (!opt_.drop_unsupported)
      fail(where(n), what + " is not supported: " + why + " (ImportOptions::drop_unsupported drops it with a warning)");
    rep_.warn("dropped:" + what, where(n), what + " dropped: " + why);
  }
  // <contact><pair geom1 geom2 condim friction margin>: an explicit candidate pair (always
  // tested, whatever contype/conaffinity and exclusions say). Unset friction/margin combine from
  // the geoms as for automatic pairs (MuJoCo derives unset pair values from the geoms too).
  // condim 1 is frictionless; torsional/rolling friction (condim 4, 6) and the pair's own
  // solver parameters are warned: contact stiffness and dissipation come from the geoms.
  void read_contact_pair(const Node& c) {
    check_attributes(c, {"name", "class", "geom1", "geom2", "condim", "friction", "margin", "gap", "solref",
                         "solimp", "solreffriction"});
    const std::string f = file(c);
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
    std::vector<double> fr;
    if (import::read_numbers(f, c.el, "friction", 1, 5, fr)) {
      if (!(fr[0] >= 0)) fail(where(c), "<pair> friction: expected a non-negative sliding coefficient");
      e.friction = fr[0];
    }
    double margin = 0;
    if (import::read_double(f, c.el, "margin", margin)) {
      if (!(margin >= 0)) fail(where(c), "<pair> margin: expected a non-negative distance");
      e.margin = margin;
    }
    int condim = 3;
    if (import::read_int(f, c.el, "condim", condim)) {
      if (condim != 1 && condim != 3 && condim != 4 && condim != 6)
        fail(where(c), "<pair> condim: expected 1, 3, 4 or 6, got " + std::to_string(condim));
      if (condim == 1) e.friction = 0;
      if (condim > 3) ignored(c, "<pair> condim " + std::to_string(condim), "torsional and rolling friction are not modelled");
    }
    for (const char* a : {"class", "gap", "solref", "solimp", "solreffriction"})
      if (c.el->Attribute(a))
        ignored(c, std::string("<pair> ") + a, "pair defaults and solver parameters are not read (geom stiffness applies)");
    builder_.collision_filter().explicit_pairs.push_back(e);
  }

  void check_attributes(const Node& n, std::initializer_list<const char*> known) {
    for (const tinyxml2::XMLAttribute* a = n.el->FirstAttribute(); a; a = a->Next()) {
      bool ok = false;
      for (const char* k : known) ok = ok || !std::strcmp(k, a->Name());
      if (!ok)
        rep_.warn(std::string("attr:") + n.tag() + ":" + a->Name(), where(n),
                  std::string("attribute '") + a->Name() + "' of <" + n.tag() + "> is not recognized and was ignored");
    }
  }
  std::string prefixed(const std::string& name) const { return name.empty() ? name : opt_.name_prefix + name; }

  // ---------------------------------------------------------------- loading and includes
  int load_file(const std::string& path, const std::string& where_from, const std::string* text = nullptr,
                const std::string& dir = ".") {
    auto doc = std::make_unique<tinyxml2::XMLDocument>();
    tinyxml2::XMLError err;
    if (text) {
      err = doc->Parse(text->data(), text->size());
    } else {
      import::require_regular_file(where_from.empty() ? path : where_from, path);
      err = doc->LoadFile(path.c_str());
    }
    if (err == tinyxml2::XML_ERROR_FILE_NOT_FOUND || err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED)
      fail(where_from.empty() ? path : where_from, "cannot open file '" + path + "'");
    if (err != tinyxml2::XML_SUCCESS)
      fail(path + ":" + std::to_string(doc->ErrorLineNum()), std::string("XML parse error: ") + doc->ErrorStr());
    const XMLElement* root = doc->RootElement();
    // An included file (where_from names the <include>) may have a <mujocoinclude> root, as
    // MuJoCo accepts (Adroit hands, Franka kitchen); its children are spliced in like <mujoco>'s.
    const bool included = !where_from.empty();
    if (!root || (std::strcmp(root->Name(), "mujoco") && !(included && !std::strcmp(root->Name(), "mujocoinclude"))))
      fail(import::location(path, root), std::string("expected a <mujoco> root element") +
                                             (included ? " (or <mujocoinclude> in an included file)" : "") +
                                             ", got <" + (root ? root->Name() : "nothing") + ">");
    docs_.push_back(std::move(doc));
    files_.push_back(path);
    dirs_.push_back(text ? dir : fs::path(path).parent_path().string());
    return static_cast<int>(files_.size()) - 1;
  }

  void expand(const XMLElement* parent, int f, std::vector<Node>& out, std::vector<std::string>& stack) {
    for (const XMLElement* c = parent->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (!std::strcmp(c->Name(), "include")) {
        const std::string here = import::location(files_[static_cast<std::size_t>(f)], c);
        const char* rel = c->Attribute("file");
        if (!rel || !*rel) fail(here, "<include> needs a 'file' attribute");
        // Relative to the including file; MuJoCo resolves relative to the main file, so that
        // directory is tried second.
        fs::path p = fs::path(dirs_[static_cast<std::size_t>(f)]) / rel;
        if (fs::path(rel).is_absolute()) p = rel;
        std::error_code ec;  // non-throwing: a malformed name is reported by load_file below
        if (!fs::exists(p, ec)) {
          const fs::path alt = fs::path(dirs_[0]) / rel;
          if (fs::exists(alt, ec)) p = alt;
        }
        const std::string ps = p.lexically_normal().string();
        const std::string key = canonical_key(ps);
        if (std::find(stack.begin(), stack.end(), key) != stack.end()) fail(here, "recursive include of '" + ps + "'");
        const int nf = load_file(ps, here);
        stack.push_back(key);
        expand(docs_.back()->RootElement(), nf, out, stack);
        stack.pop_back();
        continue;
      }
      Node n;
      n.el = c;
      n.file = f;
      expand(c, f, n.children, stack);
      out.push_back(std::move(n));
    }
  }

  static std::string canonical_key(const std::string& path) {
    std::error_code ec;
    const fs::path c = fs::weakly_canonical(path, ec);
    return ec ? fs::path(path).lexically_normal().string() : c.string();
  }

  Node load_root(const std::string& path, const std::string* text, const std::string& base_dir) {
    const int f = load_file(path, "", text, base_dir);
    Node root;
    root.el = docs_[0]->RootElement();
    root.file = f;
    std::vector<std::string> stack{canonical_key(path)};
    expand(root.el, f, root.children, stack);
    return root;
  }

  // ---------------------------------------------------------------- compiler, option, defaults
  void read_globals(const Node& root) {
    for (const Node& s : root.children)
      if (!std::strcmp(s.tag(), "compiler")) read_compiler(s);
    for (const Node& s : root.children)
      if (!std::strcmp(s.tag(), "option")) read_option(s);
    classes_.push_back({"main", -1, {}, {}, {}, {}, {}});
    class_index_["main"] = 0;
    for (const Node& s : root.children)
      if (!std::strcmp(s.tag(), "default")) read_default(s, -1);
    static const std::set<std::string> known = {"compiler", "option", "default",  "worldbody", "contact",   "actuator",
                                                "keyframe", "size",   "visual",   "statistic", "asset",     "sensor",
                                                "custom",   "tendon", "equality", "extension", "deformable"};
    for (const Node& s : root.children) {
      const std::string t = s.tag();
      if (!known.count(t)) {
        unsupported(s, "<" + t + ">", "unknown top-level MJCF section");
      } else if (t == "size" || t == "visual" || t == "statistic" || t == "custom") {
        ignored(s, "<" + t + ">", "no effect on the dynamics");
      } else if (t == "asset") {
        assets_.set_model_dir(dirs_[0]);
        for (const Node& a : s.children) {
          const std::string at = a.tag();
          if (at == "mesh") {
            std::vector<const XMLElement*> defaults;
            std::string cls = "main";
            import::read_string(a.el, "class", cls);
            if (!class_index_.count(cls)) fail(where(a), "unknown default class '" + cls + "'");
            const std::vector<int> chain = class_chain(class_index_[cls]);
            for (auto c = chain.rbegin(); c != chain.rend(); ++c)
              for (const Node* d : classes_[static_cast<std::size_t>(*c)].mesh) defaults.push_back(d->el);
            assets_.read_mesh(file(a), where(a), a.el, defaults);
          } else if (at == "hfield") {
            assets_.read_hfield(file(a), where(a), a.el);
          } else {
            ignored(a, "<" + at + "> asset", "textures and materials have no effect on the dynamics");
          }
        }
      } else if (t == "sensor") {
        for (const Node& a : s.children) ignored(a, "sensor", "sensors do not change the dynamics");
      } else if (t == "extension" || t == "deformable") {
        unsupported(s, "<" + t + ">", "plugins and deformables have no counterpart in the model");
      }
    }
  }

  void read_compiler(const Node& n) {
    check_attributes(n, {"angle",        "eulerseq",     "autolimits",       "inertiafromgeom", "inertiagrouprange",
                         "boundmass",    "boundinertia", "settotalmass",     "balanceinertia",  "meshdir",
                         "texturedir",   "assetdir",     "strippath",        "discardvisual",   "fusestatic",
                         "coordinate",   "usethread",    "exactmeshinertia", "convexhull",      "alignfree",
                         "saveinertial", "maxhullvert",  "fitaabb"});
    const std::string f = file(n);
    std::string s;
    if (import::read_string(n.el, "angle", s)) {
      if (s != "degree" && s != "radian")
        fail(where(n), "attribute 'angle': expected 'degree' or 'radian', got '" + s + "'");
      degree_ = s == "degree";
    }
    if (import::read_string(n.el, "eulerseq", s)) {
      if (s.size() != 3 || s.find_first_not_of("xyzXYZ") != std::string::npos)
        fail(where(n), "attribute 'eulerseq': expected 3 characters from xyzXYZ, got '" + s + "'");
      eulerseq_ = s;
    }
    int b;
    if (import::read_bool(f, n.el, "autolimits", b)) autolimits_ = b == 1;
    if (import::read_bool(f, n.el, "inertiafromgeom", b, true)) inertiafromgeom_ = b;
    assets_.read_compiler(f, n.el);
    std::vector<double> v;
    if (import::read_numbers(f, n.el, "inertiagrouprange", 2, 2, v)) {
      // Integers (geom groups); converting 1e300 to int is undefined behaviour (found by UBSan).
      for (double x : v)
        if (x != std::floor(x) || std::abs(x) > 1e9)
          fail(where(n), "attribute 'inertiagrouprange': expected two integer geom groups, got '" +
                             std::string(n.el->Attribute("inertiagrouprange")) + "'");
      group_lo_ = static_cast<int>(v[0]);
      group_hi_ = static_cast<int>(v[1]);
    }
    import::read_double(f, n.el, "boundmass", boundmass_);
    import::read_double(f, n.el, "boundinertia", boundinertia_);
    import::read_double(f, n.el, "settotalmass", settotalmass_);
    if (import::read_bool(f, n.el, "balanceinertia", b)) balanceinertia_ = b == 1;
    if (import::read_string(n.el, "coordinate", s) && s != "local")
      fail(where(n), "compiler coordinate='" + s + "' is not supported (only 'local')");
    if (import::read_bool(f, n.el, "fusestatic", b) && b)
      ignored(n, "compiler fusestatic", "static bodies are kept as separate bodies (same dynamics)");
    if (import::read_bool(f, n.el, "alignfree", b) && b)
      ignored(n, "compiler alignfree", "free bodies keep their frames as written (qpos differs from MuJoCo's)");
  }

  void read_option(const Node& n) {
    const std::string f = file(n);
    std::vector<double> v;
    if (import::read_numbers(f, n.el, "timestep", 1, 1, v)) {
      if (!(v[0] > 0)) fail(where(n), "attribute 'timestep' must be positive");
      builder_.set_timestep(v[0]);
    }
    if (import::read_numbers(f, n.el, "gravity", 3, 3, v)) builder_.set_gravity({v[0], v[1], v[2]});
    // The fluid (kernels/fluid_forces.hpp): density, viscosity, wind.
    double density = 0, viscosity = 0;
    Vec3d wind{0, 0, 0};
    import::read_double(f, n.el, "density", density);
    import::read_double(f, n.el, "viscosity", viscosity);
    if (import::read_numbers(f, n.el, "wind", 3, 3, v)) wind = {v[0], v[1], v[2]};
    if (density < 0 || viscosity < 0) fail(where(n), "option density and viscosity must be non-negative");
    if (n.el->Attribute("density") || n.el->Attribute("viscosity") || n.el->Attribute("wind"))
      builder_.set_fluid(density, viscosity, wind);
    std::string solver_attrs;
    for (const tinyxml2::XMLAttribute* a = n.el->FirstAttribute(); a; a = a->Next()) {
      const std::string name = a->Name();
      if (name == "timestep" || name == "gravity" || name == "density" || name == "viscosity" || name == "wind" ||
          name == "magnetic")
        continue;
      solver_attrs += (solver_attrs.empty() ? "" : ", ") + name;
    }
    if (!solver_attrs.empty()) ignored(n, "option " + solver_attrs, "MuJoCo solver settings do not apply to SAP");
    for (const Node& c : n.children) {
      if (std::strcmp(c.tag(), "flag")) {
        ignored(c, "<" + std::string(c.tag()) + "> in <option>", "not used");
        continue;
      }
      for (const tinyxml2::XMLAttribute* a = c.el->FirstAttribute(); a; a = a->Next()) {
        const std::string name = a->Name(), val = a->Value();
        if (val != "enable" && val != "disable")
          fail(where(c), "flag '" + name + "': expected 'enable' or 'disable', got '" + val + "'");
        const bool off = val == "disable";
        if (name == "gravity") {
          if (off) builder_.set_gravity({0, 0, 0});
        } else if (name == "contact" || name == "constraint") {
          no_contact_ = no_contact_ || off;
          if (name == "constraint") no_limit_ = no_limit_ || off;
        } else if (name == "limit") {
          no_limit_ = no_limit_ || off;
        } else if (name == "spring") {
          no_spring_ = no_spring_ || off;
        } else if (name == "damper") {
          no_damper_ = no_damper_ || off;
        } else if (name == "filterparent") {
          if (off) builder_.collision_filter().filter_parent = false;
        } else if (name == "override" && !off) {
          unsupported(c, "flag override", "contact parameter overrides have no counterpart");
        } else {
          ignored(c, "option flag " + name, "solver flag does not apply to SAP");
        }
      }
    }
  }

  void read_default(const Node& n, int parent) {
    int id = 0;
    if (parent >= 0) {
      std::string name;
      if (!import::read_string(n.el, "class", name) || name.empty()) fail(where(n), "nested <default> needs a 'class'");
      if (class_index_.count(name)) fail(where(n), "default class '" + name + "' is defined twice");
      id = static_cast<int>(classes_.size());
      classes_.push_back({name, parent, {}, {}, {}, {}, {}});
      class_index_[name] = id;
    } else {
      std::string name;
      if (import::read_string(n.el, "class", name) && name != "main")
        fail(where(n), "the top-level default class is 'main', got '" + name + "'");
    }
    for (const Node& c : n.children) {
      const std::string t = c.tag();
      if (t == "default") continue;
      if (t == "joint") classes_[static_cast<std::size_t>(id)].joint.push_back(&c);
      else if (t == "geom") classes_[static_cast<std::size_t>(id)].geom.push_back(&c);
      else if (actuator_tags().count(t)) classes_[static_cast<std::size_t>(id)].actuator.push_back(&c);
      else if (t == "tendon") classes_[static_cast<std::size_t>(id)].tendon.push_back(&c);
      else if (t == "equality") classes_[static_cast<std::size_t>(id)].equality.push_back(&c);
      else if (t == "mesh") classes_[static_cast<std::size_t>(id)].mesh.push_back(&c);
      else if (t == "site" || t == "camera" || t == "light" || t == "material" || t == "pair")
        continue;  // defaults of elements that are ignored or rejected where they are used
      else ignored(c, "<" + t + "> in <default>", "unknown default element");
    }
    for (const Node& c : n.children)
      if (!std::strcmp(c.tag(), "default")) read_default(c, id);
  }

  std::vector<int> class_chain(int c) const {
    std::vector<int> chain;
    for (; c >= 0; c = classes_[static_cast<std::size_t>(c)].parent) chain.push_back(c);
    std::reverse(chain.begin(), chain.end());
    return chain;
  }
  int find_class(const Node& n, const std::string& name) const {
    auto it = class_index_.find(name);
    if (it == class_index_.end()) fail(where(n), "unknown default class '" + name + "'");
    return it->second;
  }
  // Class of an element: its own `class`, else the enclosing childclass, else main.
  int element_class(const Node& n, int childclass) const {
    std::string name;
    if (import::read_string(n.el, "class", name)) return find_class(n, name);
    return childclass;
  }

  // ---------------------------------------------------------------- attribute readers
  double angle_scale() const { return degree_ ? kPi / 180.0 : 1.0; }

  void read_orientation(const Node& n, Orientation& o) {
    const std::string f = file(n);
    // MuJoCo's orientation attributes and their number of values; at most one may be given.
    struct Form {
      const char* name;
      int size;
      Orientation::Kind kind;
    };
    static const Form forms[] = {{"quat", 4, Orientation::kQuat},
                                 {"axisangle", 4, Orientation::kAxisAngle},
                                 {"xyaxes", 6, Orientation::kXYAxes},
                                 {"zaxis", 3, Orientation::kZAxis},
                                 {"euler", 3, Orientation::kEuler}};
    int count = 0;
    double v[6];
    for (const Form& form : forms) {
      if (!import::read_fixed(f, n.el, form.name, form.size, v)) continue;
      o.kind = form.kind;
      std::copy(v, v + form.size, o.v);
      ++count;
    }
    if (count > 1) fail(where(n), "more than one orientation given (quat, axisangle, xyaxes, zaxis, euler)");
  }

  // The written orientation as a unit quaternion (rotation.hpp has the conventions); angles
  // follow <compiler angle>, Euler sequences <compiler eulerseq>.
  Quat<double> resolve(const Node& n, const Orientation& o) const {
    const Vec3<double> v0{{o.v[0], o.v[1], o.v[2]}};
    try {
      switch (o.kind) {
        case Orientation::kQuat: return normalized_or_throw({o.v[0], o.v[1], o.v[2], o.v[3]});
        case Orientation::kAxisAngle: return from_axis_angle_normalizing(v0, o.v[3] * angle_scale());
        case Orientation::kXYAxes: return from_xyaxes(v0, {{o.v[3], o.v[4], o.v[5]}});
        case Orientation::kZAxis:
          if (!(norm(v0) > 1e-15)) throw std::invalid_argument("zero zaxis");
          return from_z_to(v0);
        case Orientation::kEuler:
          return from_euler({{o.v[0] * angle_scale(), o.v[1] * angle_scale(), o.v[2] * angle_scale()}}, eulerseq_);
        default: return Quat<double>::identity();
      }
    } catch (const std::invalid_argument& e) {
      fail(where(n), std::string("invalid orientation: ") + e.what());
    }
  }

  Transform read_pose(const Node& n) {
    Transform p;
    import::read_fixed(file(n), n.el, "pos", 3, p.pos.v);
    Orientation o;
    read_orientation(n, o);
    p.quat = resolve(n, o);
    return p;
  }

  void apply_joint(const Node& n, JointAttrs& a) {
    const std::string f = file(n);
    std::string s;
    if (import::read_string(n.el, "type", s)) {
      if (s == "hinge") a.type = kJointHinge;
      else if (s == "slide") a.type = kJointSlide;
      else if (s == "ball") a.type = kJointBall;
      else if (s == "free") a.type = kJointFree;
      else fail(where(n), "joint type: expected hinge, slide, ball or free, got '" + s + "'");
    }
    import::read_fixed(f, n.el, "pos", 3, a.pos.data());
    import::read_fixed(f, n.el, "axis", 3, a.axis.data());
    import::read_bool(f, n.el, "limited", a.limited, true);
    import::read_fixed(f, n.el, "range", 2, a.range);
    import::read_double(f, n.el, "ref", a.ref);
    import::read_double(f, n.el, "springref", a.springref);
    import::read_double(f, n.el, "stiffness", a.stiffness);
    import::read_double(f, n.el, "damping", a.damping);
    import::read_double(f, n.el, "armature", a.armature);
    import::read_double(f, n.el, "frictionloss", a.frictionloss);
    import::read_fixed(f, n.el, "springdamper", 2, a.springdamper);
    import::read_bool(f, n.el, "actuatorfrclimited", a.actuatorfrclimited, true);
    import::read_fixed(f, n.el, "actuatorfrcrange", 2, a.actuatorfrcrange);
    import::read_bool(f, n.el, "actuatorgravcomp", a.actuatorgravcomp);
    if (n.el->Attribute("solreflimit") || n.el->Attribute("solimplimit") || n.el->Attribute("margin"))
      a.limit_softness = true;
    check_attributes(n, {"name",
                         "class",
                         "type",
                         "group",
                         "pos",
                         "axis",
                         "springdamper",
                         "limited",
                         "actuatorfrclimited",
                         "solreflimit",
                         "solimplimit",
                         "solreffriction",
                         "solimpfriction",
                         "stiffness",
                         "range",
                         "actuatorfrcrange",
                         "actuatorgravcomp",
                         "margin",
                         "ref",
                         "springref",
                         "armature",
                         "damping",
                         "frictionloss",
                         "user"});
  }

  void apply_geom(const Node& n, GeomAttrs& g) {
    const std::string f = file(n);
    import::read_string(n.el, "type", g.type);
    std::vector<double> v;
    if (import::read_numbers(f, n.el, "size", 1, 3, v))
      for (std::size_t i = 0; i < v.size(); ++i) g.size[i] = v[i];  // fewer values keep the rest (MuJoCo)
    import::read_int(f, n.el, "contype", g.contype);
    import::read_int(f, n.el, "conaffinity", g.conaffinity);
    import::read_int(f, n.el, "condim", g.condim);
    import::read_int(f, n.el, "priority", g.priority);
    import::read_int(f, n.el, "group", g.group);
    if (import::read_numbers(f, n.el, "friction", 1, 3, v))
      for (std::size_t i = 0; i < v.size(); ++i) g.friction[i] = v[i];
    import::read_double(f, n.el, "solmix", g.solmix);
    if (import::read_numbers(f, n.el, "solref", 1, 2, v)) {
      for (std::size_t i = 0; i < v.size(); ++i) g.solref[i] = v[i];
      g.solref_set = true;
    }
    if (import::read_numbers(f, n.el, "solimp", 1, 5, v)) {
      for (std::size_t i = 0; i < v.size(); ++i) g.solimp[i] = v[i];
      g.solimp_set = true;
    }
    import::read_double(f, n.el, "margin", g.margin);
    import::read_double(f, n.el, "gap", g.gap);
    import::read_double(f, n.el, "mass", g.mass);
    import::read_double(f, n.el, "density", g.density);
    if (import::read_fixed(f, n.el, "fromto", 6, g.fromto)) g.has_fromto = true;
    import::read_fixed(f, n.el, "pos", 3, g.pos.data());
    Orientation o;
    read_orientation(n, o);
    if (o.kind != Orientation::kNone) g.orient = o;
    import::read_string(n.el, "mesh", g.mesh);
    if (n.el->Attribute("hfield")) g.mesh = n.el->Attribute("hfield");
    import::read_string(n.el, "shellinertia", g.shellinertia);
    import::read_string(n.el, "fluidshape", g.fluidshape);
    {
      std::vector<double> fc;
      if (import::read_numbers(file(n), n.el, "fluidcoef", 5, 5, fc))
        for (std::size_t k = 0; k < 5; ++k) g.fluidcoef[k] = fc[k];
    }
    check_attributes(n, {"name",     "class",     "type",       "contype",   "conaffinity", "condim",  "group",
                         "priority", "size",      "material",   "friction",  "mass",        "density", "shellinertia",
                         "solmix",   "solref",    "solimp",     "margin",    "gap",         "fromto",  "pos",
                         "quat",     "axisangle", "xyaxes",     "zaxis",     "euler",       "hfield",  "mesh",
                         "fitscale", "rgba",      "fluidshape", "fluidcoef", "user"});
  }

  void apply_actuator(const Node& n, ActAttrs& a) {
    const std::string f = file(n), tag = n.tag();
    std::vector<double> v;
    if (import::read_numbers(f, n.el, "gear", 1, 6, v)) a.gear = v[0];
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
    check_attributes(n, {"name",      "class",      "group",         "ctrllimited",  "forcelimited", "actlimited",
                         "ctrlrange", "forcerange", "actrange",      "lengthrange",  "gear",         "cranklength",
                         "user",      "joint",      "jointinparent", "site",         "refsite",      "tendon",
                         "cranksite", "slidersite", "body",          "actdim",       "dyntype",      "gaintype",
                         "biastype",  "dynprm",     "gainprm",       "biasprm",      "actearly",     "kp",
                         "kv",        "dampratio",  "timeconst",     "inheritrange", "nsample",      "interp",
                         "delay",     "gain",       "area",          "diameter",     "bias",         "range",
                         "force",     "scale",      "lmin",          "lmax",         "vmax",         "fpmax",
                         "fvmax",     "tausmooth",  "plugin",        "instance"});
  }

  // ---------------------------------------------------------------- bodies
  void read_bodies(const Node& root) {
    PBody world;
    world.name = "world";
    bodies_.push_back(world);
    for (const Node& s : root.children)
      if (!std::strcmp(s.tag(), "worldbody")) read_body_children(s, 0, 0, Transform{});
  }

  // Children of a body (or worldbody, or a frame inside them) expressed in `frame`.
  void read_body_children(const Node& n, int body, int childclass, const Transform& frame) {
    for (const Node& c : n.children) {
      const std::string t = c.tag();
      if (t == "body") {
        read_body(c, body, childclass, frame);
      } else if (t == "frame") {
        check_attributes(c, {"name", "childclass", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler"});
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
      } else if (t == "site") {  // points of spatial tendons; sizes, types and looks do not matter
        std::string name;
        import::read_string(c.el, "name", name);
        bodies_[static_cast<std::size_t>(body)].sites.push_back({name, to_array(compose(frame, read_pose(c)).pos)});
      } else if (t == "camera" || t == "light") {
        ignored(c, t, "no effect on the dynamics");
      } else if (t == "composite" || t == "flexcomp" || t == "replicate" || t == "attach" || t == "plugin") {
        unsupported(c, "<" + t + ">", "procedural and plugin elements are not supported");
      } else {
        ignored(c, "<" + t + "> in a body", "unknown element");
      }
    }
  }

  void read_body(const Node& n, int parent, int childclass, const Transform& frame) {
    check_attributes(n, {"name", "childclass", "mocap", "pos", "quat", "axisangle", "xyaxes", "zaxis", "euler",
                         "gravcomp", "user", "sleep"});
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
    double gravcomp = 0;
    if (import::read_double(file(n), n.el, "gravcomp", gravcomp) && gravcomp != 0)
      unsupported(n, "body gravcomp", "gravity compensation has no counterpart in the model");
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

  void read_inertial(const Node& n, int body) {
    check_attributes(n, {"pos", "quat", "axisangle", "xyaxes", "zaxis", "euler", "mass", "diaginertia", "fullinertia"});
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
  void read_joint(const Node& n, int body, int cls, const Transform& frame) {
    JointAttrs a;
    std::string name;
    import::read_string(n.el, "name", name);
    if (!std::strcmp(n.tag(), "freejoint")) {
      check_attributes(n, {"name", "group", "align"});
      a.type = kJointFree;
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
    j.frictionloss = a.frictionloss;  // SAP box row |gamma| <= h f (docs/sap-math.md §13)
    if (a.springdamper[0] != 0 || a.springdamper[1] != 0) {  // MuJoCo's compiler: gains from M(qpos0)
      if (!(a.springdamper[0] > 0 && a.springdamper[1] > 0))
        fail(where(n), "joint springdamper values must be positive (timeconst, dampratio)");
      j.springdamper = {a.springdamper[0], a.springdamper[1]};
      j.springdamper_spring = !no_spring_;
      j.springdamper_damper = !no_damper_;
    }
    if (a.actuatorfrclimited == 1 ||
        (a.actuatorfrclimited == -1 && autolimits_ && !(a.actuatorfrcrange[0] == 0 && a.actuatorfrcrange[1] == 0)))
      unsupported(n, "joint actuatorfrcrange",
                  "per-joint actuator force limits have no counterpart; use actuator forcerange");
    if (a.actuatorgravcomp) unsupported(n, "joint actuatorgravcomp", "gravity compensation has no counterpart");
    if (a.type == kJointFree) {
      if (b.parent != 0) fail(where(n), "a free joint must belong to a child of the world body");
      if (limited) fail(where(n), "a free joint cannot be limited");
      if (a.stiffness != 0) unsupported(n, "free joint stiffness", "springs exist only on hinge and slide joints");
    } else if (a.type == kJointBall) {
      if (limited && !no_limit_)
        rep_.warn("ball-limit", where(n),
                  "ball joint limit dropped: the model supports limits on hinge and slide joints only");
      if (a.stiffness != 0) unsupported(n, "ball joint stiffness", "springs exist only on hinge and slide joints");
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

  void read_geom(const Node& n, int body, int cls, const Transform& frame) {
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
      const Vec3<double> a{{g.fromto[0], g.fromto[1], g.fromto[2]}}, b{{g.fromto[3], g.fromto[4], g.fromto[5]}};
      const Vec3<double> d = a - b;  // MuJoCo's z axis points from `to` to `from`
      const double len = norm(d);
      if (!(len > 1e-12)) fail(where(n), "fromto endpoints coincide");
      local.pos = 0.5 * (a + b);
      local.quat = from_z_to(d);
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
    s.margin = g.margin;
    s.density = g.density;
    s.mass = g.mass;
    if (g.friction[0] < 0) fail(where(n), "geom friction must be non-negative");
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
      if (g.condim != 3)
        rep_.warn("condim", where(n),
                  "geom condim=" + std::to_string(g.condim) +
                      " approximated: SAP contacts always have Coulomb friction (condim 3)");
      if (g.priority != 0 || g.solmix != 1)
        rep_.warn("priority", where(n), "geom priority/solmix ignored: pair parameters combine as documented");
      if (g.solimp_set)
        rep_.warn("solimp", where(n), "geom solimp ignored: the SAP contact model has no impedance profile");
      if (g.margin != 0 || g.gap != 0)
        rep_.warn(
            "margin", where(n),
            "geom margin/gap: the margin only widens contact detection (MuJoCo also shifts the contact surface by margin - gap)");
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

  bool body_is_static(int b) const {
    for (; b > 0; b = bodies_[static_cast<std::size_t>(b)].parent)
      if (!bodies_[static_cast<std::size_t>(b)].joints.empty()) return false;
    return true;
  }

  // ---------------------------------------------------------------- mass properties
  void compute_inertia() {
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

  // ---------------------------------------------------------------- emission
  // Bodies, joints and geoms in MuJoCo's order. A geom's contact stiffness follows the mass of
  // the kinematic tree it moves with (import::contact_material), so tree masses come first.
  void emit_bodies() {
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
        } catch (const std::invalid_argument& e) {
          fail(where(*g.node), std::string("geom solref: ") + e.what());
        }
        if (!g.solref_set) {
          if (opt_.default_stiffness > 0) g.spec.stiffness = opt_.default_stiffness;
          if (opt_.default_dissipation >= 0) g.spec.dissipation = opt_.default_dissipation;
        }
        if (!is_static && !(g.spec.stiffness > 0)) g.spec.stiffness = import::kStaticStiffness;  // massless tree
        if (g.spec.type == kGeomMesh) g.spec.dataid = assets_.builder_mesh(builder_, g.asset, opt_.name_prefix, where(*g.node));
        if (g.spec.type == kGeomHfield) g.spec.dataid = assets_.builder_hfield(builder_, g.asset, opt_.name_prefix, where(*g.node));
        builder_.add_geom(bodies_[i].builder_index, g.spec);
      }
    }
    // Sites, the path points of spatial tendons.
    for (std::size_t i = 0; i < nb; ++i)
      for (const auto& [name, pos] : bodies_[i].sites) {
        const int id = builder_.add_site({prefixed(name), bodies_[i].builder_index, pos});
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

  void read_contact(const Node& root) {
    for (const Node& s : root.children) {
      if (std::strcmp(s.tag(), "contact")) continue;
      for (const Node& c : s.children) {
        const std::string t = c.tag();
        if (t == "exclude") {
          check_attributes(c, {"name", "body1", "body2"});
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

  // ---------------------------------------------------------------- tendons and equalities
  // Fixed tendons (<tendon><fixed>): L = sum coef q over hinge/slide joints, with a limit (SAP
  // limit rows on L), a spring and a damper. Spatial tendons have no counterpart.
  struct TendonAttrs {
    int limited = -1;  // -1 auto
    double range[2] = {0, 0};
    bool has_range = false;
    double stiffness = 0, damping = 0, frictionloss = 0, armature = 0;
    double springlength[2] = {-1, -1};
  };
  void apply_tendon(const Node& n, TendonAttrs& a) {
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
  }

  void read_tendons(const Node& root) {
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
        check_attributes(c, {"name", "class", "group", "limited", "actuatorfrclimited", "range", "actuatorfrcrange",
                             "solreflimit", "solimplimit", "solreffriction", "solimpfriction", "frictionloss",
                             "springlength", "stiffness", "damping", "armature", "margin", "rgba", "user"});
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
        if (a.frictionloss > 0) unsupported(c, "tendon frictionloss", "dry friction has no counterpart in the model");
        if (a.armature > 0) unsupported(c, "tendon armature", "tendon inertia has no counterpart in the model");
        if (a.springlength[0] != a.springlength[1] && a.stiffness != 0)
          unsupported(c, "tendon springlength dead band", "the spring has a single rest length");
        bool limited = a.limited == 1 || (a.limited == -1 && a.has_range);
        if (a.limited == -1 && a.has_range && !autolimits_)
          fail(where(c), label + ": range is given but limited is not set and compiler autolimits is false");
        if (limited && !(a.range[0] < a.range[1]))
          fail(where(c), label + ": range lower bound must be below the upper");
        ts.limited = limited && !no_limit_;
        ts.range = {a.range[0], a.range[1]};
        ts.stiffness = no_spring_ ? 0.0 : a.stiffness;
        ts.damping = no_damper_ ? 0.0 : a.damping;
        // MuJoCo: springlength -1 is the length at qpos_spring (joint springref).
        ts.lengthspring = a.springlength[0] == -1 ? L0 : a.springlength[0];
        const int id = builder_.add_tendon(ts);
        if (!ts.name.empty()) tendon_by_name_[ts.name] = id;
      }
    }
  }

  // Spatial tendon (<tendon><spatial>, kernels/spatial_tendon.hpp): a path of sites, with
  // sphere/cylinder geoms (and their sidesites) between two sites and pulleys; limits, spring
  // and damper as for fixed tendons.
  void read_spatial_tendon(const Node& c) {
    check_attributes(c, {"name", "class", "group", "limited", "actuatorfrclimited", "range", "actuatorfrcrange",
                         "solreflimit", "solimplimit", "solreffriction", "solimpfriction", "frictionloss",
                         "springlength", "stiffness", "damping", "armature", "margin", "rgba", "material", "width",
                         "user"});
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
    if (a.frictionloss > 0) unsupported(c, "tendon frictionloss", "dry friction has no counterpart in the model");
    if (a.armature > 0) unsupported(c, "tendon armature", "tendon inertia has no counterpart in the model");
    if (a.springlength[0] != a.springlength[1] && a.stiffness != 0)
      unsupported(c, "tendon springlength dead band", "the spring has a single rest length");
    bool limited = a.limited == 1 || (a.limited == -1 && a.has_range);
    if (a.limited == -1 && a.has_range && !autolimits_)
      fail(where(c), label + ": range is given but limited is not set and compiler autolimits is false");
    if (limited && !(a.range[0] < a.range[1])) fail(where(c), label + ": range lower bound must be below the upper");
    ts.limited = limited && !no_limit_;
    ts.range = {a.range[0], a.range[1]};
    ts.stiffness = no_spring_ ? 0.0 : a.stiffness;
    ts.damping = no_damper_ ? 0.0 : a.damping;
    ts.lengthspring = a.springlength[0];
    ts.lengthspring_at_springref = a.springlength[0] == -1;  // MuJoCo: the length at qpos_spring
    const int id = builder_.add_tendon(ts);
    if (!ts.name.empty()) tendon_by_name_[ts.name] = id;
  }

  // Equality constraints: joint (polynomial coupler), connect (ball) and weld, as SAP
  // holonomic constraints whose compliance follows solref (docs/model-import.md).
  struct EqAttrs {
    int active = 1;
    double solref[2] = {0.02, 1};
  };
  void apply_equality(const Node& n, EqAttrs& a) {
    const std::string f = file(n);
    import::read_bool(f, n.el, "active", a.active);
    std::vector<double> v;
    if (import::read_numbers(f, n.el, "solref", 2, 2, v)) {
      a.solref[0] = v[0];
      a.solref[1] = v[1];
    }
  }

  void read_equalities(const Node& root) {
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
        check_attributes(c, {"name", "class", "active", "solref", "solimp", "joint1", "joint2", "polycoef", "body1",
                             "body2", "site1", "site2", "anchor", "relpose", "torquescale", "tendon1", "tendon2"});
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
        builder_.add_equality(e);
      }
    }
  }

  void read_actuators(const Node& root) {
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

  void read_actuator(const Node& n) {
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
    // Ours (kernels/contact_jacobian.hpp, setup_pd) with gear g and gains kp, kd:
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
    builder_.add_actuator(s);
    ++nu_;
  }

  void read_keyframes(const Node& root, ImportReport* report) {
    for (const Node& s : root.children) {
      if (std::strcmp(s.tag(), "keyframe")) continue;
      for (const Node& k : s.children) {
        if (std::strcmp(k.tag(), "key")) {
          ignored(k, "<" + std::string(k.tag()) + "> in <keyframe>", "unknown element");
          continue;
        }
        check_attributes(k, {"name", "time", "qpos", "qvel", "act", "mpos", "mquat", "ctrl"});
        ImportReport::Keyframe kf;
        import::read_string(k.el, "name", kf.name);
        std::vector<double> v;
        const std::string f = file(k);
        if (import::read_numbers(f, k.el, "qpos", nq_, nq_, v)) {
          // Unit quaternions, as MuJoCo stores them.
          for (const auto& [adr, type] : quat_adr_) {
            double* q = v.data() + adr;
            try {
              normalized_or_throw(Quat<double>::load(q)).store(q);
            } catch (const std::invalid_argument&) {
              fail(where(k), "keyframe qpos: zero quaternion of a " +
                                 std::string(type == kJointFree ? "free" : "ball") + " joint");
            }
          }
          kf.qpos = v;
        } else {
          kf.qpos = qpos0_;
        }
        if (import::read_numbers(f, k.el, "ctrl", nu_, nu_, v)) kf.ctrl = v;
        else kf.ctrl.assign(static_cast<std::size_t>(nu_), 0.0);
        for (const char* a : {"qvel", "act", "mpos", "mquat"})
          if (k.el->Attribute(a)) ignored(k, std::string("keyframe ") + a, "keyframes carry qpos and ctrl only");
        if (report) report->keyframes.push_back(kf);
      }
    }
  }
};

}  // namespace

void add_mjcf(const std::string& path, ModelBuilder& builder, ImportReport* report, const ImportOptions& options) {
  MjcfImporter imp(builder, options);
  imp.run(path, report);
}

void add_mjcf_string(const std::string& xml, const std::string& source, ModelBuilder& builder, ImportReport* report,
                     const ImportOptions& options, const std::string& base_dir) {
  MjcfImporter imp(builder, options);
  imp.run(source.empty() ? std::string("<string>") : source, report, &xml, base_dir.empty() ? "." : base_dir);
}

namespace {
ModelBuilder mujoco_default_builder() {
  ModelBuilder b;
  b.set_timestep(0.002);  // MuJoCo's defaults, for files without <option>
  b.set_gravity({0, 0, -9.81});
  return b;
}
Model finalize_named(ModelBuilder& b, const std::string& name) {
  try {
    return b.finalize();
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(name + ": " + e.what());
  }
}
}  // namespace

Model load_mjcf(const std::string& path, ImportReport* report, const ImportOptions& options) {
  ModelBuilder b = mujoco_default_builder();
  add_mjcf(path, b, report, options);
  return finalize_named(b, path);
}

Model load_mjcf_string(const std::string& xml, const std::string& source, ImportReport* report,
                       const ImportOptions& options, const std::string& base_dir) {
  ModelBuilder b = mujoco_default_builder();
  add_mjcf_string(xml, source, b, report, options, base_dir);
  return finalize_named(b, source.empty() ? std::string("<string>") : source);
}

}  // namespace sap

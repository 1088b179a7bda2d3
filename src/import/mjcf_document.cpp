// The MJCF document (mjcf_importer.hpp): includes, compiler/option/default sections, attribute
// readers, diagnostics, keyframes; and the entry points add_mjcf, add_mjcf_string.
#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "import/import_features.hpp"
#include "import/mjcf_importer.hpp"

namespace sap {
namespace import::mjcf {

void MjcfImporter::ignored(const Node& n, const std::string& what, const std::string& why) {
  rep_.warn("ignored:" + what, where(n), what + " ignored: " + why);
}

// Something that changes the dynamics and has no counterpart: an error, or a warning when
// the options say to drop such elements.
void MjcfImporter::unsupported(const Node& n, const std::string& what, const std::string& why) {
  if (!opt_.drop_unsupported)
    fail(where(n), what + " is not supported: " + why + " (ImportOptions::drop_unsupported drops it with a warning)");
  rep_.warn("dropped:" + what, where(n), what + " dropped: " + why);
}

void MjcfImporter::check_attributes(const Node& n, const char* element_key) {
  const import::ElementFeature& known = import::mjcf_element(element_key);
  for (const tinyxml2::XMLAttribute* a = n.el->FirstAttribute(); a; a = a->Next()) {
    const import::AttributeFeature* row = known.find(a->Name());
    if (!row || row->noted)
      rep_.warn(std::string("attr:") + n.tag() + ":" + a->Name(), where(n),
                std::string("attribute '") + a->Name() + "' of <" + n.tag() + "> is not recognized and was ignored");
  }
}

int MjcfImporter::load_file(const std::string& path, const std::string& where_from, const std::string* text,
              const std::string& dir) {
  auto doc = std::make_unique<tinyxml2::XMLDocument>();
  tinyxml2::XMLError err;
  if (text) {
    err = doc->Parse(text->data(), text->size());
  } else {
    import::require_regular_file(where_from.empty() ? path : where_from, path);
    err = doc->LoadFile(path.c_str());
  }
  if (err == tinyxml2::XML_ERROR_FILE_NOT_FOUND || err == tinyxml2::XML_ERROR_FILE_COULD_NOT_BE_OPENED)
    import::fail_file_not_found(where_from.empty() ? path : where_from, path);
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

void MjcfImporter::expand(const XMLElement* parent, int f, std::vector<Node>& out, std::vector<std::string>& stack) {
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

std::string MjcfImporter::canonical_key(const std::string& path) {
  std::error_code ec;
  const fs::path c = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path).lexically_normal().string() : c.string();
}

Node MjcfImporter::load_root(const std::string& path, const std::string* text, const std::string& base_dir) {
  const int f = load_file(path, "", text, base_dir);
  Node root;
  root.el = docs_[0]->RootElement();
  root.file = f;
  std::vector<std::string> stack{canonical_key(path)};
  expand(root.el, f, root.children, stack);
  return root;
}

void MjcfImporter::read_globals(const Node& root) {
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

void MjcfImporter::read_compiler(const Node& n) {
  check_attributes(n, "compiler");
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
  // Attributes of older MuJoCo versions that MuJoCo 4.0's schema rejects ("unrecognized attribute").
  for (const char* gone : {"exactmeshinertia", "convexhull", "maxhullvert"})
    if (n.el->Attribute(gone))
      fail(where(n), std::string("compiler attribute '") + gone + "' is not part of MuJoCo 4.0's <compiler> (removed)");
  if (import::read_bool(f, n.el, "alignfree", b) && b)
    ignored(n, "compiler alignfree", "free bodies keep their frames as written (qpos differs from MuJoCo's)");
}

void MjcfImporter::read_option(const Node& n) {
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
  // What the feature table does not call supported or ignored is a solver setting (or unknown):
  // warned, together.
  const import::ElementFeature& table = import::mjcf_element("option");
  std::string solver_attrs;
  for (const tinyxml2::XMLAttribute* a = n.el->FirstAttribute(); a; a = a->Next()) {
    const import::AttributeFeature* row = table.find(a->Name());
    if (row && (row->status == import::Support::kSupported || row->status == import::Support::kIgnored)) continue;
    solver_attrs += (solver_attrs.empty() ? "" : ", ") + std::string(a->Name());
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
        // MuJoCo's constraint flag removes every constraint: contacts, limits, equalities and
        // friction loss (each also has its own flag).
        no_contact_ = no_contact_ || off;
        if (name == "constraint") {
          no_limit_ = no_limit_ || off;
          no_equality_ = no_equality_ || off;
          no_frictionloss_ = no_frictionloss_ || off;
        }
      } else if (name == "equality") {
        no_equality_ = no_equality_ || off;
      } else if (name == "frictionloss") {
        no_frictionloss_ = no_frictionloss_ || off;
      } else if (name == "clampctrl") {
        no_clampctrl_ = no_clampctrl_ || off;
      } else if (name == "actuation" && off) {
        // Zeroing every actuator force would need a model-wide switch the engine lacks (a zero
        // gear divides the servo targets); dropping the actuators would change nu and ctrl.
        unsupported(c, "flag actuation=\"disable\"", "actuator forces cannot be switched off in the model");
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

void MjcfImporter::read_default(const Node& n, int parent) {
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
    else if (t == "pair") classes_[static_cast<std::size_t>(id)].pair.push_back(&c);
    else if (t == "site") classes_[static_cast<std::size_t>(id)].site.push_back(&c);
    else if (t == "camera" || t == "light" || t == "material")
      continue;  // defaults of elements that are ignored or rejected where they are used
    else ignored(c, "<" + t + "> in <default>", "unknown default element");
  }
  for (const Node& c : n.children)
    if (!std::strcmp(c.tag(), "default")) read_default(c, id);
}

std::vector<int> MjcfImporter::class_chain(int c) const {
  std::vector<int> chain;
  for (; c >= 0; c = classes_[static_cast<std::size_t>(c)].parent) chain.push_back(c);
  std::reverse(chain.begin(), chain.end());
  return chain;
}

int MjcfImporter::find_class(const Node& n, const std::string& name) const {
  auto it = class_index_.find(name);
  if (it == class_index_.end()) fail(where(n), "unknown default class '" + name + "'");
  return it->second;
}

// Class of an element: its own `class`, else the enclosing childclass, else main.
int MjcfImporter::element_class(const Node& n, int childclass) const {
  std::string name;
  if (import::read_string(n.el, "class", name)) return find_class(n, name);
  return childclass;
}

void MjcfImporter::read_orientation(const Node& n, Orientation& o) {
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
Quat<double> MjcfImporter::resolve(const Node& n, const Orientation& o) const {
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

Transform MjcfImporter::read_pose(const Node& n) {
  Transform p;
  import::read_fixed(file(n), n.el, "pos", 3, p.pos.v);
  Orientation o;
  read_orientation(n, o);
  p.quat = resolve(n, o);
  return p;
}

void MjcfImporter::apply_joint(const Node& n, JointAttrs& a) {
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
  if (n.el->Attribute("solreffriction") || n.el->Attribute("solimpfriction")) a.friction_softness = true;
  check_attributes(n, "joint");
}

void MjcfImporter::apply_geom(const Node& n, GeomAttrs& g) {
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
  check_attributes(n, "geom");
}

void MjcfImporter::read_keyframes(const Node& root, ImportReport* report) {
  for (const Node& s : root.children) {
    if (std::strcmp(s.tag(), "keyframe")) continue;
    for (const Node& k : s.children) {
      if (std::strcmp(k.tag(), "key")) {
        ignored(k, "<" + std::string(k.tag()) + "> in <keyframe>", "unknown element");
        continue;
      }
      check_attributes(k, "keyframe/key");
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

}  // namespace import::mjcf

using import::mjcf::MjcfImporter;

void add_mjcf(const std::string& path, ModelBuilder& builder, ImportReport* report, const ImportOptions& options) {
  MjcfImporter imp(builder, options);
  imp.run(path, report);
}

void add_mjcf_string(const std::string& xml, const std::string& source, ModelBuilder& builder, ImportReport* report,
                     const ImportOptions& options, const std::string& base_dir) {
  MjcfImporter imp(builder, options);
  imp.run(source.empty() ? std::string("<string>") : source, report, &xml, base_dir.empty() ? "." : base_dir);
}

}  // namespace sap

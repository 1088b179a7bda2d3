// MJCF <asset> meshes and heightfields (see mjcf_assets.hpp).
#include "import/mjcf_assets.hpp"

#include "import/import_features.hpp"

#include <tinyxml2.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>

namespace sap::import {
namespace fs = std::filesystem;

namespace {

// An attribute the feature table's element does not list is an error naming the attributes the
// table supports (mjcf_features.cpp).
void check_known(const std::string& where, const tinyxml2::XMLElement* e, const char* element_key) {
  const ElementFeature& table = mjcf_element(element_key);
  for (const tinyxml2::XMLAttribute* a = e->FirstAttribute(); a; a = a->Next()) {
    const AttributeFeature* row = table.find(a->Name());
    if (row && !row->noted) continue;
    std::string known;
    for (const AttributeFeature& k : table.attributes)
      if (k.status != Support::kIgnored && !k.noted) known += std::string(known.empty() ? "" : ", ") + k.name;
    fail(where,
         std::string("<") + e->Name() + "> attribute '" + a->Name() + "' is not supported (known: " + known + ")");
  }
}

// MuJoCo names an unnamed asset after its file: no directories, no extension.
std::string stem_of(const std::string& file) { return fs::path(file).stem().string(); }

}  // namespace

void MjcfAssets::read_compiler(const std::string& file, const tinyxml2::XMLElement* e) {
  read_string(e, "meshdir", meshdir_);
  read_string(e, "assetdir", assetdir_);
  int b;
  if (read_bool(file, e, "strippath", b)) strippath_ = b == 1;
  if (read_bool(file, e, "fitaabb", b) && b)
    fail(location(file, e), "compiler fitaabb=\"true\" is not supported (primitives are fitted to the mesh's inertia box)");
}

std::string MjcfAssets::resolve(const std::string& file) const {
  std::string f = file;
  if (strippath_) f = fs::path(f).filename().string();
  if (fs::path(f).is_absolute()) return f;
  const std::string& dir = !meshdir_.empty() ? meshdir_ : assetdir_;
  fs::path p = fs::path(dir).is_absolute() ? fs::path(dir) / f : fs::path(model_dir_) / dir / f;
  return p.lexically_normal().string();
}

void MjcfAssets::read_mesh(const std::string& file, const std::string& where, const tinyxml2::XMLElement* e,
                           const std::vector<const tinyxml2::XMLElement*>& defaults) {
  check_known(where, e, "asset/mesh");
  MeshDecl d;
  d.where = where;
  auto apply = [&](const tinyxml2::XMLElement* x) {
    read_fixed(file, x, "scale", 3, d.scale.data());
    read_fixed(file, x, "refpos", 3, d.refpos.data());
    read_fixed(file, x, "refquat", 4, d.refquat.data());
    std::string s;
    if (read_string(x, "inertia", s)) {
      try {
        d.inertia = parse_mesh_inertia(s);
      } catch (const std::invalid_argument& err) {
        fail(where, std::string("mesh attribute 'inertia': ") + err.what());
      }
    }
    int maxhullvert = -1;
    if (read_int(file, x, "maxhullvert", maxhullvert) && maxhullvert != -1)
      fail(where, "mesh maxhullvert is not supported (the full convex hull is used)");
  };
  for (const tinyxml2::XMLElement* x : defaults) apply(x);
  apply(e);
  std::string name, f;
  read_string(e, "name", name);
  if (read_string(e, "file", f)) {
    d.file = resolve(f);
    if (name.empty()) name = stem_of(f);
  }
  std::vector<double> v;
  if (read_numbers(file, e, "vertex", 12, 1 << 30, v)) {
    if (v.size() % 3) fail(where, "mesh vertex data must be a multiple of 3 numbers, got " + std::to_string(v.size()));
    if (!d.file.empty()) fail(where, "mesh has both 'file' and 'vertex'");
    d.vertex = v;
  }
  if (read_numbers(file, e, "face", 3, 1 << 30, v)) {
    if (v.size() % 3) fail(where, "mesh face data must be a multiple of 3 numbers");
    for (double x : v) {
      if (x != std::floor(x) || x < 0 || x * 3 >= static_cast<double>(d.vertex.size()))
        fail(where, "mesh face index " + std::to_string(x) + " is not a vertex id");
      d.face.push_back(static_cast<int>(x));
    }
  }
  if (d.file.empty() && d.vertex.empty()) fail(where, "mesh needs 'file' or 'vertex'");
  if (name.empty()) fail(where, "mesh with inline vertices needs a 'name'");
  if (meshes_.count(name)) fail(where, "repeated mesh name '" + name + "' (first at " + meshes_[name].where + ")");
  meshes_.emplace(name, std::move(d));
}

void MjcfAssets::read_hfield(const std::string& file, const std::string& where, const tinyxml2::XMLElement* e) {
  check_known(where, e, "asset/hfield");
  HfieldDecl d;
  d.where = where;
  std::string name, f;
  read_string(e, "name", name);
  if (read_string(e, "file", f)) {
    d.file = resolve(f);  // as mesh files: meshdir, else assetdir
    if (name.empty()) name = stem_of(f);
  }
  d.spec.name = name;
  if (!read_fixed(file, e, "size", 4, d.spec.size.data())) fail(where, "hfield needs 'size' (x y elevation base)");
  read_int(file, e, "nrow", d.spec.nrow);
  read_int(file, e, "ncol", d.spec.ncol);
  read_numbers(file, e, "elevation", 1, 1 << 30, d.elevation);
  if (!d.file.empty() && !d.elevation.empty()) fail(where, "hfield has both 'file' and 'elevation'");
  if (d.file.empty()) {
    if (d.spec.nrow < 2 || d.spec.ncol < 2)
      fail(where, "hfield without 'file' needs nrow >= 2 and ncol >= 2");
    const std::size_t n = static_cast<std::size_t>(d.spec.nrow) * static_cast<std::size_t>(d.spec.ncol);
    if (!d.elevation.empty() && d.elevation.size() != n)
      fail(where, "hfield elevation has " + std::to_string(d.elevation.size()) + " numbers, expected nrow * ncol = " +
                      std::to_string(n));
  }
  if (name.empty()) fail(where, "hfield needs a 'name' or a 'file'");
  if (hfields_.count(name)) fail(where, "repeated hfield name '" + name + "'");
  hfields_.emplace(name, std::move(d));
}

const MeshAsset& MjcfAssets::mesh(const std::string& name, const std::string& used_at) {
  auto it = meshes_.find(name);
  if (it == meshes_.end()) fail(used_at, "geom refers to unknown mesh '" + name + "'");
  MeshDecl& d = it->second;
  if (!d.compiled) {
    const std::string who = d.where + ": mesh '" + name + "'" + (d.file.empty() ? "" : " (file '" + d.file + "')");
    try {
      TriangleMesh m;
      if (!d.file.empty()) {
        m = read_mesh_file(d.file);
      } else {
        for (std::size_t i = 0; i + 2 < d.vertex.size(); i += 3) m.vert.push_back({d.vertex[i], d.vertex[i + 1], d.vertex[i + 2]});
        for (std::size_t i = 0; i + 2 < d.face.size(); i += 3) m.face.push_back({d.face[i], d.face[i + 1], d.face[i + 2]});
      }
      // refpos / refquat: the mesh's vertices are expressed in that frame (v <- R' (v - p)).
      if (d.refpos != std::array<double, 3>{0, 0, 0} || d.refquat != std::array<double, 4>{1, 0, 0, 0}) {
        const Quat<double> q = conjugate(normalized_or_throw(quat(d.refquat)));
        for (auto& v : m.vert) {
          const Vec3<double> r = rotate(q, Vec3<double>{{v[0] - d.refpos[0], v[1] - d.refpos[1], v[2] - d.refpos[2]}});
          v = {r[0], r[1], r[2]};
        }
      }
      // Hulled only when a colliding geom uses it (builder_mesh), as MuJoCo does.
      d.asset = compile_mesh(name, std::move(m), d.scale, d.inertia, who, /*need_hull=*/false);
    } catch (const std::runtime_error& e) {
      const std::string msg = e.what();
      // Errors from read_mesh_file name the file; prefix the asset's location.
      throw std::runtime_error(msg.rfind(d.where, 0) == 0 ? msg : d.where + ": mesh '" + name + "': " + msg);
    }
    d.compiled = true;
  }
  return d.asset;
}

const HfieldSpec& MjcfAssets::hfield(const std::string& name, const std::string& used_at) {
  auto it = hfields_.find(name);
  if (it == hfields_.end()) fail(used_at, "geom refers to unknown hfield '" + name + "'");
  HfieldDecl& d = it->second;
  if (!d.compiled) {
    std::vector<double> raw;
    int nrow = d.spec.nrow, ncol = d.spec.ncol;
    if (!d.file.empty()) {
      GreyImage img;
      try {
        img = read_png_grey(d.file);
      } catch (const std::runtime_error& e) {
        fail(d.where, std::string("hfield '") + name + "': " + e.what());
      }
      if (img.nrow < 2 || img.ncol < 2) fail(d.where, "hfield image '" + d.file + "' must be at least 2 x 2 pixels");
      nrow = img.nrow;
      ncol = img.ncol;
      raw = img.data;
    } else {
      raw = d.elevation.empty() ? std::vector<double>(static_cast<std::size_t>(nrow) * static_cast<std::size_t>(ncol), 0.0)
                                : d.elevation;
    }
    // MuJoCo stores the last row written (image bottom) first: row r at y = (2 r/(nrow-1) - 1) size[1].
    d.spec.nrow = nrow;
    d.spec.ncol = ncol;
    d.spec.data.assign(raw.size(), 0.0);
    for (int r = 0; r < nrow; ++r)
      for (int c = 0; c < ncol; ++c)
        d.spec.data[static_cast<std::size_t>(r * ncol + c)] = raw[static_cast<std::size_t>((nrow - 1 - r) * ncol + c)];
    d.spec.data = normalize_elevation(std::move(d.spec.data));
    d.compiled = true;
  }
  return d.spec;
}

int MjcfAssets::builder_mesh(ModelBuilder& b, const std::string& name, const std::string& prefix,
                             const std::string& used_at) {
  const MeshAsset& a = mesh(name, used_at);
  MeshDecl& d = meshes_.at(name);
  if (!a.hull_error.empty())
    fail(used_at, "a colliding geom uses mesh '" + name + "', which has no convex hull (" + a.hull_error +
                      "); use a primitive (a plane or a thin box), or contype=\"0\" conaffinity=\"0\" for a visual geom");
  if (d.builder_id < 0) {
    MeshSpec spec = a.hull;
    spec.name = prefix + name;
    try {
      d.builder_id = b.add_mesh(spec);
    } catch (const std::runtime_error& e) {
      fail(d.where, e.what());
    }
  }
  return d.builder_id;
}

int MjcfAssets::builder_hfield(ModelBuilder& b, const std::string& name, const std::string& prefix,
                               const std::string& used_at) {
  const HfieldSpec& h = hfield(name, used_at);
  HfieldDecl& d = hfields_.at(name);
  if (d.builder_id < 0) {
    HfieldSpec spec = h;
    spec.name = prefix + name;
    try {
      d.builder_id = b.add_hfield(spec);
    } catch (const std::runtime_error& e) {
      fail(d.where, e.what());
    }
  }
  return d.builder_id;
}

}  // namespace sap::import

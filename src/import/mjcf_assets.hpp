// MJCF <asset> meshes and heightfields for the MJCF importer (src/mjcf.cpp): declarations are
// read with the document, files are read and compiled on first use by a geom that needs them
// (a colliding geom, or one whose mass counts), so that visual-only assets in formats or files
// we cannot read cost nothing. Paths follow MuJoCo: <compiler meshdir> (else assetdir) relative
// to the main model file's directory unless absolute; strippath drops the directories of `file`.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "import/import_common.hpp"
#include "sap/mesh_asset.hpp"

namespace tinyxml2 {
class XMLElement;
}

namespace sap::import {

class MjcfAssets {
 public:
  // <compiler> and the main model file's directory.
  void set_model_dir(const std::string& dir) { model_dir_ = dir; }
  void read_compiler(const std::string& file, const tinyxml2::XMLElement* e);

  // <asset><mesh>: `defaults` are the <default><mesh> elements of the mesh's class chain, root
  // first. `file` is the XML file (for attribute errors), `where` its file:line.
  void read_mesh(const std::string& file, const std::string& where, const tinyxml2::XMLElement* e,
                 const std::vector<const tinyxml2::XMLElement*>& defaults);
  // <asset><hfield>.
  void read_hfield(const std::string& file, const std::string& where, const tinyxml2::XMLElement* e);

  bool has_mesh(const std::string& name) const { return meshes_.count(name) > 0; }
  bool has_hfield(const std::string& name) const { return hfields_.count(name) > 0; }
  // The compiled mesh (read, scaled, hull, mass properties); throws "<where of the asset>: ..."
  // naming the file on any failure. `used_at` is where the geom that needs it is.
  const MeshAsset& mesh(const std::string& name, const std::string& used_at);
  // Builder ids (added once per builder on first use); names get `prefix`.
  int builder_mesh(ModelBuilder& b, const std::string& name, const std::string& prefix, const std::string& used_at);
  int builder_hfield(ModelBuilder& b, const std::string& name, const std::string& prefix, const std::string& used_at);
  const HfieldSpec& hfield(const std::string& name, const std::string& used_at);

 private:
  struct MeshDecl {
    std::string where, file;  // file as resolved (empty: inline vertices)
    std::array<double, 3> scale{1, 1, 1};
    std::array<double, 3> refpos{0, 0, 0};
    std::array<double, 4> refquat{1, 0, 0, 0};
    MeshInertia inertia = MeshInertia::kLegacy;
    std::vector<double> vertex;
    std::vector<int> face;
    bool compiled = false;
    MeshAsset asset;
    int builder_id = -1;
  };
  struct HfieldDecl {
    std::string where, file;
    HfieldSpec spec;
    std::vector<double> elevation;
    bool compiled = false;
    int builder_id = -1;
  };
  std::string resolve(const std::string& file) const;
  std::string model_dir_, meshdir_, assetdir_;
  bool strippath_ = false;
  std::map<std::string, MeshDecl> meshes_;
  std::map<std::string, HfieldDecl> hfields_;
};

}  // namespace sap::import

// The importers' feature tables: every MJCF and URDF element and attribute the importers know,
// with what the import does with it and what it means in MuJoCo (or in the URDF specification).
// They are the single source of truth for the attributes an element accepts: the MJCF importer's
// check_attributes and the mesh/height-field asset readers take their known attributes from
// mjcf_features(), the URDF importer from urdf_features(); import_features_markdown() writes the
// table of docs/model-import-features.md, kept equal to it by tests/test_import_features.cpp, which also
// loads every attribute's `example` and checks that the import does what `status` says.
#pragma once

#include <string>
#include <vector>

namespace sap::import {

enum class Support {
  kSupported,     // imported with the format's meaning
  kApproximated,  // imported, with a documented difference from MuJoCo's meaning (`ours` says how)
  kIgnored,       // accepted silently: no effect on the dynamics here (appearance, names, user data)
  kWarned,        // accepted and not used, with a warning in the import notes
  kRejected,      // an error naming file and line (for some, a dropped-with-warning under drop_unsupported)
};
const char* support_name(Support s);

struct AttributeFeature {
  const char* name;
  Support status;
  const char* ours;               // what the import does (for conditional statuses: which values)
  const char* theirs;             // MuJoCo's meaning (URDF: the specification's), one line
  const char* example;            // a value that shows `status` (tests load it)
  const char* variant = nullptr;  // the tag it applies to, for elements that stand for several
  // No code reads it: the attribute check reports it as an unknown attribute would be (a note;
  // for assets an error). MuJoCo 4.0 attributes the importer does not know yet.
  bool noted = false;
};

struct ElementFeature {
  const char* key;      // lookup key: "geom", "tendon/fixed", "asset/mesh", "link/collision/geometry/box", ...
  const char* display;  // as the docs show it: "`<geom>`", "`<tendon><fixed>`"
  Support status;       // of the element itself
  const char* ours;
  const char* theirs;
  std::vector<AttributeFeature> attributes;  // empty: the element as a whole (its attributes are not read)
  bool checked = true;  // the importer checks its attributes against this list (unknown ones: noted)

  const AttributeFeature* find(const char* attribute) const;
};

const std::vector<ElementFeature>& mjcf_features();
const std::vector<ElementFeature>& urdf_features();
// The element of a table by key; throws std::logic_error for a key the table does not have (a
// programming error: the importer asks for an element its table lacks).
const ElementFeature& mjcf_element(const char* key);
const ElementFeature& urdf_element(const char* key);

// docs/model-import-features.md's generated section (between its import-feature-table markers).
std::string import_features_markdown();

}  // namespace sap::import

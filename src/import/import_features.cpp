// Lookups in the importers' feature tables and the markdown of docs/model-import-features.md
// (import_features.hpp; the tables are mjcf_features.cpp and urdf_features.cpp).
#include "import/import_features.hpp"

#include <cstring>
#include <stdexcept>

namespace sap::import {

const char* support_name(Support s) {
  switch (s) {
    case Support::kSupported: return "supported";
    case Support::kApproximated: return "approximated";
    case Support::kIgnored: return "ignored";
    case Support::kWarned: return "warned";
    case Support::kRejected: return "rejected";
  }
  return "?";
}

const AttributeFeature* ElementFeature::find(const char* attribute) const {
  for (const AttributeFeature& a : attributes)
    if (!std::strcmp(a.name, attribute)) return &a;
  return nullptr;
}

namespace {

const ElementFeature& element_of(const std::vector<ElementFeature>& table, const char* format, const char* key) {
  for (const ElementFeature& e : table)
    if (!std::strcmp(e.key, key)) return e;
  throw std::logic_error(std::string("the ") + format + " feature table has no element '" + key + "'");
}

// A table cell: '|' would split it.
std::string cell(const char* text) {
  std::string s = text ? text : "";
  for (char& c : s)
    if (c == '|') c = '/';
  return s;
}

std::string table_markdown(const std::vector<ElementFeature>& table, const char* theirs) {
  std::string out = std::string("| element | attribute | status | here | ") + theirs + " |\n|---|---|---|---|---|\n";
  for (const ElementFeature& e : table) {
    out += "| " + cell(e.display) + " | | **" + support_name(e.status) + "** | " + cell(e.ours) + " | " +
           cell(e.theirs) + " |\n";
    for (const AttributeFeature& a : e.attributes) {
      std::string ours = a.variant ? std::string("`<") + a.variant + ">`" + (*a.ours ? ": " : "") : std::string();
      ours += cell(a.ours);
      out += "| " + cell(e.display) + " | `" + a.name + "` | " + support_name(a.status) + " | " + ours + " | " +
             cell(a.theirs) + " |\n";
    }
  }
  return out;
}

}  // namespace

const ElementFeature& mjcf_element(const char* key) { return element_of(mjcf_features(), "MJCF", key); }
const ElementFeature& urdf_element(const char* key) { return element_of(urdf_features(), "URDF", key); }

std::string import_features_markdown() {
  return "### MJCF\n\n" + table_markdown(mjcf_features(), "MuJoCo") + "\n### URDF\n\n" +
         table_markdown(urdf_features(), "URDF (and MuJoCo's reading of it)");
}

}  // namespace sap::import

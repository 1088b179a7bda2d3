// Grouping of importer/scene notes by kind (sap_bench and the corpus tool print them this way,
// so that "24 collision meshes dropped" is not hidden behind "first: <visual> ignored").
#include <algorithm>
#include <map>
#include <regex>

#include "sap/mjcf.hpp"

namespace sap {

std::vector<NoteGroup> group_notes(const std::vector<std::string>& notes) {
  // "<scene>: <ptr>: importer: <file>:<line>: <what> (N occurrences)", "<file>:<line>: <what>" or
  // "<file>: <json pointer>: <what>"; the kind is <what> without its location and count.
  static const std::regex importer(R"(^.*?importer: (.*)$)");
  static const std::regex xml_line(R"(^.*?:[0-9]+: (.*)$)");
  static const std::regex json_ptr(R"(^[^ ]*: (/[^ ]*|\(root\)): (.*)$)");
  static const std::regex count(R"(^(.*) \(([0-9]+) occurrences\)$)");
  std::vector<NoteGroup> groups;
  std::map<std::string, std::size_t> index;
  for (const std::string& n : notes) {
    std::string what = n;
    std::smatch m;
    if (std::regex_match(what, m, importer)) what = m[1].str();
    if (std::regex_match(what, m, xml_line)) what = m[1].str();
    else if (std::regex_match(what, m, json_ptr)) what = m[2].str();
    int c = 1;
    if (std::regex_match(what, m, count)) {
      c = std::stoi(m[2].str());
      what = m[1].str();
    }
    const auto it = index.find(what);
    if (it == index.end()) {
      index[what] = groups.size();
      groups.push_back({what, c, n});
    } else {
      groups[it->second].count += c;
    }
  }
  // Dropped elements change the dynamics: they come first; then by count, then first seen.
  std::stable_sort(groups.begin(), groups.end(), [](const NoteGroup& a, const NoteGroup& b) {
    const bool da = a.kind.find(" dropped") != std::string::npos, db = b.kind.find(" dropped") != std::string::npos;
    if (da != db) return da;
    return a.count > b.count;
  });
  return groups;
}

}  // namespace sap

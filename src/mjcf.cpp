// Placeholder until the MJCF/URDF importer lands (issue 6).
#include "sap/mjcf.hpp"

#include <stdexcept>

namespace sap {
void add_mjcf(const std::string& path, ModelBuilder&, ImportReport*, const ImportOptions&) {
  throw std::runtime_error(path + ": MJCF import is not implemented yet");
}
Model load_mjcf(const std::string& path, ImportReport* r, const ImportOptions& o) {
  ModelBuilder b;
  add_mjcf(path, b, r, o);
  return b.finalize();
}
void add_urdf(const std::string& path, ModelBuilder&, ImportReport*, const ImportOptions&, bool) {
  throw std::runtime_error(path + ": URDF import is not implemented yet");
}
Model load_urdf(const std::string& path, ImportReport* r, const ImportOptions& o, bool floating) {
  ModelBuilder b;
  add_urdf(path, b, r, o, floating);
  return b.finalize();
}
}  // namespace sap

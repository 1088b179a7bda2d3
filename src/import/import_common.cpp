// Shared pieces of the MJCF and URDF importers (import_common.hpp): located diagnostics,
// attribute parsing, composite mass properties and the contact-material rule.
#include "import/import_common.hpp"

#include <tinyxml2.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "sap/backend/hd.hpp"
#include "sap/errors.hpp"

namespace sap::import {

std::string location(const std::string& file, const tinyxml2::XMLElement* e) {
  return file + ":" + std::to_string(e ? e->GetLineNum() : 0);
}

void fail(const std::string& where, const std::string& what) { throw std::runtime_error(where + ": " + what); }

void fail_file_not_found(const std::string& where, const std::string& path) {
  throw FileNotFoundError(where + ": cannot open file '" + path + "'", path);
}

void require_regular_file(const std::string& where, const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(st)) fail_file_not_found(where, path);
  if (!std::filesystem::is_regular_file(st)) fail(where, "'" + path + "' is not a regular file");
}

void Reporter::warn(const std::string& key, const std::string& where, const std::string& what) {
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    order_.push_back(key);
    entries_[key] = {where + ": " + what, 1};
  } else {
    ++it->second.count;
  }
}

void Reporter::flush(ImportReport* report) const {
  if (!report) return;
  for (const std::string& k : order_) {
    const Entry& e = entries_.at(k);
    report->warnings.push_back(e.count > 1 ? e.text + " (" + std::to_string(e.count) + " occurrences)" : e.text);
  }
}

// Numbers separated by white space or commas, each read by strtod ("1e-3" and "inf" are
// numbers to strtod; the non-finite ones are rejected here).
std::vector<double> parse_numbers(const std::string& where, const char* name, const char* text, int min_count,
                                  int max_count) {
  std::vector<double> out;
  const char* p = text;
  while (true) {
    while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ',') ++p;
    if (!*p) break;
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(p, &end);
    if (end == p) {
      const char* q = p;
      while (*q && *q != ' ' && *q != '\t' && *q != '\n' && *q != '\r') ++q;
      fail(where, std::string("attribute '") + name + "': expected a number, got '" + std::string(p, q) + "'");
    }
    if (!std::isfinite(v))
      fail(where, std::string("attribute '") + name + "': numbers must be finite, got '" +
                      std::string(p, static_cast<std::size_t>(end - p)) + "'");
    out.push_back(v);
    p = end;
  }
  const int n = static_cast<int>(out.size());
  if (n < min_count || n > max_count) {
    std::string expect = min_count == max_count ? std::to_string(min_count)
                                                : std::to_string(min_count) + " to " + std::to_string(max_count);
    fail(where, std::string("attribute '") + name + "': expected " + expect + " number" + (max_count == 1 ? "" : "s") +
                    ", got " + std::to_string(n) + " ('" + text + "')");
  }
  return out;
}

bool read_numbers(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int min_count,
                  int max_count, std::vector<double>& out) {
  const char* t = e->Attribute(name);
  if (!t) return false;
  out = parse_numbers(location(file, e), name, t, min_count, max_count);
  return true;
}

bool read_fixed(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int n, double* out) {
  std::vector<double> v;
  if (!read_numbers(file, e, name, n, n, v)) return false;
  for (int i = 0; i < n; ++i) out[i] = v[static_cast<std::size_t>(i)];
  return true;
}

bool read_double(const std::string& file, const tinyxml2::XMLElement* e, const char* name, double& out) {
  return read_fixed(file, e, name, 1, &out);
}

bool read_int(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int& out) {
  const char* t = e->Attribute(name);
  if (!t) return false;
  char* end = nullptr;
  const long v = std::strtol(t, &end, 10);
  while (end && (*end == ' ' || *end == '\t')) ++end;
  if (end == t || (end && *end))
    fail(location(file, e), std::string("attribute '") + name + "': expected an integer, got '" + t + "'");
  // long -> int would wrap silently ("4294967297" read as 1).
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    fail(location(file, e), std::string("attribute '") + name + "': integer out of range, got '" + t + "'");
  out = static_cast<int>(v);
  return true;
}

bool read_bool(const std::string& file, const tinyxml2::XMLElement* e, const char* name, int& out, bool allow_auto) {
  const char* t = e->Attribute(name);
  if (!t) return false;
  if (!std::strcmp(t, "true")) {
    out = 1;
  } else if (!std::strcmp(t, "false")) {
    out = 0;
  } else if (allow_auto && !std::strcmp(t, "auto")) {
    out = -1;
  } else {
    fail(location(file, e), std::string("attribute '") + name + "': expected " +
                                (allow_auto ? "'true', 'false' or 'auto'" : "'true' or 'false'") + ", got '" + t + "'");
  }
  return true;
}

bool read_string(const tinyxml2::XMLElement* e, const char* name, std::string& out) {
  const char* t = e->Attribute(name);
  if (!t) return false;
  out = t;
  return true;
}

// I' = R I R^T: the inertia of a solid whose principal (or given) axes are rotated by q.
// Written out as sums from zero, the order the importers have always used.
Sym6 rotate_inertia(const Quat<double>& q, const Sym6& I) {
  const Mat3<double> R = rotation_matrix(q);
  const double A[9] = {I[0], I[3], I[4], I[3], I[1], I[5], I[4], I[5], I[2]};
  double RA[9], out[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += R(r, k) * A[3 * k + c];
      RA[3 * r + c] = s;
    }
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += RA[3 * r + k] * R(c, k);
      out[3 * r + c] = s;
    }
  // Symmetrize (round-off).
  return {out[0], out[4], out[8], 0.5 * (out[1] + out[3]), 0.5 * (out[2] + out[6]), 0.5 * (out[5] + out[7])};
}

Sym6 rotate_diagonal_inertia(const Quat<double>& q, const Vec3d& d) {
  return rotate_inertia(q, {d[0], d[1], d[2], 0, 0, 0});
}

void combine_mass_parts(const std::vector<MassPart>& parts, double& mass, Vec3d& com, Sym6& inertia) {
  mass = 0;
  com = {0, 0, 0};
  for (const MassPart& p : parts) {
    mass += p.mass;
    for (int k = 0; k < 3; ++k) com[static_cast<std::size_t>(k)] += p.mass * p.pos[static_cast<std::size_t>(k)];
  }
  if (mass > 0)
    for (double& c : com) c /= mass;
  inertia = {0, 0, 0, 0, 0, 0};
  for (const MassPart& p : parts) {
    const double dx = p.pos[0] - com[0], dy = p.pos[1] - com[1], dz = p.pos[2] - com[2];
    // Parallel axis: I += m (|d|^2 1 - d d^T)
    inertia[0] += p.inertia[0] + p.mass * (dy * dy + dz * dz);
    inertia[1] += p.inertia[1] + p.mass * (dx * dx + dz * dz);
    inertia[2] += p.inertia[2] + p.mass * (dx * dx + dy * dy);
    inertia[3] += p.inertia[3] - p.mass * dx * dy;
    inertia[4] += p.inertia[4] - p.mass * dx * dz;
    inertia[5] += p.inertia[5] - p.mass * dy * dz;
  }
}

// The rule of import_common.hpp: w = 1 / (tc zeta) and 2 zeta w = 2 / tc for solref (tc, zeta);
// w^2 = stiffness and 2 zeta w = damping for a negative solref.
ContactMaterial contact_material(const double solref[2], double mass_scale, bool is_static) {
  double w2, two_zeta_w;
  if (solref[0] > 0) {
    if (!(solref[1] > 0)) throw std::invalid_argument("solref dampratio must be positive");
    const double w = 1.0 / (solref[0] * solref[1]);
    w2 = w * w;
    two_zeta_w = 2.0 / solref[0];
  } else {
    if (!(solref[0] < 0) || solref[1] > 0)
      throw std::invalid_argument("solref must be (timeconst > 0, dampratio > 0) or (-stiffness < 0, -damping <= 0)");
    w2 = -solref[0];
    two_zeta_w = -solref[1];
  }
  ContactMaterial c;
  // Pair: tau_d = c/k = 2 zeta w / w^2; half of it per geom.
  c.dissipation = 0.5 * two_zeta_w / w2;
  c.stiffness = is_static ? kStaticStiffness : mass_scale * w2;
  return c;
}

}  // namespace sap::import

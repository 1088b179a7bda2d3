// The strict JSON reader of the scene loader (docs/scene-format.md): parsing that rejects what
// nlohmann's DOM parser lets through (duplicate keys, unbounded nesting, errors without a
// position), and typed getters that check every value where it is read.
//
// Every error is a std::runtime_error "<file>: <json pointer>: <what was expected>", so a user
// can find the offending value in the file (RFC 6901 pointers: "/bodies/2/shapes/0/radius").
// Strict objects: a key that the format does not define is an error, never silently ignored;
// values that are accepted but have no effect are reported as warnings instead.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "import/rotation.hpp"

namespace sap::scene_json {

using json = nlohmann::json;

// JSON pointer of a member / an element below `ptr` ("~" and "/" in keys escaped as ~0, ~1).
std::string at(const std::string& ptr, const std::string& key);
std::string at(const std::string& ptr, std::size_t i);
// A value for error messages, cut to 60 characters ("an object {...}", "an array [...]", "3.5").
std::string describe(const json& v);
// A number in messages: %.9g.
std::string fmt(double x);
// "a, b, c".
std::string join(const std::vector<std::string>& xs);
// Up to 12 quoted names, then "... (N in all)"; "none" for an empty list.
std::string list_names(const std::vector<std::string>& names);

class JsonReader {
 public:
  std::string file;                              // names the source in every message
  std::vector<std::string>* warnings = nullptr;  // where warn() appends; none when null

  [[noreturn]] void fail(const std::string& ptr, const std::string& what) const;
  // "<file>: <ptr>: file not found: <path>" as a sap::FileNotFoundError.
  [[noreturn]] void fail_file_not_found(const std::string& ptr, const std::string& path) const;
  void warn(const std::string& ptr, const std::string& what) const;

  void require_object(const json& o, const std::string& ptr) const;
  // Strict objects: every key must be in `allowed`; `what` names the object in the message.
  void check_keys(const json& o, const std::string& ptr, const std::vector<std::string>& allowed,
                  const std::string& what = "") const;
  // The member `key` of `o`, or null when absent.
  static const json* get(const json& o, const std::string& key);
  // The member `key` of `o`; a missing key is an error naming `what` was expected.
  const json& required(const json& o, const std::string& ptr, const std::string& key, const std::string& what) const;

  // Numbers: finite JSON numbers, or strings holding an expression of numbers and pi
  // (evaluate_scene_expression: "pi / 4", "2 * pi * 0.25").
  double number(const json& v, const std::string& ptr, const std::string& what = "a number") const;
  double positive(const json& v, const std::string& ptr) const;
  double nonnegative(const json& v, const std::string& ptr) const;
  // A JSON integer (not 1.0, not an expression) in [lo, hi].
  long long integer(const json& v, const std::string& ptr, long long lo, long long hi) const;
  bool boolean(const json& v, const std::string& ptr) const;
  std::string string(const json& v, const std::string& ptr, bool nonempty = true) const;
  // An array of exactly n numbers.
  std::vector<double> numbers(const json& v, const std::string& ptr, std::size_t n) const;
  Vec3<double> vec3(const json& v, const std::string& ptr) const;
  // A unit vector: zero and ||a| - 1| > 1e-6 are rejected; the rest is normalised (a / |a|).
  Vec3<double> unit_axis(const json& v, const std::string& ptr) const;
  // A unit quaternion from (w, x, y, z): ||q| - 1| > 1e-6 is rejected; the rest is normalised.
  Quat<double> unit_quat(const std::vector<double>& wxyz, const std::string& ptr) const;
  // Rotation: "identity" | [w, x, y, z] | {"wxyz": [...]} | {"xyzw": [...]} |
  // {"axis_angle": {"axis": [...], "angle": a}} | {"rpy": [roll, pitch, yaw]} (fixed axes,
  // R = Rz(yaw) Ry(pitch) Rx(roll), as URDF).
  Quat<double> rotation(const json& v, const std::string& ptr) const;
  // Transform: "identity" | {"p": [x, y, z], "q": rotation} (both optional).
  Transform transform(const json& v, const std::string& ptr) const;
};

// Parses `text` as JSON. Syntax errors are "<file>: line L, column C: JSON syntax error: ...",
// a duplicate key or nesting deeper than 64 levels "<file>: <pointer>: ...".
json parse_strict_json(const std::string& text, const JsonReader& r);

}  // namespace sap::scene_json

// The strict JSON reader of the scene loader (json_reader.hpp): JSON pointers, typed getters
// with located errors, and a parser that adds duplicate-key detection, a nesting bound and
// error positions to nlohmann's DOM parser.
#include "scene/json_reader.hpp"

#include <cmath>
#include <cstdio>
#include <set>
#include <stdexcept>

#include "sap/scene.hpp"
#include "sap/errors.hpp"

namespace sap::scene_json {
namespace {

constexpr double kUnitTolerance = 1e-6;    // |axis| and |q| must be 1 within this, then are normalised
constexpr std::size_t kMaxJsonDepth = 64;  // nesting levels of arrays/objects accepted

std::string escape_key(const std::string& k) {
  std::string r;
  for (char c : k) {
    if (c == '~') r += "~0";
    else if (c == '/') r += "~1";
    else r += c;
  }
  return r;
}

std::string located(const std::string& file, const std::string& ptr, const std::string& what) {
  return file + ": " + (ptr.empty() ? std::string("(root)") : ptr) + ": " + what;
}

}  // namespace

std::string at(const std::string& ptr, const std::string& key) { return ptr + "/" + escape_key(key); }
std::string at(const std::string& ptr, std::size_t i) { return ptr + "/" + std::to_string(i); }

std::string describe(const json& v) {
  std::string s = v.dump();
  if (s.size() > 60) s = s.substr(0, 57) + "...";
  if (v.is_object()) return "an object " + s;
  if (v.is_array()) return "an array " + s;
  return s;
}
std::string fmt(double x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}
std::string join(const std::vector<std::string>& xs) {
  std::string r;
  for (const auto& x : xs) r += (r.empty() ? "" : ", ") + x;
  return r;
}
std::string list_names(const std::vector<std::string>& names) {
  std::vector<std::string> q;
  for (std::size_t i = 0; i < names.size() && i < 12; ++i) q.push_back("\"" + names[i] + "\"");
  if (names.size() > 12) q.push_back("... (" + std::to_string(names.size()) + " in all)");
  return q.empty() ? std::string("none") : join(q);
}

// ---------------------------------------------------------------------------------------
// Typed getters.

void JsonReader::fail(const std::string& ptr, const std::string& what) const {
  throw std::runtime_error(located(file, ptr, what));
}
void JsonReader::fail_file_not_found(const std::string& ptr, const std::string& path) const {
  throw FileNotFoundError(located(file, ptr, "file not found: " + path), path);
}
void JsonReader::warn(const std::string& ptr, const std::string& what) const {
  if (warnings) warnings->push_back(located(file, ptr, what));
}

void JsonReader::require_object(const json& o, const std::string& ptr) const {
  if (!o.is_object()) fail(ptr, "expected an object, got " + describe(o));
}
void JsonReader::check_keys(const json& o, const std::string& ptr, const std::vector<std::string>& allowed,
                            const std::string& what) const {
  require_object(o, ptr);
  for (auto it = o.begin(); it != o.end(); ++it) {
    bool ok = false;
    for (const auto& a : allowed) ok = ok || a == it.key();
    if (!ok)
      fail(at(ptr, it.key()),
           "unknown key" + (what.empty() ? "" : " for " + what) + ", expected one of: " + join(allowed));
  }
}
const json* JsonReader::get(const json& o, const std::string& key) {
  auto it = o.find(key);
  return it == o.end() ? nullptr : &*it;
}
const json& JsonReader::required(const json& o, const std::string& ptr, const std::string& key,
                                 const std::string& what) const {
  const json* v = get(o, key);
  if (!v) fail(at(ptr, key), "missing required key (expected " + what + ")");
  return *v;
}

double JsonReader::number(const json& v, const std::string& ptr, const std::string& what) const {
  if (v.is_number()) {
    const double x = v.get<double>();
    if (!std::isfinite(x)) fail(ptr, "expected " + what + ", got " + describe(v));
    return x;
  }
  if (v.is_string()) {
    try {
      return evaluate_scene_expression(v.get<std::string>());
    } catch (const std::invalid_argument& e) {
      fail(ptr, e.what());
    }
  }
  fail(ptr, "expected " + what + ", got " + describe(v));
}
double JsonReader::positive(const json& v, const std::string& ptr) const {
  const double x = number(v, ptr, "a positive number");
  if (!(x > 0)) fail(ptr, "expected a positive number, got " + describe(v));
  return x;
}
double JsonReader::nonnegative(const json& v, const std::string& ptr) const {
  const double x = number(v, ptr, "a number >= 0");
  if (!(x >= 0)) fail(ptr, "expected a number >= 0, got " + describe(v));
  return x;
}
long long JsonReader::integer(const json& v, const std::string& ptr, long long lo, long long hi) const {
  const std::string what = "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
  if (!v.is_number_integer()) fail(ptr, "expected " + what + ", got " + describe(v));
  // An unsigned value above LLONG_MAX would wrap to a negative long long.
  if (v.is_number_unsigned() && v.get<unsigned long long>() > static_cast<unsigned long long>(hi))
    fail(ptr, "expected " + what + ", got " + describe(v));
  const long long x = v.get<long long>();
  if (x < lo || x > hi) fail(ptr, "expected " + what + ", got " + describe(v));
  return x;
}
bool JsonReader::boolean(const json& v, const std::string& ptr) const {
  if (!v.is_boolean()) fail(ptr, "expected true or false, got " + describe(v));
  return v.get<bool>();
}
std::string JsonReader::string(const json& v, const std::string& ptr, bool nonempty) const {
  if (!v.is_string() || (nonempty && v.get<std::string>().empty()))
    fail(ptr, std::string("expected a ") + (nonempty ? "non-empty " : "") + "string, got " + describe(v));
  return v.get<std::string>();
}
std::vector<double> JsonReader::numbers(const json& v, const std::string& ptr, std::size_t n) const {
  if (!v.is_array() || v.size() != n)
    fail(ptr, "expected an array of " + std::to_string(n) + " numbers, got " + describe(v));
  std::vector<double> r(n);
  for (std::size_t i = 0; i < n; ++i) r[i] = number(v[i], at(ptr, i));
  return r;
}
Vec3<double> JsonReader::vec3(const json& v, const std::string& ptr) const {
  const auto x = numbers(v, ptr, 3);
  return {{x[0], x[1], x[2]}};
}
Vec3<double> JsonReader::unit_axis(const json& v, const std::string& ptr) const {
  const Vec3<double> a = vec3(v, ptr);
  const double n = norm(a);
  if (!(n > 0)) fail(ptr, "expected a unit axis, got the zero vector");
  if (std::abs(n - 1) > kUnitTolerance) fail(ptr, "expected a unit axis (|a| = 1 within 1e-6), got |a| = " + fmt(n));
  return a / n;
}
Quat<double> JsonReader::unit_quat(const std::vector<double>& wxyz, const std::string& ptr) const {
  const Quat<double> q{wxyz[0], wxyz[1], wxyz[2], wxyz[3]};
  const double n = norm(q);
  if (!(n > 0)) fail(ptr, "expected a unit quaternion, got the zero quaternion");
  if (std::abs(n - 1) > kUnitTolerance)
    fail(ptr, "expected a unit quaternion (|q| = 1 within 1e-6), got |q| = " + fmt(n) +
                  " (write rotations exactly with {\"axis_angle\": ...} or {\"rpy\": ...})");
  return q / n;
}
Quat<double> JsonReader::rotation(const json& v, const std::string& ptr) const {
  if (v.is_string() && v.get<std::string>() == "identity") return Quat<double>::identity();
  if (v.is_array()) return unit_quat(numbers(v, ptr, 4), ptr);
  if (v.is_object() && v.size() == 1) {
    const std::string key = v.begin().key();
    const std::string p = at(ptr, key);
    const json& x = v.begin().value();
    if (key == "wxyz") return unit_quat(numbers(x, p, 4), p);
    if (key == "xyzw") {
      const auto q = numbers(x, p, 4);
      return unit_quat({q[3], q[0], q[1], q[2]}, p);
    }
    if (key == "axis_angle") {
      check_keys(x, p, {"axis", "angle"});
      const Vec3<double> axis = unit_axis(required(x, p, "axis", "a unit 3-vector"), at(p, "axis"));
      const double angle = number(required(x, p, "angle", "an angle in radians"), at(p, "angle"));
      return from_axis_angle(axis, angle);
    }
    if (key == "rpy") {
      const auto r = numbers(x, p, 3);
      return from_rpy({{r[0], r[1], r[2]}});
    }
  }
  fail(ptr, "expected a rotation: \"identity\", [w, x, y, z], {\"wxyz\": [...]}, {\"xyzw\": [...]}, "
            "{\"axis_angle\": {\"axis\": [...], \"angle\": a}} or {\"rpy\": [r, p, y]}, got " +
                describe(v));
}
Transform JsonReader::transform(const json& v, const std::string& ptr) const {
  if (v.is_string() && v.get<std::string>() == "identity") return {};
  if (!v.is_object())
    fail(ptr, "expected a transform: \"identity\" or {\"p\": [x, y, z], \"q\": rotation}, got " + describe(v));
  check_keys(v, ptr, {"p", "q"}, "a transform");
  Transform x;
  if (const json* p = get(v, "p")) x.pos = vec3(*p, at(ptr, "p"));
  if (const json* q = get(v, "q")) x.quat = rotation(*q, at(ptr, "q"));
  return x;
}

// ---------------------------------------------------------------------------------------
// Parsing: a SAX handler in front of nlohmann's DOM builder adds what the DOM parser lacks:
// duplicate-key detection (nlohmann keeps the last of duplicate keys silently), a bound on the
// nesting depth, and the position of every error, including number overflow ("1e400"), which
// nlohmann reports as out_of_range without a position.

namespace {

class StrictJsonSax {
 public:
  using Dom = nlohmann::detail::json_sax_dom_parser<json>;
  StrictJsonSax(json& root, const std::string& text, const JsonReader& r) : dom_(root), text_(text), r_(r) {}

  bool null() { return value() && dom_.null(); }
  bool boolean(bool v) { return value() && dom_.boolean(v); }
  bool number_integer(json::number_integer_t v) { return value() && dom_.number_integer(v); }
  bool number_unsigned(json::number_unsigned_t v) { return value() && dom_.number_unsigned(v); }
  bool number_float(json::number_float_t v, const json::string_t& s) { return value() && dom_.number_float(v, s); }
  bool string(json::string_t& v) { return value() && dom_.string(v); }
  bool binary(json::binary_t& v) { return value() && dom_.binary(v); }
  bool start_object(std::size_t n) { return open(true) && dom_.start_object(n); }
  bool start_array(std::size_t n) { return open(false) && dom_.start_array(n); }
  bool end_object() { return close() && dom_.end_object(); }
  bool end_array() { return close() && dom_.end_array(); }
  bool key(json::string_t& k) {
    Frame& f = stack_.back();
    f.key = k;
    if (!f.keys.insert(k).second && duplicate_.empty()) duplicate_ = pointer();
    return dom_.key(k);
  }
  // `position` is the number of bytes read when the error was seen.
  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& ex) {
    std::size_t line = 1, col = 1;
    const std::size_t end = std::min<std::size_t>(position > 0 ? position - 1 : 0, text_.size());
    for (std::size_t i = 0; i < end; ++i) {
      if (text_[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    std::string msg = ex.what();
    if (ex.id == 406) {  // out_of_range: number overflow, seen at its last character
      if (!token.empty() && col > token.size()) col -= token.size() - 1;
      msg = "number out of range of a double: '" + (token.size() > 40 ? token.substr(0, 37) + "..." : token) + "'";
    } else {
      const std::size_t c = msg.find("column ");
      const std::size_t colon = c == std::string::npos ? std::string::npos : msg.find(": ", c);
      if (colon != std::string::npos) msg = msg.substr(colon + 2);
    }
    throw std::runtime_error(r_.file + ": line " + std::to_string(line) + ", column " + std::to_string(col) +
                             ": JSON syntax error: " + msg);
  }
  const std::string& duplicate() const { return duplicate_; }

 private:
  struct Frame {
    bool object;
    std::string key;
    std::size_t index = 0;
    std::set<std::string> keys;
  };
  std::string pointer() const {
    std::string p;
    for (const Frame& f : stack_) p = f.object ? at(p, f.key) : at(p, f.index);
    return p;
  }
  bool value() {
    if (!stack_.empty() && !stack_.back().object) ++stack_.back().index;
    return true;
  }
  // Bounded nesting: the DOM builder is iterative, but the scene reader (describe(), copies)
  // recurses over values, so 100,000 nested arrays overflowed the stack (issue 14). Scenes
  // nest a few levels; the error is raised while parsing, before any recursive walk.
  bool open(bool object) {
    if (stack_.size() >= kMaxJsonDepth) {
      std::string p = pointer();
      if (p.size() > 200) p = p.substr(0, 100) + "/.../" + p.substr(p.size() - 60);
      r_.fail(p, "JSON nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels (a scene needs fewer than 10)");
    }
    stack_.push_back({object, "", 0, {}});
    return true;
  }
  bool close() {
    if (!stack_.empty()) stack_.pop_back();
    return value();  // the closed array/object is one element of its parent
  }

  Dom dom_;
  const std::string& text_;
  const JsonReader& r_;
  std::vector<Frame> stack_;
  std::string duplicate_;
};

}  // namespace

json parse_strict_json(const std::string& text, const JsonReader& r) {
  json root;
  StrictJsonSax sax(root, text, r);
  json::sax_parse(text, &sax);
  if (!sax.duplicate().empty()) r.fail(sax.duplicate(), "duplicate key (each key may appear once per object)");
  return root;
}

}  // namespace sap::scene_json

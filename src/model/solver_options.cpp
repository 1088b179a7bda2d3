// Everything here is generated from the two tables of solver_config.hpp: the enumerations'
// value lists (names, aliases, parsing, printing) and SAP_SOLVER_OPTIONS (preset expansion,
// defaults, range checks, the string setter, the docs table). No option is named by hand.
#include "sap/solver_options.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <sstream>
#include <stdexcept>
#include <type_traits>

namespace sap {

namespace {

// One value of an enumeration: the enumerator, its canonical name, its aliases.
template <class Enum>
struct EnumValue {
  Enum value;
  const char* name;
  const char* aliases;  // space separated
};

template <class Enum>
struct EnumValues;  // ::list, a static array of EnumValue<Enum>, in declaration order

#define SAP_ENUM_VALUE(Enum, id, name, aliases) {Enum::id, name, aliases},
#define SAP_ENUM_VALUES(Enum, VALUES)                                   \
  template <>                                                           \
  struct EnumValues<Enum> {                                             \
    static constexpr EnumValue<Enum> list[] = {VALUES(SAP_ENUM_VALUE)}; \
  };
SAP_SOLVER_ENUMS(SAP_ENUM_VALUES)
#undef SAP_ENUM_VALUES
#undef SAP_ENUM_VALUE

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::vector<std::string> split_words(const char* text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// "a (alias, alias), b or c": the accepted values of an enumeration, for messages and docs.
template <class Enum>
std::string accepted_values(bool with_aliases) {
  std::string out;
  const auto& list = EnumValues<Enum>::list;
  const std::size_t n = std::size(list);
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) out += i + 1 == n ? " or " : ", ";
    out += list[i].name;
    const std::vector<std::string> aliases = split_words(list[i].aliases);
    if (with_aliases && !aliases.empty()) {
      out += " (";
      for (std::size_t a = 0; a < aliases.size(); ++a) out += (a ? ", " : "") + aliases[a];
      out += ")";
    }
  }
  return out;
}

[[noreturn]] void bad_value(const std::string& key, const std::string& value, const std::string& expected) {
  throw std::invalid_argument("solver option '" + key + "': invalid value '" + value + "', expected " + expected);
}

// Shortest decimal form that reads back to the same double (0.8, not 0.80000000000000004).
std::string format_double(double x) {
  for (int digits = 1; digits <= 17; ++digits) {
    std::ostringstream s;
    s.precision(digits);
    s << x;
    if (std::strtod(s.str().c_str(), nullptr) == x) return s.str();
  }
  return std::to_string(x);
}

// The string form of a value, as set_solver_option accepts it.
template <class T>
std::string format_value(const T& x) {
  if constexpr (std::is_enum_v<T>) return to_string(x);
  else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
  else if constexpr (std::is_same_v<T, int>) return std::to_string(x);
  else return format_double(x);
}

// Parses a value of the option's type from text; the message names the option.
template <class T>
T parse_value(const std::string& key, const std::string& text) {
  if constexpr (std::is_enum_v<T>) {
    const std::string s = lower(text);
    for (const auto& v : EnumValues<T>::list) {
      if (s == v.name) return v.value;
      for (const std::string& a : split_words(v.aliases))
        if (s == a) return v.value;
    }
    bad_value(key, text, accepted_values<T>(true));
  } else if constexpr (std::is_same_v<T, bool>) {
    const std::string s = lower(text);
    if (s == "true" || s == "1" || s == "yes" || s == "on") return true;
    if (s == "false" || s == "0" || s == "no" || s == "off") return false;
    bad_value(key, text, "true or false");
  } else if constexpr (std::is_same_v<T, int>) {
    char* end = nullptr;
    errno = 0;
    const long x = std::strtol(text.c_str(), &end, 10);
    if (text.empty() || end != text.c_str() + text.size() || errno != 0 || x < -SAP_MAX_COUNT || x > SAP_MAX_COUNT)
      bad_value(key, text, "an integer");
    return static_cast<int>(x);
  } else {
    char* end = nullptr;
    const double x = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(x)) bad_value(key, text, "a finite number");
    return x;
  }
}

// What a row accepts, in words: the enumeration's values, or the row's valid text.
template <class T>
std::string accepted_text(const char* valid_text) {
  if constexpr (std::is_enum_v<T>) return accepted_values<T>(false);
  else if constexpr (std::is_same_v<T, bool>) return "true, false";
  else return valid_text;
}

// check_<name>(x): the row's validity condition.
#define SAP_CHECK_ROW(name, Type, default_value, valid, valid_text, doc) \
  void check_##name(const Type& x) {                                     \
    (void)x;                                                             \
    if (!(valid)) bad_value(#name, format_value(x), valid_text);         \
  }
SAP_SOLVER_OPTIONS(SAP_CHECK_ROW)
#undef SAP_CHECK_ROW

}  // namespace

#define SAP_DEFINE_TO_STRING(Enum, VALUES)       \
  const char* to_string(Enum value) {            \
    for (const auto& v : EnumValues<Enum>::list) \
      if (v.value == value) return v.name;       \
    return "?";                                  \
  }
SAP_SOLVER_ENUMS(SAP_DEFINE_TO_STRING)
#undef SAP_DEFINE_TO_STRING

Preset parse_preset(const std::string& name) {
  try {
    return parse_value<Preset>("contact_preset_variant", name);
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("unknown contact_preset_variant '" + name + "', expected " +
                                accepted_values<Preset>(true));
  }
}

std::string canonical_preset(const std::string& name) { return to_string(parse_preset(name)); }

SolverConfig SolverOptions::resolve() const {
  SolverConfig c;
  c.preset = contact_preset_variant;
  const Preset preset = c.preset;
  (void)preset;
  // Row by row: the override if set, else the default (which may read rows above); then the
  // row's range check.
#define SAP_RESOLVE_ROW(name, Type, default_value, valid, valid_text, doc) \
  c.name = name ? *name : static_cast<Type>(default_value);                \
  check_##name(c.name);
  SAP_SOLVER_OPTIONS(SAP_RESOLVE_ROW)
#undef SAP_RESOLVE_ROW
  return c;
}

const std::vector<std::string>& solver_option_names() {
  static const std::vector<std::string> names = {"contact_preset_variant",
#define SAP_ROW_NAME(name, Type, default_value, valid, valid_text, doc) #name,
                                                 SAP_SOLVER_OPTIONS(SAP_ROW_NAME)
#undef SAP_ROW_NAME
  };
  return names;
}

void set_solver_option(SolverOptions& o, const std::string& key, const std::string& value) {
  if (key == "contact_preset_variant") {
    o.contact_preset_variant = parse_value<Preset>(key, value);
    return;
  }
  // Parsed here (type and format); ranges are checked by resolve(), for C++ callers alike.
#define SAP_SET_ROW(name, Type, default_value, valid, valid_text, doc) \
  if (key == #name) {                                                  \
    o.name = parse_value<Type>(key, value);                            \
    return;                                                            \
  }
  SAP_SOLVER_OPTIONS(SAP_SET_ROW)
#undef SAP_SET_ROW
  std::string all;
  for (const auto& n : solver_option_names()) all += (all.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown solver option '" + key + "', expected one of: " + all);
}

std::string solver_options_markdown() {
  SolverOptions o;
  SolverConfig preset_config[3];
  const Preset presets[3] = {Preset::Approx32, Preset::Approx64, Preset::Drake};
  for (int i = 0; i < 3; ++i) {
    o.contact_preset_variant = presets[i];
    preset_config[i] = o.resolve();
  }
  std::string out = "| option | values | approx32 | approx64 | drake | meaning |\n|---|---|---|---|---|---|\n";
  out += "| `contact_preset_variant` | " + accepted_values<Preset>(true) +
         " | | | | expands into the defaults of the columns on the right |\n";
#define SAP_MARKDOWN_ROW(name, Type, default_value, valid, valid_text, doc)                          \
  out += std::string("| `" #name "` | ") + accepted_text<Type>(valid_text) + " | " +                 \
         format_value(preset_config[0].name) + " | " + format_value(preset_config[1].name) + " | " + \
         format_value(preset_config[2].name) + " | " + doc + " |\n";
  SAP_SOLVER_OPTIONS(SAP_MARKDOWN_ROW)
#undef SAP_MARKDOWN_ROW
  return out;
}

}  // namespace sap

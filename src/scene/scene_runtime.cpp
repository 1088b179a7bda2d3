// Run-time parts of a Scene: initial state with per-world perturbations, control schedules,
// and the small expression evaluator the JSON format accepts in number fields.
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "sap/backend/hd.hpp"
#include "sap/math/quat.hpp"
#include "sap/scene.hpp"

namespace sap {

// ---------------------------------------------------------------------------------------
// Expressions: expr := term (('+'|'-') term)*, term := factor (('*'|'/') factor)*,
// factor := ('+'|'-') factor | number | "pi" | '(' expr ')'.
namespace {

class ExpressionParser {
 public:
  explicit ExpressionParser(const std::string& s) : s_(s) {}

  double parse() {
    const double v = expr();
    skip_space();
    if (i_ != s_.size()) fail("unexpected '" + std::string(1, s_[i_]) + "' at position " + std::to_string(i_));
    if (!std::isfinite(v)) fail("the value is not finite");
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& why) const {
    // Long texts are cut in the message: the position in `why` locates the problem.
    const std::string shown = s_.size() > 80 ? s_.substr(0, 77) + "..." : s_;
    throw std::invalid_argument(
        "expected a number or an arithmetic expression of numbers and pi (e.g. \"pi * 0.5\"), got \"" + shown + "\" (" +
        why + ")");
  }
  // factor() recurses for '(' and unary signs: a bound keeps "((((...", "----...1" from
  // overflowing the stack (scene values need a few levels at most).
  static constexpr int kMaxNesting = 64;
  struct Nest {
    ExpressionParser& p;
    explicit Nest(ExpressionParser& parser) : p(parser) {
      if (++p.depth_ > kMaxNesting)
        p.fail("nested deeper than " + std::to_string(kMaxNesting) + " levels at position " + std::to_string(p.i_));
    }
    ~Nest() { --p.depth_; }
  };
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool accept(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  double expr() {
    double v = term();
    for (;;) {
      if (accept('+')) v += term();
      else if (accept('-')) v -= term();
      else return v;
    }
  }
  double term() {
    double v = factor();
    for (;;) {
      if (accept('*')) {
        v *= factor();
      } else if (accept('/')) {
        const double d = factor();
        if (d == 0) fail("division by zero");
        v /= d;
      } else {
        return v;
      }
    }
  }
  double factor() {
    const Nest nest(*this);
    if (accept('-')) return -factor();
    if (accept('+')) return factor();
    if (accept('(')) {
      const double v = expr();
      if (!accept(')')) fail("missing ')'");
      return v;
    }
    skip_space();
    if (i_ >= s_.size()) fail("unexpected end");
    if (s_.compare(i_, 2, "pi") == 0 &&
        (i_ + 2 == s_.size() || !(std::isalnum(static_cast<unsigned char>(s_[i_ + 2])) || s_[i_ + 2] == '_'))) {
      i_ += 2;
      return kPi;
    }
    const char c = s_[i_];
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) fail("unexpected '" + std::string(1, c) + "'");
    const char* begin = s_.c_str() + i_;
    char* end = nullptr;
    const double v = std::strtod(begin, &end);
    if (end == begin) fail("bad number");
    i_ += static_cast<std::size_t>(end - begin);
    return v;
  }

  const std::string& s_;
  std::size_t i_ = 0;
  int depth_ = 0;
};

// SplitMix64 (Steele, Lea, Flood 2014): a tiny, well-mixed generator whose output is the same
// on every platform (std::normal_distribution is not specified bit-for-bit).
struct SplitMix64 {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1]: 53 random bits.
  double uniform_open0() { return (static_cast<double>(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0); }
  // Standard normal by Box-Muller: sqrt(-2 ln u1) cos(2 pi u2).
  double normal() {
    const double u1 = uniform_open0(), u2 = uniform_open0();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * kPi * u2);
  }
};

// Renormalises a perturbed quaternion in place: q / |q| (divided, as the loaders do), or the
// identity when the noise made it zero.
void normalize_quat(double* q) {
  const Quat<double> r = Quat<double>::load(q);
  const double n = norm(r);
  (n > 0 ? r / n : Quat<double>::identity()).store(q);
}

}  // namespace

double evaluate_scene_expression(const std::string& text) { return ExpressionParser(text).parse(); }

// ---------------------------------------------------------------------------------------
void scene_initial_state(const Scene& scene, int world, std::vector<double>& qpos, std::vector<double>& qvel) {
  const Model& m = scene.model;
  if (world < 0) throw std::invalid_argument("scene_initial_state: world must be >= 0, got " + std::to_string(world));
  if (static_cast<int>(scene.qpos0.size()) != m.nq || static_cast<int>(scene.qvel0.size()) != m.nv)
    throw std::invalid_argument("scene_initial_state: scene '" + scene.name + "' has inconsistent qpos0/qvel0 sizes");
  qpos = scene.qpos0;
  qvel = scene.qvel0;
  const ScenePerturbation& p = scene.perturbation;
  if (!(p.qpos_std > 0) && !(p.qvel_std > 0)) return;
  // One stream per (seed, world): the world index is mixed in through a second SplitMix step
  // so that neighbouring seeds and worlds give unrelated streams.
  SplitMix64 mix{p.seed ^ 0x5AB5CE4E5EED0000ull};
  const std::uint64_t s0 = mix.next();
  SplitMix64 rng{s0 ^ (static_cast<std::uint64_t>(world) * 0xD1B54A32D192ED03ull)};
  rng.next();
  for (double& q : qpos) q += p.qpos_std * rng.normal();
  for (double& v : qvel) v += p.qvel_std * rng.normal();
  for (int j = 0; j < m.njnt; ++j) {
    const int t = m.jnt_type[static_cast<std::size_t>(j)];
    const int adr = m.jnt_qposadr[static_cast<std::size_t>(j)];
    if (t == kJointFree) normalize_quat(qpos.data() + adr + 3);
    if (t == kJointBall) normalize_quat(qpos.data() + adr);
  }
}

double control_schedule_value(const ControlSchedule& s, double t, int world, double* rate) {
  double value = 0, slope = 0;
  switch (s.kind) {
    case ControlSchedule::Kind::Constant: value = s.value; break;
    case ControlSchedule::Kind::Sinusoid: {
      // u(t) = offset + A sin(omega t + phase + world * phase_per_world), omega = 2 pi f.
      const double omega = 2.0 * kPi * s.frequency_hz;
      const double arg = omega * t + s.phase + static_cast<double>(world) * s.phase_per_world;
      value = s.offset + s.amplitude * std::sin(arg);
      slope = s.amplitude * omega * std::cos(arg);
      break;
    }
    case ControlSchedule::Kind::Keyframes: {
      const std::size_t n = s.times.size();
      if (n == 0 || s.values.size() != n)
        throw std::invalid_argument("control schedule: keyframes are empty or inconsistent");
      if (t < s.times.front()) {
        value = s.values.front();
      } else if (t >= s.times.back()) {
        value = s.values.back();
      } else {
        // Segment k with times[k] <= t < times[k+1] (right-continuous slope at the knots).
        std::size_t k = 0;
        while (k + 1 < n && s.times[k + 1] <= t) ++k;
        const double t0 = s.times[k], t1 = s.times[k + 1];
        slope = (s.values[k + 1] - s.values[k]) / (t1 - t0);
        value = s.values[k] + slope * (t - t0);
      }
      break;
    }
  }
  if (rate) *rate = slope;
  return value;
}

void scene_control(const Scene& scene, double time, int world, std::vector<double>& ctrl,
                   std::vector<double>& ctrl_vel) {
  const int nu = scene.model.nu;
  if (static_cast<int>(scene.controls.size()) != nu)
    throw std::invalid_argument("scene_control: scene '" + scene.name + "' has " +
                                std::to_string(scene.controls.size()) + " control schedules for " + std::to_string(nu) +
                                " actuators");
  ctrl.assign(static_cast<std::size_t>(nu), 0.0);
  ctrl_vel.assign(static_cast<std::size_t>(nu), 0.0);
  for (int i = 0; i < nu; ++i) {
    double rate = 0;
    ctrl[static_cast<std::size_t>(i)] = control_schedule_value(scene.controls[static_cast<std::size_t>(i)], time, world,
                                                               &rate);
    // Only PD actuators read a velocity target; it is the schedule's time derivative so that a
    // PD drive tracks a moving target without lag from the damping term.
    if (scene.model.actuator_type[static_cast<std::size_t>(i)] == kActPD) ctrl_vel[static_cast<std::size_t>(i)] = rate;
  }
}

// ---------------------------------------------------------------------------------------
// Initial states outside joint limits (declared in sap/scene.hpp).
namespace {

// Limited hinge/slide joint j: its range and its qpos address; false for other joints.
bool limited_coordinate(const Model& m, int j, double& lo, double& hi, std::size_t& adr) {
  const std::size_t jj = static_cast<std::size_t>(j);
  if (!m.jnt_limited[jj] || (m.jnt_type[jj] != kJointHinge && m.jnt_type[jj] != kJointSlide)) return false;
  lo = m.jnt_range[2 * jj];
  hi = m.jnt_range[2 * jj + 1];
  adr = static_cast<std::size_t>(m.jnt_qposadr[jj]);
  return true;
}

std::string fmt(const char* f, double a, double b = 0, double c = 0, double d = 0) {
  char buf[160];
  std::snprintf(buf, sizeof buf, f, a, b, c, d);
  return buf;
}

std::string joint_label(const Model& m, int j) {
  const std::size_t jj = static_cast<std::size_t>(j);
  return "'" + (jj < m.jnt_names.size() && !m.jnt_names[jj].empty() ? m.jnt_names[jj] : "#" + std::to_string(j)) +
         "'";
}

}  // namespace

std::string urdf_start_within_limits(const Model& m, int joint_begin, int joint_end, std::vector<double>& qpos,
                                     const std::string& source) {
  std::string list;
  int n = 0;
  for (int j = joint_begin; j < joint_end && j < m.njnt; ++j) {
    double lo, hi;
    std::size_t adr;
    if (!limited_coordinate(m, j, lo, hi, adr) || adr >= qpos.size()) continue;
    const double q = qpos[adr];
    if (q >= lo && q <= hi) continue;
    qpos[adr] = q < lo ? lo : hi;
    list += (n++ ? ", " : "") + joint_label(m, j) + fmt(" %g -> %g (range [%g, %g])", q, qpos[adr], lo, hi);
  }
  if (n == 0) return "";
  return (source.empty() ? "" : source + ": ") + kInitialStateLimitsNote + ": a URDF states no initial configuration, and its zero lies " +
         "outside the range of " + std::to_string(n) + " joint(s), which start at the nearest limit instead: " + list;
}

std::string initial_state_limits_note(const Model& m, const std::vector<double>& qpos, const std::string& source) {
  std::string list;
  int n = 0;
  double worst = 0;
  for (int j = 0; j < m.njnt; ++j) {
    double lo, hi;
    std::size_t adr;
    if (!limited_coordinate(m, j, lo, hi, adr) || adr >= qpos.size()) continue;
    const double q = qpos[adr];
    if (q >= lo && q <= hi) continue;
    const double d = q < lo ? lo - q : q - hi;
    worst = d > worst ? d : worst;
    list += (n++ ? ", " : "") + joint_label(m, j) +
            fmt(q < lo ? " at %g, %g below [%g, %g]" : " at %g, %g above [%g, %g]", q, d, lo, hi);
  }
  if (n == 0) return "";
  return (source.empty() ? "" : source + ": ") + kInitialStateLimitsNote + ": " + std::to_string(n) + " joint(s) start outside their range" +
         fmt(" (up to %g)", worst) + " and the limit rows push them back, as MuJoCo's limits do: " + list;
}

}  // namespace sap

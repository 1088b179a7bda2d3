// libFuzzer harness: JSON scene text -> sap::parse_scene (assets resolved in fuzz/assets).
// Any input must load or fail with an error naming the input; see fuzz_targets.hpp.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  sap::fuzz::require_located(sap::fuzz::load_scene_text(text), sap::fuzz::kSceneSource);
  return 0;
}

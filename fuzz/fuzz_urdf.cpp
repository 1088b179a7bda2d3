// libFuzzer harness: URDF text -> sap::load_urdf_string, with a fixed base as written and with
// a floating base and unsupported elements dropped. See fuzz_targets.hpp.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool variant : {false, true})
    sap::fuzz::require_located(sap::fuzz::load_urdf_text(text, variant), sap::fuzz::kUrdfSource);
  return 0;
}

// libFuzzer harness: MJCF text -> sap::load_mjcf_string, as written and with unsupported
// elements dropped (includes resolved in fuzz/assets). See fuzz_targets.hpp.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  for (bool drop : {false, true})
    sap::fuzz::require_located(sap::fuzz::load_mjcf_text(text, drop), sap::fuzz::kMjcfSource);
  return 0;
}

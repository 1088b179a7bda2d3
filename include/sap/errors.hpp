// Exceptions of the loaders that callers may want to tell apart from other errors.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

namespace sap {

// A file that a loader needs (a scene, a model, an included file, a mesh or heightfield image)
// does not exist or cannot be opened. what() says where it was referenced (file, JSON pointer or
// XML line) and names the file; path() is the file as the loader tried to open it. The Python
// module raises it as FileNotFoundError with `filename` set.
class FileNotFoundError : public std::runtime_error {
 public:
  FileNotFoundError(const std::string& message, std::string path)
      : std::runtime_error(message), path_(std::move(path)) {}
  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace sap

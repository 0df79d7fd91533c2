#pragma once
// `--image FILE` (repeatable, kept in order) for the commands that take image prompts.
#include <string>
#include <vector>

namespace day0::cli {

// Moves every `--image FILE` / `--image=FILE` out of argv into the result; sets *problem when
// --image has no file.
inline std::vector<std::string> take_images(std::vector<std::string>& argv, std::string* problem) {
  std::vector<std::string> images, rest;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (argv[i] == "--image") {
      if (i + 1 >= argv.size()) {
        *problem = "--image needs a file";
        return {};
      }
      images.push_back(argv[++i]);
    } else if (argv[i].rfind("--image=", 0) == 0) {
      images.push_back(argv[i].substr(8));
    } else {
      rest.push_back(argv[i]);
    }
  }
  argv = std::move(rest);
  return images;
}

}  // namespace day0::cli

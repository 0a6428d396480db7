// Reads a generated section of a doc, so a test can check it against the table in the code that
// it is generated from (the connection counters, the client's environment).
#pragma once

#include <fstream>
#include <sstream>
#include <string>

namespace iorelay::testutil {

// The lines of `doc_path` strictly between "<!-- NAME:begin ... -->" and "<!-- NAME:end -->",
// each ending in '\n'; "" when the file or either marker is missing.
inline std::string DocsSection(const std::string& doc_path, const std::string& name) {
  std::ifstream in(doc_path);
  const std::string begin = "<!-- " + name + ":begin";
  const std::string end = "<!-- " + name + ":end -->";
  std::ostringstream section;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (!inside) {
      inside = line.rfind(begin, 0) == 0;
    } else if (line == end) {
      return section.str();
    } else {
      section << line << '\n';
    }
  }
  return "";
}

}  // namespace iorelay::testutil

#include "metrics/output.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/errors.h"

namespace servesim {

nlohmann::ordered_json yaml_to_json(const YAML::Node& n) {
  using J = nlohmann::ordered_json;
  if (!n.IsDefined() || n.IsNull()) return nullptr;
  if (n.IsSequence()) {
    J a = J::array();
    for (const auto& e : n) a.push_back(yaml_to_json(e));
    return a;
  }
  if (n.IsMap()) {
    J o = J::object();
    for (const auto& kv : n) o[kv.first.as<std::string>()] = yaml_to_json(kv.second);
    return o;
  }
  const std::string& s = n.Scalar();
  if (s == "true") return true;
  if (s == "false") return false;
  int64_t i = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), i);
  if (ec == std::errc() && p == s.data() + s.size()) return i;
  char* end = nullptr;
  const double d = std::strtod(s.c_str(), &end);
  if (!s.empty() && end == s.c_str() + s.size() && std::isfinite(d)) return d;
  return s;
}

ResultFiles::ResultFiles(std::string dir) : m_dir(std::move(dir)) {
  namespace fs = std::filesystem;
  std::error_code ec;
  m_created_dir = fs::create_directories(m_dir, ec);
  if (ec || !fs::is_directory(m_dir))
    throw InputError(fmt::format("--out {}: cannot create the output directory ({})", m_dir,
                                 ec ? ec.message() : "not a directory"));
}

ResultFiles::~ResultFiles() {
  if (m_committed) return;
  std::error_code ec;
  for (File& f : m_files) {
    f.out.reset();
    std::filesystem::remove(f.temp_path, ec);
  }
  if (m_created_dir && std::filesystem::is_empty(m_dir, ec)) std::filesystem::remove(m_dir, ec);
}

std::ostream& ResultFiles::open(const std::string& name) {
  File f;
  f.name = name;
  f.temp_path = (std::filesystem::path(m_dir) / ("." + name + ".partial")).string();
  f.out = std::make_unique<std::ofstream>(f.temp_path, std::ios::binary | std::ios::trunc);
  if (!*f.out) throw InputError(fmt::format("--out {}: cannot write {}", m_dir, name));
  m_files.push_back(std::move(f));
  return *m_files.back().out;
}

void ResultFiles::commit() {
  namespace fs = std::filesystem;
  for (File& f : m_files) {
    f.out->close();
    if (!*f.out) throw InputError(fmt::format("--out {}: cannot write {}", m_dir, f.name));
  }
  for (File& f : m_files) {
    std::error_code ec;
    fs::rename(f.temp_path, fs::path(m_dir) / f.name, ec);
    if (ec)
      throw InputError(fmt::format("--out {}: cannot write {} ({})", m_dir, f.name, ec.message()));
  }
  m_committed = true;
}

void write_files(const std::string& dir,
                 const std::vector<std::pair<std::string, std::string>>& files) {
  ResultFiles out(dir);
  for (const auto& [name, text] : files) out.open(name) << text;
  out.commit();
}

}  // namespace servesim

#include "core/config.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/side_thread.h"
#include "core/yaml_chars.h"

namespace servesim {
namespace {

std::string describe(const YAML::Node& n) {
  if (!n.IsDefined() || n.IsNull()) return "null";
  if (n.IsScalar()) return quote_input(n.Scalar());
  if (n.IsSequence()) return "a list";
  return "a map";
}

std::string join_path(const std::string& parent, const std::string& key) {
  return parent.empty() ? key : parent + "." + key;
}

/// A map key's text; std::nullopt for a list or map used as a key (`[a]: 1`, `? {a: 1}`),
/// which no section has.
std::optional<std::string> key_text(const YAML::Node& key) {
  if (!key.IsScalar() && !key.IsNull()) return std::nullopt;
  return key.as<std::string>();  // a null key reads "null"
}

constexpr size_t k_max_config_bytes = size_t{16} << 20;

/// From this many bytes of text on, a document's second parse (load_one_document's count) runs
/// on a side thread beside the first when the process may use two CPUs; below it (a --set
/// value), starting a thread costs more than the parse.
constexpr size_t k_count_aside_bytes = 256;

std::string line_col(const YAML::Mark& m) { return fmt::format("{}:{}", m.line + 1, m.column + 1); }

/// Counts the documents a parse reports, where each starts and where its first node is,
/// without building nodes.
class DocumentCounter : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> starts, first_nodes;
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                const std::string&) override {
    node(m);
  }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (first_nodes.size() < starts.size()) first_nodes.push_back(m);
  }
};

/// The one document in `text`; `where` names the text in messages ("c.yaml", "--set a=b").
/// A second document (after `---`) is refused: yaml-cpp's Load would drop it silently. The
/// documents are counted with a parser asked for two at most, never with YAML::LoadAll: on a
/// token that cannot start a value (a `,` at block level) yaml-cpp reports an empty document
/// without consuming it, again and again, and LoadAll never returns. A second document that
/// starts where the first did is that case, and is refused as the stray token it is.
///
/// The count is a second whole parse, as costly as the first; from k_count_aside_bytes of text
/// on (a config or a catalogue file; not a --set value) it runs on a side thread beside YAML::Load
/// when a second CPU is there, and is joined before anything is decided, so that the errors are
/// those of the two passes in turn: Load's first, then the count's, then a second document.
YAML::Node load_one_document(const std::string& text, const std::string& where) {
  DocumentCounter counter;
  std::exception_ptr count_error;
  const auto count = [&text, &counter, &count_error] {
    try {
      std::istringstream in(text);
      YAML::Parser parser(in);
      for (int i = 0; i < 2 && parser.HandleNextDocument(counter);) ++i;
    } catch (...) {
      count_error = std::current_exception();
    }
  };
  std::optional<std::thread> aside;
  if (text.size() >= k_count_aside_bytes && usable_cpus() >= 2) aside = start_side_thread(count);
  YAML::Node first;
  try {
    first = YAML::Load(text);
  } catch (...) {
    if (aside) aside->join();  // the count reads `text` and `counter`: wait for it
    throw;
  }
  if (aside)
    aside->join();
  else
    count();
  if (count_error) std::rethrow_exception(count_error);
  if (counter.starts.size() > 1) {
    const YAML::Mark& a = counter.starts[0];
    const YAML::Mark& b = counter.starts[1];
    if (b.pos <= a.pos) {
      const size_t at = b.pos < 0 ? 0 : size_t(b.pos);
      const std::string token = at < text.size() ? text.substr(at, 1) : std::string();
      throw InputError(
          fmt::format("{}:{}: {} cannot start a YAML value here "
                      "(quote the text if it is meant as a string)",
                      where, line_col(b), quote_input(token)));
    }
    const YAML::Mark m = counter.first_nodes.size() > 1 ? counter.first_nodes[1] : b;
    throw InputError(
        fmt::format("{}{}: a second YAML document (after ---); a config is one document", where,
                    m.is_null() ? std::string() : ":" + line_col(m)));
  }
  return first;
}

/// Throws when a map under `root` names a key twice: yaml-cpp keeps both and reads the first,
/// while summary.json's resolved config would record the last. `file` and `path` start the
/// message. Walks without recursion, and each aliased node once (a YAML bomb is not expanded).
void check_duplicate_keys(const YAML::Node& root, const std::string& file,
                          const std::string& path) {
  std::vector<std::pair<YAML::Node, std::string>> todo{{root, path}};
  std::set<std::pair<int, int>> seen;  // the marks of the collections walked
  while (!todo.empty()) {
    const auto [node, at] = todo.back();
    todo.pop_back();
    if (!node.IsMap() && !node.IsSequence()) continue;
    const YAML::Mark mark = node.Mark();
    if (!mark.is_null() && !seen.emplace(mark.line, mark.column).second) continue;
    if (node.IsSequence()) {
      for (size_t i = 0; i < node.size(); ++i)
        todo.emplace_back(node[i], fmt::format("{}[{}]", at, i));
      continue;
    }
    std::map<std::string, YAML::Mark> keys;
    for (const auto& kv : node) {
      if (!kv.first.IsScalar()) continue;  // Document::check_node names a list or map as a key
      const std::string& key = kv.first.Scalar();
      const std::string full = join_path(at, printable(key));
      const auto [first, fresh] = keys.emplace(key, kv.first.Mark());
      if (!fresh)
        throw InputError(
            fmt::format("{} at {}:{}: the key is given twice in one map (first at "
                        "line {}); give each key once",
                        full, file, line_col(kv.first.Mark()), line_col(first->second)));
      todo.emplace_back(kv.second, full);
    }
  }
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diag = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

std::string did_you_mean(const std::string& given, const std::vector<std::string>& names) {
  const std::string* best = nullptr;
  size_t best_d = std::max<size_t>(2, given.size() / 3) + 1;
  for (const auto& n : names) {
    size_t d = edit_distance(given, n);
    if (d < best_d) {
      best_d = d;
      best = &n;
    }
  }
  return best ? fmt::format(" (did you mean {}?)", *best) : std::string();
}

// ---------------------------------------------------------------- Document

Document::Document(const std::string& text, std::string file, TextOrigin origin)
    : m_file(std::move(file)) {
  try {
    // A shipped file's second parse (the document count, on a side thread) and duplicate-key
    // walk would only find what the test suite has checked already.
    m_root = origin == TextOrigin::shipped ? YAML::Load(text) : load_one_document(text, m_file);
  } catch (const YAML::Exception& e) {
    // A tab or an invisible space near the error is named: yaml-cpp only says what it expected.
    if (const auto c = invisible_near(text, e.mark.line))
      throw InputError(fmt::format("{}:{}:{}: not valid YAML: {} (the parser said: {})", m_file,
                                   c->line, c->column, describe_invisible(*c),
                                   printable(e.msg, 200)));
    throw InputError(fmt::format("{}:{}:{}: not valid YAML: {}", m_file, e.mark.line + 1,
                                 e.mark.column + 1, printable(e.msg, 200)));
  }
  if (origin == TextOrigin::input) check_duplicate_keys(m_root, m_file, "");
  if (m_root.IsNull()) m_root = YAML::Node(YAML::NodeType::Map);
  if (!m_root.IsMap())
    throw InputError(
        fmt::format("{}: the top level must be a map of sections (workload, "
                    "step_time, scheduler, kv, seed)",
                    m_file));
}

std::shared_ptr<Document> Document::load_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(fmt::format("{}: is a directory, not a config file", printable(path, 1024)));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(fmt::format("{}: cannot open config file", printable(path, 1024)));
  // Read in chunks and stop past the limit: a config is a few hundred bytes, and a device or a
  // runaway file must not be read into memory whole.
  std::string text;
  char chunk[1 << 16];
  while (in.read(chunk, sizeof chunk) || in.gcount() > 0) {
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (text.size() > k_max_config_bytes)
      throw InputError(fmt::format("{}: larger than {} bytes; not a scenario config",
                                   printable(path, 1024), k_max_config_bytes));
  }
  return std::make_shared<Document>(text, path);
}

std::string Document::base_dir() const {
  if (m_file.empty() || m_file.front() == '<') return ".";
  auto parent = std::filesystem::path(m_file).parent_path();
  return parent.empty() ? "." : parent.string();
}

void Document::apply_override(const std::string& assignment) {
  auto eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0)
    throw InputError(fmt::format("--set {}: expected key.path=value", printable(assignment, 100)));
  std::string path = assignment.substr(0, eq);
  YAML::Node value;
  try {
    value = load_one_document(assignment.substr(eq + 1),
                              fmt::format("--set {}", printable(assignment, 100)));
  } catch (const YAML::Exception& e) {
    const auto c = invisible_near(assignment.substr(eq + 1), e.mark.line);
    throw InputError(fmt::format("--set {}: value is not valid YAML: {}{}",
                                 printable(assignment, 100), printable(e.msg, 200),
                                 c ? fmt::format(" ({})", describe_invisible(*c)) : ""));
  }
  check_duplicate_keys(value, fmt::format("--set {}", printable(assignment, 100)),
                       printable(path, 100));
  std::vector<std::string> parts;
  std::stringstream ss(path);
  for (std::string part; std::getline(ss, part, '.');) {
    if (part.empty())
      throw InputError(fmt::format("--set {}: empty key in path", printable(assignment, 100)));
    parts.push_back(part);
  }
  // yaml-cpp nodes are handles; walk down, creating maps where needed.
  std::vector<YAML::Node> chain{m_root};
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    YAML::Node cur = chain.back();
    YAML::Node next = cur[parts[i]];
    if (!next.IsDefined() || next.IsNull()) {
      cur[parts[i]] = YAML::Node(YAML::NodeType::Map);
      next = cur[parts[i]];
    } else if (!next.IsMap()) {
      const std::vector<std::string> above(parts.begin(), parts.begin() + long(i) + 1);
      throw InputError(fmt::format("--set {}: {} is {}, not a map", printable(assignment, 100),
                                   printable(fmt::format("{}", fmt::join(above, ".")), 100),
                                   describe(next)));
    }
    chain.push_back(next);
  }
  YAML::Node target = chain.back();
  const std::string map_path =
      parts.size() == 1 ? std::string() : path.substr(0, path.size() - parts.back().size() - 1);
  if (parts.back() == "kind" && target.IsMap() && target["kind"].IsScalar() && value.IsScalar() &&
      target["kind"].Scalar() != value.Scalar()) {
    // The map's other keys were written for the old kind; those the new kind does not read are
    // dropped by check_all_read (a later --set of one of them keeps it).
    KindSwitch ks{printable(assignment, 100), target["kind"].Scalar(), {}};
    for (const auto& kv : target)
      if (kv.first.IsScalar() && kv.first.Scalar() != "kind")
        ks.inherited.insert(kv.first.Scalar());
    m_kind_switches[map_path] = std::move(ks);
  } else if (auto it = m_kind_switches.find(map_path); it != m_kind_switches.end()) {
    it->second.inherited.erase(parts.back());
  }
  // A map replaced whole (or a map above it) holds nothing inherited any more.
  for (auto it = m_kind_switches.begin(); it != m_kind_switches.end();)
    it = it->first == path || it->first.rfind(path + ".", 0) == 0 ? m_kind_switches.erase(it)
                                                                  : std::next(it);
  target[parts.back()] = value;
  m_overridden.insert(path);
}

void Document::note_queried(const std::string& map_path, const std::string& key) {
  m_queried[map_path].insert(key);
}

bool Document::was_queried(const std::string& map_path, const std::string& key) const {
  auto it = m_queried.find(map_path);
  return it != m_queried.end() && it->second.count(key) > 0;
}

std::string Document::where(const YAML::Node& node, const std::string& key_path) const {
  for (std::string p = key_path; !p.empty();) {
    if (m_overridden.count(p)) return fmt::format("{} (from --set {})", m_file, p);
    const auto cut = p.find_last_of(".[");
    p = cut == std::string::npos ? std::string() : p.substr(0, cut);
  }
  const YAML::Mark m = node.Mark();
  // The root of an empty document has no mark either, but comes from the file.
  if (m.is_null()) return key_path.empty() ? m_file : fmt::format("{} (from --set)", m_file);
  return fmt::format("{}:{}:{}", m_file, m.line + 1, m.column + 1);
}

void Document::check_all_read() const { check_node(m_root, ""); }

void Document::check_keys_read(const YAML::Node& map, const std::string& path) const {
  check_node(map, path, false);
}

void Document::check_node(const YAML::Node& node, const std::string& path, bool deep) const {
  if (node.IsSequence()) {
    if (!deep) return;
    for (size_t i = 0; i < node.size(); ++i) check_node(node[i], fmt::format("{}[{}]", path, i));
    return;
  }
  if (!node.IsMap()) return;
  auto it = m_queried.find(path);
  std::vector<std::string> dropped;  // keys of an old kind (m_kind_switches), removed below
  for (const auto& kv : node) {
    const std::optional<std::string> text = key_text(kv.first);
    if (!text)
      throw InputError(fmt::format("{} at {}: a key is {}; keys are plain names",
                                   path.empty() ? "config" : path, where(kv.first, path),
                                   describe(kv.first)));
    const std::string& key = *text;
    const std::string full = join_path(path, printable(key));
    if (it == m_queried.end() || !it->second.count(key)) {
      const auto ks = m_kind_switches.find(path);
      if (ks != m_kind_switches.end() && ks->second.inherited.count(key)) {
        if (deep) dropped.push_back(key);
        continue;
      }
      std::vector<std::string> valid;
      if (it != m_queried.end()) valid.assign(it->second.begin(), it->second.end());
      const std::string where_s = where(kv.first, full);
      // A key that holds a non-breaking or zero-width space reads like a valid one.
      const auto hidden = invisible_near(key, 0);
      throw InputError(
          fmt::format("{} at {}: unknown key{}{} (valid here: {})", full, where_s,
                      hidden ? fmt::format(": it holds {}", hidden->what) : std::string(),
                      did_you_mean(key, valid), valid.empty() ? "none" : join_names(valid)));
    }
    if (deep) check_node(kv.second, full);
  }
  if (dropped.empty()) return;
  const KindSwitch& ks = m_kind_switches.at(path);
  YAML::Node map = node;  // a handle: removing through it changes the document
  for (const std::string& key : dropped) {
    map.remove(key);
    std::string note =
        fmt::format("--set {}: dropped {}, a key of kind {} that kind {} does not have",
                    ks.assignment, join_path(path, printable(key)), printable(ks.old_kind, 40),
                    printable(map["kind"].IsScalar() ? map["kind"].Scalar() : std::string(), 40));
    if (std::find(m_notes.begin(), m_notes.end(), note) == m_notes.end())
      m_notes.push_back(std::move(note));
  }
}

// ---------------------------------------------------------------- Cfg

Cfg::Cfg(std::shared_ptr<Document> doc, YAML::Node node, std::string path)
    : m_doc(std::move(doc)), m_node(std::move(node)), m_path(std::move(path)) {}

Cfg Cfg::root(const std::shared_ptr<Document>& doc) { return Cfg(doc, doc->root(), ""); }

std::string Cfg::key_path(const std::string& key) const { return join_path(m_path, key); }

YAML::Node Cfg::lookup(const std::string& key) const {
  m_doc->note_queried(m_path, key);
  const YAML::Node& self = m_node;
  return self[key];
}

bool Cfg::has(const std::string& key) const {
  YAML::Node n = lookup(key);
  return n.IsDefined() && !n.IsNull();
}

bool Cfg::is_scalar(const std::string& key) const {
  YAML::Node n = lookup(key);
  return n.IsDefined() && n.IsScalar();
}

std::string Cfg::existing_file(const std::string& key, const std::string& what) const {
  std::filesystem::path p(get_string(key));
  if (p.is_relative()) p = std::filesystem::path(m_doc->base_dir()) / p;
  p = p.lexically_normal();
  std::error_code ec;
  const std::filesystem::file_type type = std::filesystem::status(p, ec).type();
  if (type == std::filesystem::file_type::directory)
    fail(key, fmt::format("is a directory, not a {} ({})", what, printable(p.string(), 1024)));
  if (type != std::filesystem::file_type::regular &&
      type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::none)
    fail(key,
         fmt::format("not a regular file, so not a {} ({})", what, printable(p.string(), 1024)));
  if (type != std::filesystem::file_type::regular)
    fail(key, fmt::format("no such {} ({}; relative paths are resolved against the config "
                          "file's folder)",
                          what, printable(p.string(), 1024)));
  return p.string();
}

void Cfg::fail(const std::string& key, const std::string& allowed) const {
  if (key.empty())
    throw InputError(fmt::format("{} at {}: {}", m_path.empty() ? "config" : m_path,
                                 m_doc->where(m_node, m_path), allowed));
  const YAML::Node& self = m_node;
  YAML::Node n = self[key];
  if (!n.IsDefined())
    throw InputError(fmt::format("{} in {} at {}: {}", key_path(key),
                                 m_path.empty() ? "config" : m_path, m_doc->where(m_node, m_path),
                                 allowed));
  throw InputError(fmt::format("{} = {} at {}: {}", key_path(key), describe(n),
                               m_doc->where(n, key_path(key)), allowed));
}

YAML::Node Cfg::require(const std::string& key, const char* what) const {
  YAML::Node n = lookup(key);
  if (!n.IsDefined() || n.IsNull()) {
    // A missing key is most often a misspelt one: point at a close key that nothing has read
    // (so not a valid key of its own), within a quarter of the name's letters (so "max" is
    // never taken for "min").
    if (m_node.IsMap())
      for (const auto& kv : m_node) {
        const std::optional<std::string> k = key_text(kv.first);
        if (!k || *k == key || m_doc->was_queried(m_path, *k)) continue;
        if (edit_distance(*k, key) > std::max<size_t>(1, key.size() / 4)) continue;
        const std::string full = key_path(printable(*k));
        throw InputError(
            fmt::format("{} at {}: unknown key (did you mean {}?); {} ({}) is required", full,
                        m_doc->where(kv.first, full), key, key_path(key), what));
      }
    throw InputError(fmt::format("{}: required key missing in {} at {} ({})", key_path(key),
                                 m_path.empty() ? "the top level" : m_path,
                                 m_doc->where(m_node, m_path), what));
  }
  return n;
}

Cfg Cfg::child(const std::string& key) const {
  YAML::Node n = require(key, "a map");
  if (!n.IsMap()) fail(key, "must be a map");
  return Cfg(m_doc, n, key_path(key));
}

std::optional<Cfg> Cfg::optional_child(const std::string& key) const {
  if (!has(key)) return std::nullopt;
  return child(key);
}

std::vector<Cfg> Cfg::list_of_maps(const std::string& key) const {
  YAML::Node n = require(key, "a list of maps");
  if (!n.IsSequence() || n.size() == 0) fail(key, "must be a non-empty list of maps");
  std::vector<Cfg> out;
  for (size_t i = 0; i < n.size(); ++i) {
    if (!n[i].IsMap())
      throw InputError(fmt::format("{}[{}] = {} at {}: must be a map", key_path(key), i,
                                   describe(n[i]), m_doc->where(n[i], key_path(key))));
    out.emplace_back(m_doc, n[i], fmt::format("{}[{}]", key_path(key), i));
  }
  return out;
}

std::string Cfg::scalar(const YAML::Node& n, const std::string& key, const char* what) const {
  if (!n.IsScalar()) fail(key, fmt::format("must be {}", what));
  return n.Scalar();
}

int64_t Cfg::to_int(const YAML::Node& n, const std::string& key, IntRange r) const {
  const std::string s = scalar(n, key, "an integer");
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    // Accept integral reals written as 1e6 or 2048.0; reject 1.5.
    char* end = nullptr;
    double d = std::strtod(s.c_str(), &end);
    if (s.empty() || end != s.c_str() + s.size() || !std::isfinite(d) || d != std::floor(d) ||
        std::fabs(d) > 9.0e18)
      fail(key, "must be an integer");
    v = static_cast<int64_t>(d);
  }
  if (v < r.min || v > r.max) {
    if (r.max == std::numeric_limits<int64_t>::max())
      fail(key, fmt::format("must be >= {}", r.min));
    fail(key, fmt::format("must be an integer from {} to {}", r.min, r.max));
  }
  return v;
}

double Cfg::to_real(const YAML::Node& n, const std::string& key, RealRange r) const {
  const std::string s = scalar(n, key, "a number");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size()) fail(key, "must be a number");
  if (!std::isfinite(v)) fail(key, "must be a finite number");
  bool low = r.min_exclusive ? !(v > r.min) : !(v >= r.min);
  if (low || v > r.max) {
    std::string lo = fmt::format("{} {}", r.min_exclusive ? ">" : ">=", r.min);
    if (std::isinf(r.max)) fail(key, fmt::format("must be {}", lo));
    fail(key, fmt::format("must be {} and <= {}", lo, r.max));
  }
  return v;
}

namespace {
thread_local KeyLog* t_key_log = nullptr;
}  // namespace

KeyLog::KeyLog() : m_outer(t_key_log) { t_key_log = this; }
KeyLog::~KeyLog() { t_key_log = m_outer; }
bool KeyLog::recording() { return t_key_log != nullptr; }

void KeyLog::note(const Cfg& c, const std::string& key, std::string allowed, std::string fallback) {
  if (t_key_log == nullptr) return;
  t_key_log->m_uses.push_back(
      {c.key_path(key), std::move(allowed), std::move(fallback), c.doc().file()});
}

std::string describe(const IntRange& r) {
  constexpr int64_t lo = std::numeric_limits<int64_t>::min();
  constexpr int64_t hi = std::numeric_limits<int64_t>::max();
  if (r.min == lo && r.max == hi) return "integer";
  if (r.max == hi) return fmt::format("integer >= {}", r.min);
  if (r.min == lo) return fmt::format("integer <= {}", r.max);
  return fmt::format("integer from {} to {}", r.min, r.max);
}

std::string describe(const RealRange& r) {
  const bool no_min = std::isinf(r.min) && r.min < 0;
  const bool no_max = std::isinf(r.max);
  if (no_min && no_max) return "number";
  if (no_min) return fmt::format("number <= {}", r.max);
  const std::string lo = fmt::format("{} {}", r.min_exclusive ? ">" : ">=", r.min);
  if (no_max) return "number " + lo;
  if (!r.min_exclusive) return fmt::format("number from {} to {}", r.min, r.max);
  return fmt::format("number {} and <= {}", lo, r.max);
}

int64_t Cfg::get_int(const std::string& key, IntRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), "required");
  return to_int(require(key, "an integer"), key, r);
}
int64_t Cfg::get_int(const std::string& key, int64_t def, IntRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), std::to_string(def));
  return has(key) ? to_int(lookup(key), key, r) : def;
}
std::optional<int64_t> Cfg::optional_int(const std::string& key, IntRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), "none");
  if (!has(key)) return std::nullopt;
  return to_int(lookup(key), key, r);
}
double Cfg::get_real(const std::string& key, RealRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), "required");
  return to_real(require(key, "a number"), key, r);
}
double Cfg::get_real(const std::string& key, double def, RealRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), fmt::format("{}", def));
  return has(key) ? to_real(lookup(key), key, r) : def;
}
std::optional<double> Cfg::optional_real(const std::string& key, RealRange r) const {
  if (KeyLog::recording()) KeyLog::note(*this, key, describe(r), "none");
  if (!has(key)) return std::nullopt;
  return to_real(lookup(key), key, r);
}

bool Cfg::get_bool(const std::string& key, bool def) const {
  if (!has(key)) return def;
  const std::string s = scalar(lookup(key), key, "true or false");
  if (s == "true") return true;
  if (s == "false") return false;
  fail(key, "must be true or false");
}

std::string Cfg::get_string(const std::string& key) const {
  return scalar(require(key, "a string"), key, "a string");
}
std::string Cfg::get_string(const std::string& key, const std::string& def) const {
  return has(key) ? scalar(lookup(key), key, "a string") : def;
}

std::string Cfg::get_choice(const std::string& key, const std::vector<std::string>& valid) const {
  std::string v = get_string(key);
  if (std::find(valid.begin(), valid.end(), v) == valid.end())
    fail(key, fmt::format("unknown {}{} (valid: {})", quote_input(v), did_you_mean(v, valid),
                          join_names(valid)));
  return v;
}
std::string Cfg::get_choice(const std::string& key, const std::string& def,
                            const std::vector<std::string>& valid) const {
  return has(key) ? get_choice(key, valid) : def;
}

std::string Cfg::one_of(const std::vector<std::string>& alternatives) const {
  std::vector<std::string> present;
  for (const auto& a : alternatives)
    if (has(a)) present.push_back(a);
  if (present.size() == 1) return present.front();
  if (present.empty()) {
    // Suggest from the keys that are there, in case one is a misspelling.
    std::string hint;
    if (m_node.IsMap())
      for (const auto& kv : m_node) {
        const std::optional<std::string> key = key_text(kv.first);
        if (!key) continue;
        hint = did_you_mean(*key, alternatives);
        if (!hint.empty()) {
          hint = fmt::format(": found {}{}", printable(*key), hint);
          break;
        }
      }
    fail("", fmt::format("needs exactly one of {}{}", join_names(alternatives), hint));
  }
  fail("", fmt::format("give only one of {} (found {})", join_names(alternatives),
                       join_names(present)));
}

}  // namespace servesim

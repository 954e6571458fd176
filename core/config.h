#pragma once
// Typed, checked reading of a YAML config.
//
// A Cfg is a view of one map in the document plus its key path ("scheduler"). Every key a
// component asks for (present or not) is recorded; Document::check_all_read() then rejects every
// key nobody asked for, naming it, where it is and which keys are valid there. Errors throw
// InputError with "key.path = value at file:line:col: what is allowed".
#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/errors.h"

namespace servesim {

struct IntRange {
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
};

struct RealRange {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_exclusive = false;  ///< true: the value must be strictly greater than min
};

inline constexpr RealRange k_positive{0.0, std::numeric_limits<double>::infinity(), true};
inline constexpr RealRange k_non_negative{0.0, std::numeric_limits<double>::infinity(), false};

/// Where a document's text comes from.
enum class TextOrigin {
  input,    ///< a user's file or --set value, or the embedded default scenario: every check
  shipped,  ///< a catalogue file embedded at build time: parsed once, without the second-document
            ///< and duplicate-key checks, which tests/models/catalog_test.cpp runs on every one
};

/// The whole document: its file name (for messages) and what has been read.
class Document {
 public:
  /// Parses `text`; `file` names it in messages ("<default scenario>" for the embedded one).
  Document(const std::string& text, std::string file, TextOrigin origin = TextOrigin::input);
  static std::shared_ptr<Document> load_file(const std::string& path);

  /// Applies "a.b.c=value" (value parsed as YAML) before anything is read.
  void apply_override(const std::string& assignment);

  /// REQUIRES: every component has read its section. Throws on the first unread key, except a
  /// key left from before an override switched its map's `kind` (`--set scheduler.kind=static`
  /// over a file's continuous scheduler): such a key, when the new kind did not read it, is
  /// removed from the document and named in notes().
  void check_all_read() const;
  /// What check_all_read() dropped, one sentence each ("--set scheduler.kind=static: dropped
  /// scheduler.max_num_seqs, a key of kind continuous that kind static does not have").
  [[nodiscard]] const std::vector<std::string>& notes() const { return m_notes; }

  [[nodiscard]] const std::string& file() const { return m_file; }
  [[nodiscard]] YAML::Node root() const { return m_root; }
  /// The directory relative paths in this document are resolved against.
  [[nodiscard]] std::string base_dir() const;

  /// check_all_read's check of one map's own keys (not of the maps below them): throws for the
  /// first key nobody asked for. Cfg::check_keys_read.
  void check_keys_read(const YAML::Node& map, const std::string& path) const;

  // Used by Cfg.
  void note_queried(const std::string& map_path, const std::string& key);
  [[nodiscard]] bool was_queried(const std::string& map_path, const std::string& key) const;
  /// "file:line:col" of `node`, or "file (from --set a.b)" when `key_path` or a map above it
  /// was replaced by an override.
  [[nodiscard]] std::string where(const YAML::Node& node, const std::string& key_path = "") const;

 private:
  /// `deep`: the maps and lists below too, and an old kind's keys dropped (check_all_read);
  /// else this map's own keys only, an old kind's skipped.
  void check_node(const YAML::Node& node, const std::string& path, bool deep = true) const;

  std::string m_file;
  YAML::Node m_root;
  std::map<std::string, std::set<std::string>> m_queried;  // map path -> keys asked for
  std::set<std::string> m_overridden;                      // key paths set by --set
  /// Map path -> {the --set that switched its kind, the old kind, the keys it held then}.
  struct KindSwitch {
    std::string assignment, old_kind;
    std::set<std::string> inherited;
  };
  std::map<std::string, KindSwitch> m_kind_switches;
  mutable std::vector<std::string> m_notes;
};

class Cfg {
 public:
  Cfg(std::shared_ptr<Document> doc, YAML::Node node, std::string path);
  static Cfg root(const std::shared_ptr<Document>& doc);

  [[nodiscard]] bool has(const std::string& key) const;
  /// True when `key` is present and a scalar (a string, number or boolean), not a map or list.
  [[nodiscard]] bool is_scalar(const std::string& key) const;
  /// A path given at `key`, resolved against the document's folder; fails unless it names a
  /// regular file. `what` names the file's role in the message.
  [[nodiscard]] std::string existing_file(const std::string& key, const std::string& what) const;
  [[nodiscard]] Cfg child(const std::string& key) const;  ///< required map
  [[nodiscard]] std::optional<Cfg> optional_child(const std::string& key) const;
  [[nodiscard]] std::vector<Cfg> list_of_maps(const std::string& key) const;  ///< required

  [[nodiscard]] int64_t get_int(const std::string& key, IntRange r = {}) const;
  [[nodiscard]] int64_t get_int(const std::string& key, int64_t def, IntRange r) const;
  [[nodiscard]] std::optional<int64_t> optional_int(const std::string& key, IntRange r = {}) const;
  [[nodiscard]] double get_real(const std::string& key, RealRange r = {}) const;
  [[nodiscard]] double get_real(const std::string& key, double def, RealRange r) const;
  [[nodiscard]] std::optional<double> optional_real(const std::string& key, RealRange r = {}) const;
  [[nodiscard]] bool get_bool(const std::string& key, bool def) const;
  [[nodiscard]] std::string get_string(const std::string& key) const;
  [[nodiscard]] std::string get_string(const std::string& key, const std::string& def) const;
  /// A required name from a fixed list; the message lists the valid ones.
  [[nodiscard]] std::string get_choice(const std::string& key,
                                       const std::vector<std::string>& valid) const;
  [[nodiscard]] std::string get_choice(const std::string& key, const std::string& def,
                                       const std::vector<std::string>& valid) const;
  /// The single key present among `alternatives` (exactly one must be given).
  [[nodiscard]] std::string one_of(const std::vector<std::string>& alternatives) const;

  /// The node at `key` (recorded as read), for a value Cfg has no reader for, such as a list of
  /// numbers; undefined when absent. A handle into the document: read it, never assign to it.
  [[nodiscard]] YAML::Node node(const std::string& key) const { return lookup(key); }

  /// Throws, as Document::check_all_read will, for the first key of this map (its own keys, not
  /// those of maps below) that nobody has asked for yet: for a reader about to refuse the map
  /// for a key it lacks, where the key given instead is misspelt or belongs elsewhere.
  void check_keys_read() const { m_doc->check_keys_read(m_node, m_path); }

  /// Throws InputError about `key` of this map (or about the map itself when key is empty).
  [[noreturn]] void fail(const std::string& key, const std::string& allowed) const;

  [[nodiscard]] const std::string& path() const { return m_path; }
  [[nodiscard]] const Document& doc() const { return *m_doc; }
  [[nodiscard]] std::string key_path(const std::string& key) const;

 private:
  [[nodiscard]] YAML::Node lookup(const std::string& key) const;  // records the query
  [[nodiscard]] YAML::Node require(const std::string& key, const char* what) const;
  [[nodiscard]] std::string scalar(const YAML::Node& n, const std::string& key,
                                   const char* what) const;
  [[nodiscard]] int64_t to_int(const YAML::Node& n, const std::string& key, IntRange r) const;
  [[nodiscard]] double to_real(const YAML::Node& n, const std::string& key, RealRange r) const;

  std::shared_ptr<Document> m_doc;
  YAML::Node m_node;
  std::string m_path;
};

/// One typed key a part of servesim asked for while a KeyLog was open.
struct KeyUse {
  std::string path;      ///< the key's path in its document: "scheduler.max_num_seqs"
  std::string allowed;   ///< what the reader accepts: "integer from 1 to 1048576", "number > 0"
  std::string fallback;  ///< its default: "256", "0.9", "required", or "none" (optional)
  std::string file;      ///< the document it was asked of
};

/// "integer", "integer >= 1", "integer from 1 to 1024": what a range allows, as messages and
/// `KeyUse::allowed` write it.
[[nodiscard]] std::string describe(const IntRange& r);
/// "number", "number > 0", "number >= 0", "number from 0 to 1", "number > 0 and <= 100".
[[nodiscard]] std::string describe(const RealRange& r);

/// While one is alive, every number a Cfg reads on this thread (get_int, get_real and their
/// optional forms, whether the key is present or not) is recorded with its range and default:
/// what tests/cli/config_docs_test.cpp checks docs/config.md against. Logs nest; the innermost
/// records. Costs nothing when none is open.
class KeyLog {
 public:
  KeyLog();
  ~KeyLog();
  KeyLog(const KeyLog&) = delete;
  KeyLog& operator=(const KeyLog&) = delete;
  [[nodiscard]] const std::vector<KeyUse>& uses() const { return m_uses; }
  /// True while a log is open on this thread.
  [[nodiscard]] static bool recording();
  /// Records a use of `key` of `c` in the innermost open log of this thread, if any.
  static void note(const Cfg& c, const std::string& key, std::string allowed, std::string fallback);

 private:
  KeyLog* m_outer;
  std::vector<KeyUse> m_uses;
};

/// Levenshtein distance, for "did you mean" suggestions.
[[nodiscard]] size_t edit_distance(std::string_view a, std::string_view b);
/// "a, b, c" from a list of names.
[[nodiscard]] std::string join_names(const std::vector<std::string>& names);
/// " (did you mean X?)" when some name is close to `given`, else "".
[[nodiscard]] std::string did_you_mean(const std::string& given,
                                       const std::vector<std::string>& names);

}  // namespace servesim

#pragma once
// Parsed operator tables kept on disk in binary. The largest table (AIConfigurator's gemm.csv,
// 1.4 MB gzipped to 424 KB) cost a run more to inflate and parse than the run's first hundred
// thousand steps; a reader that finds its numbers here skips both. An entry is keyed by the
// source file's content (a 64-bit hash and its length) and by what the reader selected from it
// (`what`, say "gemm bfloat16"), so an edited table is parsed anew and a cache never changes a
// result: the values are the parsed doubles, bit for bit.
//
// The directory is $SERVESIM_TABLE_CACHE when set (empty or "off": no cache), else
// $XDG_CACHE_HOME/servesim/tables, else $HOME/.cache/servesim/tables. An entry that cannot be
// read (absent, cut short, written by another version or another byte order) is ignored and
// written again; one that cannot be written is skipped: a cache never fails a run.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace servesim {

/// The directory above, or nullopt when the cache is off or no home is known.
[[nodiscard]] std::optional<std::filesystem::path> table_cache_dir();

/// 64-bit hash of `bytes` (eight bytes a multiply; not cryptographic: it detects edits).
[[nodiscard]] uint64_t content_hash(const std::string& bytes);

/// One source file's entry. REQUIRES: `source` is the file as found (find_input), gzipped or not.
class TableCache {
 public:
  /// `dir`: table_cache_dir(), or nullopt for none (load() then finds nothing, store() does
  /// nothing). Reads `source`'s bytes to hash them; an unreadable source disables the entry.
  TableCache(std::optional<std::filesystem::path> dir, const std::filesystem::path& source,
             std::string what);
  /// An entry's values read in place: `values` lies in a read-only mapping of the entry's file
  /// that lives as long as a copy of `mapping` does. The cache's files are only ever replaced
  /// by a rename (store()), never rewritten in place, so the mapped bytes do not change under a
  /// reader (a file cut short in place by another program would fault one that reads past its
  /// new end).
  struct Mapped {
    std::shared_ptr<const void> mapping;
    std::span<const double> values;
  };
  /// The values stored for this content and selection, in place, or nullopt.
  [[nodiscard]] std::optional<Mapped> map() const;
  /// The same values copied out, or nullopt.
  [[nodiscard]] std::optional<std::vector<double>> load() const;
  /// Stores `values` for this content (a temporary file renamed over the entry, so readers
  /// never see half of one). Errors are ignored.
  void store(const std::vector<double>& values) const;
  /// The entry's file, when there is a directory.
  [[nodiscard]] const std::optional<std::filesystem::path>& file() const { return m_file; }

 private:
  std::optional<std::filesystem::path> m_file;
  std::string m_what;
  uint64_t m_hash = 0;
  uint64_t m_size = 0;
};

}  // namespace servesim

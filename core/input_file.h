#pragma once
// Opening an input file that may be stored gzipped. The repository keeps its large tables as
// `name.csv.gz` (data/, docs/data.md); a reader asks for `name.csv` and gets its bytes whichever
// of the two is there. A file whose name ends in ".gz" is always read through zlib; any other is
// read as it is.
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <string>

namespace servesim {

/// The file that holds `path`'s contents: `path` itself when it is a regular file, else
/// `path` + ".gz" when that is one, else nullopt.
[[nodiscard]] std::optional<std::filesystem::path> find_input(const std::filesystem::path& path);

/// Whether find_input(path) finds a file.
[[nodiscard]] bool input_exists(const std::filesystem::path& path);

/// A stream over `path`'s contents (decompressed when the file found is gzipped). Throws
/// InputError naming the full path when neither `path` nor `path`.gz can be opened. A gzipped
/// file that is not gzip data, or whose data is corrupt or cut short, makes the stream's reads
/// throw InputError naming the file (the stream has badbit in its exceptions mask).
[[nodiscard]] std::unique_ptr<std::istream> open_input(const std::filesystem::path& path);

/// The whole contents of `path` (as open_input reads them).
[[nodiscard]] std::string read_input(const std::filesystem::path& path);

}  // namespace servesim

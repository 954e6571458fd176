#pragma once
// The engine versions servesim knows (scheduler.version of vllm, sglang and trtllm), and the one
// reader of that key: the scheduler, the host-time model and the scenario's rules all read it
// here, so a version is refused once, with the list, and never picks some other version's
// behaviour by accident.
#include <string>
#include <string_view>
#include <vector>

#include "core/config.h"

namespace servesim {

/// A release line: MAJOR.MINOR. The patch release (and a pre- or post-release tag after it,
/// "1.3.0rc20", "0.6.6.post1") changes no behaviour servesim models, so it is not kept.
struct EngineVersion {
  int major = 0, minor = 0;
  [[nodiscard]] bool before(int ma, int mi) const { return major != ma ? major < ma : minor < mi; }
};

/// The release lines servesim knows for `engine` ("vllm", "sglang", "trtllm"), oldest first, as
/// "MAJOR.MINOR"; empty for any other engine.
[[nodiscard]] const std::vector<std::string>& known_engine_versions(std::string_view engine);
/// The version `engine` runs when `version` is not given ("0.19.0" for vllm).
/// REQUIRES: known_engine_versions(engine) is not empty.
[[nodiscard]] std::string default_engine_version(std::string_view engine);

/// `version` of the scheduler section `c` (default: default_engine_version(engine)), as
/// MAJOR.MINOR[.PATCH[TAG]] where MAJOR.MINOR is one of known_engine_versions(engine): the
/// patch rule is that any patch release of a known line is that line (0.19.1 is run as 0.19).
/// Anything else fails naming the file, line, value and the known lines.
[[nodiscard]] EngineVersion read_engine_version(const Cfg& c, std::string_view engine);

}  // namespace servesim

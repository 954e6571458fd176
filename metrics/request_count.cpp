#include "metrics/request_count.h"

#include <fmt/format.h>

#include "core/errors.h"

namespace servesim {

void apply_request_count(Document& doc, int64_t requests, const std::string& option) {
  // A missing key gives an invalid node, which only IsDefined() may be asked about.
  auto is_map = [](const YAML::Node& n) { return n.IsDefined() && n.IsMap(); };
  const YAML::Node root = doc.root();
  if (!is_map(root) || !is_map(root["workload"]) || !is_map(root["workload"]["synthetic"]))
    throw InputError(
        fmt::format("{}: {} has no workload.synthetic to override", option, doc.file()));
  doc.apply_override("workload.synthetic.requests=" + std::to_string(requests));
}

}  // namespace servesim

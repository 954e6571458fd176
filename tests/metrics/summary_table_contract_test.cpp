// Contracts of the printed per-replica table (metrics/output.h, docs/metrics.md): its SLO
// columns are exactly the run's targets (TTFT met, TPOT met, and all met with two or more), for
// every combination of the four targets (TTFT, TPOT, E2E, ITL), and every row has a cell under
// every header.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <sstream>

#include "metrics/output.h"
#include "tests/support.h"

namespace t_metrics_summary_table_contract_test {

using namespace servesim;
using namespace servesim::test;

namespace {

const std::string k_run =
    "workload: {synthetic: {requests: 6, arrival: {kind: fixed, rate_per_s: 100},\n"
    "  prompt_tokens: {kind: fixed, value: 16}, output_tokens: {kind: fixed, value: 3}}}\n"
    "step_time: {kind: linear, base_ms: 8, per_seq_ms: 2}\n"
    "scheduler: {kind: continuous, max_num_seqs: 8}\n"
    "kv: {policy: paged, block_size: 16, capacity_tokens: 65536}\n"
    "cluster: {replicas: 2, router: {kind: round_robin}}\n";

/// The lines of the replica table: from its header to the first empty line.
std::vector<std::string> replica_lines(const std::string& table) {
  std::vector<std::string> out;
  std::istringstream in(table.substr(table.find("\nreplica ") + 1));
  for (std::string line; std::getline(in, line) && !line.empty();) out.push_back(line);
  return out;
}

/// Whitespace-separated words of a line (a header such as "TTFT met" is two).
size_t words(const std::string& line) {
  std::istringstream in(line);
  size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

TEST_CASE("summary table contract: the replica table's SLO columns are the run's targets",
          "[metrics][contract]") {
  const std::vector<std::string> targets{"ttft_ms: 30", "tpot_ms: 30", "e2e_ms: 100", "itl_ms: 30"};
  size_t base_words = 0;
  for (unsigned mask = 0; mask < 16; ++mask) {
    std::string slo;
    for (unsigned k = 0; k < 4; ++k)
      if (mask & (1u << k)) slo += (slo.empty() ? "" : ", ") + targets[k];
    const bool ttft = mask & 1u, tpot = mask & 2u;
    const int count = int{ttft} + int{tpot} + int{(mask & 4u) != 0} + int{(mask & 8u) != 0};
    INFO("slo: {" << slo << "}");
    const RunOutput out = run_scenario(doc_of(k_run + (slo.empty() ? "" : "slo: {" + slo + "}\n")));
    const std::vector<std::string> lines = replica_lines(summary_table(out.summary));
    REQUIRE(lines.size() == 3);  // the header and two replicas
    const std::string& head = lines[0];
    CHECK((head.find("TTFT met") != std::string::npos) == ttft);
    CHECK((head.find("TPOT met") != std::string::npos) == tpot);
    CHECK((head.find("all met") != std::string::npos) == (count > 1));
    // "replica" and the metric headers, then two words a shown SLO column; a row has its name
    // and one cell a column.
    const size_t slo_columns = size_t{ttft} + size_t{tpot} + (count > 1 ? 1 : 0);
    if (mask == 0) base_words = words(head);
    CHECK(words(head) == base_words + 2 * slo_columns);
    for (size_t r = 1; r < lines.size(); ++r) {
      INFO(lines[r]);
      CHECK(lines[r].rfind(std::to_string(r - 1) + " ", 0) == 0);
      CHECK(lines[r].size() == head.size());
    }
  }
}

}  // namespace t_metrics_summary_table_contract_test

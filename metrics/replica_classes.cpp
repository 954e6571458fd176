// Each class's figures on each replica of a cluster (ReplicaSummary::classes,
// docs/metrics.md#per-replica-and-per-pool): a request's TTFT belongs to the class's tally at the
// replica it entered, the rest of it to the tally at the replica it left from, as the replica's
// own figures are attributed.
#include "metrics/metrics.h"

namespace servesim {

void MetricsRecorder::record_replica_class(const Request& r, uint32_t entry, const SloVerdict& ok) {
  if (m_replica_classes.size() < m_replicas.size()) m_replica_classes.resize(m_replicas.size());
  const auto at = [&](uint32_t replica) -> ClassTally& {
    std::vector<ClassTally>& v = m_replica_classes[replica];
    while (v.size() <= r.spec.class_id) v.emplace_back(m_exact_limit);
    return v[r.spec.class_id];
  };
  at(entry).all.add_entry(r, ok.ttft);
  tally_class_exit(at(r.replica), r, ok);
}

void MetricsRecorder::replica_class_summaries(Summary& s, const RunStats& stats) {
  if (stats.class_names.empty()) return;
  for (size_t i = 0; i < s.replicas.size() && i < m_replicas.size(); ++i) {
    ReplicaSummary& rep = s.replicas[i];
    for (size_t k = 0; k < stats.class_names.size(); ++k) {
      ReplicaClassSummary c;
      if (i < m_replica_classes.size() && k < m_replica_classes[i].size()) {
        ClassTally& t = m_replica_classes[i][k];
        fill_class(c, t, s.duration_s);
        c.routed = t.all.entered;
        // A check none of its requests here is judged on is absent, as for the replica.
        if (m_slo) c.slo = part_slo_summary(t.all, s.duration_s, m_accelerators[i]);
      }
      rep.classes.emplace_back(stats.class_names[k], std::move(c));
    }
  }
}

}  // namespace servesim

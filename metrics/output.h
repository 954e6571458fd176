#pragma once
// Results as files: requests.csv's writer, summary.json and the printed summary. The files are
// written through ResultFiles (metrics/result_files.h).
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "core/request.h"
#include "core/slot_store.h"
#include "metrics/metrics.h"
#include "metrics/result_files.h"
#include "sim/recorder.h"

namespace servesim {

/// A row of requests.csv waiting for a lower id, and the names a row shows
/// (metrics/requests_csv.cpp).
struct RequestsCsvHeldRow;
struct RequestsCsvNames;

/// Streams requests.csv, one row per request in id order, as requests leave the engine. Rows of
/// requests that left before a lower id are held until that id leaves (memory: the rows of
/// requests that overtook a request still in flight). Times in seconds with nanosecond digits.
class RequestsCsvWriter final : public RequestRecorder, private FiguresSink {
 public:
  /// Writes the header. REQUIRES: `out` outlives this writer.
  explicit RequestsCsvWriter(std::ostream& out);
  ~RequestsCsvWriter() override;
  RequestsCsvWriter(const RequestsCsvWriter&) = delete;
  RequestsCsvWriter& operator=(const RequestsCsvWriter&) = delete;
  /// The run's class names (Simulation::class_names), for the class column; without them the
  /// column is empty. REQUIRES: `names` outlives this writer.
  void set_class_names(const std::vector<std::string>* names) { m_class_names = names; }
  /// The run's tenant names (Simulation::tenant_names), for the tenant column, likewise.
  void set_tenant_names(const std::vector<std::string>* names) { m_tenant_names = names; }
  void record(const Request& r) override;
  /// No row comes after this: the rows still held (a bounded run leaves gaps in the ids) go
  /// to be written, with write_on_thread on that thread, which goes on writing while the
  /// caller does other work (the summary); finish() then waits for it.
  void end_rows();
  /// end_rows(), then writes everything and flushes; with write_on_thread, waits for that
  /// thread, and throws what it threw (a WriteError).
  void finish();
  /// From now on the rows are put in id order, formatted and written on a second thread
  /// (core/side_thread.h): record() hands each row's values over, in the order recorded and in
  /// batches, and the file's bytes are the same. A write that fails there, or a row recorded
  /// twice, is thrown by a later record() or by finish(). Returns false, and the rows are
  /// written here as before, when no thread could be started. REQUIRES: nothing recorded yet.
  bool write_on_thread();
  /// With write_on_thread: `m`'s own distributions are added to on the writer's thread, from
  /// the finished rows' times, in the requests' order, before each batch's rows are placed
  /// (MetricsRecorder::add_figures_on; `m`'s summary() calls end_rows() and waits for them).
  /// Returns false, and does nothing, without that thread. REQUIRES: nothing recorded yet;
  /// this writer records every request `m` does; `m` outlives this writer.
  bool add_figures_for(MetricsRecorder& m);
  /// The output buffer's capacity in bytes: reserved once, it stays so while rows have no
  /// long reasons or names (tests). REQUIRES: no write_on_thread (the buffer is that thread's).
  [[nodiscard]] size_t buffer_capacity() const { return m_buf.capacity(); }

 private:
  void join() override;
  void flush_buffer();
  /// Row `id` (as held, emptied): to the buffer when it is the next id, with the held rows that
  /// follow it, else held. The writer's thread's way in (write_on_thread).
  /// record() without the writer's thread (or after end_rows: a logic error).
  void record_here(const Request& r);
  void place(uint64_t id, RequestsCsvHeldRow& row, const RequestsCsvNames& names);
  /// The ring's slot for row `id` (> m_next_id), grown to hold it.
  RequestsCsvHeldRow& held_slot(uint64_t id);
  /// The next id was written: the held rows now in order follow it.
  void passed(const RequestsCsvNames& names);
  /// Makes the ring hold at least `slots` rows, the held ones kept in order.
  void grow_ring(size_t slots);
  /// Moves the held rows now in order (from m_head on) to the buffer.
  void drain_held(const RequestsCsvNames& names);
  /// Every held row to the buffer, in id order (end_rows: no lower id will come).
  void write_held_rows(const RequestsCsvNames& names);
  /// The rows' orderer and formatter on the second thread (write_on_thread); null without it.
  /// From then on the ring and the buffer below are that thread's.
  struct Background;
  std::unique_ptr<Background> m_bg;

  std::ostream& m_out;
  fmt::memory_buffer m_buf;
  // The held rows: slot (m_head + i) & (m_ring.size() - 1) holds the row of id m_next_id + i
  // (empty until it comes), for i < m_held; the size is a power of two, or 0. A finished row is
  // held as its values and written when its turn comes; any other as its text, in a string
  // that keeps its capacity from row to row. Grown in place (grow_ring): 64 rows to a block.
  SlotStore<RequestsCsvHeldRow, 6> m_ring;
  size_t m_head = 0;
  size_t m_held = 0;  // 1 + the highest i held, 0 when none is
  uint64_t m_next_id = 0;
  bool m_rows_ended = false;
  const std::vector<std::string>* m_class_names = nullptr;
  const std::vector<std::string>* m_tenant_names = nullptr;
};

/// requests.csv of a finished set of requests, as one string (tests); `class_names` name their
/// classes (none: the class column is empty).
[[nodiscard]] std::string requests_csv(const std::vector<Request>& requests,
                                       const std::vector<std::string>& class_names = {},
                                       const std::vector<std::string>& tenant_names = {});

/// summary.json: the metrics, the seed and the resolved config.
[[nodiscard]] nlohmann::ordered_json summary_json(const Summary& s, const YAML::Node& config,
                                                  uint64_t seed);
/// The table printed after a run.
[[nodiscard]] std::string summary_table(const Summary& s);
/// A YAML tree as JSON (numbers and booleans typed, everything else strings).
[[nodiscard]] nlohmann::ordered_json yaml_to_json(const YAML::Node& node);

}  // namespace servesim

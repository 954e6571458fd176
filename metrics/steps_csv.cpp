#include "metrics/steps_csv.h"

#include <iterator>
#include <string_view>

namespace servesim {

namespace {

// Seconds with nine decimals from integer nanoseconds, exactly (no double rounding).
void append_seconds(fmt::memory_buffer& b, Time t) {
  const int64_t ns = t.count_ns();
  const int64_t whole = ns / 1'000'000'000;
  const int64_t frac = ns % 1'000'000'000;
  if (ns < 0 && frac != 0)
    fmt::format_to(std::back_inserter(b), "-{}.{:09d}", -whole, -frac);
  else
    fmt::format_to(std::back_inserter(b), "{}.{:09d}", whole, frac < 0 ? -frac : frac);
}

}  // namespace

StepsCsvWriter::StepsCsvWriter(std::ostream& out) : m_out(out) {
  m_out << "replica,start_s,duration_s,sequences,prefill_sequences,prefill_tokens,"
           "decode_tokens,kv_used_tokens,kv_capacity_tokens,waiting,running,preemptions,bound,"
           "bytes,flops\n";
}

void StepsCsvWriter::on_step(const StepRecord& s) {
  auto it = std::back_inserter(m_buf);
  fmt::format_to(it, "{},", s.replica);
  append_seconds(m_buf, s.start);
  m_buf.push_back(',');
  append_seconds(m_buf, s.duration);
  fmt::format_to(it, ",{},{},{},{},{},{},{},{},{},{}", s.sequences, s.prefill_sequences,
                 s.prefill_tokens, s.decode_tokens, s.kv_used_tokens, s.kv_capacity_tokens,
                 s.waiting, s.running, s.preemptions,
                 s.bound < 0 ? "" : (s.bound == 0 ? "bandwidth" : "compute"));
  if (s.bound < 0)
    m_buf.append(std::string_view(",,\n"));
  else  // shortest text that reads back to the same double
    fmt::format_to(it, ",{},{}\n", s.bytes, s.flops);
  if (m_buf.size() > (size_t{1} << 16)) {
    m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
    m_buf.clear();
  }
}

void StepsCsvWriter::finish() {
  m_out.write(m_buf.data(), static_cast<std::streamsize>(m_buf.size()));
  m_buf.clear();
  m_out.flush();
}

}  // namespace servesim

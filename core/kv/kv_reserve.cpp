// Reserve (Orca; TensorRT-LLM's GUARANTEED_NO_EVICT): a request is admitted only with room for
// its prompt plus its maximum output, held until release. Running requests never run out of
// memory, so nothing is ever preempted. Reservations are whole blocks of block_size tokens, as
// in TensorRT-LLM's paged cache.
#include <fmt/format.h>

#include "core/kv/factories.h"

namespace servesim {
namespace {

class ReserveKv final : public KvManager {
 public:
  ReserveKv(int64_t capacity, int64_t block, std::optional<int64_t> max_output)
      : m_block(block), m_capacity(capacity / block * block), m_max_output(max_output) {}

  int64_t capacity_tokens() const override { return m_capacity; }
  int64_t block_tokens() const override { return m_block; }
  int64_t used_tokens() const override { return m_used; }

  int64_t footprint_tokens(const Request& r) const override {
    // A request's own maximum (a trace column) overrides kv.max_output_tokens.
    const int64_t max_output = r.spec.max_output_tokens > 0
                                   ? r.spec.max_output_tokens
                                   : m_max_output.value_or(r.spec.output_tokens);
    const int64_t tokens = int64_t{r.spec.prompt_tokens} + max_output;
    return (tokens + m_block - 1) / m_block * m_block;
  }

  std::string never_fits(const Request& r) const override {
    if (m_max_output && r.spec.max_output_tokens == 0 && r.spec.output_tokens > *m_max_output)
      return fmt::format("its {} output tokens exceed kv.max_output_tokens = {}",
                         r.spec.output_tokens, *m_max_output);
    return KvManager::never_fits(r);
  }

  bool try_admit(Request& r, int64_t /*cached_tokens*/, int64_t /*tokens*/) override {
    const int64_t need = footprint_tokens(r);
    if (m_used + need > m_capacity) return false;
    m_used += need;
    r.kv_held_tokens = need;
    return true;
  }

  bool can_admit(const Request& r, int64_t /*cached_tokens*/, int64_t /*tokens*/) const override {
    return m_used + footprint_tokens(r) <= m_capacity;
  }

  bool try_grow(Request& r, int64_t tokens) override { return tokens <= r.kv_held_tokens; }

  void release(Request& r) override {
    m_used -= r.kv_held_tokens;
    r.kv_held_tokens = 0;
  }

  bool may_need_preemption() const override { return false; }

 private:
  int64_t m_block;
  int64_t m_capacity;
  std::optional<int64_t> m_max_output;
  int64_t m_used = 0;
};

}  // namespace

std::unique_ptr<KvManager> make_reserve_kv(const Cfg& kv, int64_t capacity_tokens) {
  const int64_t block = read_block_size(kv, capacity_tokens);
  return std::make_unique<ReserveKv>(capacity_tokens, block,
                                     kv.optional_int("max_output_tokens", {1, int64_t{1} << 40}));
}

}  // namespace servesim

#include "models/link_allreduce.h"

#include <fmt/format.h>

#include <string>
#include <utility>
#include <vector>

namespace servesim {

double link_allreduce_ms(const LinkAllreduce& link, double elements, double gpus) {
  const double bytes = 2.0 * elements;  // bf16
  const double one_way = link.interconnect_gb_per_s / 2.0 * 1e9 * link.efficiency;
  return 2.0 * (gpus - 1.0) / gpus * bytes / one_way * 1e3 + link.latency_us / 1e3;
}

namespace {

class LinkAllreduceSource final : public OperatorSource {
 public:
  LinkAllreduceSource(std::unique_ptr<OperatorSource> src, const LinkAllreduce& link)
      : m_src(std::move(src)), m_link(link) {}

  std::string describe() const override {
    return fmt::format("{}, all-reduce from a {:g} GB/s link at {:g} efficiency", m_src->describe(),
                       m_link.interconnect_gb_per_s, m_link.efficiency);
  }
  double gemm_ms(double m, double n, double k, const std::string& dtype) const override {
    return m_src->gemm_ms(m, n, k, dtype);
  }
  double context_attention_ms(double batch, double isl, const AttentionHeads& h,
                              const std::string& attn, const std::string& kv) const override {
    return m_src->context_attention_ms(batch, isl, h, attn, kv);
  }
  double generation_attention_ms(double batch, double kv_tokens, const AttentionHeads& h,
                                 const std::string& attn, const std::string& kv) const override {
    return m_src->generation_attention_ms(batch, kv_tokens, h, attn, kv);
  }
  double moe_ms(double tokens, const MoeShape& s, const std::string& dtype,
                const std::string& distribution) const override {
    return m_src->moe_ms(tokens, s, dtype, distribution);
  }
  double allreduce_ms(double elements, double gpus) const override {
    return link_allreduce_ms(m_link, elements, gpus);
  }
  double elementwise_ms(double bytes) const override { return m_src->elementwise_ms(bytes); }
  std::vector<double> breakpoints(OperatorAxis axis) const override {
    if (axis == OperatorAxis::AllreduceElements) return {};  // a smooth formula
    return m_src->breakpoints(axis);
  }

 private:
  std::unique_ptr<OperatorSource> m_src;
  LinkAllreduce m_link;
};

}  // namespace

std::unique_ptr<OperatorSource> with_link_allreduce(std::unique_ptr<OperatorSource> src,
                                                    const LinkAllreduce& link) {
  return std::make_unique<LinkAllreduceSource>(std::move(src), link);
}

}  // namespace servesim

#pragma once
// SGLang's dfs-weight waiting-queue order (schedule_policy: dfs-weight), on the prefix cache's
// block keys (docs/schedulers.md#sglang).
//
// SGLang attaches each waiting request to the deepest node of its radix tree that the request's
// prompt matches, weighs every node by the waiting requests attached at or below it, and walks
// the tree depth first from the root: a node's children in decreasing weight, then the requests
// attached to the node itself. Here the tree is the prefix cache's: a node is a cached KV block,
// named by its key (KvManager::prefix_block_key, which stands for the block's tokens and all
// before it), and a request's path is the keys of the blocks cached_prefix_tokens finds.
//   - nodes are whole blocks (kv.block_size tokens), not SGLang's token-granular radix edges;
//   - children of equal weight go in the order of their first waiting request (SGLang: the
//     order they were inserted in its tree);
//   - requests attached to the same node keep their queue order (as SGLang's stable lists);
//   - without kv.prefix_caching every request sits at the root: the queue's order (fcfs), as
//     SGLang falls back to fcfs without its radix cache.
// The order is worked out once per prefill batch (SGLang's calc_priority), in scratch memory
// that is reused from step to step.
#include <cstdint>
#include <vector>

#include "core/batch_state.h"

namespace servesim {

class DfsWeightOrder {
 public:
  /// Works out the order of the waiting requests now.
  void compute(SchedulerView& s);
  /// The index in waiting() of the first request of the order still waiting, or
  /// waiting().size() when none is.
  [[nodiscard]] size_t next(const SchedulerView& s) const;
  /// The slots in the order compute() found (tests).
  [[nodiscard]] const std::vector<uint32_t>& order() const { return m_order; }

 private:
  struct Node {
    uint64_t key;     // a block key at some depth
    uint32_t depth;   // its block index
    uint32_t first;   // the queue position of the first waiting request through it
    uint32_t weight;  // waiting requests through it
  };
  [[nodiscard]] const Node& node(uint64_t key, uint32_t depth) const;
  [[nodiscard]] bool before(uint32_t a, uint32_t b) const;  // by queue position

  std::vector<uint32_t> m_order;  // slots
  std::vector<uint32_t> m_pos;    // queue positions, sorted by the order
  std::vector<uint32_t> m_start;  // [queue position]: its first key in m_keys
  std::vector<uint32_t> m_depth;  // [queue position]: its cached blocks
  std::vector<uint64_t> m_keys;   // every waiting request's path, one after another
  std::vector<Node> m_nodes;      // sorted by (depth, key)
};

}  // namespace servesim

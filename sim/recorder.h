#pragma once
// Where finished requests go. The engine keeps only in-flight requests; each one is handed to
// every recorder exactly once, when it leaves: released (served), rejected at arrival, or, when
// a bounded run stops early, still unfinished. Recorders must copy what they need: the request
// is recycled right after. Requests come in the order they leave, not in id order.
#include "core/request.h"

namespace servesim {

class RequestRecorder {
 public:
  virtual ~RequestRecorder() = default;
  virtual void record(const Request& r) = 0;
};

}  // namespace servesim

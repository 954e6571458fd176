// The compiled parts of fmt and spdlog, for the servesim command linked without libfmt.so and
// libspdlog.so (CMakeLists.txt, SERVESIM_STATIC_DEPS; docs/performance.md, issue 34, branch
// s51a). Debian ships both libraries shared only, with headers that hold every definition:
// compiled here in their libraries' own mode (FMT_SHARED, SPDLOG_COMPILED_LIB, from the imported
// targets), the headers' non-template functions are emitted once, as the shared libraries hold
// them, and the templates the rest of servesim calls without their bodies are instantiated
// explicitly below. A name missing here fails the command's link, never a run.
#include <fmt/format-inl.h>
#include <spdlog/common-inl.h>
#include <spdlog/details/backtracer-inl.h>
#include <spdlog/details/log_msg-inl.h>
#include <spdlog/details/log_msg_buffer-inl.h>
#include <spdlog/details/os-inl.h>
#include <spdlog/details/periodic_worker-inl.h>
#include <spdlog/details/registry-inl.h>
#include <spdlog/logger-inl.h>
#include <spdlog/pattern_formatter-inl.h>
#include <spdlog/sinks/ansicolor_sink-inl.h>
#include <spdlog/sinks/base_sink-inl.h>
#include <spdlog/sinks/sink-inl.h>
#include <spdlog/sinks/stdout_color_sinks-inl.h>
#include <spdlog/spdlog-inl.h>

#include <mutex>

namespace fmt {
inline namespace v9 {
namespace detail {
// The locale's separators and the shortest round-trip digits of floating-point values.
template auto thousands_sep_impl<char>(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl<char>(locale_ref) -> char;
template auto dragonbox::to_decimal<float>(float) noexcept -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal<double>(double) noexcept -> dragonbox::decimal_fp<double>;
}  // namespace detail
}  // namespace v9
}  // namespace fmt

namespace spdlog {
// The coloured stderr logger servesim logs through (cli/main.cpp) and its sink.
template class sinks::ansicolor_sink<details::console_mutex>;
template class sinks::ansicolor_stderr_sink<details::console_mutex>;
template std::shared_ptr<logger> stderr_color_mt<synchronous_factory>(const std::string&,
                                                                      color_mode);
template class sinks::base_sink<std::mutex>;
}  // namespace spdlog

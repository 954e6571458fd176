#include "report/report.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <ostream>

#include "core/errors.h"
#include "core/interrupt.h"
#include "core/output_file.h"
#include "report/assets.h"
#include "report/report_data.h"

namespace servesim {

namespace {

// The template's markers, in the order they appear in report/template.html.
struct Slot {
  std::string_view marker;
  int part;  // 0 uplot_css, 1 report_css, 2 uplot_js, 3 data, 4 report_js, 5 licence
};
constexpr Slot k_slots[] = {
    {"/*@UPLOT_CSS@*/", 0}, {"/*@REPORT_CSS@*/", 1}, {"/*@UPLOT_LICENSE@*/", 5},
    {"/*@UPLOT_JS@*/", 2},  {"@DATA@", 3},           {"/*@REPORT_JS@*/", 4}};

// JSON safe inside <script>: "</" and "<!--" cannot appear (each "<" in a JSON string may be
// written \u003c; outside strings JSON has none).
std::string script_safe(const std::string& json_text) {
  std::string out;
  out.reserve(json_text.size());
  for (char c : json_text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

void write_report_html(const nlohmann::json& data, std::ostream& out) {
  const ReportAssets& a = report_assets();
  const std::string data_text =
      script_safe(data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  // The licence goes inside a /* */ comment: make sure it cannot end it.
  std::string license(a.uplot_license);
  for (size_t p; (p = license.find("*/")) != std::string::npos;) license.replace(p, 2, "* /");
  const std::string_view parts[] = {a.uplot_css, a.report_css, a.uplot_js,
                                    data_text,   a.report_js,  license};
  std::string_view rest = a.template_html;
  for (const Slot& s : k_slots) {
    const size_t at = rest.find(s.marker);
    if (at == std::string_view::npos)  // a broken build, not bad input
      throw std::logic_error(fmt::format("report/template.html lacks {}", s.marker));
    out << rest.substr(0, at) << parts[s.part];
    rest = rest.substr(at + s.marker.size());
  }
  out << rest;
}

void write_report(const std::vector<std::string>& dirs, const std::string& out_path,
                  const volatile std::sig_atomic_t* interrupt,
                  const std::vector<std::string>& labels, const RunCost& run_cost) {
  OutputFile page(out_path, "--out");  // a FIFO or device as --out is refused before reading
  const nlohmann::json data = report_data(dirs, interrupt, labels, run_cost);
  check_interrupt(interrupt);
  write_report_html(data, page.stream());
  page.commit();
}

}  // namespace servesim

#pragma once
// The report page's files, compiled in (report/embed_assets.cmake writes them into a .cpp at
// build time) so that `servesim report` works from any folder and the page needs no network.
#include <string_view>

namespace servesim {

struct ReportAssets {
  std::string_view template_html;  ///< report/template.html
  std::string_view report_js;      ///< report/report.js
  std::string_view report_css;     ///< report/report.css
  std::string_view uplot_js;       ///< report/vendor/uplot/uPlot.iife.min.js
  std::string_view uplot_css;      ///< report/vendor/uplot/uPlot.min.css
  std::string_view uplot_license;  ///< report/vendor/uplot/LICENSE
};

[[nodiscard]] const ReportAssets& report_assets();

}  // namespace servesim

#include "sizing/sweep.h"

#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "core/config.h"
#include "models/catalog.h"
#include "models/kv_memory.h"
#include "sim/scenario.h"
#include "sizing/sweep_roles.h"

namespace servesim {
namespace {

namespace fs = std::filesystem;

// Shorthand axes: one name, several keys of the scenario kept consistent (docs/sizing.md).
const std::vector<std::string>& shorthand_names() {
  static const std::vector<std::string> names{"accelerator", "model",           "pipeline_parallel",
                                              "replicas",    "tensor_parallel", "weight_dtype"};
  return names;
}

std::string flow_yaml(const YAML::Node& n) {
  YAML::Emitter e;
  e.SetMapFormat(YAML::Flow);
  e.SetSeqFormat(YAML::Flow);
  e << n;
  return e.c_str();
}

// What the base scenario (with the sweep's sets) has, so shorthands touch only what is there.
struct BaseShape {
  bool step_time_map = false;       // step_time is a section, not a file path
  bool kv_memory = false;           // kv.memory sizes the KV cache
  bool kv_explicit_memory = false;  // ... from accelerator_gib, not a hardware name
  bool kv_explicit_model = false;   // ... from parameters, layers..., not a model name
  bool cluster = false;
  std::string price_tier;  // the sweep's: an accelerator must have a price in it
  // step_time kind operator: the accelerator shorthand also picks the operator source.
  bool operator_model = false;
  YAML::Node tables;        // the base's `operators` map when its source is tables, else null
  std::string step_source;  // the base's, as the step_source column shows it
};

// "operator:tables:h100_sxm:vllm", "operator:roofline", or the kind ("roofline", "table").
std::string step_source_text(const YAML::Node& step_time) {
  if (!step_time.IsMap()) return step_time.IsScalar() ? "file" : "";
  const YAML::Node kind = yaml_child(step_time, "kind");
  const std::string k = kind.IsScalar() ? kind.Scalar() : "";
  if (k != "operator") return k;
  const YAML::Node ops = yaml_child(step_time, "operators");
  auto text = [&](const char* key) {
    const YAML::Node n = yaml_child(ops, key);
    return n.IsScalar() ? n.Scalar() : std::string();
  };
  if (text("source") != "tables") return "operator:" + text("source");
  return fmt::format("operator:tables:{}:{}", text("gpu"), text("engine"));
}

BaseShape base_shape(const SweepSpec& spec) {
  Document doc(spec.base_text, spec.base_file);
  for (const auto& s : spec.sets) doc.apply_override(s);
  const YAML::Node root = doc.root();
  BaseShape b;
  b.step_time_map = yaml_child(root, "step_time").IsMap();
  const YAML::Node memory = yaml_child(yaml_child(root, "kv"), "memory");
  b.kv_memory = memory.IsMap();
  b.kv_explicit_memory = b.kv_memory && memory["accelerator_gib"].IsDefined();
  b.kv_explicit_model = b.kv_memory && memory["parameters"].IsDefined();
  b.cluster = yaml_child(root, "cluster").IsMap();
  b.price_tier = spec.price_tier;
  const YAML::Node step_time = yaml_child(root, "step_time");
  b.step_source = step_source_text(step_time);
  const YAML::Node kind = yaml_child(step_time, "kind");
  b.operator_model = kind.IsScalar() && kind.Scalar() == "operator";
  const YAML::Node ops = yaml_child(step_time, "operators");
  const YAML::Node source = yaml_child(ops, "source");
  if (source.IsScalar() && source.Scalar() == "tables") b.tables = YAML::Clone(ops);
  return b;
}

std::string num(double v) { return fmt::format("{}", v); }

// The overrides a shorthand value stands for. Throws InputError (via `c.fail`) for a bad value.
std::vector<std::string> expand_shorthand(const Cfg& axes, const std::string& key,
                                          const YAML::Node& value, const BaseShape& b,
                                          const std::string& base_dir) {
  std::vector<std::string> out;
  const std::string text = value.IsScalar() ? value.Scalar() : flow_yaml(value);
  auto bad = [&](const std::string& why) {
    axes.fail(key, fmt::format("value {}: {}", text, why));
  };
  if (!value.IsScalar()) bad("must be a single value, not a list or map");
  if (key == "accelerator") {
    HardwareSpec hw;
    try {
      hw = load_hardware(text, base_dir);
    } catch (const InputError& e) {
      bad(e.what());
    }
    if (hw.price(b.price_tier) == nullptr)
      bad(
          fmt::format("hardware {} has no {} price, the tier this sweep compares costs in "
                      "(price_tier; docs/hardware.md#prices): drop it or choose a tier every "
                      "accelerator has",
                      quote_input(hw.name), b.price_tier));
    if (b.step_time_map) out.push_back("step_time.hardware=" + text);
    // On the operator model a chip with AIConfigurator tables is timed from them (the base's
    // path, engine and all-reduce), any other from the shape-aware roofline, so that one sweep
    // compares both on one footing. A base on the roofline source keeps it for every chip.
    if (b.operator_model && b.tables.IsMap()) {
      YAML::Node ops = YAML::Clone(b.tables);
      if (hw.tables != "none") {
        ops["gpu"] = hw.tables;
      } else {
        ops = YAML::Node(YAML::NodeType::Map);
        ops["source"] = "roofline";
      }
      out.push_back("step_time.operators=" + flow_yaml(ops));
    }
    // A base that names its figures keeps them (the datasheet's memory, as before); one that
    // names the catalogue gets the name, so the device-reported memory_gib sizes the KV.
    if (b.kv_explicit_memory)
      out.push_back("kv.memory.accelerator_gib=" + num(hw.memory_bytes() / 1073741824.0));
    else if (b.kv_memory)
      out.push_back("kv.memory.hardware=" + text);
  } else if (key == "model") {
    ModelSpec m;
    try {
      m = load_model(text, base_dir);
    } catch (const InputError& e) {
      bad(e.what());
    }
    if (b.step_time_map) out.push_back("step_time.model=" + text);
    if (b.kv_memory && !b.kv_explicit_model) {
      out.push_back("kv.memory.model=" + text);
    } else if (b.kv_memory) {
      out.push_back(fmt::format("kv.memory.parameters={}", m.parameters));
      out.push_back(fmt::format("kv.memory.layers={}", m.layers));
      out.push_back(fmt::format("kv.memory.kv_heads={}", m.kv_heads));
      out.push_back(fmt::format("kv.memory.head_dim={}", m.head_dim));
    }
  } else if (key == "weight_dtype") {
    // kv.memory's names (the catalogue's, fp4, nvfp4 and the operator model's variants); the
    // step-time model checks its own at each point.
    if (!kv_memory_weight_bytes(text))
      bad(fmt::format("unknown dtype (valid: {})", join_names(kv_memory_weight_dtypes())));
    if (b.step_time_map) out.push_back("step_time.weight_dtype=" + text);
    if (b.kv_memory) out.push_back("kv.memory.weight_dtype=" + text);
  } else if (key == "tensor_parallel" || key == "pipeline_parallel") {
    if (b.step_time_map) out.push_back("step_time." + key + "=" + text);
    if (b.kv_memory) out.push_back("kv.memory." + key + "=" + text);
  } else {  // replicas
    out.push_back(
        b.cluster ? "cluster.replicas=" + text
                  : fmt::format("cluster={{replicas: {}, router: {{kind: round_robin}}}}", text));
  }
  if (out.empty()) bad("the base scenario has neither a step_time section nor kv.memory to set");
  return out;
}

// Tries one axis value alone on the base scenario: an error about a key the value sets is an
// error in the sweep file. Other errors (weights that do not fit...) wait for the point.
void check_value(const SweepSpec& spec, const Cfg& axes, const std::string& key,
                 const std::string& text, const std::vector<std::string>& expansion) {
  auto doc = std::make_shared<Document>(spec.base_text, spec.base_file);
  try {
    for (const auto& s : spec.sets) doc->apply_override(s);
    for (const auto& s : expansion) doc->apply_override(s);
    (void)build_scenario(doc);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    for (const auto& s : expansion) {
      const std::string path = s.substr(0, s.find('='));
      if (msg.find("(from --set " + path) != std::string::npos || msg.rfind("--set", 0) == 0)
        axes.fail(key, fmt::format("value {}: {}", text, msg));
    }
  }
}

SweepAxis read_axis(const SweepSpec& spec, const Cfg& axes, const YAML::Node& key_node,
                    const YAML::Node& node, const BaseShape& shape, const std::string& base_dir) {
  SweepAxis a;
  a.key = key_node.Scalar();
  a.where = axes.doc().where(key_node, "axes." + a.key);
  const AxisForm form = read_axis_form(axes, a.key, node);  // a list, or {values, role}
  const YAML::Node values = form.values;
  a.role = form.role.value_or(inferred_role(a.key));
  a.role_given = form.role.has_value();
  // A name without a dot is a shorthand, or a whole section of the scenario (`scheduler`); a
  // near miss of a shorthand is reported as one (an unknown section fails in check_value).
  const auto& names = shorthand_names();
  const bool shorthand = std::find(names.begin(), names.end(), a.key) != names.end();
  if (!shorthand && a.key.find('.') == std::string::npos && !did_you_mean(a.key, names).empty())
    axes.fail(a.key,
              fmt::format("unknown axis{}: a key path of the scenario (scheduler.max_num_seqs) "
                          "or one of {}",
                          did_you_mean(a.key, names), join_names(names)));
  if (!values.IsSequence() || values.size() == 0)
    axes.fail(a.key, "must be a non-empty list of values");
  std::set<std::string> seen;
  for (const auto& v : values) {
    const std::string text = v.IsScalar() ? v.Scalar() : flow_yaml(v);
    if (!seen.insert(text).second) axes.fail(a.key, fmt::format("value {} is listed twice", text));
    a.values.push_back(text);
    a.expansions.push_back(shorthand ? expand_shorthand(axes, a.key, v, shape, base_dir)
                                     : std::vector<std::string>{a.key + "=" + flow_yaml(v)});
    // A shorthand's values are catalogue names, checked above; what they set may be refused only
    // because it does not fit (weights larger than memory): that is an infeasible point.
    if (!shorthand) check_value(spec, axes, a.key, text, a.expansions.back());
  }
  return a;
}

SweepSlo read_sweep_slo(const Cfg& root) {
  const Cfg c = root.child("slo");
  constexpr RealRange k_target{0.0, 1e9, true};
  SweepSlo s;
  s.ttft_ms = c.optional_real("ttft_ms", k_target);
  s.tpot_ms = c.optional_real("tpot_ms", k_target);
  s.e2e_ms = c.optional_real("e2e_ms", k_target);
  s.itl_ms = c.optional_real("itl_ms", k_target);
  s.percentile = c.get_real("percentile", 99.0, {0.0, 100.0, true});
  s.min_attainment = c.optional_real("min_attainment", {0.0, 1.0, false});
  if (!s.ttft_ms && !s.tpot_ms && !s.e2e_ms && !s.itl_ms)
    c.fail("", "needs ttft_ms, tpot_ms, e2e_ms, itl_ms or several");
  return s;
}

// The base scenario with the sweep's `set` must build, as `capacity` requires of its scenario,
// unless the error is in a section an axis sets (a value may cure it: weights that fit on a
// larger chip). A broken base is then refused with status 2 before anything runs, rather than
// reported as every point infeasible.
void check_base(const SweepSpec& spec) {
  auto doc = std::make_shared<Document>(spec.base_text, spec.base_file);
  try {
    for (const auto& s : spec.sets) doc->apply_override(s);
    (void)build_scenario(doc);
  } catch (const InputError& e) {
    const std::string msg = e.what();
    const std::string section = msg.substr(0, msg.find_first_of(" .:=["));
    for (const SweepAxis& a : spec.axes)
      for (const auto& expansion : a.expansions)
        for (const auto& o : expansion)
          if (o.substr(0, o.find_first_of(".=")) == section) return;
    throw;
  }
}

}  // namespace

std::string SweepSlo::override_text() const {
  std::string t = "slo={";
  if (ttft_ms) t += fmt::format("ttft_ms: {}, ", *ttft_ms);
  if (tpot_ms) t += fmt::format("tpot_ms: {}, ", *tpot_ms);
  if (e2e_ms) t += fmt::format("e2e_ms: {}, ", *e2e_ms);
  if (itl_ms) t += fmt::format("itl_ms: {}, ", *itl_ms);
  return t + fmt::format("percentile: {}}}", percentile);
}

bool meets_slo(const Summary& s, std::optional<double> min_attainment) {
  if (!s.slo || s.rejected > 0 || s.unfinished > 0 || !s.stopped_by.empty()) return false;
  // Requests refused, shed, timed out or failed were not served (a cancellation is the client's).
  if (s.by_status &&
      s.by_status->rejected + s.by_status->shed + s.by_status->timed_out + s.by_status->failed > 0)
    return false;
  if (s.slo->ttft && !s.slo->ttft->met) return false;
  if (s.slo->tpot && !s.slo->tpot->met) return false;
  if (s.slo->e2e && !s.slo->e2e->met) return false;
  if (s.slo->itl && !s.slo->itl->met) return false;
  return !min_attainment || s.slo->attainment >= *min_attainment;
}

size_t SweepSpec::point_count() const {
  size_t n = 1;
  for (const auto& a : axes) n *= a.values.size();
  return n;
}

std::vector<size_t> SweepSpec::coordinates(size_t i) const {
  std::vector<size_t> c(axes.size());
  for (size_t k = axes.size(); k-- > 0;) {
    c[k] = i % axes[k].values.size();
    i /= axes[k].values.size();
  }
  return c;
}

std::string SweepSpec::label(size_t i) const {
  if (axes.empty()) return "base";
  const std::vector<size_t> c = coordinates(i);
  std::string out;
  for (size_t k = 0; k < axes.size(); ++k)
    out += fmt::format("{}{}={}", k ? ";" : "", axes[k].key, axes[k].values[c[k]]);
  return out;
}

std::vector<std::string> SweepSpec::overrides(size_t i) const {
  std::vector<std::string> out = sets;
  out.push_back(slo.override_text());
  const std::vector<size_t> c = coordinates(i);
  for (size_t k = 0; k < axes.size(); ++k)
    for (const auto& s : axes[k].expansions[c[k]]) out.push_back(s);
  return out;
}

std::string SweepSpec::step_source(size_t i) const {
  Document doc(base_text, base_file);
  for (const auto& s : overrides(i))
    if (s.rfind("step_time", 0) == 0) doc.apply_override(s);
  return step_source_text(yaml_child(doc.root(), "step_time"));
}

YAML::Node yaml_child(const YAML::Node& n, const std::string& key) {
  if (!n.IsDefined() || !n.IsMap()) return YAML::Node();
  const YAML::Node c = n[key];
  return c.IsDefined() ? c : YAML::Node();
}

std::string read_text_file(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path))
    throw InputError(fmt::format("{} {}: cannot be read", what, printable(path, 200)));
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

SweepSpec load_sweep(const std::string& path, const std::vector<std::string>& extra_sets) {
  return parse_sweep(read_text_file(path, "sweep file"), path, extra_sets);
}

SweepSpec parse_sweep(const std::string& text, const std::string& file,
                      const std::vector<std::string>& extra_sets) {
  auto doc = std::make_shared<Document>(text, file);
  const Cfg root = Cfg::root(doc);
  SweepSpec spec;
  spec.file = file;
  const std::string base = root.existing_file("base", "base scenario");
  spec.base_file = base;
  spec.base_text = read_text_file(base, "base scenario");
  if (const auto sets = root.optional_child("set")) {
    for (const auto& kv : doc->root()["set"]) {
      doc->note_queried("set", kv.first.Scalar());
      spec.sets.push_back(kv.first.Scalar() + "=" + flow_yaml(kv.second));
    }
  }
  for (const auto& s : extra_sets) spec.sets.push_back(s);
  spec.slo = read_sweep_slo(root);
  spec.mode = root.get_choice("mode", "fixed", {"fixed", "min_replicas"}) == "fixed"
                  ? SweepMode::Fixed
                  : SweepMode::MinReplicas;
  spec.max_replicas = root.get_int("max_replicas", 64, {1, 4096});
  spec.price_tier = root.get_choice("price_tier", k_default_price_tier, price_tier_names());
  spec.accelerator = root.get_string("accelerator", "");
  const std::string base_dir = fs::path(base).parent_path().string();
  if (!spec.accelerator.empty()) {
    try {
      (void)load_hardware(spec.accelerator, doc->base_dir()).require_price(spec.price_tier);
    } catch (const InputError& e) {
      root.fail("accelerator", e.what());
    }
    if (spec.accelerator.find('/') != std::string::npos)  // a path: make it absolute
      spec.accelerator = fs::absolute(fs::path(doc->base_dir()) / spec.accelerator).string();
  }
  const BaseShape shape = base_shape(spec);
  if (const auto axes = root.optional_child("axes")) {
    for (const auto& kv : doc->root()["axes"]) {
      doc->note_queried("axes", kv.first.Scalar());
      spec.axes.push_back(
          read_axis(spec, *axes, kv.first, kv.second, shape, base_dir.empty() ? "." : base_dir));
      if (spec.axes.back().key == "replicas" && spec.mode == SweepMode::MinReplicas)
        axes->fail("replicas", "mode min_replicas chooses the replicas: drop this axis");
      if (spec.point_count() > k_max_sweep_points)
        axes->fail(kv.first.Scalar(),
                   fmt::format("the sweep has more than {} points", k_max_sweep_points));
    }
  }
  YAML::Node r = doc->root();
  r.remove("set");  // free-form maps, read above
  r.remove("axes");
  doc->check_all_read();
  check_base(spec);
  return spec;
}

std::optional<double> price_per_accelerator_hour(const SweepSpec& spec,
                                                 const YAML::Node& point_root) {
  std::string name = spec.accelerator;
  std::string dir = ".";
  const YAML::Node hw = yaml_child(yaml_child(point_root, "step_time"), "hardware");
  if (hw.IsScalar()) {
    name = hw.Scalar();
    dir = fs::path(spec.base_file).parent_path().string();
    if (dir.empty()) dir = ".";
  }
  if (name.empty()) return std::nullopt;
  return load_hardware(name, dir).require_price(spec.price_tier).usd_per_hour;
}

}  // namespace servesim

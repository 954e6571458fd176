// A name that ends in .yaml or .yml is a file's path, however short (models/shape_roofline.h,
// models/catalog.h): the shortest, ".yaml" and ".yml" themselves, are looked for as files, not
// as names of the catalogue's fits.
#include <catch2/catch.hpp>

#include "core/errors.h"
#include "models/catalog.h"
#include "models/shape_roofline.h"
#include "tests/support.h"

namespace t_models_fit_names_test {

using namespace servesim;
using namespace servesim::test;

namespace {

std::string fit_error(const std::string& name) {
  try {
    (void)make_shape_roofline_source(Cfg::root(doc_of("fit: \"" + name + "\"\n")),
                                     load_hardware("h100-sxm"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("fit names: a name ending in .yaml or .yml is a path, down to the suffix alone",
          "[models]") {
  for (const std::string name : {".yaml", ".yml", "a.yaml", "b.yml"}) {
    INFO(name);
    const std::string e = fit_error(name);
    CHECK_THAT(e, !Catch::Contains("unknown fit"));
    CHECK_THAT(e, Catch::Contains(name));
  }
  // One character short of a suffix is a name, unknown.
  for (const std::string name : {"yaml", "aml", ".yam"}) {
    INFO(name);
    CHECK_THAT(fit_error(name), Catch::Contains("unknown fit"));
  }
}

}  // namespace t_models_fit_names_test

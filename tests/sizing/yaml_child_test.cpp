// yaml_child (sizing/sweep.h), the sweep's lookup in a scenario's YAML: a map's child, or a null
// node for a missing key and for anything that is not a map (a scalar, a list, null), so that
// chains of lookups never throw.
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>

#include "sizing/sweep.h"

namespace t_sizing_yaml_child_test {

using namespace servesim;

TEST_CASE("yaml child: a map's key, else a null node, whatever the node", "[sizing]") {
  const YAML::Node map = YAML::Load("{a: 1, b: {c: x}, d: [1, 2]}");
  CHECK(yaml_child(map, "a").Scalar() == "1");
  CHECK(yaml_child(yaml_child(map, "b"), "c").Scalar() == "x");
  CHECK(yaml_child(map, "z").IsNull());
  for (const char* text : {"5", "[1, 2]", "~", "text"}) {
    INFO(text);
    const YAML::Node n = YAML::Load(text);
    CHECK(yaml_child(n, "a").IsNull());
    CHECK(yaml_child(yaml_child(n, "a"), "b").IsNull());
  }
  CHECK(yaml_child(yaml_child(map, "a"), "b").IsNull());  // a scalar's child
  CHECK(yaml_child(yaml_child(map, "d"), "e").IsNull());  // a list's child
}

}  // namespace t_sizing_yaml_child_test

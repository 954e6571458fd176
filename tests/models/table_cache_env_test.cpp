// Where the operator-table cache lives (models/table_cache.h, table_cache_dir): the
// SERVESIM_TABLE_CACHE variable names the folder, and "off" or an empty value turns the cache
// off, ahead of XDG_CACHE_HOME and HOME.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <string>

#include "models/table_cache.h"

namespace t_models_table_cache_env_test {

using namespace servesim;

TEST_CASE("table cache: SERVESIM_TABLE_CACHE off or empty turns it off, else names the folder",
          "[models]") {
  const char* was = std::getenv("SERVESIM_TABLE_CACHE");
  const std::string before = was ? was : "";
  setenv("SERVESIM_TABLE_CACHE", "off", 1);
  const auto off = table_cache_dir();
  setenv("SERVESIM_TABLE_CACHE", "", 1);
  const auto empty = table_cache_dir();
  setenv("SERVESIM_TABLE_CACHE", "/tmp/servesim-cache-x", 1);
  const auto named = table_cache_dir();
  if (was)
    setenv("SERVESIM_TABLE_CACHE", before.c_str(), 1);
  else
    unsetenv("SERVESIM_TABLE_CACHE");
  CHECK_FALSE(off.has_value());
  CHECK_FALSE(empty.has_value());
  REQUIRE(named.has_value());
  CHECK(named->string() == "/tmp/servesim-cache-x");
}

}  // namespace t_models_table_cache_env_test

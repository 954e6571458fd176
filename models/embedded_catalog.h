#pragma once
// The catalogue files embedded at build time: CMake generates their definitions from
// configs/models/*.yaml and configs/hardware/*.yaml (models/catalog_data.cpp.in). Only
// models/catalog.cpp reads them; everyone else goes through models/catalog.h.
#include <span>

namespace servesim {

struct EmbeddedFile {
  const char* name;  ///< the file name without .yaml
  const char* text;  ///< the whole file
};

/// Sorted by name.
[[nodiscard]] std::span<const EmbeddedFile> embedded_models();
[[nodiscard]] std::span<const EmbeddedFile> embedded_hardware();

}  // namespace servesim

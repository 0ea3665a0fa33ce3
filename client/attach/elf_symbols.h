// Reads an ELF shared object's dynamic symbol table from its file: where a function lies relative
// to the object's load base, so that it can be called inside another process that loaded the same
// file (the base comes from that process's /proc/N/maps).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuspy::attach {

struct ElfInfo {
  uint16_t machine = 0;     // e_machine: EM_X86_64, EM_AARCH64, ...
  bool is_64 = false;
  // The lowest PT_LOAD's virtual address, page aligned: what the file's offset 0 maps to before
  // relocation (0 for ordinary shared objects).
  uint64_t first_load_vaddr = 0;
};

absl::StatusOr<ElfInfo> ReadElfInfo(const std::string& path);

// The value of the defined function `name` in the file's .dynsym. Where several versions exist
// (glibc's dlopen@@GLIBC_2.34 and dlopen@GLIBC_2.2.5), the default one (no hidden bit in
// .gnu.version) wins. NotFound when absent; FailedPrecondition for an IFUNC (its value is a
// resolver, not the function).
absl::StatusOr<uint64_t> DynamicSymbolValue(const std::string& path, std::string_view name);

}  // namespace gpuspy::attach

#include "client/attach/elf_symbols.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <span>

#include "absl/strings/str_cat.h"

namespace gpuspy::attach {
namespace {

// A read-only mapping of the whole file; every read through it is bounds-checked, since the file
// is not ours (a truncated or hostile object must give an error, not a crash).
class MappedFile {
 public:
  static absl::StatusOr<MappedFile> Open(const std::string& path) {
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
    struct stat st{};
    if (fstat(fd, &st) != 0 || st.st_size <= 0) {
      close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, ": empty or unreadable"));
    }
    void* p = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (p == MAP_FAILED) return absl::InternalError(absl::StrCat("cannot map ", path, ": ", std::strerror(errno)));
    return MappedFile(static_cast<const uint8_t*>(p), static_cast<size_t>(st.st_size));
  }
  MappedFile(MappedFile&& o) noexcept : data_(o.data_), size_(o.size_) { o.data_ = nullptr; }
  MappedFile(const MappedFile&) = delete;
  ~MappedFile() {
    if (data_ != nullptr) munmap(const_cast<uint8_t*>(data_), size_);
  }

  template <typename T>
  std::optional<T> At(uint64_t offset) const {
    if (offset > size_ || size_ - offset < sizeof(T)) return std::nullopt;
    T v;
    std::memcpy(&v, data_ + offset, sizeof(T));
    return v;
  }
  // The NUL-terminated string at `offset` within [begin, begin + size).
  std::optional<std::string_view> String(uint64_t begin, uint64_t size, uint64_t offset) const {
    if (begin > size_ || size > size_ - begin || offset >= size) return std::nullopt;
    const char* s = reinterpret_cast<const char*>(data_ + begin + offset);
    const void* nul = std::memchr(s, '\0', size - offset);
    if (nul == nullptr) return std::nullopt;
    return std::string_view(s, static_cast<const char*>(nul) - s);
  }

 private:
  MappedFile(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  const uint8_t* data_;
  size_t size_;
};

absl::StatusOr<Elf64_Ehdr> Header(const MappedFile& f, const std::string& path) {
  auto eh = f.At<Elf64_Ehdr>(0);
  if (!eh.has_value() || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ELF file"));
  }
  if (eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, " is not a 64-bit little-endian object (only x86-64 is supported)"));
  }
  return *eh;
}

std::optional<Elf64_Shdr> Section(const MappedFile& f, const Elf64_Ehdr& eh, uint32_t index) {
  if (index >= eh.e_shnum || eh.e_shentsize != sizeof(Elf64_Shdr)) return std::nullopt;
  return f.At<Elf64_Shdr>(eh.e_shoff + uint64_t{index} * sizeof(Elf64_Shdr));
}

}  // namespace

absl::StatusOr<ElfInfo> ReadElfInfo(const std::string& path) {
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  if (!f.ok()) return f.status();
  auto eh = f->At<Elf64_Ehdr>(0);
  if (!eh.has_value() || std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is not an ELF file"));
  }
  ElfInfo info;
  info.machine = eh->e_machine;
  info.is_64 = eh->e_ident[EI_CLASS] == ELFCLASS64;
  if (!info.is_64) return info;
  bool any = false;
  for (uint32_t i = 0; i < eh->e_phnum && eh->e_phentsize == sizeof(Elf64_Phdr); ++i) {
    auto ph = f->At<Elf64_Phdr>(eh->e_phoff + uint64_t{i} * sizeof(Elf64_Phdr));
    if (!ph.has_value()) break;
    if (ph->p_type != PT_LOAD) continue;
    const uint64_t page = ph->p_vaddr & ~uint64_t{0xfff};
    if (!any || page < info.first_load_vaddr) info.first_load_vaddr = page;
    any = true;
  }
  return info;
}

absl::StatusOr<uint64_t> DynamicSymbolValue(const std::string& path, std::string_view name) {
  absl::StatusOr<MappedFile> f = MappedFile::Open(path);
  if (!f.ok()) return f.status();
  absl::StatusOr<Elf64_Ehdr> eh = Header(*f, path);
  if (!eh.ok()) return eh.status();
  std::optional<Elf64_Shdr> dynsym, versym;
  for (uint32_t i = 0; i < eh->e_shnum; ++i) {
    std::optional<Elf64_Shdr> s = Section(*f, *eh, i);
    if (!s.has_value()) break;
    if (s->sh_type == SHT_DYNSYM) dynsym = s;
    if (s->sh_type == SHT_GNU_versym) versym = s;
  }
  if (!dynsym.has_value() || dynsym->sh_entsize != sizeof(Elf64_Sym)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " has no dynamic symbol table"));
  }
  std::optional<Elf64_Shdr> strtab = Section(*f, *eh, dynsym->sh_link);
  if (!strtab.has_value()) return absl::InvalidArgumentError(absl::StrCat(path, ": bad .dynstr"));
  const uint64_t count = dynsym->sh_size / sizeof(Elf64_Sym);
  std::optional<Elf64_Sym> best;
  bool best_is_default = false;
  for (uint64_t i = 0; i < count; ++i) {
    auto sym = f->At<Elf64_Sym>(dynsym->sh_offset + i * sizeof(Elf64_Sym));
    if (!sym.has_value()) break;
    if (sym->st_shndx == SHN_UNDEF || sym->st_value == 0) continue;
    const int type = ELF64_ST_TYPE(sym->st_info);
    if (type != STT_FUNC && type != STT_GNU_IFUNC) continue;
    std::optional<std::string_view> n = f->String(strtab->sh_offset, strtab->sh_size, sym->st_name);
    if (!n.has_value() || *n != name) continue;
    bool is_default = true;
    if (versym.has_value()) {
      auto v = f->At<uint16_t>(versym->sh_offset + i * sizeof(uint16_t));
      is_default = v.has_value() && (*v & 0x8000) == 0;  // VERSYM_HIDDEN: a non-default version
    }
    if (!best.has_value() || (is_default && !best_is_default)) {
      best = sym;
      best_is_default = is_default;
    }
  }
  if (!best.has_value()) return absl::NotFoundError(absl::StrCat(path, " does not define ", std::string(name)));
  if (ELF64_ST_TYPE(best->st_info) == STT_GNU_IFUNC) {
    return absl::FailedPreconditionError(absl::StrCat(std::string(name), " in ", path, " is an IFUNC"));
  }
  return best->st_value;
}

}  // namespace gpuspy::attach

// cpu/chunk_arena.hpp: byte arenas for coded chunks that keep their pages
// from call to call.
//
// Why: a frame's coded chunks wait in memory until the frame is assembled.
// Allocated afresh for every chunk (as they were), that memory is faulted in
// and cleared by the kernel on every call, and a vector's resize zeroes it
// once more before the coder writes it: ~10 % of a one-thread compress went
// to the kernel's page clearing (perf; docs/ARCHITECTURE.md, session 29).
// An arena is lent by a process-wide pool and given back when the frame is
// written, its pages still mapped, and growing it zeroes nothing. The pool
// keeps at most kArenaPoolBytes of capacity in all; an arena beyond that is
// freed when given back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace vlec::cpu {

// An allocator whose value-initialisation is default-initialisation: a
// vector's resize leaves the bytes it adds as they were (the coder writes them).
template <class T>
struct NoInitAllocator : std::allocator<T> {
  template <class U>
  struct rebind {
    using other = NoInitAllocator<U>;
  };
  NoInitAllocator() = default;
  template <class U>
  NoInitAllocator(const NoInitAllocator<U>&) noexcept {}
  template <class U>
  void construct(U* p) noexcept(std::is_nothrow_default_constructible<U>::value) {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... A>
  void construct(U* p, A&&... a) {
    ::new (static_cast<void*>(p)) U(std::forward<A>(a)...);
  }
};

using ArenaBytes = std::vector<uint8_t, NoInitAllocator<uint8_t>>;

constexpr std::size_t kArenaPoolBytes = std::size_t{256} << 20;

// An arena on loan from the pool for this object's lifetime; empty on arrival.
class ChunkArena {
 public:
  ChunkArena();
  ~ChunkArena();
  ChunkArena(const ChunkArena&) = delete;
  ChunkArena& operator=(const ChunkArena&) = delete;
  ArenaBytes& bytes() { return *bytes_; }
  const ArenaBytes& bytes() const { return *bytes_; }

 private:
  std::unique_ptr<ArenaBytes> bytes_;
};

}  // namespace vlec::cpu

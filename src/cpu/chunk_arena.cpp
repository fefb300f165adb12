// cpu/chunk_arena.cpp: the pool behind ChunkArena (see chunk_arena.hpp): a
// mutex-guarded stack of arenas, taken once a range of chunks and given back
// once a frame, so the lock is never contended per chunk.
#include "cpu/chunk_arena.hpp"

#include <mutex>

namespace vlec::cpu {

namespace {

struct ArenaPool {
  std::mutex mutex;
  std::vector<std::unique_ptr<ArenaBytes>> free;
  std::size_t kept = 0;  // capacity of the arenas in `free`
};

// Never destroyed: an arena given back during the program's exit still finds
// it (its arenas stay reachable, so leak checkers do not report them).
ArenaPool& pool() {
  static ArenaPool* p = new ArenaPool;
  return *p;
}

}  // namespace

ChunkArena::ChunkArena() {
  ArenaPool& p = pool();
  {
    std::lock_guard<std::mutex> lock(p.mutex);
    if (!p.free.empty()) {
      bytes_ = std::move(p.free.back());
      p.free.pop_back();
      p.kept -= bytes_->capacity();
    }
  }
  if (!bytes_) bytes_ = std::make_unique<ArenaBytes>();
  bytes_->clear();
}

ChunkArena::~ChunkArena() {
  if (!bytes_) return;
  bytes_->clear();
  ArenaPool& p = pool();
  std::lock_guard<std::mutex> lock(p.mutex);
  if (p.kept + bytes_->capacity() <= kArenaPoolBytes) {
    p.kept += bytes_->capacity();
    p.free.push_back(std::move(bytes_));
  }  // else freed here, with bytes_
}

}  // namespace vlec::cpu

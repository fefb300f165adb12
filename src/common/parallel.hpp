// common/parallel.hpp: run independent jobs (chunks) on several threads.
// Work is handed out by an atomic counter, so threads that draw cheap chunks
// simply take more of them; results never depend on the thread count because
// each job writes only its own outputs. The threads come from a process-wide
// pool of sleeping workers (one call at a time; a call that finds the pool
// busy, from another host thread or from inside a job, starts its own).
#pragma once

#include <cstddef>
#include <functional>

namespace vlec {

// Number of threads to use for `requested` (0 = all hardware threads) and `jobs`.
unsigned resolve_threads(unsigned requested, std::size_t jobs);

// Call job(i) for i in [0, jobs) on up to `threads` threads (the caller's thread
// included). After all stop, the exception of the lowest-numbered job that
// threw is rethrown: the one a single thread would have thrown.
void parallel_for(std::size_t jobs, unsigned threads,
                  const std::function<void(std::size_t)>& job);

}  // namespace vlec

// cuda/host_staging.hpp: what the host API's GPU paths need to move host
// data through the GPU: pinned and device buffers kept in a process-wide pool
// between calls, a stream, a host copy on all threads into or out of pinned
// memory, device-to-host reads gathered into one wait, and host-to-device
// writes that never wait.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "common/parallel.hpp"
#include "cuda/cuda_check.hpp"

namespace vlec::cuda {

// Pinned and device buffers kept for the next call: pinning memory costs
// about as much as copying it (~0.1 s a GiB), and host API calls tend to come
// one after another with the same sizes. At most kPoolIdleBytes of each kind
// wait idle; a failed allocation first gives the idle ones back. Device
// buffers are handed out only on the device they were allocated on (the
// caller's current device); pinned ones are portable.
class Pool {
 public:
  explicit Pool(bool pinned) : pinned_(pinned) {}
  void* take(std::size_t bytes) {
    const int device = current_device();
    {
      std::lock_guard<std::mutex> lock(m_);
      std::size_t best = idle_.size();
      for (std::size_t i = 0; i < idle_.size(); ++i)  // the smallest that fits, if not twice too large
        if (idle_[i].device == device && idle_[i].bytes >= bytes && idle_[i].bytes <= 2 * bytes + (1 << 20) &&
            (best == idle_.size() || idle_[i].bytes < idle_[best].bytes))
          best = i;
      if (best != idle_.size()) {
        void* p = idle_[best].ptr;
        idle_bytes_ -= idle_[best].bytes;
        idle_.erase(idle_.begin() + static_cast<std::ptrdiff_t>(best));
        return p;
      }
    }
    void* p = nullptr;
    if (allocate(&p, bytes) != cudaSuccess) {
      cudaGetLastError();
      release_idle();
      CUDA_CHECK(allocate(&p, bytes));
    }
    std::lock_guard<std::mutex> lock(m_);
    device_of_[p] = device;
    return p;
  }
  void give(void* p, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(m_);
    idle_.push_back({p, bytes, device_of_[p]});
    idle_bytes_ += bytes;
    while (idle_bytes_ > kPoolIdleBytes) {  // the oldest go first
      free_one(idle_.front().ptr);
      idle_bytes_ -= idle_.front().bytes;
      idle_.erase(idle_.begin());
    }
  }

 private:
  static constexpr std::size_t kPoolIdleBytes = std::size_t{1} << 30;
  struct Idle {
    void* ptr;
    std::size_t bytes;
    int device;
  };
  int current_device() const {
    int d = 0;
    if (!pinned_) CUDA_CHECK(cudaGetDevice(&d));
    return d;
  }
  cudaError_t allocate(void** p, std::size_t bytes) {
    return pinned_ ? cudaHostAlloc(p, bytes, cudaHostAllocPortable) : cudaMalloc(p, bytes);
  }
  void free_one(void* p) {
    pinned_ ? cudaFreeHost(p) : cudaFree(p);
    device_of_.erase(p);
  }
  void release_idle() {
    std::lock_guard<std::mutex> lock(m_);
    for (const Idle& i : idle_) free_one(i.ptr);
    idle_.clear();
    idle_bytes_ = 0;
  }
  const bool pinned_;
  std::mutex m_;
  std::vector<Idle> idle_;
  std::map<void*, int> device_of_;  // every buffer this pool allocated and has not freed
  std::size_t idle_bytes_ = 0;
};

// Never destroyed: buffers may be given back while the process exits.
inline Pool& pool(bool pinned) {
  static Pool* const pinned_pool = new Pool(true);
  static Pool* const device_pool = new Pool(false);
  return pinned ? *pinned_pool : *device_pool;
}

template <typename T, bool Pinned>
class PooledBuffer {
 public:
  explicit PooledBuffer(std::size_t count = 0) { resize(count); }
  ~PooledBuffer() { release(); }
  PooledBuffer(const PooledBuffer&) = delete;
  PooledBuffer& operator=(const PooledBuffer&) = delete;
  void resize(std::size_t count) {
    release();
    bytes_ = std::max<std::size_t>(count, 1) * sizeof(T);
    ptr_ = static_cast<T*>(pool(Pinned).take(bytes_));
  }
  T* get() const { return ptr_; }

 private:
  void release() {
    if (ptr_) pool(Pinned).give(ptr_, bytes_);
    ptr_ = nullptr;
  }
  T* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

template <typename T>
using PinnedBuffer = PooledBuffer<T, true>;
template <typename T>
using SlotBuffer = PooledBuffer<T, false>;

class Stream {
 public:
  Stream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

// A host copy on all threads, in 1 MiB parts (a memcpy on one core moves
// ~10 GB/s; PCIe moves ~25-50).
inline void parallel_copy(uint8_t* dst, const uint8_t* src, std::size_t bytes, unsigned threads) {
  constexpr std::size_t kPart = std::size_t{1} << 20;
  const std::size_t parts = (bytes + kPart - 1) / kPart;
  if (parts <= 1) {
    if (bytes) std::memcpy(dst, src, bytes);
    return;
  }
  parallel_for(parts, threads, [&](std::size_t i) {
    const std::size_t at = i * kPart;
    std::memcpy(dst + at, src + at, std::min(kPart, bytes - at));
  });
}

// Whether device-to-host reads of several pieces go as one
// cudaMemcpyBatchAsync (true, the default) or one cudaMemcpyAsync a piece
// (the wavelet benchmark compares). Each cudaMemcpyAsync cost the host
// ~1.6 us on the H100 machine (16 48-byte reads and one wait: 32 us against
// 7 us as one batch, -session16-decode-plan-probe.log). Not thread-safe.
inline bool batched_device_reads = true;

// Copies piece i of `bytes[i]` bytes from srcs[i] (device) to dsts[i] (host) on `stream`,
// in stream order (after the work enqueued before them), as one
// cudaMemcpyBatchAsync where `batched`; one cudaMemcpyAsync a piece on the
// legacy default stream (which the batch does not take), where the runtime
// refuses the batch, or where not `batched`. Pieces of 0 bytes are skipped.
inline void copy_pieces(const std::vector<void*>& dsts, const std::vector<const void*>& srcs,
                        const std::vector<std::size_t>& bytes, cudaStream_t stream, bool batched) {
  std::vector<void*> d;
  std::vector<const void*> s;
  std::vector<std::size_t> n;
  for (std::size_t i = 0; i < bytes.size(); ++i)
    if (bytes[i]) d.push_back(dsts[i]), s.push_back(srcs[i]), n.push_back(bytes[i]);
  if (n.empty()) return;
  const bool legacy = stream == nullptr || stream == cudaStreamLegacy;
  if (batched && !legacy && n.size() > 1) {
    cudaMemcpyAttributes attr{};
    attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
    std::size_t attr_index = 0;
    if (cudaMemcpyBatchAsync(d.data(), s.data(), n.data(), n.size(), &attr, &attr_index, 1, stream) == cudaSuccess)
      return;
    (void)cudaGetLastError();  // refused: the error is not sticky
  }
  for (std::size_t i = 0; i < n.size(); ++i) CUDA_CHECK(cudaMemcpyAsync(d[i], s[i], n[i], cudaMemcpyDeviceToHost, stream));
}

// Device-to-host reads gathered into one pinned buffer and waited for once
// (copy_pieces): a pageable target would make each copy wait for itself.
class HostReads {
 public:
  template <typename T>
  void add(std::vector<T>& dst, const void* src, std::size_t count) {
    reads_.push_back({src, count * sizeof(T), [&dst, count](const uint8_t* p) {
                        dst.resize(count);
                        if (count) std::memcpy(dst.data(), p, count * sizeof(T));
                      }});
  }
  // Enqueue every read on `stream`, wait, and fill the vectors.
  void wait(cudaStream_t stream) {
    std::size_t total = 0;
    for (const Read& r : reads_) total += (r.bytes + 15) / 16 * 16;
    PinnedBuffer<uint8_t> staged(std::max<std::size_t>(total, 16));
    std::vector<void*> dsts;
    std::vector<const void*> srcs;
    std::vector<std::size_t> sizes;
    std::size_t at = 0;
    for (const Read& r : reads_) {
      dsts.push_back(staged.get() + at), srcs.push_back(r.src), sizes.push_back(r.bytes);
      at += (r.bytes + 15) / 16 * 16;
    }
    copy_pieces(dsts, srcs, sizes, stream, batched_device_reads);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    at = 0;
    for (const Read& r : reads_) {
      r.deliver(staged.get() + at);
      at += (r.bytes + 15) / 16 * 16;
    }
    reads_.clear();
  }

 private:
  struct Read {
    const void* src;
    std::size_t bytes;
    std::function<void(const uint8_t*)> deliver;
  };
  std::vector<Read> reads_;
};

// One device-to-host read, waited for.
template <typename T>
inline void read_now(std::vector<T>& dst, const void* src, std::size_t count, cudaStream_t stream) {
  HostReads r;
  r.add(dst, src, count);
  r.wait(stream);
}

// Host-to-device copies of small host arrays through pinned memory, so that
// enqueuing them never waits for the stream (from pageable memory a copy may).
// The staging buffers live as long as this object: keep it until the stream
// has been waited for.
class HostWrites {
 public:
  template <typename T>
  void add(void* dst, const std::vector<T>& src, cudaStream_t stream) {
    add_bytes(dst, src.data(), src.size() * sizeof(T), stream);
  }
  void add_bytes(void* dst, const void* src, std::size_t bytes, cudaStream_t stream) {
    if (bytes == 0) return;
    staged_.push_back(std::make_unique<PinnedBuffer<uint8_t>>(bytes));
    std::memcpy(staged_.back()->get(), src, bytes);
    CUDA_CHECK(cudaMemcpyAsync(dst, staged_.back()->get(), bytes, cudaMemcpyHostToDevice, stream));
  }

 private:
  std::vector<std::unique_ptr<PinnedBuffer<uint8_t>>> staged_;
};

// Many small uploads as one copy: each piece gets its place in one device
// region (16-byte aligned) and its bytes in one pinned buffer, and flush()
// enqueues one cudaMemcpyAsync. The wavelet decoder uploads two pieces per
// group (chunk descriptors, table build job); one cudaMemcpyAsync each cost
// the host ~3-5 us. Keep the object until the stream has been waited for.
class UploadArena {
 public:
  UploadArena(void* device, std::size_t capacity)
      : device_(static_cast<uint8_t*>(device)), capacity_(capacity), host_(std::max<std::size_t>(capacity, 16)) {}
  // The device address `bytes` bytes of `src` will have after flush().
  void* add(const void* src, std::size_t bytes) {
    const auto [host, device] = reserve(bytes);
    if (bytes) std::memcpy(host, src, bytes);
    return device;
  }
  // `bytes` bytes for the caller to fill in place: their host address
  // (pinned) and the device address they will have after flush().
  std::pair<uint8_t*, void*> reserve(std::size_t bytes) {
    const std::size_t at = used_;
    VLEC_REQUIRE(at + bytes <= capacity_, "upload arena of ", capacity_, " bytes is full");
    used_ = std::min(capacity_, (at + bytes + 15) / 16 * 16);
    return {host_.get() + at, device_ + at};
  }
  void flush(cudaStream_t stream) {
    if (used_) CUDA_CHECK(cudaMemcpyAsync(device_, host_.get(), used_, cudaMemcpyHostToDevice, stream));
  }
  // Bytes a region must hold for pieces of these sizes.
  static std::size_t bytes_for(std::size_t piece_bytes, std::size_t pieces) { return piece_bytes + 16 * pieces; }

 private:
  uint8_t* device_;
  std::size_t capacity_, used_ = 0;
  PinnedBuffer<uint8_t> host_;
};

}  // namespace vlec::cuda

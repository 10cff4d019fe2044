#pragma once
/// \file
/// Copies an energy's data to the GPU once: `ember::to_device(U)` walks `U` with
/// `for_each_view`, copies every host table it finds to device memory (a table shared by several
/// views is copied once) and returns a `device_copy<E>` that owns those copies (RAII: freed in
/// its destructor) and holds a copy of `U` whose views point to them. Sample with
/// `.energy()`; the device_copy must outlive every run that uses it:
///
///     auto X = ember::dataset<float>::from_csv("x.csv");             // host, owns the table
///     auto U = ember::logistic_regression<25>(X.view(), y.view(), ember::normal_prior{1.0});
///     auto dU = ember::to_device(U);                                // device, owns the copies
///     auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.01}), opt, ember::backend::cuda{});
///
/// `require_device_views` (data/check_views.hpp) refuses, before launch, an energy whose views
/// still point to host memory. For `.cu` translation units (it calls the CUDA runtime).

#include <ember/data/check_views.hpp>
#include <ember/data/data_view.hpp>
#include <ember/data/for_each_view.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember {

/// An energy whose data views point to device memory that this object owns. Move-only.
/// `energy()` is valid while the device_copy lives.
template <class E>
class device_copy {
 public:
  explicit device_copy(E const& host) : e_(host) {
    std::vector<std::pair<void const*, void*>> copied;  // host table -> its device copy
    try {
      for_each_view(e_, [&](auto& v) {
        using T = std::remove_const_t<std::remove_pointer_t<decltype(v.data)>>;
        if (v.rows == 0) return;
        if (v.space == memory_space::device) return;  // already on the device: left as it is
        if (v.data == nullptr) throw std::invalid_argument("ember::to_device: a data view with rows is null");
        void* dev = nullptr;
        for (auto const& [h, d] : copied)
          if (h == v.data) dev = d;
        if (!dev) {
          std::size_t bytes = std::size_t(v.size()) * sizeof(T);
          check(cudaMalloc(&dev, bytes), "cudaMalloc");
          buffers_.push_back(dev);
          check(cudaMemcpy(dev, v.data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
          copied.emplace_back(v.data, dev);
          bytes_ += bytes;
        }
        v.data = static_cast<T const*>(dev);
        v.space = memory_space::device;
      });
    } catch (...) {
      release();
      throw;
    }
  }
  device_copy(device_copy&& o) noexcept : e_(o.e_), buffers_(std::move(o.buffers_)), bytes_(o.bytes_) {
    o.buffers_.clear();
  }
  device_copy& operator=(device_copy&& o) noexcept {
    if (this != &o) {
      release();
      e_ = o.e_;
      buffers_ = std::move(o.buffers_);
      bytes_ = o.bytes_;
      o.buffers_.clear();
    }
    return *this;
  }
  device_copy(device_copy const&) = delete;
  device_copy& operator=(device_copy const&) = delete;
  ~device_copy() { release(); }

  /// The energy with every view in device memory: pass it to a kernel for backend::cuda.
  E const& energy() const { return e_; }
  /// Bytes of device memory held.
  std::size_t bytes() const { return bytes_; }

 private:
  E e_;
  std::vector<void*> buffers_;
  std::size_t bytes_ = 0;

  void release() {
    for (void* p : buffers_) (void)cudaFree(p);
    buffers_.clear();
  }
  static void check(cudaError_t e, char const* call) {
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      throw std::runtime_error(std::string("ember::to_device: ") + call + " failed: " + cudaGetErrorString(e) + " (" +
                               cudaGetErrorName(e) + ")");
    }
  }
};

/// Copies the data of `U` (an energy, or anything `for_each_view` walks) to the current device
/// and returns the owner of the copies; see the file comment.
template <class E>
device_copy<E> to_device(E const& U) {
  return device_copy<E>(U);
}

}  // namespace ember

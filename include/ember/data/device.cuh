#pragma once
/// \file
/// Copies an energy's data to the GPU once: `ember::to_device(U)` walks `U` with
/// `for_each_view`, copies every host table it finds to device memory (a table shared by several
/// views is copied once) and returns a `device_copy<E>` that owns those copies (RAII: freed in
/// its destructor) and holds a copy of `U` whose views point to them, as the device receives it
/// (`device_value`: a gaussian with a heap-stored precision matrix leaves its host owner behind).
/// Sample with `.energy()`; the device_copy must outlive every run that uses it:
///
///     auto X = ember::dataset<float>::from_csv("x.csv");             // host, owns the table
///     auto U = ember::logistic_regression<25>(X.view(), y.view(), ember::normal_prior{1.0});
///     auto dU = ember::to_device(U);                                // device, owns the copies
///     auto r = ember::sample(ember::mala(dU.energy(), {.step_size = 0.01}), opt, ember::backend::cuda{});
///
/// `require_device_views` (energy/check_views.hpp) refuses, before launch, an energy whose views
/// still point to host memory. For `.cu` translation units (it calls the CUDA runtime).

#include <ember/energy/check_views.hpp>
#include <ember/data/data_view.hpp>
#include <ember/energy/for_each_view.hpp>

#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ember {

namespace detail {
// What the device receives of x once its views point to device memory: x's `device_value()`
// where it has one (an energy that owns host memory besides its views, such as a gaussian whose
// precision lives on the heap, drops the owner), through sums and scalings; x itself otherwise.
template <class X>
auto device_value(X const& x) {
  if constexpr (requires { x.device_value(); })
    return x.device_value();
  else if constexpr (is_sum_energy<X>::value)
    return sum_energy<decltype(device_value(x.a)), decltype(device_value(x.b))>{device_value(x.a), device_value(x.b)};
  else if constexpr (is_scaled_energy<X>::value)
    return scaled_energy<decltype(device_value(x.a))>{x.c, device_value(x.a)};
  else
    return x;
}
}  // namespace detail

/// An energy whose data views point to device memory that this object owns. Move-only.
/// `energy()` is valid while the device_copy lives.
template <class E>
class device_copy {
 public:
  /// The type of `energy()`: E, or what `device_value()` makes of it (see detail::device_value).
  using device_type = decltype(detail::device_value(std::declval<E const&>()));

  explicit device_copy(E const& host) : e_(detail::device_value(repointed(host))) {}

 private:
  // A copy of `host` whose views point to device copies of their tables (made here, owned by
  // buffers_; freed again if a copy fails).
  E repointed(E const& host) {
    E e = host;
    std::vector<std::pair<void const*, void*>> copied;  // host table -> its device copy
    try {
      for_each_view(e, [&](auto& v) {
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
    return e;
  }

 public:
  device_copy(device_copy&& o) noexcept : buffers_(std::move(o.buffers_)), bytes_(o.bytes_), e_(o.e_) {
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

  /// The energy with every view in device memory, trivially copyable: pass it to a kernel for
  /// backend::cuda.
  device_type const& energy() const { return e_; }
  /// Bytes of device memory held.
  std::size_t bytes() const { return bytes_; }

 private:
  std::vector<void*> buffers_;  // before e_: repointed() fills it while e_ is constructed
  std::size_t bytes_ = 0;
  device_type e_;

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

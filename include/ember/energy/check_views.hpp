#pragma once
/// \file
/// Checks, on the host and before any work, that every data view of an energy, kernel or
/// pipeline points into the memory space the backend runs in. A CUDA kernel that dereferenced
/// a host pointer would fault mid-run (or read garbage); these refuse it with a sentence first.

#include <ember/data/data_view.hpp>
#include <ember/energy/for_each_view.hpp>

#include <stdexcept>
#include <string>

namespace ember {

/// Throws `std::invalid_argument` naming `who` if any data view reachable from `x` points to
/// host memory (or is null with rows > 0). For backend::cuda, before launching:
/// `ember::require_device_views(pipe, "ember::backend::cuda")`.
template <class X>
void require_device_views(X const& x, char const* who = "ember::backend::cuda") {
  auto copy = x;
  int i = 0;
  for_each_view(copy, [&](auto& v) {
    if (v.rows > 0 && (v.space != memory_space::device || v.data == nullptr))
      throw std::invalid_argument(std::string(who) + ": data view " + std::to_string(i) +
                                  " of the energy points to host memory; copy the energy's data to the "
                                  "device first with ember::to_device(energy) (ember/data/device.cuh) and "
                                  "sample with its .energy()");
    ++i;
  });
}

/// Throws `std::invalid_argument` naming `who` if any data view reachable from `x` points to
/// device memory (or is null with rows > 0). For backend::cpu.
template <class X>
void require_host_views(X const& x, char const* who = "ember::backend::cpu") {
  auto copy = x;
  int i = 0;
  for_each_view(copy, [&](auto& v) {
    if (v.rows > 0 && (v.space != memory_space::host || v.data == nullptr))
      throw std::invalid_argument(std::string(who) + ": data view " + std::to_string(i) +
                                  " of the energy points to device memory (or is null); the CPU backend "
                                  "needs the host energy the device copy was made from");
    ++i;
  });
}

}  // namespace ember

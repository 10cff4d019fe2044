// The two ways a user hands a kernel to ember: `kernel | stage` (the default) and, compiled with
// -DEMBER_FAIL_VIA_SAMPLE, `sample(kernel, options)`. tests/CMakeLists.txt compiles each misuse
// in this folder both ways and expects the same sentence.
#pragma once
#include <ember/ember.hpp>

template <class K>
void use_kernel(K const& k) {
#ifdef EMBER_FAIL_VIA_SAMPLE
  (void)ember::sample(k, {.chains = 4, .steps = 1});
#else
  (void)(k | ember::record());
#endif
}

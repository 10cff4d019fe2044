#pragma once
// A fast Fourier transform over L independent lanes, for the autocovariances of the diagnostics:
// lane l of element i lives at re[i·L + l], im[i·L + l], so L chains are transformed at once
// with the same butterflies, and the lane loop is what the compiler vectorises.

#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <vector>

namespace ember::detail {

// Forward transform X(f) = Σ_t x(t) e^{−2πi f t / n}, n a power of two, by decimation in
// frequency: radix-4 stages (one radix-2 stage first when log₂ n is odd). A DIF stage of radix r
// and span s = size/r turns a_m = x[g + j + m·s] into y_k = (Σ_m a_m e^{−2πi mk/r})·w^{jk}, w =
// e^{−2πi/size}, at x[g + j + k·s]; so the output is in digit-reversed order and X(f) is found at
// index pos[f]. The diagnostics only need |X(f)|², so the reordering pass is skipped.
template <class T, int L>
struct fft_plan {
  int n = 0;
  std::vector<T> wr, wi;  // e^{−2πi k/n} for k < n
  std::vector<int> pos;   // X(f) is at index pos[f]

  explicit fft_plan(int size) : n(size), wr(std::size_t(size)), wi(std::size_t(size)), pos(std::size_t(size)) {
    for (int k = 0; k < n; ++k) {
      double a = 2 * std::numbers::pi * double(k) / double(n);
      wr[std::size_t(k)] = T(std::cos(a));
      wi[std::size_t(k)] = T(-std::sin(a));
    }
    // Position p = k₁·(n/r₁) + k₂·(n/r₁r₂) + … holds f = k₁ + r₁·k₂ + r₁r₂·k₃ + …
    for (int p = 0; p < n; ++p) {
      int f = 0, scale = 1, rest = p, size = n;
      for (int r : radices()) {
        size /= r;
        f += (rest / size) * scale;
        rest %= size;
        scale *= r;
      }
      pos[std::size_t(f)] = p;
    }
  }

  std::vector<int> radices() const {
    std::vector<int> r;
    int m = n;
    if (m > 1 && (std::countr_zero(unsigned(m)) % 2 == 1)) r.push_back(2), m /= 2;
    while (m > 1) r.push_back(4), m /= 4;
    return r;
  }

  // `nonzero`: elements at and past this index are zero. When that is the whole upper half (the
  // zero padding of an autocovariance), the first stage skips the additions with zeros.
  // `power`, if given: |X|² is added to power[i·L + l] and re, im are left unspecified. The last
  // stage (radix 4, no twiddles) then adds |y|² instead of storing y, which spares a pass over
  // the output (transform plus spectrum measured 23% faster at n = 512, 18% at 256, 16 lanes).
  void forward(T* re, T* im, int nonzero = -1, T* power = nullptr) const {
    int size = n;
    bool const upper_zero = nonzero >= 0 && nonzero <= n / 2 && n >= 4;
    if (n > 1 && (std::countr_zero(unsigned(n)) % 2 == 1) && upper_zero) {
      // Radix 2, b = 0: (a, 0) → (a, a·w^j), and nothing to do where a is zero too.
      int const s = n / 2;
      for (int j = 0; j < nonzero; ++j) {
        T const c = wr[std::size_t(j)], si = wi[std::size_t(j)];
        T *ar = re + std::size_t(j) * L, *ai = im + std::size_t(j) * L;
        T *br = re + std::size_t(j + s) * L, *bi = im + std::size_t(j + s) * L;
#pragma omp simd
        for (int l = 0; l < L; ++l) {
          br[l] = ar[l] * c - ai[l] * si;
          bi[l] = ar[l] * si + ai[l] * c;
        }
      }
      size = s;
    } else if (upper_zero) {
      // Radix 4 with a₂ = a₃ = 0: y₀ = a₀ + a₁, y₁ = (a₀ − i·a₁)w^j, y₂ = (a₀ − a₁)w^{2j},
      // y₃ = (a₀ + i·a₁)w^{3j}.
      int const s = n / 4;
      for (int j = 0; j < s; ++j) {
        std::size_t const t1 = std::size_t(j), t2 = 2 * t1, t3 = 3 * t1;
        T const c1 = wr[t1], s1 = wi[t1], c2 = wr[t2], s2 = wi[t2], c3 = wr[t3], s3 = wi[t3];
        T* p0r = re + std::size_t(j) * L;
        T* p0i = im + std::size_t(j) * L;
        T* p1r = p0r + std::size_t(s) * L;
        T* p1i = p0i + std::size_t(s) * L;
        T* p2r = p1r + std::size_t(s) * L;
        T* p2i = p1i + std::size_t(s) * L;
        T* p3r = p2r + std::size_t(s) * L;
        T* p3i = p2i + std::size_t(s) * L;
#pragma omp simd
        for (int l = 0; l < L; ++l) {
          T const ar = p0r[l], ai = p0i[l], dr = p1r[l], di = p1i[l];
          p0r[l] = ar + dr;
          p0i[l] = ai + di;
          T const y1r = ar + di, y1i = ai - dr, y2r = ar - dr, y2i = ai - di, y3r = ar - di, y3i = ai + dr;
          p1r[l] = y1r * c1 - y1i * s1;
          p1i[l] = y1r * s1 + y1i * c1;
          p2r[l] = y2r * c2 - y2i * s2;
          p2i[l] = y2r * s2 + y2i * c2;
          p3r[l] = y3r * c3 - y3i * s3;
          p3i[l] = y3r * s3 + y3i * c3;
        }
      }
      size = s;
    } else if (n > 1 && (std::countr_zero(unsigned(n)) % 2 == 1)) {
      int const s = n / 2;
      for (int j = 0; j < s; ++j) {
        T const c = wr[std::size_t(j)], si = wi[std::size_t(j)];
        T *ar = re + std::size_t(j) * L, *ai = im + std::size_t(j) * L;
        T *br = re + std::size_t(j + s) * L, *bi = im + std::size_t(j + s) * L;
#pragma omp simd
        for (int l = 0; l < L; ++l) {
          T const xr = ar[l] - br[l], xi = ai[l] - bi[l];
          ar[l] += br[l];
          ai[l] += bi[l];
          br[l] = xr * c - xi * si;
          bi[l] = xr * si + xi * c;
        }
      }
      size = s;
    }
    for (; size >= 4; size /= 4) {
      int const s = size / 4, stride = n / size;
      if (size == 4 && power) {
        for (int g = 0; g < n; g += 4) {
          T *p0r = re + std::size_t(g) * L, *p0i = im + std::size_t(g) * L, *q = power + std::size_t(g) * L;
#pragma omp simd
          for (int l = 0; l < L; ++l) {
            T const a0r = p0r[l], a0i = p0i[l], a1r = p0r[L + l], a1i = p0i[L + l];
            T const a2r = p0r[2 * L + l], a2i = p0i[2 * L + l], a3r = p0r[3 * L + l], a3i = p0i[3 * L + l];
            T const ar = a0r + a2r, ai = a0i + a2i, br = a0r - a2r, bi = a0i - a2i;
            T const cr = a1r + a3r, ci = a1i + a3i, dr = a1r - a3r, di = a1i - a3i;
            T const y0r = ar + cr, y0i = ai + ci, y1r = br + di, y1i = bi - dr;
            T const y2r = ar - cr, y2i = ai - ci, y3r = br - di, y3i = bi + dr;
            q[l] += y0r * y0r + y0i * y0i;
            q[L + l] += y1r * y1r + y1i * y1i;
            q[2 * L + l] += y2r * y2r + y2i * y2i;
            q[3 * L + l] += y3r * y3r + y3i * y3i;
          }
        }
        return;
      }
      for (int g = 0; g < n; g += size) {
        for (int j = 0; j < s; ++j) {
          std::size_t const t1 = std::size_t(j * stride), t2 = 2 * t1, t3 = 3 * t1;
          T const c1 = wr[t1], s1 = wi[t1], c2 = wr[t2], s2 = wi[t2], c3 = wr[t3], s3 = wi[t3];
          T* p0r = re + std::size_t(g + j) * L;
          T* p0i = im + std::size_t(g + j) * L;
          T* p1r = p0r + std::size_t(s) * L;
          T* p1i = p0i + std::size_t(s) * L;
          T* p2r = p1r + std::size_t(s) * L;
          T* p2i = p1i + std::size_t(s) * L;
          T* p3r = p2r + std::size_t(s) * L;
          T* p3i = p2i + std::size_t(s) * L;
#pragma omp simd
          for (int l = 0; l < L; ++l) {
            T const ar = p0r[l] + p2r[l], ai = p0i[l] + p2i[l];  // a0 + a2
            T const br = p0r[l] - p2r[l], bi = p0i[l] - p2i[l];  // a0 − a2
            T const cr = p1r[l] + p3r[l], ci = p1i[l] + p3i[l];  // a1 + a3
            T const dr = p1r[l] - p3r[l], di = p1i[l] - p3i[l];  // a1 − a3; −i·d = (di, −dr)
            p0r[l] = ar + cr;
            p0i[l] = ai + ci;
            T const y1r = br + di, y1i = bi - dr, y2r = ar - cr, y2i = ai - ci, y3r = br - di, y3i = bi + dr;
            p1r[l] = y1r * c1 - y1i * s1;
            p1i[l] = y1r * s1 + y1i * c1;
            p2r[l] = y2r * c2 - y2i * s2;
            p2i[l] = y2r * s2 + y2i * c2;
            p3r[l] = y3r * c3 - y3i * s3;
            p3i[l] = y3r * s3 + y3i * c3;
          }
        }
      }
    }
    if (power)  // no radix-4 stage of size 4 came last (n < 4, or n = 4 done by the first stage)
      for (std::size_t i = 0; i < std::size_t(n) * L; ++i) power[i] += re[i] * re[i] + im[i] * im[i];
  }
};

// The smallest power of two ≥ m.
inline int next_pow2(std::int64_t m) {
  int n = 1;
  while (n < m) n *= 2;
  return n;
}

}  // namespace ember::detail

"""Reference moments of the eight-schools posterior by quadrature (independent of ember).

Model (Rubin 1981; Gelman et al., BDA3 §5.5): y_j ~ N(theta_j, sigma_j^2), theta_j ~ N(mu, tau^2),
mu ~ N(0, 5^2), tau ~ half-Cauchy(0, 5). Integrating theta out, p(mu, tau | y) is proportional to
p(mu) p(tau) prod_j N(y_j; mu, sigma_j^2 + tau^2), and theta_j | mu, tau, y is normal with precision
1/sigma_j^2 + 1/tau^2 and mean (y_j/sigma_j^2 + mu/tau^2) / precision. So every posterior moment of
(mu, tau, theta) is a 2-D integral over (mu, s = log tau), done here on a fine grid (trapezoid
weights are uniform on a uniform grid whose edges carry no mass). Prints the moments as C++.
Run: python3 scripts/reference/eight_schools.py   (needs numpy)
"""
import numpy as np

y = np.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
sigma = np.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def moments(n_mu, n_s):
    mu = np.linspace(-40.0, 50.0, n_mu)[:, None]
    s = np.linspace(-14.0, 8.0, n_s)[None, :]
    tau = np.exp(s)
    logw = -0.5 * mu**2 / 25.0 - np.log1p(tau**2 / 25.0) + s  # prior of mu, half-Cauchy, Jacobian of s
    for j in range(8):
        v = sigma[j] ** 2 + tau**2
        logw = logw - 0.5 * np.log(v) - 0.5 * (y[j] - mu) ** 2 / v
    w = np.exp(logw - logw.max())
    z = w.sum()
    e = lambda f: float((w * f).sum() / z)
    out = {"mu": (e(mu + 0 * s), e(mu**2 + 0 * s)), "tau": (e(tau + 0 * mu), e(tau**2 + 0 * mu))}
    for j in range(8):
        prec = 1 / sigma[j] ** 2 + 1 / tau**2
        m = (y[j] / sigma[j] ** 2 + mu / tau**2) / prec
        out[f"theta{j}"] = (e(m), e(m**2 + 1 / prec))
    return out


fine = moments(3001, 3001)
coarse = moments(1501, 1501)
err = max(abs(fine[k][i] - coarse[k][i]) for k in fine for i in range(2))
print(f"// max change from a grid of 1501^2 to 3001^2 points: {err:.2e}")
names = ["mu", "tau"] + [f"theta{j}" for j in range(8)]
print("mean:   {" + ", ".join(f"{fine[k][0]:.10g}" for k in names) + "}")
print("second: {" + ", ".join(f"{fine[k][1]:.10g}" for k in names) + "}")

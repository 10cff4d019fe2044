"""ember from Python: the fixed set, results in ArviZ's layout, runs in pieces, checkpoints, errors.

Statistical checks compare a posterior mean with a reference through z = (mean − ref) / √(MCSE² +
se_ref²), MCSE from ember's own ESS, and accept |z| < 5 (as the C++ suite does)."""
import json
import math
import os

import numpy as np
import pytest

import ember

Y = [28, 8, -3, 7, -1, 1, 18, 12]
SIGMA = [15, 10, 16, 11, 9, 11, 10, 18]
# posteriordb's reference posterior of eight_schools_noncentered (its reference draws' moments,
# bench/posteriordb/reference/), with the reference's own Monte-Carlo standard errors.
REFERENCE = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "posteriordb", "reference",
                         "eight_schools-eight_schools_noncentered.json")


def z_of(fit, name):
    with open(REFERENCE) as fh:
        ref = json.load(fh)["constrained"][name]
    row = fit.summary().loc[name]
    return (row["mean"] - ref["mean"]) / math.sqrt(row["mcse_mean"] ** 2 + ref["mcse_mean"] ** 2)


@pytest.fixture(scope="module")
def eight():
    return ember.models.eight_schools(y=Y, sigma=SIGMA)


@pytest.fixture(scope="module")
def fit(eight):
    return ember.sample(eight, chains=8, warmup=1000, draws=1000, seed=3, progress=False)


def test_named_constrained_draws(fit):
    assert set(fit.posterior) == {"theta_trans", "mu", "tau"}
    assert fit.posterior["theta_trans"].shape == (8, 1000, 8)
    assert fit.posterior["tau"].shape == (8, 1000)
    assert (fit.posterior["tau"] > 0).all()  # constrained: tau, not log tau
    # tau is the exponential of its unconstrained coordinate (the last of the draws).
    np.testing.assert_allclose(fit.posterior["tau"], np.exp(fit.draws[:, :, 9]), rtol=1e-12)
    assert fit.draws.shape == (8, 1000, 10)
    assert fit.sample_stats["lp"].shape == (8, 1000)
    assert np.isfinite(fit.sample_stats["lp"]).all()


def test_against_reference(fit):
    for name in ("mu", "tau"):
        assert abs(z_of(fit, name)) < 5, (name, fit.summary().loc[name])
    assert fit.summary()["r_hat"].max() < 1.05
    assert not fit.chain_diverged.any()


def test_lp_is_minus_energy(eight, fit):
    x = fit.draws[2, :5]
    u, g = eight.energy(x)
    np.testing.assert_allclose(-u, fit.sample_stats["lp"][2, :5], rtol=1e-12)
    assert g.shape == (5, 10)


def test_inference_data(fit):
    az = pytest.importorskip("arviz")
    idata = fit.to_inference_data()
    assert idata.posterior["theta_trans"].shape == (8, 1000, 8)
    assert "lp" in idata.sample_stats
    s = az.summary(idata, var_names=["mu", "tau"], round_to="none")
    ours = fit.summary()
    # ArviZ's means of the exported arrays are ember's means of its draws (to summation order).
    np.testing.assert_allclose(s["mean"].values, ours.loc[["mu", "tau"], "mean"].values, rtol=1e-10)


def test_sample_stats_per_draw(eight, fit):
    st = fit.sample_stats
    assert set(st) == {"lp", "acceptance_rate", "diverging", "n_steps", "truncated", "energy"}
    for v in st.values():
        assert v.shape == (8, 1000)
    assert st["diverging"].dtype == bool and st["n_steps"].dtype == np.int64
    # Every kept transition's report (no burn-in, no thinning): the counts add up to the run's.
    assert st["diverging"].sum() == fit.stats["divergent_transitions"]
    assert st["n_steps"].sum() == fit.stats["gradients"]
    assert st["truncated"].sum() == fit.stats["truncated_transitions"]
    assert ((st["acceptance_rate"] >= 0) & (st["acceptance_rate"] <= 1)).all()
    # The Hamiltonian a transition starts from is U at the previous draw plus a fresh ½|v|², v ~ N(0, I):
    # its mean is dim/2 within 5 standard errors (Var ½χ²_d = d/2).
    kinetic = st["energy"][:, 1:] + st["lp"][:, :-1]
    assert (kinetic >= 0).all()  # U + a non-negative term rounds to at least U
    d = fit.draws.shape[2]
    assert abs(kinetic.mean() - d / 2) < 5 * math.sqrt(d / 2 / kinetic.size)


def test_sample_stats_nuts_and_arviz(eight):
    fit = ember.sample(eight, sampler="nuts", chains=4, warmup=300, draws=300, seed=2, progress=False)
    st = fit.sample_stats
    assert set(st) == {"lp", "acceptance_rate", "diverging", "n_steps", "reached_max_treedepth", "energy", "tree_depth"}
    # Stan's tree depth d (doublings merged): 2^d - 1 leaves, and up to 2^d more of a half thrown away.
    depth, leaves = st["tree_depth"], st["n_steps"]
    assert ((leaves >= 2 ** depth - 1) & (leaves <= 2 ** (depth + 1) - 1)).all()
    assert (depth[st["reached_max_treedepth"]] == 10).all()
    assert st["n_steps"].sum() == fit.stats["gradients"]
    az = pytest.importorskip("arviz")
    idata = fit.to_inference_data()
    assert idata.sample_stats["diverging"].dtype == bool
    # ArviZ's E-BFMI reads sample_stats.energy chain by chain: per chain, mean((ΔE)²) / var(E).
    e = st["energy"]
    ours = np.mean(np.diff(e, axis=1) ** 2, axis=1) / np.var(e, axis=1, ddof=1)
    np.testing.assert_allclose(az.bfmi(idata), ours, rtol=1e-10)
    # ember's own, from its summary, is ArviZ's to rounding.
    np.testing.assert_allclose(fit.bfmi, az.bfmi(idata), rtol=1e-10)
    assert "E-BFMI per chain: lowest" in fit.summary_text


def test_layout_chain_then_draw():
    # Chains started at distinct points and moved by ULA steps far smaller than their spacing:
    # axis 0 is the chain (each row stays at its own start), axis 1 the draw.
    t = ember.targets.banana()
    init = np.array([[0.0, 0.0], [1.0, 1.0], [2.0, 2.0]])
    fit = ember.sample(t, sampler="ula", step_size=1e-12, chains=3, draws=5, init=init, progress=False)
    assert fit.posterior["x"].shape == (3, 5, 2)
    np.testing.assert_allclose(fit.posterior["x"], np.broadcast_to(init[:, None, :], (3, 5, 2)), atol=1e-4)


def test_same_seed_same_draws_and_pieces(eight):
    a = ember.sample(eight, chains=4, warmup=200, draws=100, seed=9, progress=False)
    run = ember.start(eight, chains=4, warmup=200, draws=100, seed=9)
    run.advance(137)
    run.advance(50)
    run.advance()
    b = run.fit()
    np.testing.assert_array_equal(a.draws, b.draws)
    c = ember.sample(eight, chains=4, warmup=200, draws=100, seed=10, progress=False)
    assert not np.array_equal(a.draws, c.draws)


def test_checkpoint_continues_bitwise(eight, tmp_path):
    whole = ember.sample(eight, sampler="nuts", chains=4, warmup=150, draws=80, seed=5, progress=False)
    run = ember.start(eight, sampler="nuts", chains=4, warmup=150, draws=80, seed=5)
    run.advance(170)
    path = tmp_path / "run.ckpt"
    run.save(path)
    again = ember.load(eight, path, sampler="nuts", chains=4, warmup=150, draws=80)
    assert again.transitions == 170
    again.advance()
    # The checkpoint holds the kept draws so far too: the continued run's are the whole run's.
    np.testing.assert_array_equal(again.fit().draws, whole.draws)
    with pytest.raises(ValueError, match="holds a run of 4 chains"):
        ember.load(eight, path, sampler="nuts", chains=5, warmup=150, draws=80)


def test_progress_callable(eight):
    seen = []
    ember.sample(eight, chains=2, warmup=50, draws=50, seed=1, progress=lambda *a: seen.append(a))
    assert seen and seen[-1][0] == seen[-1][1] == 100


def test_interrupt_keeps_the_run(eight):
    calls = []

    def stop(done, total, warming, acc, div):
        calls.append(done)
        raise KeyboardInterrupt  # as Ctrl-C would, at the first report (after the first chunk)

    with pytest.raises(KeyboardInterrupt) as e:
        ember.sample(eight, chains=2, warmup=2000, draws=100, seed=1, progress=stop)
    run = e.value.run
    assert 0 < run.transitions < run.total
    run.advance()
    assert run.transitions == run.total
    fit = run.fit()
    assert fit.draws.shape == (2, 100, 10)
    # The interrupted call's time stayed in the run: sampling time is the total minus warm-up's.
    assert fit.stats["sampling_seconds"] >= 0 and fit.stats["seconds"] >= fit.stats["warmup_seconds"]


def test_ctrl_c_stops_at_a_chunk_boundary(eight):
    # A real SIGINT's path: the flag Python's handler sets is seen between chunks (the run releases
    # the GIL, so the timer thread runs meanwhile).
    import _thread
    import threading

    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt) as e:
            ember.sample(eight, chains=4, warmup=100, draws=1_000_000, seed=1, progress=False)
    finally:
        timer.cancel()
    run = e.value.run
    assert 0 < run.transitions < run.total
    before = run.transitions
    run.advance(10)
    assert run.transitions == before + 10


def test_target_reference_banana():
    t = ember.targets.banana()
    ref = t.reference()
    fit = ember.sample(t, sampler="mams", chains=16, warmup=1000, draws=2000, seed=2, progress=False)
    x = fit.posterior["x"]
    s = fit.summary()
    for d in range(2):
        se = math.sqrt(s["mcse_mean"].iloc[d] ** 2 + ref["mean_se"][d] ** 2)
        assert abs((x[..., d].mean() - ref["mean"][d]) / se) < 5


@pytest.mark.parametrize(
    "kwargs, error, words",
    [
        ({"chains": 0}, ValueError, "chains must be at least 1"),
        ({"chains": 2.5}, TypeError, "chains must be an integer"),
        ({"sampler": "hmc"}, ValueError, "not compiled"),
        ({"sampler": "mala", "step_size": 0.1}, ValueError, "only for 'ula'"),
        ({"warmup": 0}, ValueError, "warm-up of at least 1"),
        ({"seed": -1}, ValueError, "seed must be at least 0"),
        ({"init": np.zeros((3, 10))}, ValueError, "init must have shape"),
        ({"init": np.full((4, 10), np.nan)}, ValueError, "non-finite"),
        ({"target_accept": 1.0}, ValueError, r"target_accept must be an acceptance rate in \(0, 1\)"),
        ({"target_accept": float("nan")}, ValueError, "target_accept must be"),
    ],
)
def test_bad_arguments(eight, kwargs, error, words):
    args = dict(chains=4, warmup=10, draws=10, progress=False)
    args.update(kwargs)
    with pytest.raises(error, match=words):
        ember.sample(eight, **args)


def test_target_accept(eight, tmp_path):
    # The default is each sampler's own target (chees_hmc: 0.8 for the harmonic mean over chains);
    # naming it changes no draw, and a higher one raises the transitions' mean acceptance statistic.
    for sampler, own in (("chees_hmc", 0.8), ("nuts", 0.8), ("mala", 0.574)):
        args = dict(sampler=sampler, chains=4, warmup=300, draws=100, seed=4, progress=False)
        base = ember.sample(eight, **args)
        same = ember.sample(eight, target_accept=own, **args)
        high = ember.sample(eight, target_accept=0.95, **args)
        np.testing.assert_array_equal(base.draws, same.draws)
        if sampler == "nuts":  # its acceptance statistic is not its acceptance rate: no run-level target
            assert math.isnan(base.stats["target_acceptance"]) and math.isnan(high.stats["target_acceptance"])
        else:
            assert base.stats["target_acceptance"] == pytest.approx(own)
            assert high.stats["target_acceptance"] == pytest.approx(0.95)
        assert high.sample_stats["acceptance_rate"].mean() > base.sample_stats["acceptance_rate"].mean()
    with pytest.raises(ValueError, match="'ula' adapts no step size"):
        ember.sample(ember.targets.banana(), sampler="ula", step_size=0.1, target_accept=0.9, progress=False)
    # A checkpoint goes on with its own target; another one named is refused.
    run = ember.start(eight, chains=4, warmup=100, draws=10, seed=2, target_accept=0.9)
    run.advance(50)
    path = tmp_path / "target.ckpt"
    run.save(path)
    ember.load(eight, path, chains=4, warmup=100, draws=10)
    ember.load(eight, path, chains=4, warmup=100, draws=10, target_accept=0.9)
    with pytest.raises(Exception, match="another target acceptance"):
        ember.load(eight, path, chains=4, warmup=100, draws=10, target_accept=0.8)


def test_bad_data():
    with pytest.raises(ValueError, match="'y' must have 8 values"):
        ember.models.eight_schools(y=[1, 2, 3], sigma=SIGMA)
    with pytest.raises(ValueError, match="'sigma' has 1 non-finite"):
        ember.models.eight_schools(y=Y, sigma=SIGMA[:7] + [float("nan")])
    with pytest.raises(TypeError, match="dtype"):
        ember.models.eight_schools(y=["a"] * 8, sigma=SIGMA)
    with pytest.raises(ValueError, match="takes no data"):
        ember.Energy(ember._core.Banana, {"y": [1.0]})


def test_ula_needs_step_size():
    t = ember.targets.banana()
    with pytest.raises(ValueError, match="step_size > 0"):
        ember.sample(t, sampler="ula", progress=False)
    with pytest.raises(ValueError, match="'ula' has no warm-up"):
        ember.sample(t, sampler="ula", step_size=0.1, warmup=5, progress=False)
    fit = ember.sample(t, sampler="ula", step_size=0.01, chains=4, draws=10, progress=False)
    assert fit.draws.shape == (4, 10, 2)


@pytest.mark.parametrize("name", ["standard_normal", "ill_conditioned_gaussian", "neal_funnel_noncentred", "eight_schools"])
def test_reference_targets(name):
    # The reported coordinates' means against the targets' references: |z| < 5 with the MCSE from
    # ArviZ's ESS of each reported column (the reported map may be non-linear: the funnel's x_i).
    az = pytest.importorskip("arviz")
    t = getattr(ember.targets, name)()
    fit = ember.sample(t, sampler="nuts", chains=8, warmup=500, draws=500, seed=4, progress=False)
    r = t.reported(fit.draws.reshape(-1, t.dim)).reshape(fit.num_chains, fit.num_draws, -1)
    ref = t.reference()
    for d in range(r.shape[2]):
        x = r[..., d]
        se = math.sqrt(x.var() / float(az.ess(x)) + ref["mean_se"][d] ** 2)
        assert abs(x.mean() - ref["mean"][d]) < 5 * se, (name, d, x.mean(), ref["mean"][d], se)

"""`Fit`: a run's draws in ArviZ's layout, with names and shapes, its diagnostics and its summary."""
import numpy as np

__all__ = ["Fit"]


class Fit:
    """The draws of a run and what ember knows about them.

    posterior / posterior_predictive: dicts name → array (chain, draw, *shape) in the model's
        terms (constrained values: σ, not log σ) for a model; for a plain energy, one variable `x`
        (chain, draw, dim).
    draws: (chain, draw, dim) in the sampler's unconstrained coordinates.
    sample_stats: what each kept transition reported, (chain, draw) arrays named as ArviZ names
        them: `lp` (−U at the draw; for a model, the log density of the unconstrained parameters,
        Jacobian included, up to a constant), `acceptance_rate`, `diverging` (bool), `n_steps`
        (gradient evaluations), `truncated` (bool: a cap cut the trajectory short; for NUTS
        `reached_max_treedepth`), and for HMC-family samplers `energy` (the Hamiltonian after the
        momentum draw, what ArviZ's E-BFMI reads) and for NUTS `tree_depth`.
    bfmi: (chain,) each chain's E-BFMI where the sampler reports its Hamiltonian (HMC family and
        NUTS; NaN for a diverged chain), as `arviz.bfmi` computes it, else None; ember's summary
        warns below 0.3.
    chain_diverged: (chain,) bool, chains that went non-finite and were frozen (ember drops them
        from the summary); chain_acceptance: (chain,) each chain's acceptance rate after warm-up.
    stats: the run's totals (divergent_transitions, gradients, warmup_gradients, seconds,
        warmup_seconds, sampling_seconds, acceptance_rate, step_size, ...).
    summary(): ember's rank-normalised R̂, bulk and tail ESS, MCSE per column (a pandas DataFrame
        when pandas is installed, else a dict of columns); summary_text: ember's own printed
        summary with its WARNING lines.
    """

    def __init__(self, raw, energy, sampler):
        self.sampler = sampler
        self.energy_name = energy.name
        self.draws = raw["draws"]
        self.sample_stats = dict(raw["sample_stats"])  # flags bool, counts int64, the rest float64 (from C++)
        self.chain_diverged = raw["chain_divergent"]
        self.stats = dict(raw["stats"])
        kept = max(int(self.stats["kept_transitions"]), 1)
        self.chain_acceptance = raw["chain_accepted"] / kept
        self.columns = list(raw["column_names"])
        cols = raw["columns"]
        self.posterior, self.posterior_predictive = {}, {}
        self._plain = not raw["variables"]  # a plain energy: one variable x (chain, draw, dim)
        if raw["variables"]:
            for v in raw["variables"]:
                a = cols[:, :, v["offset"]:v["offset"] + v["size"]]
                a = a.reshape(a.shape[:2] + tuple(v["shape"]))
                group = self.posterior if v["group"] == "posterior" else self.posterior_predictive
                group[v["name"]] = np.ascontiguousarray(a)
        else:
            self.posterior["x"] = cols
        self._summary = raw.get("summary")
        self.summary_text = raw.get("summary_text", "")
        self.bfmi = raw.get("bfmi")

    @property
    def num_chains(self):
        return self.draws.shape[0]

    @property
    def num_draws(self):
        return self.draws.shape[1]

    def summary(self):
        """Per column: mean, sd, mcse_mean, ess_bulk, ess_tail, r_hat (ArviZ's names), over the
        chains that stayed finite."""
        if self._summary is None:
            raise ValueError("a summary needs at least 4 draws per chain")
        table = {k: np.asarray(v) for k, v in self._summary.items()}
        try:
            import pandas as pd
        except ImportError:
            return {"name": list(self.columns), **table}
        return pd.DataFrame(table, index=self.columns)

    def to_inference_data(self):
        """An arviz.InferenceData: groups posterior, posterior_predictive (when there is one) and
        sample_stats (above), with the model's names; dims `<name>_dim_<i>` as ArviZ names them."""
        import arviz as az

        attrs = {"sampler": self.sampler, "energy": self.energy_name, "inference_library": "ember"}
        for k in ("divergent_transitions", "gradients", "warmup_gradients", "sampling_seconds", "warmup_seconds"):
            attrs[k] = self.stats[k]
        dims = {"x": ["dim"]} if self._plain else None
        return az.from_dict(posterior=self.posterior, posterior_predictive=self.posterior_predictive or None,
                            sample_stats=self.sample_stats, dims=dims, attrs=attrs)

    def __repr__(self):
        names = ", ".join(self.posterior)
        return (f"<ember.Fit {self.energy_name} {self.sampler}: {self.num_chains} chains x {self.num_draws} draws of "
                f"{names}; {self.stats['divergent_transitions']} divergent transitions, "
                f"{int(self.chain_diverged.sum())} chains diverged>")

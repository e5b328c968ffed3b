"""GMTRegressor: the gmt family (Jurczuk, Czajkowski, Kretowski 2022: evolutionary induction of model
trees) with scikit-learn's API. fit() runs the learner CLI's train (fit_model in
algorithms/gmt/train.cpp) on the chosen backend; the fitted state is the model file's JSON, so a
model fitted on a GPU pickles and predicts on a machine without one."""
import inspect
import json

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpudm
from ._data import _is_frame, fit_schema, to_matrix

# Params of the family that belong to the benchmark runner (estimates, replays, hold-outs, MPI), not
# to an estimator; n_jobs stands for the thread counts (threads, host_threads).
_RUNNER_ONLY = {"batch_sample_every", "batch_sample_file", "replay_from", "replay_max_evaluations", "replay_batch_trees",
                "replay_max_seconds", "estimate_above_rows", "estimate_iterations", "test_fraction",
                "extrapolate_iterations", "rank_split", "threads", "host_threads"}
_SPECS = [s for s in json.loads(_gpudm.gmt_params()) if s["name"] not in _RUNNER_ONLY]
_OWN = [("device", "cpu"), ("n_jobs", None), ("random_state", None), ("verbose", False)]


def _check_feature_names(est, X, reset):
    # scikit-learn >= 1.6 has a function, earlier versions a method
    try:
        from sklearn.utils.validation import _check_feature_names as f
        return f(est, X, reset=reset)
    except ImportError:
        return est._check_feature_names(X, reset=reset)


class GMTRegressor(RegressorMixin, BaseEstimator):
    """Global model tree regressor (GMT): a regression tree with a linear model in every leaf, evolved
    as a whole by an evolutionary algorithm (population 64, 10,000 iterations by default, BIC
    fitness); predictions are smoothed (M5's k = 15) and bounded (Cubist's clamp, margin 0.1).

    Parameters: every GMT param of `run_experiment --train gmt --help` with its default (the
    estimator's signature lists them), and
      device: "cpu" (the OpenMP backend, or the sequential one with n_jobs=1) or "cuda";
      n_jobs: threads (None or -1: the backend's default, all cores);
      random_state: int seed (None: drawn from numpy's global generator at fit);
      verbose: progress bar on stderr.
    Every backend gives the same tree for the same seed (the family's equivalence tests).

    Attributes after fit: model_ (the model file as JSON text), tree_ (its tree as a dict),
    n_features_in_, feature_names_in_ (DataFrame input), backend_ (the backend that ran), run_ (the
    run's summary: iterations, seconds, phases).
    """

    def __init__(self, **params):
        unknown = set(params) - set(_param_names())
        if unknown:
            raise TypeError(f"GMTRegressor: unknown parameter(s) {sorted(unknown)}")
        for name, default in _param_defaults():
            setattr(self, name, params.get(name, default))

    def _backend(self):
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"GMTRegressor: device must be 'cpu' or 'cuda', got {self.device!r}")
        avail = {b: (ok, why) for b, ok, why in _gpudm.backends("gmt")}
        if self.device == "cuda":
            if not avail.get("cuda", (False, ""))[0]:
                raise RuntimeError(f"GMTRegressor: device='cuda' but the CUDA backend is unavailable here: {avail.get('cuda', (0, 'not built'))[1]}")
            return "cuda"
        if self.n_jobs == 1 or not avail.get("openmp", (False, ""))[0]:
            return "sequential"
        return "openmp"

    def _params_json(self, backend):
        p = {s["name"]: getattr(self, s["name"]) for s in _SPECS}
        threads = 0 if self.n_jobs in (None, -1) else int(self.n_jobs)
        if threads < 0:
            raise ValueError(f"GMTRegressor: n_jobs must be None, -1 or positive, got {self.n_jobs}")
        if backend == "openmp":
            p["threads"] = threads
        elif backend == "cuda":
            p["host_threads"] = threads
        for k, v in list(p.items()):  # numpy scalars -> Python
            if isinstance(v, np.generic):
                p[k] = v.item()
        return json.dumps(p)

    def fit(self, X, y):
        if _is_frame(X):
            schema, names = fit_schema(X)
            _check_feature_names(self, X, reset=True)
            M = to_matrix(X, schema)
            y = np.asarray(y, dtype=np.float64)
            self.n_features_in_ = M.shape[1]
        else:
            X, y = self._validate_data(X, y, dtype=np.float64, force_all_finite="allow-nan", y_numeric=True)
            schema, _ = fit_schema(X)
            M = to_matrix(X, schema)
        y = np.asarray(y, dtype=np.float64)
        if y.ndim != 1:
            y = y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y
        if not np.all(np.isfinite(y)):
            raise ValueError("GMTRegressor: y contains NaN or infinity")
        if M.shape[0] < 2:
            raise ValueError(f"n_samples = {M.shape[0]}: GMT needs at least 2 rows")
        seed = self.random_state
        if seed is None:
            seed = int(np.random.randint(0, 2**31 - 1))
        elif isinstance(seed, np.random.RandomState):
            seed = int(seed.randint(0, 2**31 - 1))
        backend = self._backend()
        model, run = _gpudm.gmt_fit(M, np.ascontiguousarray(y, dtype=np.float32), schema, self._params_json(backend),
                                    backend, int(seed), bool(self.verbose))
        self.model_ = model
        self.run_ = json.loads(run)
        self.backend_ = backend
        self._schema = schema
        return self

    def _matrix(self, X):
        check_is_fitted(self, "model_")
        if _is_frame(X):
            _check_feature_names(self, X, reset=False)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but GMTRegressor is expecting {self.n_features_in_} features as input")
            return to_matrix(X, self._schema)
        X = self._validate_data(X, dtype=np.float64, force_all_finite="allow-nan", reset=False)
        return to_matrix(X, self._schema)

    def predict(self, X):
        M = self._matrix(X)  # checks fitted first
        return _gpudm.gmt_predict(self.model_, M, self._schema)

    @property
    def tree_(self):
        check_is_fitted(self, "model_")
        return json.loads(self.model_)["tree"]

    def export_text(self):
        """The tree as the learner CLI prints it (tests and leaf models by attribute name)."""
        check_is_fitted(self, "model_")
        return _gpudm.gmt_text(self.model_, self._schema)

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags


def _param_defaults():
    return [(s["name"], s["default"]) for s in _SPECS] + _OWN


def _param_names():
    return [n for n, _ in _param_defaults()]


# scikit-learn reads an estimator's params from its __init__ signature: the family's params (from
# the C++ table, so the defaults are the CLI's) and the estimator's own, all keyword-only.
GMTRegressor.__init__.__signature__ = inspect.Signature(
    [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] +
    [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d) for n, d in _param_defaults()])

"""GMTRegressor: the gmt family (Jurczuk, Czajkowski, Kretowski 2022: evolutionary induction of model
trees) with scikit-learn's API. fit() runs the learner CLI's train (fit_model in
algorithms/gmt/train.cpp) on the chosen backend; the fitted state is the model file's JSON, so a
model fitted on a GPU pickles and predicts on a machine without one."""
import json

import numpy as np
from sklearn.base import BaseEstimator, RegressorMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpudm
from ._base import NativeEstimator, family_specs, set_signature

# Params of the family that belong to the benchmark runner (estimates, replays, hold-outs, MPI), not
# to an estimator; n_jobs stands for the thread counts (threads, host_threads).
_RUNNER_ONLY = {"batch_sample_every", "batch_sample_file", "replay_from", "replay_max_evaluations", "replay_batch_trees",
                "replay_max_seconds", "estimate_above_rows", "estimate_iterations", "test_fraction",
                "extrapolate_iterations", "rank_split", "threads", "host_threads"}


@set_signature
class GMTRegressor(NativeEstimator, RegressorMixin, BaseEstimator):
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

    _SPECS = family_specs(_gpudm.gmt_params(), _RUNNER_ONLY)
    _FAMILY = "gmt"
    _THREADS = {"openmp": "threads", "cuda": "host_threads"}

    def fit(self, X, y):
        M, y = self._fit_matrix(X, y, y_numeric=True)
        y = np.asarray(y, dtype=np.float64)
        if not np.all(np.isfinite(y)):
            raise ValueError("GMTRegressor: y contains NaN or infinity")
        backend = self._backend()
        model, run = _gpudm.gmt_fit(M, np.ascontiguousarray(y, dtype=np.float32), self._schema, self._params_json(backend),
                                    backend, self._seed(), bool(self.verbose))
        return self._fitted(model, run, backend)

    def predict(self, X):
        M = self._matrix(X)  # checks fitted first
        return _gpudm.gmt_predict(self.model_, M, self._schema)

    @property
    def tree_(self):
        check_is_fitted(self, "model_")
        return json.loads(self.model_)["tree"]

    def export_text(self):
        """The tree as the learner CLI prints it (tests and leaf models by attribute name), without the
        leaves' training statistics, which a model file does not keep."""
        check_is_fitted(self, "model_")
        return _gpudm.gmt_text(self.model_, self._schema)

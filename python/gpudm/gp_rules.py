"""GPRuleClassifier: the gp_rules family (the GP classification rule learners of Falco et al., Tan et
al. and Bojarczuk et al., as benchmarked by Cano, Zafra and Ventura 2012) with scikit-learn's API.
fit() runs the --train CLI's fit (fit_model in algorithms/gp_rules/report.cpp); the fitted state is
the model file's JSON (an ordered rule list and a default class)."""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpudm
from ._base import NativeEstimator, family_specs, set_signature

# The benchmark runner's params (cross-validation folds, recorded populations, replays, devices).
_RUNNER_ONLY = {"folds", "record_every", "record_file", "replay_from", "replay_max_seconds", "replay_above_gpops",
                "threads", "devices", "device_ids", "copy_threads"}


@set_signature
class GPRuleClassifier(NativeEstimator, ClassifierMixin, BaseEstimator):
    """Genetic-programming classification rules: algorithm="falco" (one run per class, the best rule),
    "tan" (steady state with token competition and an elite) or "bojarczuk" (one population of rules
    for all classes), evaluated by the shared rule engine; the rules are ordered by Laplace precision
    and a default class covers the rest.

    Parameters: every gp_rules param of `run_experiment --train gp_rules --help` with its default,
    and device ("cpu": OpenMP, or sequential with n_jobs=1; "cuda"), n_jobs, random_state, verbose.
    A rule list defines no class probabilities, so there is no predict_proba.

    Attributes after fit: classes_, model_ (the model file as JSON text), rules_ (the rule list as
    text), n_features_in_, feature_names_in_, backend_, run_ (evaluations, GPops, seconds).
    """

    _SPECS = family_specs(_gpudm.gp_params(), _RUNNER_ONLY)
    _FAMILY = "gp_rules"
    _THREADS = {"openmp": "threads"}

    def fit(self, X, y):
        return self._fit_classifier(X, y, _gpudm.gp_fit)

    def predict(self, X):
        M = self._matrix(X)  # checks fitted first
        return self.classes_[_gpudm.gp_predict(self.model_, M, self._schema)]

    @property
    def rules_(self):
        check_is_fitted(self, "model_")
        return _gpudm.gp_text(self.model_, self._schema)

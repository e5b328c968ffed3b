"""PittsburghClassifier: the pittsburgh family (Cano, Zafra, Ventura 2014: Pittsburgh rule-based
classifiers, each individual a whole decision list, evaluated on GPUs) with scikit-learn's API. fit()
runs the family's "learn" mode's GA (algorithms/pittsburgh/ga.hpp) on all of X; the fitted state is
the best individual as a one-individual population file (JSON), so a list learned on a GPU pickles
and predicts on a machine without one."""
import json

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from . import _gpudm
from ._base import NativeEstimator, family_specs, set_signature

# The benchmark runner's params (evaluation mode, devices, kernel paths, estimates, power, hold-out).
_RUNNER_ONLY = {"mode", "path", "threads", "devices", "device_ids", "features", "estimate_above_gpops",
                "estimate_sample_fraction", "estimate_pieces", "validate_gpops_budget", "measure_power",
                "cpu_tdp_watts", "cpu_cores", "test_fraction"}
_BINARY = {">", ">=", "<", "<=", "=", "!="}


@set_signature
class PittsburghClassifier(NativeEstimator, ClassifierMixin, BaseEstimator):
    """A Pittsburgh genetic algorithm over decision lists: every individual an ordered list of rules
    (AND/OR/NOT of comparisons) and a default class, fitness the training accuracy less a length
    penalty, the whole population evaluated per generation on the chosen backend.

    Parameters: every pittsburgh param of `run_experiment configs/pitt_learn.json` that defines the
    learner (population, generations, length_penalty, the initial rules' shape) with its default,
    and device ("cpu": OpenMP, or sequential with n_jobs=1; "cuda"), n_jobs, random_state, verbose.
    A decision list defines no class probabilities, so there is no predict_proba.

    Attributes after fit: classes_, model_ (the population file's JSON text), rules_ (the decision
    list as text), n_features_in_, feature_names_in_, backend_, run_ (generations, evaluations,
    GPops, seconds, training accuracy).
    """

    _SPECS = family_specs(_gpudm.pitt_params(), _RUNNER_ONLY)
    _FAMILY = "pittsburgh"
    _THREADS = {"openmp": "threads"}

    def fit(self, X, y):
        return self._fit_classifier(X, y, _gpudm.pitt_fit)

    def predict(self, X):
        M = self._matrix(X)  # checks fitted first
        return self.classes_[_gpudm.pitt_predict(self.model_, M, self._schema)]

    @property
    def rules_(self):
        """IF ... THEN class lines in the list's order, then ELSE the default class; attributes by
        name, a nominal attribute's values by category."""
        check_is_fitted(self, "model_")
        ind = json.loads(self.model_)["individuals"][0]
        lines = [f"IF {self._infix(r['antecedent'])} THEN {self.classes_[r['consequent']]}" for r in ind["rules"]]
        return "\n".join(lines + [f"ELSE {self.classes_[ind['default_class']]}"]) + "\n"

    def _infix(self, tokens):
        """An antecedent's token array (comparisons in prefix, logic in postfix) as infix text."""
        stack, i = [], 0
        while i < len(tokens):
            op = tokens[i]
            if op in _BINARY:
                stack.append(f"{self._name(tokens[i + 1])} {op} {self._value(tokens[i + 1], tokens[i + 2])}")
                i += 3
            elif op in ("IN", "OUT"):
                name = self._name(tokens[i + 1])
                lo, hi = tokens[i + 2], tokens[i + 3]
                stack.append(f"{lo:g} <= {name} <= {hi:g}" if op == "IN" else f"({name} < {lo:g} OR {name} > {hi:g})")
                i += 4
            elif op == "NOT":
                stack.append(f"NOT {stack.pop()}")
                i += 1
            else:  # AND, OR
                r, l = stack.pop(), stack.pop()
                stack.append(f"({l} {op} {r})")
                i += 1
        return stack[-1] if stack else "TRUE"

    def _name(self, a):
        return self._schema[a][0]

    def _value(self, a, v):
        _, nominal, cats = self._schema[a]
        if nominal and float(v).is_integer() and 0 <= int(v) < len(cats):
            return cats[int(v)]
        return f"{v:g}"

"""HoeffdingForestClassifier and HoeffdingTreeClassifier: the vfdt family (Marron, Bifet, De Francisci
Morales 2014: random forests of very fast decision trees, online bagging and ADWIN) with
scikit-learn's incremental API (partial_fit) and River's (learn_one / predict_one). Learning runs
the family's backends through vfdt::OnlineForest (algorithms/vfdt/online.hpp): each chunk is first
predicted, then learned, in mini-batches of `batch` instances, and a stream given in chunks of
multiples of `batch` is learned exactly as the benchmark learns it whole. Predicting without
learning votes from the trees' structure (the model, also the pickled state): a forest learned on
a GPU predicts on a machine without one."""
import json

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted

from . import _gpudm
from ._base import OWN, NativeEstimator, _check_feature_names, _validate, family_specs, set_signature
from ._data import _is_frame, fit_schema, to_matrix

# The benchmark runner's params (curves, windows, validation, time budgets) and the CUDA engine's
# tuning (its defaults); `mode` is the class; leaves vote by majority class ("nb" leaves need
# their counters, which a model does not keep).
_RUNNER_ONLY = {"mode", "path", "threads", "engine", "adwin_kernel", "time_budget_s", "curve_points", "window",
                "validate", "accuracy_prefixes", "leaf_prediction"}


def _unique_inverse(y):
    """np.unique(y, return_inverse=True); for text labels by hashing (pandas), 8x faster on 1M rows."""
    if y.dtype == object:
        try:
            import pandas as pd
            codes, uniques = pd.factorize(y, sort=True)
            if len(codes) == 0 or codes.min() >= 0:  # (a missing label: numpy's way, which reports it)
                return np.asarray(uniques, dtype=object), codes
        except (ImportError, TypeError):
            pass
    return np.unique(y, return_inverse=True)


class _Hoeffding(NativeEstimator, ClassifierMixin, BaseEstimator):
    _SPECS = family_specs(_gpudm.vfdt_params(), _RUNNER_ONLY)
    _FAMILY = "vfdt"
    _THREADS = {"openmp": "threads"}
    _MODE = "forest"

    @classmethod
    def _defaults(cls):
        return [(s["name"], s["default"]) for s in cls._SPECS] + [("classes", None)] + OWN

    def _params_json(self, backend):
        p = json.loads(NativeEstimator._params_json(self, backend))
        p["mode"] = self._MODE
        return json.dumps(p)

    # ---- scikit-learn
    def fit(self, X, y):
        """A fresh forest learns (X, y) as one pass over a stream, in the rows' order."""
        self._forget()
        self.partial_fit(X, y, classes=self.classes)
        self._start()
        return self

    def partial_fit(self, X, y, classes=None):
        """Predicts, then learns the rows of (X, y) (prequential); the first call fixes the classes
        (`classes`, else the estimator's `classes`, else those of y) and the columns' coding. The
        coding's numeric bins come from the first `bin_warmup` rows, so rows are held back until
        that many have come (or until the first predict, fit's end or pickling) and then learned as
        one chunk."""
        first = not hasattr(self, "n_seen_")
        if first:
            try:
                return self._first_partial_fit(X, y, classes)
            except BaseException:  # no half-fitted estimator: the next call starts anew
                self._forget()
                raise
        return self._next_partial_fit(X, y)

    def _forget(self):
        """Back to unfitted: what learning set, gone."""
        for a in ("_online", "_pending", "_started", "_trees", "_schema", "classes_", "n_features_in_", "feature_names_in_",
                  "n_seen_", "n_correct_", "backend_"):
            self.__dict__.pop(a, None)

    def _first_partial_fit(self, X, y, classes):
        M, y = self._first_matrix(X, y)
        return self._take(M, y, classes, first=True)

    def _next_partial_fit(self, X, y):
        if self._started and self._online is None:
            raise ValueError(f"{type(self).__name__}: a forest loaded from a pickle predicts only (the trees' "
                             "counters are not saved); fit it again to learn")
        M, y = self._next_matrix(X, y)
        return self._take(M, y, None, first=False)

    def _take(self, M, y, classes, first):
        """The rows' labels as class indices (the first call fixes the classes), then learned, or held
        back until bin_warmup rows have come."""
        idx = None
        if first:
            if classes is None:
                classes = self.classes
            if classes is None:  # the classes of y, and y's indices into them
                self.classes_, idx = _unique_inverse(y)
            else:
                self.classes_ = np.unique(np.asarray(classes))
            # (the unique labels say what y holds: continuous numbers are not classes)
            check_classification_targets(self.classes_)
            if len(self.classes_) < 2:
                raise ValueError(f"{type(self).__name__} needs at least 2 classes; got {len(self.classes_)} class")
            self.backend_ = self._backend()
            self.n_seen_ = 0
            self.n_correct_ = 0
            # the trees' model JSON, read from the live forest when first needed after learning (a
            # container, so that predicting changes no attribute)
            self._trees = {"json": None}
            self._online = None
            self._started = False
            self._pending = []
        if idx is None:
            idx = np.searchsorted(self.classes_, y)
            bad = (idx >= len(self.classes_)) | (self.classes_[np.minimum(idx, len(self.classes_) - 1)] != y)
        else:
            bad = np.zeros(0, dtype=bool)
        if np.any(bad):
            raise ValueError(f"{type(self).__name__}: y has labels {sorted(set(np.asarray(y)[bad].tolist()))[:5]} "
                             f"not among the classes {list(self.classes_)}")
        idx = np.ascontiguousarray(idx, dtype=np.int32)
        if self._started:
            self._learn(M, idx)
        else:
            self._pending.append((M, idx))
            if sum(len(i) for _, i in self._pending) >= self.bin_warmup:
                self._start()
        return self

    def _start(self):
        """The forest from the rows held back (the first chunk: its coding), learned."""
        if self._started:
            return
        pending, self._pending = self._pending, []
        if self._schema is None:  # DataFrames: their columns' kinds and categories from every row held back
            import pandas as pd
            frame = pd.concat([m for m, _ in pending], ignore_index=True)
            self._schema, _ = fit_schema(frame)
            pending = [(to_matrix(frame, self._schema), np.ascontiguousarray(np.concatenate([i for _, i in pending])))]
        names = [str(c) for c in self.classes_]
        if len(set(names)) != len(names):  # labels whose text collides (1 and "1"): by index
            names = [f"class{i}" for i in range(len(names))]
        self._online = _gpudm.VfdtOnline(self._params_json(self.backend_), self.backend_, self._seed(), names,
                                         self._schema)
        self._started = True
        if len(pending) == 1:
            self._learn(*pending[0])
        elif pending:
            self._learn(np.ascontiguousarray(np.concatenate([m for m, _ in pending])),
                        np.ascontiguousarray(np.concatenate([i for _, i in pending])))

    def _learn(self, M, idx):
        pred = self._online.learn(M, idx)
        self.n_seen_ += len(idx)
        self.n_correct_ += int(np.sum(pred == idx))
        self._trees["json"] = None  # the trees changed: read again when predicting

    def predict_proba(self, X):
        """The share of the trees voting each class (in classes_'s order)."""
        votes = self._votes(self._predict_matrix(X))
        return votes / votes.sum(axis=1, keepdims=True)

    def predict(self, X):
        """The trees' majority vote (ties: the first class in classes_)."""
        votes = self._votes(self._predict_matrix(X))  # checks fitted first
        return self.classes_[np.argmax(votes, axis=1)]

    @property
    def prequential_accuracy_(self):
        """The share of the instances learned so far that the forest predicted right just before
        learning each (test-then-train, the paper's measure)."""
        check_is_fitted(self, "n_seen_")
        return self.n_correct_ / self.n_seen_ if self.n_seen_ else float("nan")

    @property
    def model_json_(self):
        """The trees as the model file's JSON text (format gpudm-vfdt-forest)."""
        return self._model()

    # ---- River's protocol: one instance as a dict {feature: value}
    def learn_one(self, x, y):
        if not hasattr(self, "n_seen_") and self.classes is None:
            raise ValueError(f"{type(self).__name__}.learn_one: give the classes at construction (classes=[...]): a "
                             "forest's classes are fixed when it starts")
        return self.partial_fit(self._one(x), [y])

    def predict_one(self, x):
        return self.predict(self._one(x))[0]

    def predict_proba_one(self, x):
        return dict(zip(self.classes_.tolist(), self.predict_proba(self._one(x))[0].tolist()))

    # ---- internals
    def _one(self, x):
        if _is_frame(x) or not isinstance(x, dict):
            raise TypeError(f"{type(self).__name__}: one instance is a dict {{feature: value}}, got {type(x).__name__}")
        import pandas as pd
        return pd.DataFrame([x])

    def _first_matrix(self, X, y):
        if _is_frame(X):  # held as it is: the schema comes from every row held back (_start)
            schema, M = None, X.reset_index(drop=True)
            _check_feature_names(self, X, reset=True)
            self.n_features_in_ = X.shape[1]
            y = np.asarray(y) if y is not None else None
            if y is None:
                raise ValueError(f"{type(self).__name__} requires y to be passed, but the target y is None")
        else:
            X, y = _validate(self, X, y, allow_nan=False, dtype=np.float64)
            schema, _ = fit_schema(X)
            M = to_matrix(X, schema)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        self._schema = schema
        return M, y

    def _next_matrix(self, X, y):
        if _is_frame(X):
            if self._schema is None:  # still held back as frames
                _check_feature_names(self, X, reset=False)
                if X.shape[1] != self.n_features_in_:
                    raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                     f"{self.n_features_in_} features as input")
                return X.reset_index(drop=True), np.asarray(y).ravel()
            return self._matrix(X, fitted="n_seen_"), np.asarray(y).ravel()
        if self._schema is None:
            raise ValueError(f"{type(self).__name__}: learned from DataFrames; give DataFrames with the same columns")
        X, y = _validate(self, X, y, reset=False, allow_nan=False, dtype=np.float64)
        return to_matrix(X, self._schema), (y.ravel() if y.ndim == 2 and y.shape[1] == 1 else y)

    def _predict_matrix(self, X):
        if getattr(self, "n_seen_", None) is not None:
            self._start()  # (rows still held back: the schema and the trees come from them)
        return self._matrix(X, fitted="n_seen_", allow_nan=False)

    def _model(self):
        check_is_fitted(self, "n_seen_")
        self._start()
        if self._trees["json"] is None:
            self._trees["json"] = self._online.model()
        return self._trees["json"]

    def _votes(self, M):
        return _gpudm.vfdt_votes(self._model(), M, self._schema).astype(np.float64)

    def __getstate__(self):
        model = self._model() if "n_seen_" in self.__dict__ else None  # (learns the rows held back first)
        state = dict(self.__dict__)
        if model is not None:  # the trees as the model; the live forest stays behind
            state["_trees"] = {"json": model}
            state["_online"] = None
            state["_pending"] = []
        return state

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": False}

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = BaseEstimator.__sklearn_tags__(self)
        tags.input_tags.allow_nan = False
        return tags


@set_signature
class HoeffdingForestClassifier(_Hoeffding):
    """Random forest of Hoeffding trees (ARF-style, as benchmarked by Marron et al. 2014): `trees`
    trees, each on sqrt(d) attributes per leaf, online bagging with Poisson(1) weights and one ADWIN
    per tree replacing it when its error rises; numeric attributes in `bins` quantile bins fixed by
    the first `bin_warmup` instances.

    Parameters: every vfdt param of `run_experiment --train vfdt --help` that defines the learner,
    with its default (the estimator's signature lists them; leaves vote by majority class), and
      classes: the labels, fixed at the start (needed by learn_one; partial_fit also takes them);
      device: "cpu" (the OpenMP backend, or the sequential one with n_jobs=1) or "cuda";
      n_jobs: threads (None or -1: all); random_state: the bagging weights' and leaves' seed.
    Every backend learns the same trees for the same seed and chunks (the family's equivalence tests).

    Attributes: classes_, n_features_in_, feature_names_in_ (DataFrame input), backend_, n_seen_,
    prequential_accuracy_ (test-then-train over everything learned), model_json_ (the trees).

    No missing values (impute first). On device="cuda" the ADWIN detectors keep a running error count
    per tree and instance seen on the GPU (4 bytes each: 100 trees, 400 MB per million instances).
    """

    _MODE = "forest"


@set_signature
class HoeffdingTreeClassifier(_Hoeffding):
    """One Hoeffding tree (VFDT): every attribute at every leaf, no bagging or ADWIN; the parameters
    and attributes of HoeffdingForestClassifier (trees, bagging, adwin and features do not apply)."""

    _MODE = "tree"

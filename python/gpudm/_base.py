"""What every gpudm estimator shares: params from the family's C++ table (the CLI's defaults) as
keyword-only arguments scikit-learn can read, the backend a device and n_jobs choose, input checks."""
import inspect
import json

import numpy as np

from . import _gpudm
from ._data import _is_frame, fit_schema, to_matrix

# The estimator's own params beside the family's.
OWN = [("device", "cpu"), ("n_jobs", None), ("random_state", None), ("verbose", False)]


def family_specs(params_json, runner_only):
    """The family's params an estimator offers: [{name, type, default, doc}] less the runner's."""
    return [s for s in json.loads(params_json) if s["name"] not in runner_only]


def set_signature(cls):
    """scikit-learn reads an estimator's params from its __init__ signature: the family's params and
    the estimator's own, all keyword-only, with their defaults."""
    def __init__(self, **params):
        NativeEstimator.__init__(self, **params)

    # (a function per class: the signature is the class's own)
    __init__.__qualname__ = f"{cls.__name__}.__init__"
    __init__.__signature__ = inspect.Signature(
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)] +
        [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=d) for n, d in cls._defaults()])
    cls.__init__ = __init__
    return cls


def _validate(est, X, y="no_validation", reset=True, allow_nan=True, **kw):
    """scikit-learn's input validation: the function of >= 1.6 (the method is gone in 1.7), else the
    method; NaN allowed (missing values) unless allow_nan is false. y as scikit-learn takes it:
    "no_validation" (predict) or the targets (None is an error there)."""
    finite = "allow-nan" if allow_nan else True
    try:
        from sklearn.utils.validation import validate_data
    except ImportError:
        kw["force_all_finite"] = finite
        return est._validate_data(X, y, reset=reset, **kw)
    kw["ensure_all_finite"] = finite
    return validate_data(est, X, y, reset=reset, **kw)


def _check_feature_names(est, X, reset):
    # scikit-learn >= 1.6 has a function, earlier versions a method
    try:
        from sklearn.utils.validation import _check_feature_names as f
        return f(est, X, reset=reset)
    except ImportError:
        return est._check_feature_names(X, reset=reset)


class NativeEstimator:
    """Mixin: _SPECS (family params), _FAMILY (registry name), _THREADS ({backend: param}) per class."""

    _SPECS = []
    _FAMILY = ""
    _THREADS = {}

    def __init__(self, **params):
        unknown = set(params) - {n for n, _ in self._defaults()}
        if unknown:
            raise TypeError(f"{type(self).__name__}: unknown parameter(s) {sorted(unknown)}")
        for name, default in self._defaults():
            setattr(self, name, params.get(name, default))

    @classmethod
    def _defaults(cls):
        return [(s["name"], s["default"]) for s in cls._SPECS] + OWN

    def _backend(self):
        name = type(self).__name__
        if self.device not in ("cpu", "cuda"):
            raise ValueError(f"{name}: device must be 'cpu' or 'cuda', got {self.device!r}")
        avail = {b: (ok, why) for b, ok, why in _gpudm.backends(self._FAMILY)}
        if self.device == "cuda":
            ok, why = avail.get("cuda", (False, "not built"))
            if not ok:
                raise RuntimeError(f"{name}: device='cuda' but the CUDA backend is unavailable here: {why}")
            return "cuda"
        if self.n_jobs == 1 or not avail.get("openmp", (False, ""))[0]:
            return "sequential"
        return "openmp"

    def _params_json(self, backend):
        p = {s["name"]: getattr(self, s["name"]) for s in self._SPECS}
        threads = 0 if self.n_jobs in (None, -1) else int(self.n_jobs)
        if threads < 0:
            raise ValueError(f"{type(self).__name__}: n_jobs must be None, -1 or positive, got {self.n_jobs}")
        if backend in self._THREADS:
            p[self._THREADS[backend]] = threads
        return json.dumps({k: (v.item() if isinstance(v, np.generic) else v) for k, v in p.items()})

    def _seed(self):
        seed = self.random_state
        if seed is None:
            return int(np.random.randint(0, 2**31 - 1))
        if isinstance(seed, np.random.RandomState):
            return int(seed.randint(0, 2**31 - 1))
        if isinstance(seed, np.random.Generator):
            return int(seed.integers(0, 2**31 - 1))
        if isinstance(seed, (int, np.integer)) and 0 <= int(seed) < 2**64:
            return int(seed)
        raise ValueError(f"{type(self).__name__}: random_state must be None, an int in [0, 2^64), a RandomState or a "
                         f"Generator, got {seed!r}")

    def _fit_matrix(self, X, y, y_numeric):
        """(float32 matrix, y as numpy, schema) of the training data; sets n_features_in_ and, for a
        DataFrame, feature_names_in_."""
        if _is_frame(X):
            schema, _ = fit_schema(X)
            _check_feature_names(self, X, reset=True)
            M = to_matrix(X, schema)
            self.n_features_in_ = M.shape[1]
            y = np.asarray(y)
        else:
            X, y = _validate(self, X, y, dtype=np.float64, y_numeric=y_numeric)
            schema, _ = fit_schema(X)
            M = to_matrix(X, schema)
        if y.ndim == 2 and y.shape[1] == 1:
            y = y.ravel()
        if M.shape[0] < 2:
            raise ValueError(f"n_samples = {M.shape[0]}: {type(self).__name__} needs at least 2 rows")
        self._schema = schema
        return M, y

    def _fit_classifier(self, X, y, fit):
        """Fits a classifier: y's labels as indices into classes_ (their text as the model file's class
        names), then fit(X, indices, names, schema, params_json, backend, seed, progress) -> (model
        file JSON, run summary JSON)."""
        from sklearn.utils.multiclass import check_classification_targets
        M, y = self._fit_matrix(X, y, y_numeric=False)
        check_classification_targets(y)
        self.classes_, idx = np.unique(y, return_inverse=True)
        if len(self.classes_) < 2:
            raise ValueError(f"{type(self).__name__} needs at least 2 classes; got {len(self.classes_)} class")
        names = [str(c) for c in self.classes_]
        if len(set(names)) != len(names):  # labels whose text collides (1 and "1"): by index
            names = [f"class{i}" for i in range(len(names))]
        backend = self._backend()
        model, run = fit(M, np.ascontiguousarray(idx, dtype=np.int32), names, self._schema, self._params_json(backend),
                         backend, self._seed(), bool(self.verbose))
        return self._fitted(model, run, backend)

    def _fitted(self, model, run, backend):
        """The fitted state: the model file's JSON text, the run's summary, the backend."""
        self.model_ = model
        self.run_ = json.loads(run)
        self.backend_ = backend
        return self

    def _matrix(self, X, fitted="model_", allow_nan=True):
        """X in the training columns' schema, once fitted (the attribute `fitted` is there)."""
        from sklearn.utils.validation import check_is_fitted
        check_is_fitted(self, fitted)
        if _is_frame(X):
            _check_feature_names(self, X, reset=False)
            if X.shape[1] != self.n_features_in_:
                raise ValueError(f"X has {X.shape[1]} features, but {type(self).__name__} is expecting "
                                 f"{self.n_features_in_} features as input")
            return to_matrix(X, self._schema)
        X = _validate(self, X, reset=False, allow_nan=allow_nan, dtype=np.float64)
        return to_matrix(X, self._schema)

    def _more_tags(self):  # scikit-learn < 1.6
        return {"allow_nan": True}

    def __sklearn_tags__(self):  # scikit-learn >= 1.6
        tags = super().__sklearn_tags__()
        tags.input_tags.allow_nan = True
        return tags

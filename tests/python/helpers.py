"""What the estimator tests share: Iris with text labels, the visible skip without a GPU, and the
pickled estimator predicting as the fitted one."""
import json
import pickle

import numpy as np
import pytest
from sklearn.datasets import load_iris

import gpudm


def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


def require_cuda(family):
    if not gpudm.cuda_available(family):
        why = [r for b, ok, r in gpudm.backends(family) if b == "cuda"]
        pytest.skip(f"SKIPPED: no usable GPU here ({why[0] if why else 'not built'})")


def pickled_predicts_alike(m, X, like=None):
    """The unpickled estimator predicts as `like` (default: m itself); it is returned."""
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(X), (like or m).predict(X))
    return back


def cuda_fits_the_cpu_model(make, X, y, family, key=lambda m: json.loads(m.model_)):
    """make(**kw) -> an unfitted estimator. Fitted on the GPU and on the sequential backend, its
    model (key) is the same, and the GPU one unpickled predicts as the CPU one."""
    require_cuda(family)
    cpu = make(n_jobs=1).fit(X, y)
    gpu = make(device="cuda").fit(X, y)
    assert gpu.backend_ == "cuda"
    assert key(gpu) == key(cpu)
    pickled_predicts_alike(gpu, X, like=cpu)


def pickle_keeps_the_rules(m, X):
    back = pickled_predicts_alike(m, X)
    assert back.rules_ == m.rules_

"""The Python package's GPRuleClassifier: scikit-learn compliance, every backend's equal rule lists,
the model file as the pickled state, pandas input, each algorithm on Iris."""
import json
import pickle

import numpy as np
import pytest
from sklearn.datasets import load_iris
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpudm
from gpudm import GPRuleClassifier

FAST = dict(population=40, generations=10)


@parametrize_with_checks([GPRuleClassifier(algorithm="tan", **FAST, random_state=0)])
def test_sklearn_compliance(estimator, check):
    check(estimator)


def iris():
    X, y = load_iris(return_X_y=True)
    return X, np.array(["setosa", "versicolor", "virginica"])[y]


@pytest.mark.parametrize("algorithm", ["falco", "tan", "bojarczuk"])
def test_each_algorithm_learns_iris(algorithm):
    X, y = iris()
    m = GPRuleClassifier(algorithm=algorithm, random_state=1).fit(X, y)
    assert m.score(X, y) > 0.9
    assert list(m.classes_) == ["setosa", "versicolor", "virginica"]
    assert "THEN setosa" in m.rules_ and "ELSE" in m.rules_


def test_defaults_are_the_cli_defaults():
    p = GPRuleClassifier().get_params()
    specs = {s["name"]: s["default"] for s in json.loads(gpudm._gpudm.gp_params())}
    assert p["algorithm"] == specs["algorithm"] == "falco"
    assert p["population"] == 200 and p["generations"] == 100
    assert "folds" not in p and "record_every" not in p


def test_cpu_backends_give_the_same_rules():
    X, y = iris()
    seq = GPRuleClassifier(algorithm="bojarczuk", **FAST, random_state=3, n_jobs=1).fit(X, y)
    omp = GPRuleClassifier(algorithm="bojarczuk", **FAST, random_state=3, n_jobs=2).fit(X, y)
    assert seq.backend_ == "sequential"
    if omp.backend_ != "openmp":
        pytest.skip("SKIPPED: no OpenMP backend in this build")
    assert json.loads(seq.model_)["rules"] == json.loads(omp.model_)["rules"]
    np.testing.assert_array_equal(seq.predict(X), omp.predict(X))


def test_cuda_gives_the_cpu_rules_and_pickles_to_the_cpu():
    if not gpudm.cuda_available("gp_rules"):
        why = [r for b, ok, r in gpudm.backends("gp_rules") if b == "cuda"]
        pytest.skip(f"SKIPPED: no usable GPU here ({why[0] if why else 'not built'})")
    X, y = iris()
    cpu = GPRuleClassifier(**FAST, random_state=4, n_jobs=1).fit(X, y)
    gpu = GPRuleClassifier(**FAST, random_state=4, device="cuda").fit(X, y)
    assert gpu.backend_ == "cuda"
    assert json.loads(gpu.model_)["rules"] == json.loads(cpu.model_)["rules"]  # integer counts: exact
    back = pickle.loads(pickle.dumps(gpu))
    np.testing.assert_array_equal(back.predict(X), cpu.predict(X))


def test_pickle_keeps_the_rules():
    X, y = iris()
    m = GPRuleClassifier(**FAST, random_state=5).fit(X, y)
    back = pickle.loads(pickle.dumps(m))
    np.testing.assert_array_equal(back.predict(X), m.predict(X))
    assert back.rules_ == m.rules_


def test_pandas_frame_with_a_nominal_column():
    pd = pytest.importorskip("pandas")
    X, y = iris()
    df = pd.DataFrame(X, columns=["sepal_length", "sepal_width", "petal_length", "petal_width"])
    df["size"] = pd.Categorical(np.where(X[:, 2] > 4, "big", "small"))
    m = GPRuleClassifier(algorithm="tan", **FAST, random_state=6).fit(df, y)
    assert list(m.feature_names_in_) == list(df.columns)
    assert json.loads(m.model_)["attributes"][4]["kind"] == "nominal"
    assert m.score(df, y) > 0.8
    with pytest.raises(ValueError):
        m.predict(df[list(reversed(df.columns))])

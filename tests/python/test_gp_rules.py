"""The Python package's GPRuleClassifier: scikit-learn compliance, every backend's equal rule lists,
the model file as the pickled state, pandas input, each algorithm on Iris."""
import json

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpudm
from helpers import cuda_fits_the_cpu_model, iris, pickle_keeps_the_rules
from gpudm import GPRuleClassifier

FAST = dict(population=40, generations=10)


@parametrize_with_checks([GPRuleClassifier(algorithm="tan", **FAST, random_state=0)])
def test_sklearn_compliance(estimator, check):
    check(estimator)



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
    # integer counts: exact
    cuda_fits_the_cpu_model(lambda **kw: GPRuleClassifier(**FAST, random_state=4, **kw), *iris(), "gp_rules",
                            key=lambda m: json.loads(m.model_)["rules"])


def test_pickle_keeps_the_rules():
    X, y = iris()
    pickle_keeps_the_rules(GPRuleClassifier(**FAST, random_state=5).fit(X, y), X)

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

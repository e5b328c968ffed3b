"""The Python package's PittsburghClassifier: scikit-learn compliance, the host interpreter's
predictions against the GA's own accuracy, every backend's equal decision lists, the population file
as the pickled state, pandas input with a nominal column."""
import json

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpudm
from helpers import cuda_fits_the_cpu_model, iris, pickle_keeps_the_rules
from gpudm import PittsburghClassifier

FAST = dict(population=20, generations=15)


# the compliance checks ask 83 % training accuracy on 3 blobs: a GA long enough to get there
@parametrize_with_checks([PittsburghClassifier(population=50, generations=80, random_state=0)])
def test_sklearn_compliance(estimator, check):
    check(estimator)



def test_learns_iris_and_predicts_as_the_engine_scored():
    X, y = iris()
    m = PittsburghClassifier(population=50, generations=100, random_state=1).fit(X, y)
    assert m.score(X, y) > 0.9
    # the host's decision-list interpreter (predict) and the backend's evaluator (the GA's
    # training accuracy) agree row for row in total
    assert m.score(X, y) == pytest.approx(m.run_["train_accuracy"], abs=1e-12)
    assert m.rules_.splitlines()[-1].startswith("ELSE ")
    assert all(line.startswith(("IF ", "ELSE ")) for line in m.rules_.splitlines())


def test_defaults_are_the_cli_defaults():
    p = PittsburghClassifier().get_params()
    specs = {s["name"]: s["default"] for s in json.loads(gpudm._gpudm.pitt_params())}
    assert p["population"] == specs["population"] and p["generations"] == specs["generations"]
    assert "measure_power" not in p and "test_fraction" not in p and "mode" not in p


def test_cpu_backends_give_the_same_list():
    X, y = iris()
    seq = PittsburghClassifier(**FAST, random_state=3, n_jobs=1).fit(X, y)
    omp = PittsburghClassifier(**FAST, random_state=3, n_jobs=2).fit(X, y)
    assert seq.backend_ == "sequential"
    if omp.backend_ != "openmp":
        pytest.skip("SKIPPED: no OpenMP backend in this build")
    assert json.loads(seq.model_) == json.loads(omp.model_)
    np.testing.assert_array_equal(seq.predict(X), omp.predict(X))


def test_cuda_gives_the_cpu_list_and_pickles_to_the_cpu():
    # integer confusion counts: the same GA, the same list
    cuda_fits_the_cpu_model(lambda **kw: PittsburghClassifier(**FAST, random_state=4, **kw), *iris(), "pittsburgh")


def test_pickle_keeps_the_list():
    X, y = iris()
    pickle_keeps_the_rules(PittsburghClassifier(**FAST, random_state=5).fit(X, y), X)


def test_pandas_frame_with_a_nominal_column():
    pd = pytest.importorskip("pandas")
    X, y = iris()
    df = pd.DataFrame(X, columns=["sepal_length", "sepal_width", "petal_length", "petal_width"])
    df["size"] = pd.Categorical(np.where(X[:, 2] > 4, "big", "small"))
    m = PittsburghClassifier(population=50, generations=60, random_state=6).fit(df, y)
    assert list(m.feature_names_in_) == list(df.columns)
    assert m.score(df, y) == pytest.approx(m.run_["train_accuracy"], abs=1e-12)
    assert "petal" in m.rules_ or "sepal" in m.rules_ or "size" in m.rules_

"""The Python package's GMTRegressor: scikit-learn compliance, every backend's equal answers, the
model file as the pickled state, pandas input, a 100K-row fit."""
import json

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpudm
from helpers import pickled_predicts_alike, require_cuda
from gpudm import GMTRegressor

# Short runs: the checks fit dozens of times; the learner is the same at any budget.
FAST = dict(iterations=100, population=16)


def data(n=600, seed=0):
    """Two linear regimes split on x0 (a model tree's home ground) plus noise."""
    rng = np.random.RandomState(seed)
    X = rng.uniform(-1, 1, (n, 3))
    y = np.where(X[:, 0] > 0, 2 * X[:, 1] + 1, -X[:, 2]) + rng.normal(0, 0.05, n)
    return X, y


@parametrize_with_checks([GMTRegressor(**FAST, random_state=0)])
def test_sklearn_compliance(estimator, check):
    check(estimator)


def test_defaults_are_the_cli_defaults():
    p = GMTRegressor().get_params()
    specs = {s["name"]: s["default"] for s in json.loads(gpudm._gpudm.gmt_params())}
    assert p["iterations"] == specs["iterations"] == 10000
    assert p["population"] == 64 and p["smoothing"] == 15.0 and p["clamp_margin"] == 0.1
    assert p["device"] == "cpu" and p["random_state"] is None
    with pytest.raises(TypeError):
        GMTRegressor(no_such_param=1)


def test_fits_two_regimes_and_prints_the_tree():
    X, y = data()
    m = GMTRegressor(iterations=1000, random_state=1).fit(X, y)
    assert m.score(X, y) > 0.99
    text = m.export_text()
    assert "x0 <=" in text and "LM1" in text
    assert m.tree_ and m.run_["iterations"] == 1000


def test_cpu_backends_give_the_same_model():
    X, y = data()
    seq = GMTRegressor(**FAST, random_state=3, n_jobs=1).fit(X, y)
    omp = GMTRegressor(**FAST, random_state=3, n_jobs=2).fit(X, y)
    assert seq.backend_ == "sequential"
    if omp.backend_ != "openmp":
        pytest.skip("SKIPPED: no OpenMP backend in this build")
    assert json.loads(seq.model_)["tree"] == json.loads(omp.model_)["tree"]
    np.testing.assert_array_equal(seq.predict(X), omp.predict(X))


def test_cuda_gives_the_cpu_model_and_pickles_to_the_cpu():
    require_cuda("gmt")
    X, y = data()
    cpu = GMTRegressor(**FAST, random_state=4, n_jobs=1).fit(X, y)
    gpu = GMTRegressor(**FAST, random_state=4, device="cuda").fit(X, y)
    assert gpu.backend_ == "cuda"
    # The family's GPU tolerance (its equivalence tests): predictions within float rounding
    np.testing.assert_allclose(gpu.predict(X), cpu.predict(X), rtol=1e-4, atol=1e-4)
    pickled_predicts_alike(gpu, X)


def test_pickle_keeps_the_model():
    X, y = data()
    m = GMTRegressor(**FAST, random_state=5).fit(X, y)
    back = pickled_predicts_alike(m, X)
    assert back.model_ == m.model_


def test_pandas_frame_with_names_categories_and_missing_values():
    pd = pytest.importorskip("pandas")
    X, y = data(800, seed=6)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    df["kind"] = pd.Categorical(np.where(X[:, 0] > 0, "up", "down"))
    df.loc[::50, "b"] = np.nan
    m = GMTRegressor(**FAST, random_state=6).fit(df, y)
    assert list(m.feature_names_in_) == ["a", "b", "c", "kind"]
    model = json.loads(m.model_)
    assert [a["name"] for a in model["attributes"]] == ["a", "b", "c", "kind"]
    assert model["attributes"][3]["kind"] == "nominal"
    p = m.predict(df)
    assert p.shape == (800,) and np.all(np.isfinite(p))
    # columns named as in fit but in another order: rejected, never silently swapped
    with pytest.raises(ValueError):
        m.predict(df[["b", "a", "c", "kind"]])


def test_a_100k_row_frame():
    pd = pytest.importorskip("pandas")
    X, y = data(100_000, seed=7)
    df = pd.DataFrame(X, columns=["a", "b", "c"])
    m = GMTRegressor(iterations=200, population=16, random_state=7).fit(df, y)
    assert m.score(df, y) > 0.9


def test_a_missing_value_is_filled_with_the_training_mean_whatever_else_is_scored():
    X, y = data()
    m = GMTRegressor(**FAST, random_state=8).fit(X, y)  # no missing values in training
    row = X[:1].copy()
    row[0, 1] = np.nan
    alone = m.predict(row)[0]
    for other in (X[1:5], X[100:300]):
        assert m.predict(np.vstack([row, other]))[0] == alone
    filled = row.copy()
    filled[0, 1] = np.float32(X[:, 1].astype(np.float32).mean())
    assert abs(m.predict(filled)[0] - alone) < 1e-6 * max(1.0, abs(alone))


def test_frames_without_string_names_and_pandas_missing_markers():
    pd = pytest.importorskip("pandas")
    X, y = data(400, seed=9)
    df = pd.DataFrame(X)  # integer column names: matched by name too
    m = GMTRegressor(**FAST, random_state=9).fit(df, y)
    with pytest.raises(ValueError):
        m.predict(df[[2, 1, 0]])
    nf = pd.DataFrame({"a": pd.array([1, None, 3] * 100 + [2] * 100, dtype="Int64"),
                       "s": pd.array(["x", None, "y", "z"] * 100, dtype="string")})
    m = GMTRegressor(**FAST, random_state=9).fit(nf, np.arange(400, dtype=float) % 7)
    assert json.loads(m.model_)["attributes"][1]["kind"] == "nominal"
    assert np.all(np.isfinite(m.predict(nf)))

"""The Python package's Hoeffding forest and tree: scikit-learn compliance, a stream in chunks learned
as the stream whole on every backend (CUDA included where there is a GPU), the trees as the pickled
state, River's learn_one / predict_one, pandas input."""
import json

import numpy as np
import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

import gpudm
from helpers import pickled_predicts_alike, require_cuda
from gpudm import HoeffdingForestClassifier, HoeffdingTreeClassifier

# The compliance checks fit 30 to 300 rows of 3 classes: leaves checked every 2 instances, a loose
# bound and tie threshold (with delta 0.5 and tau 0.5 a leaf may split after 4 instances), so that
# the trees split within them
QUICK = dict(grace=2, delta=0.5, tau=0.5, batch=1, bin_warmup=20)


@parametrize_with_checks([HoeffdingForestClassifier(trees=5, random_state=0, **QUICK),
                          HoeffdingTreeClassifier(random_state=0, **QUICK)])
def test_sklearn_compliance(estimator, check):
    check(estimator)


def stream(n=20000, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    y = np.where((X[:, 0] > 0) ^ (X[:, 1] > 0.5), "b", "a")
    return X, y


def test_defaults_are_the_cli_defaults():
    p = HoeffdingForestClassifier().get_params()
    specs = {s["name"]: s["default"] for s in json.loads(gpudm._gpudm.vfdt_params())}
    assert p["trees"] == specs["trees"] == 100 and p["batch"] == specs["batch"]
    assert p["delta"] == specs["delta"] and p["grace"] == specs["grace"]
    assert "window" not in p and "mode" not in p and "engine" not in p


def test_chunks_of_the_batch_are_the_stream_whole_on_every_cpu_backend():
    X, y = stream()
    whole = HoeffdingForestClassifier(trees=10, batch=256, random_state=1, n_jobs=1).fit(X, y)
    chunks = HoeffdingForestClassifier(trees=10, batch=256, random_state=1, n_jobs=2)
    for a in range(0, len(y), 2560):
        chunks.partial_fit(X[a:a + 2560], y[a:a + 2560], classes=["a", "b"])
    assert whole.backend_ == "sequential"
    if chunks.backend_ != "openmp":
        pytest.skip("SKIPPED: no OpenMP backend in this build")
    assert whole.model_json_ == chunks.model_json_
    assert whole.n_correct_ == chunks.n_correct_ and chunks.n_seen_ == len(y)
    np.testing.assert_array_equal(whole.predict(X), chunks.predict(X))
    assert whole.score(X, y) > 0.7  # the XOR of two thresholds, learned


def test_cuda_learns_the_cpu_forest_and_pickles_to_the_cpu():
    require_cuda("vfdt")
    X, y = stream()
    cpu = HoeffdingForestClassifier(trees=20, random_state=4, n_jobs=1)
    gpu = HoeffdingForestClassifier(trees=20, random_state=4, device="cuda")
    for a in range(0, len(y), 4096):  # chunks of multiples of the batch (1024)
        cpu.partial_fit(X[a:a + 4096], y[a:a + 4096], classes=["a", "b"])
        gpu.partial_fit(X[a:a + 4096], y[a:a + 4096], classes=["a", "b"])
    assert gpu.backend_ == "cuda"
    assert gpu.model_json_ == cpu.model_json_  # integer counts: exact
    pickled_predicts_alike(gpu, X, like=cpu)


def test_pickle_keeps_the_trees_and_predicts_only():
    X, y = stream(5000)
    m = HoeffdingTreeClassifier(random_state=5).fit(X, y)
    back = pickled_predicts_alike(m, X)
    np.testing.assert_allclose(back.predict_proba(X), m.predict_proba(X))
    with pytest.raises(ValueError, match="predicts only"):
        back.partial_fit(X[:10], y[:10])
    m.partial_fit(X[:10], y[:10])  # the live one learns on


def test_rows_wait_for_the_bins_then_learn_in_order():
    X, y = stream(3000)
    held = HoeffdingForestClassifier(trees=5, random_state=6, batch=1, n_jobs=1)
    for i in range(0, 1500, 100):  # below bin_warmup (1000) nothing is learned yet
        held.partial_fit(X[i:i + 100], y[i:i + 100], classes=["a", "b"])
        assert held.n_seen_ == (0 if i + 100 < 1000 else i + 100)
    whole = HoeffdingForestClassifier(trees=5, random_state=6, batch=1, n_jobs=1).fit(X[:1500], y[:1500])
    assert held.model_json_ == whole.model_json_


def test_river_protocol_learn_one_predict_one():
    X, y = stream(3000)
    names = [f"f{j}" for j in range(6)]
    one = HoeffdingTreeClassifier(classes=["a", "b"], random_state=7, batch=1, n_jobs=1)
    for i in range(len(y)):
        one.learn_one(dict(zip(names, X[i].tolist())), y[i])
    pd = pytest.importorskip("pandas")
    frame = HoeffdingTreeClassifier(random_state=7, batch=1, n_jobs=1).fit(pd.DataFrame(X, columns=names), y)
    assert one.model_json_ == frame.model_json_
    x = dict(zip(names, X[0].tolist()))
    assert one.predict_one(x) in ("a", "b")
    p = one.predict_proba_one(x)
    assert set(p) == {"a", "b"} and abs(sum(p.values()) - 1) < 1e-12
    assert list(one.feature_names_in_) == names
    with pytest.raises(ValueError, match="classes"):
        HoeffdingTreeClassifier().learn_one(x, "a")


def test_pandas_frame_with_a_nominal_column():
    pd = pytest.importorskip("pandas")
    X, y = stream(6000)
    df = pd.DataFrame(X, columns=[f"f{j}" for j in range(6)])
    df["side"] = pd.Categorical(np.where(X[:, 0] > 0, "right", "left"))
    m = HoeffdingTreeClassifier(random_state=8).fit(df, y)
    assert list(m.feature_names_in_) == list(df.columns)
    assert m.score(df, y) > 0.7
    coding = json.loads(m.model_json_)["coding"]
    assert coding[-1]["name"] == "side" and coding[-1]["source_nominal"]


def test_pickled_while_rows_are_held_back_keeps_them():
    X, y = stream(3000)
    held = HoeffdingForestClassifier(trees=5, random_state=9, batch=1, n_jobs=1)
    held.partial_fit(X[:300], y[:300], classes=["a", "b"])  # below bin_warmup: nothing learned yet
    assert held.n_seen_ == 0
    back = pickled_predicts_alike(held, X)  # pickling learns the rows held back first
    assert back.n_seen_ == held.n_seen_ == 300 and back.model_json_ == held.model_json_
    with pytest.raises(ValueError, match="predicts only"):
        back.partial_fit(X[300:400], y[300:400])


def test_learn_one_with_text_features_takes_their_categories_from_the_rows_held_back():
    rng = np.random.default_rng(10)
    colour = rng.choice(["red", "green", "blue"], size=2000)
    x1 = rng.normal(size=2000)
    y = np.where((colour == "red") | (x1 > 1), "yes", "no")
    one = HoeffdingTreeClassifier(classes=["no", "yes"], random_state=10, batch=1, n_jobs=1)
    for c, v, t in zip(colour, x1, y):
        one.learn_one({"colour": str(c), "x1": float(v)}, t)
    coding = json.loads(one.model_json_)["coding"]
    assert coding[0]["name"] == "colour" and coding[0]["source_nominal"] and coding[0]["values"] == 3
    assert one.predict_one({"colour": "red", "x1": 0.0}) == "yes"
    assert one.prequential_accuracy_ > 0.8

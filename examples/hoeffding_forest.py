#!/usr/bin/env python3
"""HoeffdingForestClassifier in a few seconds on a CPU: a drifting stream learned chunk by chunk
(partial_fit, prequential accuracy per chunk), then one instance at a time (River's learn_one).

    .venv/bin/python examples/hoeffding_forest.py        (after ./scripts/test.sh)
"""
import numpy as np

from gpudm import HoeffdingForestClassifier, cuda_available

rng = np.random.default_rng(0)
n = 200_000
X = rng.normal(size=(n, 8))
concept = np.arange(n) >= n // 2  # the concept drifts half way: another attribute decides
y = np.where(np.where(concept, X[:, 3] > 0.2, (X[:, 0] > 0) ^ (X[:, 1] > 0.5)), "yes", "no")

device = "cuda" if cuda_available("vfdt") else "cpu"
forest = HoeffdingForestClassifier(trees=50, random_state=1, device=device)
for a in range(0, n, 20_480):  # chunks of multiples of the batch (1024): the stream learned whole
    seen, right = forest.n_seen_ if a else 0, forest.n_correct_ if a else 0
    forest.partial_fit(X[a:a + 20_480], y[a:a + 20_480], classes=["no", "yes"])
    print(f"instances {a:>7}-{a + 20_480:<7} prequential accuracy {(forest.n_correct_ - right) / (forest.n_seen_ - seen):.3f}")
print(f"whole stream: {forest.prequential_accuracy_:.3f} on {device} ({forest.backend_})")

one = HoeffdingForestClassifier(trees=10, classes=["no", "yes"], batch=1, random_state=2)  # River's protocol
for i in range(5000):
    one.learn_one({f"x{j}": float(v) for j, v in enumerate(X[i])}, y[i])
x = {f"x{j}": float(v) for j, v in enumerate(X[5000])}
print(f"learn_one: prequential {one.prequential_accuracy_:.3f}; next instance {one.predict_one(x)} {one.predict_proba_one(x)}")

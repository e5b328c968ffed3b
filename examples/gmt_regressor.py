#!/usr/bin/env python3
"""GMTRegressor in a few seconds on a CPU: a model tree evolved on data with two linear regimes.

    .venv/bin/python examples/gmt_regressor.py        (after ./scripts/test.sh)
"""
import numpy as np
from sklearn.model_selection import train_test_split

from gpudm import GMTRegressor, cuda_available

rng = np.random.RandomState(0)
X = rng.uniform(-1, 1, (5000, 4))
y = np.where(X[:, 0] > 0.2, 3 * X[:, 1] + 1, -2 * X[:, 2]) + rng.normal(0, 0.1, len(X))
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)

model = GMTRegressor(iterations=500, random_state=1, device="cuda" if cuda_available() else "cpu")
model.fit(X_train, y_train)
print(model.export_text())
print(f"backend {model.backend_}, {model.run_['induction_seconds']:.2f} s; test R^2 {model.score(X_test, y_test):.4f}")

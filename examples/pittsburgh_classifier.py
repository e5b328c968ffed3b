#!/usr/bin/env python3
"""PittsburghClassifier in a few seconds on a CPU: a decision list evolved by the Pittsburgh GA on
Iris, cross-validated, and the list itself.

    .venv/bin/python examples/pittsburgh_classifier.py        (after ./scripts/test.sh)
"""
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score

from gpudm import PittsburghClassifier, cuda_available

iris = load_iris(as_frame=True)
X, y = iris.data, iris.target_names[iris.target]
device = "cuda" if cuda_available("pittsburgh") else "cpu"
model = PittsburghClassifier(population=50, generations=100, random_state=1, device=device)
print(f"5-fold accuracy {cross_val_score(model, X, y, cv=5).mean():.3f}")
model.fit(X, y)
print(f"training accuracy {model.run_['train_accuracy']:.3f}, {model.run_['gpops']:,} GPops\n{model.rules_}")

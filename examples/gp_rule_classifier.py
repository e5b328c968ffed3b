#!/usr/bin/env python3
"""GPRuleClassifier in a few seconds on a CPU: the three GP rule learners on Iris, their rule lists.

    .venv/bin/python examples/gp_rule_classifier.py        (after ./scripts/test.sh)
"""
from sklearn.datasets import load_iris
from sklearn.model_selection import cross_val_score

from gpudm import GPRuleClassifier, cuda_available

iris = load_iris(as_frame=True)
X, y = iris.data, iris.target_names[iris.target]
device = "cuda" if cuda_available("gp_rules") else "cpu"
for algorithm in ("falco", "tan", "bojarczuk"):
    model = GPRuleClassifier(algorithm=algorithm, random_state=1, device=device)
    acc = cross_val_score(model, X, y, cv=5).mean()
    print(f"== {algorithm}: 5-fold accuracy {acc:.3f}\n{model.fit(X, y).rules_}")

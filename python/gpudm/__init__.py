"""gpudm: the evolutionary and streaming learners of the gpudm benchmark, from Python.

Estimators with scikit-learn's API over the C++/CUDA families (the same code as run_experiment):

    from gpudm import GMTRegressor
    model = GMTRegressor(iterations=2000, device="cpu").fit(X, y)
    model.predict(X)
    GPRuleClassifier(algorithm="tan").fit(X, labels)
    forest = HoeffdingForestClassifier(classes=[0, 1])
    for X_chunk, y_chunk in stream: forest.partial_fit(X_chunk, y_chunk)

`gpudm.backends("gmt")` lists the backends this build has and why one is missing; `gpudm.cuda_available()`.
"""
from . import _gpudm
from .gmt import GMTRegressor
from .gp_rules import GPRuleClassifier
from .pittsburgh import PittsburghClassifier
from .vfdt import HoeffdingForestClassifier, HoeffdingTreeClassifier

__all__ = ["GMTRegressor", "GPRuleClassifier", "HoeffdingForestClassifier", "HoeffdingTreeClassifier",
           "PittsburghClassifier", "backends", "cuda_available"]
__version__ = "0.1.0"


def backends(family):
    """[(backend, available, reason)] of a family ("gmt", ...), the reference backend first."""
    return list(_gpudm.backends(family))


def cuda_available(family="gmt"):
    """Whether this build has the family's CUDA backend and a usable GPU."""
    return any(b == "cuda" and ok for b, ok, _ in _gpudm.backends(family))

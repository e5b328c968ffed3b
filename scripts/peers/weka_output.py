"""Weka 3.6 regression output (a learner run with -t TRAIN -T TEST), read the one way every study uses.

weka(path): RMSE/MAE/rows from '=== Error on test data ===', size from 'Number of Rules' (M5P) or the
leaf lines (REPTree), attributes in models = terms with '*' in M5P's LM blocks, time = 'Time taken
to build model'. A study keeps each output gzipped (PATH.gz; M5P prints every leaf's model): either is read.
"""
import gzip
import os
import re


def weka(path):
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        with gzip.open(path + ".gz", "rt") as f:
            text = f.read()
    else:
        with open(path) as f:
            text = f.read()
    r = {}
    test = text.split("=== Error on test data ===")[-1]
    m = re.search(r"Root mean squared error\s+([-\d.eE]+)", test)
    r["rmse"] = float(m.group(1)) if m else None
    m = re.search(r"Mean absolute error\s+([-\d.eE]+)", test)
    r["mae"] = float(m.group(1)) if m else None
    m = re.search(r"Total Number of Instances\s+(\d+)", test)
    r["rows"] = int(m.group(1)) if m else None
    m = re.search(r"Time taken to build model: ([\d.]+) seconds", text)
    r["seconds"] = float(m.group(1)) if m else None
    m = re.search(r"Number of Rules : (\d+)", text)
    if m:  # M5P
        r["leaves"] = int(m.group(1))
        models = text.split("LM num:")[1:]
        r["attrs"] = sum(len(re.findall(r"^\s*[-+]?\s*[-\d.eE]+ \* ", b.split("\n\n")[0], re.M)) for b in models)
    else:  # REPTree: leaf lines end with ': value (n/var) [n/var]'
        tree = text.split("=== Error on training data ===")[0]
        r["leaves"] = len(re.findall(r": [-\d.eE]+ \([\d.]+/[-\d.eE]+\)", tree))
        r["attrs"] = 0
    return r

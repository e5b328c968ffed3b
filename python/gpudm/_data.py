"""Input conversion shared by the estimators: numpy arrays or pandas DataFrames to float32
columns (NaN = missing) and the attribute descriptions the native module takes."""
import numpy as np


def _is_frame(X):
    return hasattr(X, "dtypes") and hasattr(X, "columns")


def fit_schema(X):
    """The training columns' schema: [(name, nominal, categories)], and feature_names_in_ (None for
    arrays). Pandas categorical (and object/string) columns are nominal, by their categories."""
    if _is_frame(X):
        names = [str(c) for c in X.columns]
        schema = []
        for c, name in zip(X.columns, names):
            col = X[c]
            if str(col.dtype) == "category":
                schema.append((name, True, [str(v) for v in col.cat.categories]))
            elif col.dtype == object or str(col.dtype) == "string":
                cats = sorted({str(v) for v in col.dropna()})
                schema.append((name, True, cats))
            else:
                schema.append((name, False, []))
        return schema, np.asarray(names, dtype=object)
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"Expected 2D array, got {X.ndim}D array instead")
    return [(f"x{i}", False, []) for i in range(X.shape[1])], None


def to_matrix(X, schema):
    """X as a C-contiguous float32 matrix in the schema's columns; a nominal column as category codes
    (an unseen category or NaN: missing)."""
    if _is_frame(X):
        cols = []
        for (name, nominal, cats), c in zip(schema, X.columns):
            col = X[c]
            if nominal:
                index = {v: i for i, v in enumerate(cats)}
                cols.append(np.array([index.get(str(v), np.nan) if v == v and v is not None else np.nan for v in col],
                                     dtype=np.float32))
            else:
                cols.append(np.asarray(col, dtype=np.float32))
        M = np.column_stack(cols) if cols else np.zeros((len(X), 0), dtype=np.float32)
    else:
        M = np.asarray(X, dtype=np.float32)
    return np.ascontiguousarray(M, dtype=np.float32)

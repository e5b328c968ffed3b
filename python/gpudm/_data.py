"""Input conversion shared by the estimators: numpy arrays or pandas DataFrames to float32
columns (NaN = missing) and the attribute descriptions the native module takes."""
import numpy as np


def _is_frame(X):
    return hasattr(X, "dtypes") and hasattr(X, "columns")


def _is_text(dtype):
    """A column of text: object, or pandas' string dtypes ("string", and pandas 3's default "str",
    whose name is not "string")."""
    import pandas as pd
    return dtype == object or isinstance(dtype, pd.StringDtype)


def _label_key(v):
    """The order the CLI's loaders give a text column's categories (datasets/loaders.cpp label_less):
    numbers first, by value, then text; GMT's nominal codes follow it, so both fit the same tree."""
    try:
        x = float(v)
        if x == x:
            return (0, x, v)
    except ValueError:
        pass
    return (1, 0.0, v)


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
            elif _is_text(col.dtype):
                cats = sorted(set(col.dropna().astype("string")), key=_label_key)
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
        import pandas as pd
        names = [str(c) for c in X.columns]
        if names != [s[0] for s in schema]:
            raise ValueError(f"the columns {names} are not the training columns {[s[0] for s in schema]} in their order")
        cols = []
        for (name, nominal, cats), c in zip(schema, X.columns):
            col = X[c]
            if nominal:
                # the training categories' codes by name; missing and unseen: NaN (missing)
                codes = pd.Categorical(col.astype("string"), categories=cats).codes.astype(np.float32)
                codes[codes < 0] = np.nan
                cols.append(codes)
            else:
                cols.append(col.to_numpy(dtype=np.float32, na_value=np.nan))
        M = np.column_stack(cols) if cols else np.zeros((len(X), 0), dtype=np.float32)
    else:
        M = np.asarray(X, dtype=np.float32)
    return np.ascontiguousarray(M, dtype=np.float32)

"""The native module's interface to the process: it exports its init function only, so that the
C++ library's template instances it defines bind to itself and never to another loaded object's
copy (on the GPU image, with them exported, export_text crashed), and text columns of every pandas
text dtype are nominal."""
import shutil
import subprocess
import sys

import numpy as np
import pytest

import gpudm
from gpudm import _data


@pytest.mark.skipif(not sys.platform.startswith("linux") or shutil.which("nm") is None,
                    reason="SKIPPED: needs Linux and binutils' nm")
def test_module_exports_its_init_function_only():
    out = subprocess.run(["nm", "-D", "--defined-only", gpudm._gpudm.__file__], capture_output=True, text=True,
                         check=True).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.strip()]
    assert names == ["PyInit__gpudm"], names[:20]


@pytest.mark.parametrize("dtype", ["object", "string", "str"])
def test_text_columns_of_any_pandas_text_dtype_are_nominal(dtype):
    pd = pytest.importorskip("pandas")
    try:
        col = pd.Series(["blue", "red", None], dtype=dtype)
    except TypeError:
        pytest.skip(f"SKIPPED: this pandas ({pd.__version__}) has no dtype '{dtype}'")
    if dtype == "str" and col.dtype == object:
        pytest.skip(f"SKIPPED: this pandas ({pd.__version__}) reads 'str' as object")
    f = pd.DataFrame({"colour": col, "x": [0.5, 1.5, np.nan]})
    schema, _ = _data.fit_schema(f)
    assert schema == [("colour", True, ["blue", "red"]), ("x", False, [])]
    np.testing.assert_array_equal(_data.to_matrix(f, schema), np.array([[0, 0.5], [1, 1.5], [np.nan, np.nan]], np.float32))

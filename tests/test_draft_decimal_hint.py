"""The hint to bin a listed quantity, for decimals: a lab value in tenths (HbA1c 4.0-12.2,
76 values) is listed as 'few' decimals; noise on each of its values flattens it."""
import json
import shlex

import numpy as np
import pandas as pd

from gpu_dpsyn.cli import main
from gpu_dpsyn.data.schema import load_schema


def _draft(tmp_path, capsys, df):
    data, doc = tmp_path / "t.csv", tmp_path / "s.json"
    df.to_csv(data, index=False)
    assert main(["infer-schema", str(data), "--out", str(doc)]) == 0
    lines = capsys.readouterr().err.splitlines()
    return doc, {x.split()[0]: x for x in lines if x.startswith("  ")}


def test_listed_decimals_of_a_quantity_get_the_hint_to_bin_them(tmp_path, capsys):
    """A lab panel's HbA1c in tenths (76 values, 4-12.2) was listed with no hint, where
    ages of as many values read 'bin it': at eps 1 (3,500 patients, 3 visits each, seeds
    1-2) its synthetic median came out 7.3 and 6.5 (real 6.2), the share above 6.5 among
    diabetics 0.59 and 0.49 (real 0.93); binned in 16, 6.2 and 6.3, 0.79 and 0.85.  The
    edit keeps the decimals written (a new type starts the column afresh: 4.45342)."""
    r = np.random.default_rng(5)
    n = 3000
    df = pd.DataFrame({"hba1c": np.round(np.clip(r.normal(6.5, 1.5, n), 4, 12.2), 1),
                       "half": r.choice(np.arange(1, 6, 0.5), n),
                       "price": r.choice(np.round(np.arange(40) * 2.5 + 0.99, 2), n),
                       "k": r.choice(["a", "b"], n)})
    doc, lines = _draft(tmp_path, capsys, df)
    line = lines["hba1c"]
    assert "listed" in line and "bin it" in line, line
    assert "bin it" not in lines["half"] and "bin it" not in lines["price"], lines
    start = line.index("gpu-dpsyn schema FILE ") + 22
    edit = line[start:line.index(")", start)]
    assert main(["schema", str(doc)] + shlex.split(edit)) == 0, (line, capsys.readouterr())
    col = load_schema(json.loads(doc.read_text()))["hba1c"]
    assert col.kind == "numeric" and not col.integer and col.decimals == 1, col
    assert col.value_range == (df.hba1c.min(), df.hba1c.max()) and col.bins == 16, col

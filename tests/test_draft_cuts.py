"""A flag fixed by a numeric column's thresholds (a lab value's L/N/H by its reference
range): measured apart from the value, synthetic rows break the rule; the line says so."""
import numpy as np
import pandas as pd

from conftest import drafted


def test_a_flag_set_by_thresholds_of_a_binned_value_is_said_to_be():
    """A lab panel's creat_flag (L below 0.6 mg/dL, H above 1.2) and ldl_flag (H above
    130) were drafted as categories with no word: at eps 1 (3,500 patients, 12 or 3
    visits each, seeds 1-2) 70-87% of the synthetic rows' creatinine flags and 63-83% of
    the LDL flags matched their value."""
    r = np.random.default_rng(3)
    n = 5000
    creat = np.round(np.exp(r.normal(0, 0.4, n)), 2)
    ldl = np.round(r.normal(120, 35, n)).clip(30, 300).astype(int)
    df = pd.DataFrame({
        "creatinine": creat,
        "creat_flag": np.where(creat < 0.6, "L", np.where(creat > 1.2, "H", "N")),
        "ldl": ldl, "ldl_high": (ldl > 130).astype(int),
        "sex": r.choice(["F", "M"], n),
        "smoker": np.where(r.random(n) < 0.3 + 0.2 * (creat > 1.5), "Y", "N")})
    lines = drafted(df)[1]
    for flag, value in (("creat_flag", "creatinine"), ("ldl_high", "ldl")):
        line = lines[flag]
        assert f"thresholds of '{value}'" in line and f"--ignore {flag}" in line, line
    for other in ("sex", "smoker"):
        assert "thresholds" not in lines[other], lines[other]

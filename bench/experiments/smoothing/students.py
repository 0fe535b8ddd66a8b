"""A generated student table (30,000 rows): test score and GPA correlated 0.83 through a
latent ability, absences falling with it, a free-lunch flag lowering it, and columns that
relate to nothing (school, grade, sex, ethnicity).

    python bench/experiments/smoothing/students.py DIR
    gpu-dpsyn infer-schema DIR/students.csv --id student_id --out DIR/students.json"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd


def main(out: str) -> None:
    rng = np.random.default_rng(5)
    n = 30000
    school = rng.integers(1, 201, n)
    grade = rng.choice(["K"] + [str(i) for i in range(1, 13)], n)
    lunch = (rng.random(n) < 0.2 + 0.5 * (school % 7) / 7).astype(int)
    sex = rng.choice(["F", "M"], n)
    eth = rng.choice(["A", "B", "H", "W", "O"], n, p=[.1, .2, .25, .4, .05])
    ability = rng.normal(0, 1, n) - 0.4 * lunch
    score = np.clip(np.round(500 + 100 * (ability + 0.45 * rng.normal(0, 1, n))), 200, 800)
    gpa = np.clip(np.round(2.9 + 0.6 * (ability + 0.45 * rng.normal(0, 1, n)), 2), 0, 4)
    absences = rng.poisson(np.exp(1.5 - 0.3 * ability))
    Path(out).mkdir(parents=True, exist_ok=True)
    pd.DataFrame(dict(student_id=np.arange(n), school_id=school, grade=grade,
                      free_lunch=lunch, sex=sex, ethnicity=eth,
                      test_score=score.astype(int), gpa=gpa, absences=absences)
                 ).to_csv(Path(out) / "students.csv", index=False)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])

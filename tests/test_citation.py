"""A report one can cite: LICENSE and CITATION.cff say what pyproject.toml says."""
from pathlib import Path

import pytest
import yaml

tomllib = pytest.importorskip("tomllib")

REPO = Path(__file__).resolve().parents[1]


def test_citation_and_license_agree_with_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    cff = yaml.safe_load((REPO / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["title"] and cff["authors"]
    assert cff["version"] == project["version"]
    assert cff["license"] == project["license"]
    assert (REPO / "LICENSE").read_text().startswith(f"{project['license']} License\n")

"""docs/faq-why-not.md and docs/control.md kept in step with the code: every hold cause has its
FAQ entry, every setting the FAQ names exists, every control metric and endpoint is documented."""
from __future__ import annotations

import re
from pathlib import Path

from controller.config import MetctlConfig
from controller.control_plane import CONTROL_METRICS
from controller.loop import HoldCause

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_hold_cause_has_an_faq_row():
    faq = (DOCS / "faq-why-not.md").read_text()
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", faq, re.M))
    assert {c.value for c in HoldCause} <= rows


def test_every_setting_the_faq_names_exists():
    faq = (DOCS / "faq-why-not.md").read_text()
    named = set(re.findall(r"`((?:policy|loop|monitor|control|ha|executor)\.[a-z_]+)`", faq))
    assert len(named) > 15
    for dotted in named:
        section, key = dotted.split(".")
        model = MetctlConfig.model_fields[section].annotation
        assert key in model.model_fields, dotted


def test_control_doc_lists_metrics_endpoints_and_verbs():
    doc = (DOCS / "control.md").read_text()
    for name, _ in CONTROL_METRICS:
        assert f"`{name}`" in doc
    for endpoint in ("GET /v1/status", "GET /v1/decisions", "POST /v1/pause", "POST /v1/resume",
                     "PUT /v1/size", "DELETE /v1/size", "PUT /v1/nodes/{id}/protection",
                     "PUT /v1/windows", "DELETE /v1/windows", "POST /v1/plan"):
        assert endpoint in doc
    for verb in ("pause", "resume", "pin", "unpin", "protect", "unprotect", "explain"):
        assert f"metctl {verb}" in doc

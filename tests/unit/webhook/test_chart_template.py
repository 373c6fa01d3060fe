"""The chart's webhook configurations are generated from kruise.webhook.configurations."""

from __future__ import annotations

from kruise.webhook.charttemplate import TEMPLATE, drift, render


def test_committed_template_matches_the_definitions():
    assert not drift(), f"{TEMPLATE} is stale: run `python -m kruise.webhook.charttemplate`"


def test_namespace_and_timeout_come_from_values():
    text = render()
    assert "namespace: {{ .Values.installation.namespace }}" in text
    assert "timeoutSeconds: {{ .Values.webhookConfiguration.timeoutSeconds }}" in text
    assert "caBundle" not in text  # kruise-webhook fills it in


def test_drift_notices_an_edit(tmp_path):
    edited = tmp_path / "webhookconfiguration.yaml"
    edited.write_text(render().replace("failurePolicy: Fail", "failurePolicy: Ignore", 1))
    assert drift(edited)
    assert drift(tmp_path / "missing.yaml")


def test_each_configuration_carries_an_empty_template_annotation():
    """Upstream's chart renders `template: ""` so each `helm upgrade` clears kruise-webhook's stored copy
    of the webhooks; without it a changed timeout is reverted to the first install's."""
    docs = render().split("---\n")
    assert len(docs) == 2
    for doc in docs:
        assert '  annotations:\n    template: ""\n' in doc.split("webhooks:")[0]

"""One module per admission concern; `kruise.webhook.registry` collects their REGISTRATIONS into URL paths."""

"""One module per admission concern; `kruise.webhook.routes` assembles them into URL paths."""

"""kruise.webhook: the stateless HTTPS admission process (``kruise-webhook``)."""

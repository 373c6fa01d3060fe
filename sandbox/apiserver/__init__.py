"""The API emulator: an HTTP server that speaks the Kubernetes REST API."""

"""kruise.kube: talking to Kubernetes the way client-go and controller-runtime do.

Client, shared informers, workqueues, controller loop, leader election, expectations and
event recording — the runtime every kruise controller and the webhook stand on.
"""

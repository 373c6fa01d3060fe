"""PersistentPodState planning without I/O: `podstates` (records per pod, generated objects, the webhook's
injection).
"""

"""EphemeralJob planning without I/O: `injection` (targets, pod states, who gets the containers next,
status).
"""

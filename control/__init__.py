"""kruise.control: pure domain logic shared by webhook and manager (no I/O).

Kept free of I/O so that admission and reconcile compute the same answers and so that the
rules can be tested exhaustively without a cluster.
"""

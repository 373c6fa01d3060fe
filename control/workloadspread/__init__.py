"""WorkloadSpread rules shared by the pod webhook (subset choice and injection on CREATE, deletion
bookkeeping) and the controller (status recomputed from pods, deletion cost for scale-in order)."""

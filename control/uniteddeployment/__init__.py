"""UnitedDeployment logic without I/O: the replica split, child workloads per subset, status."""

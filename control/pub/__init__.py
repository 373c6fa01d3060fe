"""PodUnavailableBudget without I/O: `budget` (arithmetic and admission decisions shared by webhook and
controller).
"""

"""Fixes: semantics-preserving rewrites of in-place hazards, planned during analysis."""

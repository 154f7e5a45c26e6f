"""Fixes for the second engine."""

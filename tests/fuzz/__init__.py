"""Tests in fuzz/."""

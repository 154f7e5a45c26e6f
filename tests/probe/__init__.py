"""Tests in probe/."""

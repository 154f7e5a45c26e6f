"""Tests in server/."""

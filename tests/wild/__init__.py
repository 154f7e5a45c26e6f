"""Tests in wild/."""

"""Unit tests: the library in process."""

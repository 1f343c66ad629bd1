"""Models written in Python."""

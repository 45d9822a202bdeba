"""kanon."""

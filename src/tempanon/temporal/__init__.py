"""temporal."""

"""gillab: The GIL, measured — the harness behind the report."""
__version__ = "0.1.0"

"""The contract every server of the suite passes, over real stdio (see ``catalog.py``)."""

"""``reqfold run``: every part of the suite against one implementation, one verdict."""

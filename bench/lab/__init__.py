"""One-off experiments whose results are recorded in the notebook (docs/lab/); not product code, not linted as such."""

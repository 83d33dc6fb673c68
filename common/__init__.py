"""Neutral helpers every metctl layer shares: the BadInput error and the one bounded reader and
YAML/JSON loader for user files. Imports none of metctl's other packages."""

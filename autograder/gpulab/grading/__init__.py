"""Grading one submission: pipeline.py (files -> lint -> build -> reference -> the checks of
checks/, the time of each phase kept) and references.py (the trusted reference of each lab,
prepared once, its times cached per device and taken while the first rows build)."""

"""Nsight Compute (ncu): run.py runs it on a stage (bank-conflict and kernel-time profiles),
parse.py reads its CSV output, report.py holds the verdicts and prints them."""

"""gpulab: the course command (run the labs) and the autograder (grade submissions).

Standard library only, so that it runs on any machine with Python 3.11+ and nothing installed.
"""

__version__ = "0.1"

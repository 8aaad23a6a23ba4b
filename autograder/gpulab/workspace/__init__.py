"""Where submissions are built: private copies of the course, configured like the calling build.

    slots.py              the grading workspace: slots holding the student handout, configured
                          once, where a submission's files are overlaid and its runner rebuilt
    stamp.py              which course tree a slot was made from (a copied or moved slot is rebuilt)
    symbols.py            what the student's objects define and call (link-time tricks rejected)
    calling_build.py      the build `gpulab` was started from: its settings, its targets
    shipped_reference.py  the compiled reference runner shipped in the student handout
"""

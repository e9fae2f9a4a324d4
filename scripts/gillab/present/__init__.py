"""Presenting: figures and explorers (plots, widgets, trace_view), the chapter notebooks' common
sections (chapter), the book built from executed notebooks (book, landing, notebooks) and the live
explorers in JupyterLab (live).  It reads what judging computed; it never measures, except where a
reader asks a live explorer or ``make reproduce`` to."""

"""Presenting: figures and explorers (plots, widgets, trace_view), each chapter page's common
sections (page), the chapters as text (notebooks), their execution and its cache (execute), the
first screen (landing), the method chapter's timing and plan tables (timing), the book rendered
from the executed chapters (book) and the live explorers in JupyterLab (live).  It reads what
judging computed.  It measures only where a reader asks: a chapter run with ``measure=True`` or a
live explorer's *measure now*; a whole run (plan, measure, book) is :mod:`gillab.reproduce`."""

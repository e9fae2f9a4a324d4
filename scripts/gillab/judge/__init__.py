"""Judging: the samples read back (results), the documents' claims and their bands (claims), each
claim x build judged with the document's statistic and an interval of known coverage (verdicts),
every campaign judged alone and counted across machines (across, pairs), the sentences the data
must bear out (prose), the run plan a budget allows (budget), the code key guard and the history
of references.  It reads what measuring stored; it draws nothing.  It reaches a chapter's reading
only through the chapters' registry (:func:`gillab.chapters.of`)."""

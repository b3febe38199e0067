"""Common English function words: they carry no topic, so matching on them is not evidence."""

from __future__ import annotations

# One list for every use (BM25 query terms, citation support, entity linking), so that what counts
# as a content word is the same everywhere.
ENGLISH_STOPWORDS = frozenset(
    "a about all also an and any are as at be been but by can could did do does each for from had "
    "has have he her his how i if in into is it its many may me might more most much my no not of on "
    "only or other our over shall she should so some such than that the their them then there these "
    "they this those to very was we were what when where which while who whom whose why will with "
    "would yes you your ".split()
)

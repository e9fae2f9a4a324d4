"""Document 002's single-threaded benchmark: ``timeit`` of a 1,000,000-step sum, ``number`` times."""
import sys
import timeit

from _common import main

CODE = """
total = 0
for i in range(1_000_000):
    total += i
"""


def run(params):
    number = int(params["number"])
    if number <= 0:
        raise ValueError("number must be >= 1")
    return {"seconds": timeit.timeit(CODE, number=number)}


if __name__ == "__main__":
    sys.exit(main(run))

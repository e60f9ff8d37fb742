"""``python -m equiv``: the same command as ``python -m equiv.proofs`` and ``equiv``."""

from equiv.proofs import console

if __name__ == "__main__":
    console()

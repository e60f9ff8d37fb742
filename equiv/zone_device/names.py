"""The names the zone-device subject's options choose from.  Imports nothing, so the
command line can offer them without loading the model (the modules that define what the
names mean check their own tables against these)."""

from __future__ import annotations

#: the revision of the series a run proves without --revision (the latest posted, v11 of
#: 2026-08-31)
DEFAULT_REVISION = "v11"

__all__ = ["DEFAULT_REVISION"]

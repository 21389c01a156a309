"""Naming the licence of a licence *file* from phrases its text must contain.

A deliberately small classifier: each licence is recognised by clauses that only its
text carries (the GPL family by its title line with version and date, never by a
mention, since MPL-2.0 and others name the GPL in passing). A text may hold several
licences (a module that vendors code appends the vendored notice); every one found is
returned, and the caller requires all of them to be allowed. A text in which nothing is
recognised yields the empty tuple, which the gate treats as not allowed: an unread
licence is never a permitted one.
"""

from __future__ import annotations

import re

_BSD_GRANT = (
    r"redistribution and use in source and binary forms, with or without modification, "
    r"are permitted"
)
_BSD_NO_ENDORSEMENT = (
    r"neither the name"
    r"|the names? of (?:its|the) (?:contributors|copyright holders?|authors?) may not be used"
    r"|may (?:not )?be used to endorse or promote products derived from this software"
)
_ISC_GRANT = (
    r"permission to use, copy, modify, and(?:/or)? distribute this software for any purpose "
    r"with or without fee is hereby granted"
)

#: (id, every pattern that must match the normalised text). Ids are SPDX where one
#: exists; a family name ("GPL", "CC-BY-SA") where the text does not say which version,
#: which no allowlist names, so it is refused.
_SIGNATURES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Strong and network copyleft: the title line with its version and date.
    ("AGPL-3.0", (r"gnu affero general public license version 3, 19 november 2007",)),
    ("GPL-3.0", (r"(?<!lesser )(?<!affero )gnu general public license version 3, 29 june 2007",)),
    ("GPL-2.0", (r"(?<!lesser )(?<!library )gnu general public license version 2, june 1991",)),
    ("LGPL-3.0", (r"gnu lesser general public license version 3, 29 june 2007",)),
    ("LGPL-2.1", (r"gnu lesser general public license version 2\.1, february 1999",)),
    ("LGPL-2.0", (r"gnu library general public license version 2, june 1991",)),
    # A short "licensed under the GPL" notice without the full text.
    ("GPL", (r"under the terms of the gnu general public license as published by",)),
    (
        "LGPL",
        (r"under the terms of the gnu (?:lesser|library) general public license as published by",),
    ),
    ("AGPL", (r"under the terms of the gnu affero general public license as published by",)),
    ("EUPL", (r"european union public licen[cs]e",)),
    ("SSPL", (r"server side public license",)),
    ("CC-BY-SA", (r"creative commons attribution-sharealike",)),
    ("MPL-2.0", (r"mozilla public license,? (?:version|v\.) 2\.0",)),
    ("MPL-1.1", (r"mozilla public license,? (?:version|v\.) 1\.1",)),
    ("EPL", (r"eclipse public license",)),
    ("Apache-2.0", (r"apache license,? version 2\.0",)),
    (
        "BSD-4-Clause",
        (
            _BSD_GRANT,
            r"all advertising materials mentioning features or use of this software",
        ),
    ),
    (
        "BSD-3-Clause",
        (
            _BSD_GRANT,
            _BSD_NO_ENDORSEMENT,
        ),
    ),
    (
        "BSD-2-Clause",
        (_BSD_GRANT,),
    ),
    (
        "MIT",
        (
            r"permission is hereby granted, free of charge, to any person obtaining a copy",
            r"the above copyright notice and this permission notice shall be included",
        ),
    ),
    ("MIT-0", (r"permission is hereby granted, free of charge, to any person obtaining a copy",)),
    (
        "ISC",
        (_ISC_GRANT,),
    ),
    ("Unlicense", (r"this is free and unencumbered software released into the public domain",)),
    ("CC0-1.0", (r"cc0 1\.0 universal",)),
    (
        "Zlib",
        (
            r"this software is provided 'as-is', without any express or implied warranty",
            r"altered source versions must be plainly marked as such",
        ),
    ),
    ("PSF-2.0", (r"python software foundation license",)),
)

#: A licence found together with a more specific one of its family is the same text
#: read twice (every BSD-3 text also matches BSD-2's single clause).
_SUBSUMED = {
    "BSD-2-Clause": ("BSD-3-Clause", "BSD-4-Clause"),
    "BSD-3-Clause": ("BSD-4-Clause",),
    "MIT-0": ("MIT",),
    "GPL": ("GPL-2.0", "GPL-3.0"),
    "LGPL": ("LGPL-2.0", "LGPL-2.1", "LGPL-3.0"),
    "AGPL": ("AGPL-3.0",),
}


def normalise(text: str) -> str:
    """Lower case, one space for any run of whitespace; comment and quote markers at line
    starts dropped (``#``, ``//``, ``*``, Markdown ``>``); typographic quotes unified."""
    text = text.lower()
    text = re.sub(r"^[ \t]*(?:#|//|\*|/\*|\*/|>)+", " ", text, flags=re.MULTILINE)
    text = text.replace("\u2018", "'").replace("\u2019", "'").replace("`", "'")
    text = text.replace("\u201c", '"').replace("\u201d", '"')
    return re.sub(r"\s+", " ", text).strip()


def classify_text(text: str) -> tuple[str, ...]:
    """Every licence whose signature the text carries, most specific only; () if none."""
    flat = normalise(text)
    found = {
        spdx
        for spdx, patterns in _SIGNATURES
        if all(re.search(pattern, flat) for pattern in patterns)
    }
    kept = {spdx for spdx in found if not any(wider in found for wider in _SUBSUMED.get(spdx, ()))}
    return tuple(sorted(kept))

"""What a Python distribution declares as its licence, read from its installed metadata.

Sources, most authoritative first (PEP 639 makes License-Expression the one to trust
and deprecates the rest): ``License-Expression``; a one-line ``License`` field that
names a known licence; the trove classifiers, when every one names a known licence
(several are read as all applying, the strict reading); the distribution's own licence
files, classified by their text. The first source that yields an answer decides; a
distribution none of them names is "unknown", which is not allowed.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Iterable
from dataclasses import dataclass

from licence_gate.policy import Declared
from licence_gate.spdx import normalise_name
from licence_gate.texts import classify_text

#: Classifiers that say something about a licence without naming one.
_NOT_A_LICENCE = {"osi approved", "dfsg approved"}


@dataclass(frozen=True)
class PythonDist:
    name: str
    version: str
    declared: Declared


def from_classifiers(classifiers: Iterable[str]) -> str | None:
    """The AND of the licences the ``License ::`` classifiers name; None if any is unknown
    or ambiguous (``BSD License`` does not say which BSD)."""
    names: list[str] = []
    for classifier in classifiers:
        parts = [part.strip() for part in classifier.split("::")]
        if parts[0] != "License" or len(parts) < 2 or parts[-1].lower() in _NOT_A_LICENCE:
            continue
        spdx = normalise_name(parts[-1])
        if spdx is None:
            return None
        if spdx not in names:
            names.append(spdx)
    return " AND ".join(names) if names else None


def from_texts(texts: Iterable[str]) -> str | None:
    """The AND of every licence found in the given licence texts; None if any text is
    unrecognised (an unread file may hold the one licence that matters)."""
    found: list[str] = []
    for text in texts:
        ids = classify_text(text)
        if not ids:
            return None
        found.extend(i for i in ids if i not in found)
    return " AND ".join(sorted(found)) if found else None


def declared_licence(
    *,
    expression: str | None,
    licence: str | None,
    classifiers: Iterable[str],
    licence_texts: Iterable[str],
) -> Declared:
    """The first source that names the licence (module docstring)."""
    if expression and expression.strip():
        return Declared(expression.strip(), "License-Expression")
    if licence and licence.strip():
        text = licence.strip()
        if "\n" not in text:
            spdx = normalise_name(text)
            if spdx is not None:
                return Declared(spdx, "License")
        else:
            from_field = from_texts([text])
            if from_field is not None:
                return Declared(from_field, "License (full text)")
    from_trove = from_classifiers(classifiers)
    if from_trove is not None:
        return Declared(from_trove, "classifiers")
    texts = list(licence_texts)
    from_files = from_texts(texts) if texts else None
    if from_files is not None:
        return Declared(from_files, "licence files")
    return Declared(None, "no usable licence metadata")


def _first(meta: importlib.metadata.PackageMetadata, key: str) -> str | None:
    values = meta.get_all(key)
    return str(values[0]) if values else None


def _licence_texts(dist: importlib.metadata.Distribution) -> list[str]:
    names = dist.metadata.get_all("License-File") or []
    texts: list[str] = []
    for name in names:
        # PEP 639 puts them under licenses/; older backends at the dist-info root.
        for candidate in (f"licenses/{name}", name):
            text = dist.read_text(candidate)
            if text is not None:
                texts.append(text)
                break
    return texts


def installed() -> list[PythonDist]:
    """Every distribution this interpreter can import from, sorted by name."""
    found: dict[str, PythonDist] = {}
    for dist in importlib.metadata.distributions():
        meta = dist.metadata
        name = meta["Name"]
        if not name or name.lower() in found:
            continue
        declared = declared_licence(
            expression=_first(meta, "License-Expression"),
            licence=_first(meta, "License"),
            classifiers=meta.get_all("Classifier") or [],
            licence_texts=_licence_texts(dist),
        )
        found[name.lower()] = PythonDist(name=name, version=dist.version, declared=declared)
    return [found[key] for key in sorted(found)]

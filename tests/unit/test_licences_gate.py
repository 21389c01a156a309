"""The licence gate (hack/licence_gate/, run by hack/licences in .ci/run): classifier, SPDX
evaluation, the allowlist's decisions, and the CLI's verdict on a planted package."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

# The gate is a development tool beside the scripts that run it, not part of the product.
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "hack"))
from licence_gate.go_modules import (
    GoModule,
    declared_licence,
    escape_path,
    parse_build_info,
)
from licence_gate.policy import Declared, Override, Policy, judge, load
from licence_gate.python_dists import declared_licence as python_declared
from licence_gate.spdx import allowed, normalise_name
from licence_gate.texts import classify_text

REPO = Path(__file__).resolve().parents[2]
ALLOWLIST = REPO / "hack" / "licence_gate" / "allowlist.toml"

# Excerpts of the standard texts: the clauses the classifier keys on, as the files
# carry them (line breaks, comment markers and all).
GPL3 = """                    GNU GENERAL PUBLIC LICENSE
                       Version 3, 29 June 2007

 Copyright (C) 2007 Free Software Foundation, Inc. <https://fsf.org/>
 Everyone is permitted to copy and distribute verbatim copies
"""
GPL2_NOTICE = """# This program is free software; you can redistribute it and/or modify
# it under the terms of the GNU General Public License as published by
# the Free Software Foundation; either version 2 of the License, or
"""
LGPL3 = """                   GNU LESSER GENERAL PUBLIC LICENSE
                       Version 3, 29 June 2007

  This version of the GNU Lesser General Public License incorporates
the terms and conditions of version 3 of the GNU General Public
License, supplemented by the additional permissions listed below.
"""
MPL2 = """Mozilla Public License Version 2.0
==================================
1.12. "Secondary License"
    means either the GNU General Public License, Version 2.0, the GNU Lesser
    General Public License, Version 2.1, the GNU Affero General Public
    License, Version 3.0, or any later versions of those licenses.
"""
APACHE2 = """
                                 Apache License
                           Version 2.0, January 2004
                        http://www.apache.org/licenses/
"""
MIT = """Copyright (c) 2020 Someone

Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.
"""
BSD_HEAD = """Redistribution and use in source and binary forms, with or without
modification, are permitted provided that the following conditions are met:

1. Redistributions of source code must retain the above copyright notice,
   this list of conditions and the following disclaimer.
"""
BSD3 = (
    BSD_HEAD
    + """3. Neither the name of the copyright holder nor the names of its
   contributors may be used to endorse or promote products derived from
   this software without specific prior written permission.
"""
)
BSD4 = (
    BSD3
    + """4. All advertising materials mentioning features or use of this software
   must display the following acknowledgement.
"""
)
ISC = """Permission to use, copy, modify, and/or distribute this software for any
purpose with or without fee is hereby granted, provided that the above
copyright notice and this permission notice appear in all copies.
"""


def _policy(*overrides: Override) -> Policy:
    return Policy(
        everywhere=frozenset({"MIT", "Apache-2.0", "BSD-3-Clause", "MPL-2.0"}),
        per_ecosystem={"python": frozenset({"LGPL-3.0-or-later", "LGPL-3.0-only"})},
        overrides=overrides,
    )


def _judge(policy: Policy, ecosystem: str, expression: str | None, name: str = "pkg") -> bool:
    read = Declared(expression, "test")
    return judge(policy, ecosystem=ecosystem, name=name, version="1.0", read=read).ok


# -- the text classifier ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GPL3, ("GPL-3.0",)),
        (GPL2_NOTICE, ("GPL",)),
        (LGPL3, ("LGPL-3.0",)),
        (MPL2, ("MPL-2.0",)),
        (APACHE2, ("Apache-2.0",)),
        (MIT, ("MIT",)),
        (BSD_HEAD, ("BSD-2-Clause",)),
        (BSD3, ("BSD-3-Clause",)),
        (BSD4, ("BSD-4-Clause",)),
        (ISC, ("ISC",)),
        ("\n".join("> " + line for line in BSD_HEAD.splitlines()), ("BSD-2-Clause",)),
        (APACHE2 + "\n---\n" + MIT, ("Apache-2.0", "MIT")),
        ("All rights reserved. Ask us for a licence.", ()),
    ],
    ids=[
        "gpl3", "gpl-notice", "lgpl3", "mpl2", "apache2", "mit", "bsd2", "bsd3", "bsd4",
        "isc", "markdown-quoted", "two-licences", "unrecognised",
    ],
)  # fmt: skip
def test_licence_texts_are_classified_by_their_own_clauses(
    text: str, expected: tuple[str, ...]
) -> None:
    assert classify_text(text) == expected


def test_mpl_naming_the_gpl_is_not_read_as_gpl() -> None:
    """MPL-2.0 defines "Secondary License" by naming the GPL family: a mention is not a
    grant, so only titles with version and date (or a "terms of ... as published by"
    notice) count."""
    assert classify_text(MPL2) == ("MPL-2.0",)
    assert classify_text(LGPL3) == ("LGPL-3.0",)


# -- SPDX names and expressions ---------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "spdx"),
    [
        ("Apache 2.0", "Apache-2.0"),
        ("Apache Software License", "Apache-2.0"),
        ("BSD 2-Clause License", "BSD-2-Clause"),
        ("Modified BSD License", "BSD-3-Clause"),
        ("GNU LGPL v3+", "LGPL-3.0-or-later"),
        ("LGPL-3.0+", "LGPL-3.0-or-later"),
        ("GPL-3.0", "GPL-3.0-only"),
        ("MIT OR Apache-2.0", "MIT OR Apache-2.0"),
        ("BSD License", None),
        ("UNKNOWN", None),
        ("Proprietary", None),
    ],
)
def test_declared_names_normalise_to_spdx_or_to_unknown(spelling: str, spdx: str | None) -> None:
    assert normalise_name(spelling) == spdx


def test_or_needs_one_allowed_alternative_and_needs_all_parts() -> None:
    def permits(spdx: str) -> bool:
        return spdx in {"MIT", "Apache-2.0"}

    assert allowed("MIT OR GPL-3.0-only", permits=permits)
    assert not allowed("MIT AND GPL-3.0-only", permits=permits)
    assert allowed("(GPL-2.0-only OR MIT) AND Apache-2.0", permits=permits)
    assert not allowed("GPL-2.0-only WITH Classpath-exception-2.0", permits=permits)
    assert allowed("Apache-2.0 WITH LLVM-exception", permits=permits)
    assert not allowed("MIT AND Frobnicate-1.0", permits=permits)
    with pytest.raises(ValueError, match="ends early"):
        allowed("MIT AND", permits=permits)


# -- the policy -------------------------------------------------------------------------


def test_gpl_package_fails_naming_the_package_and_licence() -> None:
    read = Declared("GPL-3.0-only", "License-Expression")
    judged = judge(_policy(), ecosystem="python", name="copyleft-lib", version="2.1", read=read)
    assert not judged.ok
    assert "GPL-3.0-only" in judged.why and "not on the allowlist" in judged.why


def test_unknown_licence_is_refused() -> None:
    read = Declared(None, "no usable licence metadata")
    judged = judge(_policy(), ecosystem="python", name="mystery", version="0.1", read=read)
    assert not judged.ok
    assert "licence unknown" in judged.why


def test_lgpl_is_allowed_for_python_but_not_for_statically_linked_go() -> None:
    assert _judge(_policy(), "python", "LGPL-3.0-or-later")
    assert not _judge(_policy(), "go", "LGPL-3.0-only")


def test_override_supplies_a_missing_licence_and_is_judged_by_the_list() -> None:
    fills = Override(ecosystem="go", name="pkg", declared="unknown", reason="r", licence="MIT")
    assert _judge(_policy(fills), "go", None)
    wrong = Override(ecosystem="go", name="pkg", declared="unknown", reason="r", licence="GPL-3.0")
    assert not _judge(_policy(wrong), "go", None)


def test_override_stops_applying_when_the_declared_licence_changes() -> None:
    exception = Override(
        ecosystem="python", name="tool", declared="GPL-3.0-only", reason="r", accept=True
    )
    policy = _policy(exception)
    assert _judge(policy, "python", "GPL-3.0-only", name="tool")
    read = Declared("AGPL-3.0-only", "License")
    judged = judge(policy, ecosystem="python", name="tool", version="2", read=read)
    assert not judged.ok
    assert "override was recorded for 'GPL-3.0-only'" in judged.why


def test_override_for_another_ecosystem_does_not_apply() -> None:
    exception = Override(
        ecosystem="go", name="tool", declared="GPL-3.0-only", reason="r", accept=True
    )
    assert not _judge(_policy(exception), "python", "GPL-3.0-only", name="tool")


def test_unused_override_is_reported_as_stale() -> None:
    exception = Override(ecosystem="python", name="gone", declared="MIT", reason="r", accept=True)
    policy = _policy(exception)
    _judge(policy, "python", "MIT", name="other")
    assert policy.unused("python") == [exception]
    assert policy.unused("go") == []


def test_allowlist_loads_and_every_override_has_a_reason() -> None:
    policy = load(ALLOWLIST)
    assert "GPL-3.0-only" not in policy.everywhere | policy.per_ecosystem["python"]
    copyleft = ("GPL", "LGPL", "AGPL")
    assert not any(spdx.startswith(copyleft) for spdx in policy.everywhere)
    assert not any(spdx.startswith(copyleft) for spdx in policy.per_ecosystem["go"])
    assert all(o.reason.strip() for o in policy.overrides)


@pytest.mark.parametrize(
    "entry",
    [
        'ecosystem = "python"\nname = "x"\ndeclared = "MIT"\naccept = true\n',
        'ecosystem = "python"\nname = "x"\ndeclared = "MIT"\nreason = "r"\n',
        'ecosystem = "python"\nname = "x"\ndeclared = "MIT"\nreason = "r"\naccept = true\n'
        'licence = "MIT"\n',
        'ecosystem = "rust"\nname = "x"\ndeclared = "MIT"\nreason = "r"\naccept = true\n',
    ],
    ids=["no-reason", "neither-licence-nor-accept", "both", "unknown-ecosystem"],
)
def test_malformed_override_is_refused_when_loading(tmp_path: Path, entry: str) -> None:
    path = tmp_path / "allowlist.toml"
    path.write_text('[allowed]\neverywhere = ["MIT"]\n\n[[override]]\n' + entry)
    with pytest.raises(ValueError):
        load(path)


def test_allowlist_names_only_spdx_ids(tmp_path: Path) -> None:
    path = tmp_path / "allowlist.toml"
    path.write_text('[allowed]\neverywhere = ["MIT", "BSD"]\n')
    with pytest.raises(ValueError, match="'BSD' is not an SPDX id"):
        load(path)


# -- what a Python distribution declares ------------------------------------------------


def test_python_licence_expression_wins_over_everything_else() -> None:
    read = python_declared(
        expression="GPL-3.0-only",
        licence="MIT",
        classifiers=["License :: OSI Approved :: MIT License"],
        licence_texts=[MIT],
    )
    assert read == Declared("GPL-3.0-only", "License-Expression")


def test_python_several_classifiers_all_apply_and_bsd_alone_is_ambiguous() -> None:
    both = ["License :: OSI Approved :: MIT License", "License :: OSI Approved :: GNU "
            "General Public License v3 (GPLv3)"]  # fmt: skip
    read = python_declared(expression=None, licence=None, classifiers=both, licence_texts=[])
    assert read.expression == "MIT AND GPL-3.0-only"
    assert not _judge(_policy(), "python", read.expression)
    bsd = ["License :: OSI Approved :: BSD License"]
    read = python_declared(expression=None, licence=None, classifiers=bsd, licence_texts=[BSD3])
    assert read == Declared("BSD-3-Clause", "licence files")
    read = python_declared(expression=None, licence=None, classifiers=bsd, licence_texts=[])
    assert read.expression is None


def test_python_full_licence_text_in_the_license_field_is_classified() -> None:
    read = python_declared(expression=None, licence=GPL3, classifiers=[], licence_texts=[])
    assert read == Declared("GPL-3.0", "License (full text)")
    assert not _judge(_policy(), "python", read.expression)


def test_python_one_unrecognised_licence_file_makes_it_unknown() -> None:
    read = python_declared(
        expression=None, licence="UNKNOWN", classifiers=[], licence_texts=[MIT, "Ask us."]
    )
    assert read.expression is None


# -- Go modules -------------------------------------------------------------------------

BUILD_INFO = """/cache/kubectl: go1.26.8
\tpath\tk8s.io/kubernetes/cmd/kubectl
\tmod\tk8s.io/kubernetes\tv1.36.3\th1:abc=
\tdep\tgithub.com/MakeNowJust/heredoc\tv1.0.0\th1:def=
\tdep\tk8s.io/api\tv0.0.0\t
\t=>\tk8s.io/api\tv0.36.3\th1:ghi=
\tbuild\t-trimpath=true
"""


def test_build_info_lists_linked_modules_with_replacements_resolved() -> None:
    assert parse_build_info(BUILD_INFO) == [
        ("k8s.io/kubernetes", "v1.36.3"),
        ("github.com/MakeNowJust/heredoc", "v1.0.0"),
        ("k8s.io/api", "v0.36.3"),
    ]


def test_build_info_of_a_local_build_skips_the_devel_main_module() -> None:
    text = (
        "x: go1.26\n\tmod\tglimmer.local/envtest\t(devel)\t\n"
        "\tdep\tgo.etcd.io/bbolt\tv1.4.0\th1:x=\n"
    )
    assert parse_build_info(text) == [("go.etcd.io/bbolt", "v1.4.0")]


def test_build_info_with_a_local_replacement_is_refused() -> None:
    text = "x: go1.26\n\tdep\texample.com/m\tv1.0.0\t\n\t=>\t../m\t\t\n"
    with pytest.raises(ValueError, match="local directory"):
        parse_build_info(text)


def test_module_cache_path_escapes_upper_case() -> None:
    assert escape_path("github.com/MakeNowJust/heredoc") == "github.com/!make!now!just/heredoc"


def _module(cache: Path, files: dict[str, str]) -> GoModule:
    module = GoModule(path="example.com/Lib", version="v1.2.3")
    directory = cache / "example.com" / "!lib@v1.2.3"
    directory.mkdir(parents=True)
    (directory / "lib.go").write_text("package lib\n")
    for name, text in files.items():
        (directory / name).write_text(text)
    return module


def test_go_module_with_a_gpl_licence_file_fails(tmp_path: Path) -> None:
    module = _module(tmp_path, {"COPYING": GPL3})
    read = declared_licence(module, cache=tmp_path)
    assert read == Declared("GPL-3.0", "COPYING")
    assert not _judge(load(ALLOWLIST), "go", read.expression, name=module.path)


def test_go_module_licences_in_every_root_file_all_apply(tmp_path: Path) -> None:
    docs = "Attribution-ShareAlike 4.0 International. Creative Commons Attribution-ShareAlike"
    module = _module(tmp_path, {"LICENSE": APACHE2, "LICENSE.docs": docs})
    read = declared_licence(module, cache=tmp_path)
    assert read == Declared("Apache-2.0 AND CC-BY-SA", "LICENSE, LICENSE.docs")
    assert not _judge(_policy(), "go", read.expression)


def test_go_module_without_a_readable_licence_is_unknown(tmp_path: Path) -> None:
    bare = _module(tmp_path / "a", {})
    assert declared_licence(bare, cache=tmp_path / "a").expression is None
    unread = _module(tmp_path / "b", {"LICENSE.md": "Use it as you like, mostly."})
    read = declared_licence(unread, cache=tmp_path / "b")
    assert read == Declared(None, "unrecognised licence text in LICENSE.md")


# -- the CLI ------------------------------------------------------------------------------


def _plant(site: Path, name: str, metadata: str) -> None:
    info = site / f"{name}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.4\nName: {name}\nVersion: 1.0\n{metadata}")


def _gate(site: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO / "hack"), str(site)])}
    return subprocess.run(
        [sys.executable, "-m", "licence_gate"], env=env, capture_output=True, text=True, check=False
    )


def test_gate_passes_this_venv_and_fails_on_a_planted_gpl_distribution(tmp_path: Path) -> None:
    clean = _gate(tmp_path / "empty")
    assert clean.returncode == 0, clean.stdout + clean.stderr
    assert "0 refused, 0 stale overrides" in clean.stdout
    _plant(tmp_path / "site", "planted-copyleft", "License-Expression: GPL-3.0-or-later\n")
    _plant(tmp_path / "site", "planted-mystery", "License: UNKNOWN\n")
    refused = _gate(tmp_path / "site")
    assert refused.returncode == 1
    assert (
        "FAIL python planted-copyleft 1.0: GPL-3.0-or-later (License-Expression) "
        "is not on the allowlist"
    ) in refused.stdout
    assert "FAIL python planted-mystery 1.0: licence unknown" in refused.stdout
    assert "2 refused" in refused.stdout


def test_gate_fails_on_a_stale_override(tmp_path: Path) -> None:
    allowlist = tmp_path / "allowlist.toml"
    allowlist.write_text(
        ALLOWLIST.read_text()
        + '\n[[override]]\necosystem = "python"\nname = "long-gone"\ndeclared = "GPL-2.0-only"'
        '\naccept = true\nreason = "was a dev tool"\n'
    )
    env = {**os.environ, "PYTHONPATH": str(REPO / "hack")}
    result = subprocess.run(
        [sys.executable, "-m", "licence_gate", "--allowlist", str(allowlist)],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 1, result.stdout
    assert "the override for python long-gone matches no package" in result.stdout


def test_python_an_unknown_classifier_beside_a_known_one_is_not_dropped() -> None:
    """MIT plus a proprietary classifier is not MIT: the unknown one may be the one that
    binds, so the classifiers are set aside and the licence files decide."""
    classifiers = ["License :: OSI Approved :: MIT License", "License :: Other/Proprietary License"]
    read = python_declared(expression=None, licence=None, classifiers=classifiers, licence_texts=[])
    assert read.expression is None
    read = python_declared(
        expression=None, licence=None, classifiers=classifiers, licence_texts=[GPL3]
    )
    assert read == Declared("GPL-3.0", "licence files")

"""Configuration files a harness reads, written from templates before each process.

``--config-template SRC:DEST`` (docs/probe.md, "Configuration files"): SRC
is a file holding ``{base_url}``, ``{api_key}``, ``{model}`` and
``{workdir}`` wherever the harness's configuration wants them; before each
process the probe writes it to DEST (placeholders filled there too; a
relative DEST is under the working folder) with the fake's base URL, that
process's fresh API key, the model and the working folder. Only those four
names are replaced, so JSON, TOML or YAML braces stay as they are.

A DEST outside the working folder is the user's: one that exists is
refused unless ``--config-overwrite`` allows it (then it is backed up and
put back when the probe ends), and its folder must exist (the probe makes
no folder outside its own). Every file the probe made there is removed
when it ends (`ConfigFiles.restore`).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from reqfold.conformance.probe.styles import fill_all

TEMPLATE_NAMES = ("base_url", "api_key", "model", "workdir")


@dataclass(frozen=True, slots=True)
class ConfigTemplate:
    """One template: its text and where it goes."""

    source: str
    text: str
    destination: str


def parse_config_template(spec: str) -> ConfigTemplate:
    """``SRC:DEST``, SRC read now; ValueError says what is wrong."""
    source, sep, destination = spec.partition(":")
    if not sep or not source or not destination:
        raise ValueError(
            f"--config-template {spec!r}: give SRC:DEST (a template file and where"
            " the harness reads it)"
        )
    try:
        text = Path(source).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        reason = getattr(error, "strerror", None) or error
        raise ValueError(
            f"--config-template {source!r} cannot be read: {reason}"
        ) from None
    return ConfigTemplate(source, text, destination)


_LOOKS_LIKE_A_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")


def unknown_placeholders(template: ConfigTemplate) -> list[str]:
    """The ``{word}``s in a template's text or DEST that look like
    placeholders but are none (``{apikey}``, ``{nope}``): left as they are,
    which is worth a note (pure)."""
    found = _LOOKS_LIKE_A_PLACEHOLDER.findall(template.text + template.destination)
    return sorted({f"{{{name}}}" for name in found if name not in TEMPLATE_NAMES})


def render(template: ConfigTemplate, values: Mapping[str, str]) -> tuple[str, str]:
    """The destination path and the text, placeholders filled (pure)."""
    known = {name: values[name] for name in TEMPLATE_NAMES if name in values}
    destination = fill_all(template.destination, known)
    if not os.path.isabs(destination):
        destination = os.path.join(values["workdir"], destination)
    return destination, fill_all(template.text, known)


def outside(destination: str, workdir: str) -> bool:
    """Whether a destination lies outside the probe's working folder."""
    return not Path(destination).absolute().is_relative_to(Path(workdir).absolute())


def check_destinations(
    templates: tuple[ConfigTemplate, ...],
    values: Mapping[str, str],
    *,
    overwrite: bool,
) -> None:
    """Refuse (ValueError) a DEST outside the working folder that exists
    (unless `overwrite`) or whose folder does not exist."""
    for template in templates:
        destination, _ = render(template, values)
        if not outside(destination, values["workdir"]):
            continue
        where = f"--config-template {template.source}:{template.destination}"
        if Path(destination).is_dir():
            raise ValueError(f"{where}: {destination} is a folder")
        if Path(destination).exists() and not overwrite:
            raise ValueError(
                f"{where}: {destination} exists outside the probe's working folder;"
                " --config-overwrite writes over it (and puts it back at the end)"
            )
        if not Path(destination).parent.is_dir():
            raise ValueError(
                f"{where}: folder {Path(destination).parent} does not exist (the"
                " probe makes none outside its working folder)"
            )


class ConfigFiles:
    """Writes the templates before each process; `restore` puts back what
    was at each destination outside the working folder (or removes the file
    the probe made there)."""

    def __init__(self, templates: tuple[ConfigTemplate, ...]) -> None:
        self.templates = templates
        self._before: dict[str, bytes | None] = {}
        """Each destination outside the working folder: its bytes before the
        probe's first write (None: there was no file)."""

    def write(self, values: Mapping[str, str]) -> list[str]:
        """Write every template; the paths written. OSError (naming the
        destination) propagates."""
        written = []
        for template in self.templates:
            destination, text = render(template, values)
            path = Path(destination)
            try:
                if outside(destination, values["workdir"]):
                    if destination not in self._before:
                        self._before[destination] = (
                            path.read_bytes() if path.exists() else None
                        )
                else:
                    path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as error:
                raise OSError(error.errno, error.strerror, destination) from None
            written.append(destination)
        return written

    def restore(self) -> list[str]:
        """Put back every destination outside the working folder; the
        problems, one line each (nothing raised: the probe is ending)."""
        problems = []
        for destination, before in self._before.items():
            try:
                if before is None:
                    Path(destination).unlink(missing_ok=True)
                else:
                    Path(destination).write_bytes(before)
            except OSError as error:
                problems.append(
                    f"{destination} could not be put back: {error.strerror or error}"
                )
        self._before.clear()
        return problems
